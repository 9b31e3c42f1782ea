"""A class's grades: one row per submission, as the JSON object `keel-course grade --json` prints,
as a CSV file for a gradebook or an LMS, and as a table for the terminal.

A gradebook reads its rows as a class (`Gradebook`): each submission's path below the class
folder and its student, as `keel-course classroom collect` lays a class out
(`<collection>/<student>/notebooks/<chapter>.ipynb`): the first folder below the class folder;
a notebook directly in it is the student its file names (`alice.ipynb`), unless the file is
named for its chapter (`03_batching.ipynb`: one student's chapters), when the student is the
class folder itself (above its `notebooks/`). Each student's total is over the assignment's
chapters alone, the better row counting where a chapter was handed in twice; a student on the
roster who handed nothing in gets a row of their own, 0 points and "no submission", and so does
each chapter of the assignment a student who handed in something did not. A text cell
that a spreadsheet would run as a formula (it starts with `=`, `+`, `-`, `@`, a tab or a
carriage return - file names and error lines come from the students) is written with a
leading `'`.
"""

from __future__ import annotations

import csv
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keel_checks.check import POINTS
from keel_checks.progress import CHAPTERS
from keel_lab._core.errors import LabError
from keel_lab._core.tables import format_table
from keel_lab._i18n import N_, _

_FORMULA = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class Exercise:
    name: str
    passed: bool
    points: int
    max_points: int
    hint: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "points": self.points,
                "max_points": self.max_points, "hint": self.hint}


@dataclass(frozen=True)
class Row:
    path: str
    chapter: str | None
    exercises: tuple[Exercise, ...] = ()
    error: str | None = None

    @property
    def points(self) -> int:
        return sum(x.points for x in self.exercises)

    @property
    def max_points(self) -> int:
        return sum(x.max_points for x in self.exercises)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "chapter": self.chapter, "points": self.points,
                "max_points": self.max_points,
                "exercises": [x.to_dict() for x in self.exercises], "error": self.error}


NOTEBOOKS = "notebooks"  # the handout's folder of a student's chapters
NO_SUBMISSION = N_("no submission")
_CHAPTER_FILES = frozenset(CHAPTERS.values())


@dataclass(frozen=True)
class Total:
    """One student's points over the assignment's chapters."""

    student: str
    submissions: int
    points: int
    max_points: int

    def to_dict(self) -> dict[str, Any]:
        return {"student": self.student, "submissions": self.submissions,
                "points": self.points, "max_points": self.max_points}


@dataclass(frozen=True)
class Gradebook:
    """The rows of one grading run, read as a class (see the module's note)."""

    rows: Sequence[Row]
    folder: str | None = None  # the class folder; None: the folder the rows' paths share
    chapters: tuple[str, ...] = ()  # the assignment; (): every chapter a row was graded on
    roster: tuple[str, ...] = ()  # who should have handed in

    @property
    def root(self) -> str:
        if self.folder is not None:
            return os.path.abspath(self.folder)
        parents = [os.path.dirname(os.path.abspath(row.path)) for row in self.rows]
        return os.path.commonpath(parents) if parents else os.path.abspath(os.curdir)

    def relative(self, row: Row) -> str:
        return Path(os.path.relpath(os.path.abspath(row.path), self.root)).as_posix()

    def student(self, row: Row) -> str:
        path = Path(self.relative(row))
        folders = [part for part in path.parent.parts if part not in (NOTEBOOKS, os.pardir)]
        if folders:
            return folders[0]
        if path.stem not in _CHAPTER_FILES:
            return path.stem
        root = Path(self.root)
        return (root.parent if root.name == NOTEBOOKS else root).name or str(root)

    @property
    def assignment(self) -> tuple[str, ...]:
        met = {row.chapter for row in self.rows}
        return self.chapters or tuple(c for c in dict.fromkeys(CHAPTERS.values()) if c in met)

    @property
    def max_points(self) -> int:
        return sum(map(chapter_points, self.assignment))

    def absent(self) -> list[str]:
        """The roster's students with no row, in roster order."""
        present = {self.student(row) for row in self.rows}
        return [name for name in self.roster if name not in present]

    def missing(self) -> list[tuple[str, str]]:
        """(student, chapter) for each chapter of the assignment a student who handed in
        something did not hand in, in the order the students come."""
        handed: dict[str, set[str | None]] = {}
        for row in self.rows:
            handed.setdefault(self.student(row), set()).add(row.chapter)
        return [(name, chapter) for name, chapters in handed.items()
                for chapter in self.assignment if chapter not in chapters]

    def columns(self) -> list[str]:
        """The CSV's exercises: the assignment's and any a row was graded on, in course order."""
        met = set(exercise_names(self.rows))
        return [x for x, c in CHAPTERS.items() if x in met or c in self.assignment]


def totals(book: Gradebook) -> list[Total]:
    """A total per student, in the order their first row comes, then the absent ones."""
    best: dict[str, dict[str | None, int]] = defaultdict(dict)
    count: dict[str, int] = defaultdict(int)
    for row in book.rows:
        student = book.student(row)
        mine = best[student]
        count[student] += 1
        if row.chapter in book.assignment:
            mine[row.chapter] = max(mine.get(row.chapter, 0), row.points)
    return [*(Total(name, count[name], sum(chapters.values()), book.max_points)
              for name, chapters in best.items()),
            *(Total(name, 0, 0, book.max_points) for name in book.absent())]


def chapter_points(chapter: str) -> int:
    return sum(POINTS[x] for x, c in CHAPTERS.items() if c == chapter)


def feedback(row: Row) -> str:
    """Why each exercise failed, a line each: `exercise: hint`."""
    return "\n".join(f"{x.name}: {x.hint}" for x in row.exercises if not x.passed and x.hint)


def to_dict(book: Gradebook) -> dict[str, Any]:
    """The `--json` object: the class folder and the assignment's chapters, every submission
    with its student, per exercise how many were graded on it and how many passed, and each
    student's total."""
    summary = {name: {"submissions": 0, "passed": 0} for name in exercise_names(book.rows)}
    for row in book.rows:
        for x in row.exercises:
            summary[x.name]["submissions"] += 1
            summary[x.name]["passed"] += x.passed
    return {"folder": book.root, "chapters": list(book.assignment),
            "submissions": [{"student": book.student(row)} | row.to_dict()
                            for row in book.rows],
            "exercises": summary, "students": [total.to_dict() for total in totals(book)]}


def exercise_names(rows: Sequence[Row]) -> list[str]:
    """The exercises the rows were graded on, in course order."""
    met = {x.name for row in rows for x in row.exercises}
    return [name for name in CHAPTERS if name in met]


def _safe(value: object) -> object:
    if isinstance(value, str) and value.startswith(_FORMULA):
        return "'" + value
    return value


def check_csv(path: Path, inputs: Sequence[Path]) -> None:
    """Refuse, before any grading, a CSV path that is one of the submissions, a folder, or in
    a folder this user cannot write: a `LabError` line."""
    target = path.resolve()
    if any(target == p.resolve() for p in inputs):
        raise LabError("csv_is_a_submission", N_("--csv {path}: that is one of the submissions "
                                                 "to grade; choose another file"), path=path)
    if path.is_dir():
        raise LabError("csv_is_a_folder", N_("--csv {path}: a folder, not a file"), path=path)
    folder = target.parent
    if not folder.is_dir():
        raise LabError("csv_no_folder", N_("--csv {path}: no folder {folder}"),
                       path=path, folder=folder)
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise LabError("csv_not_writable", N_("--csv {path}: not writable by this user"),
                       path=path)


def write_csv(book: Gradebook, path: Path) -> None:
    """The gradebook's CSV (docs/grading.md): a row per submission, one per chapter of the
    assignment a student did not hand in, one per student on the roster who handed nothing
    in, then a `total` row per student."""
    names = book.columns()
    blank = ["" for _ in names]
    try:
        with path.open("w", newline="", encoding="utf-8") as f:
            out = csv.writer(f)
            out.writerow(["student", "chapter", "path", *names, "points", "max_points", "error",
                          "feedback"])
            for row in book.rows:
                earned = {x.name: x.points for x in row.exercises}
                out.writerow([_safe(v) for v in (
                    book.student(row), row.chapter or "", book.relative(row),
                    *(earned.get(n, "") for n in names), row.points, row.max_points,
                    row.error or "", feedback(row))])
            for name, chapter in book.missing():
                out.writerow([_safe(name), chapter, "", *blank, 0, chapter_points(chapter),
                              _(NO_SUBMISSION), ""])
            for name in book.absent():
                out.writerow([name, "", "", *blank, 0, book.max_points, _(NO_SUBMISSION), ""])
            for total in totals(book):
                out.writerow([_safe(total.student), "total", "", *blank, total.points,
                              total.max_points, "", ""])
    except OSError as exc:
        raise LabError("cannot_write", N_("cannot write {path}: {reason}"),
                       path=path, reason=exc.strerror or exc) from exc


def table(book: Gradebook, width: int) -> str:
    """One line per submission (its passed exercises and error), per chapter not handed in and
    per absent student, then one per exercise, then one per student."""
    lines = format_table([*({
        "student": book.student(row), "submission": book.relative(row),
        "chapter": row.chapter or "-", "points": f"{row.points}/{row.max_points}",
        "passed": " ".join(x.name if x.passed else f"{x.name}({x.points}/{x.max_points})"
                           for x in row.exercises if x.points) or "-",
        "error": row.error or ""} for row in book.rows), *({
        "student": name, "submission": "-", "chapter": chapter,
        "points": f"0/{chapter_points(chapter)}", "passed": "-", "error": _(NO_SUBMISSION)}
        for name, chapter in book.missing()), *({
        "student": name, "submission": "-", "chapter": "-", "points": f"0/{book.max_points}",
        "passed": "-", "error": _(NO_SUBMISSION)} for name in book.absent())], width=width,
        keep=("submission", "chapter"))
    summary = to_dict(book)["exercises"]
    passed = [f"{name}: {s['passed']}/{s['submissions']} passed" for name, s in summary.items()]
    students = format_table([{"student": t.student, "notebooks": t.submissions,
                              "total": f"{t.points}/{t.max_points}"} for t in totals(book)],
                            width=width)
    why = (["", _("why each exercise failed: the feedback column of --csv FILE, or --json")]
           if any(not x.passed for row in book.rows for x in row.exercises) else [])
    return "\n".join([lines, *(["", *passed] if passed else []), "", students, *why])
