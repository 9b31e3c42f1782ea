"""A class's grades: one row per submission, as the JSON object `keel-course grade --json` prints,
as a CSV file for a gradebook or an LMS, and as a table for the terminal.

The CSV has one row per submission and one column per exercise (the points it earned; empty for
an exercise of another chapter), then one `total` row per student. A student is told by folder,
as `keel-course classroom collect` lays a class out (`<collection>/<student>/notebooks/...`):
the folder right below the one every submission shares; submissions directly in that shared
folder (one student's chapters, or loose files) count as one. A text cell that a spreadsheet
would run as a formula (it starts with `=`, `+`, `-`, `@`, a tab or a carriage return - file
names and error lines come from the students) is written with a leading `'`.
"""

from __future__ import annotations

import csv
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keel_checks.progress import CHAPTERS
from keel_lab._core.errors import LabError
from keel_lab._core.tables import format_table
from keel_lab._i18n import N_

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


@dataclass(frozen=True)
class Total:
    """One student's points over every chapter graded: their folder, as the paths name it."""

    folder: str
    submissions: int
    points: int
    max_points: int

    def to_dict(self) -> dict[str, Any]:
        return {"folder": self.folder, "submissions": self.submissions, "points": self.points,
                "max_points": self.max_points}


def totals(rows: Sequence[Row]) -> list[Total]:
    """A total per student (see the module's note), in the order their first row comes."""
    if not rows:
        return []
    relative = all(not os.path.isabs(row.path) for row in rows)  # kept as given, unless mixed
    parents = [os.path.dirname(os.path.normpath(row.path) if relative
                               else os.path.abspath(row.path)) or os.curdir for row in rows]
    shared = os.path.commonpath(parents) or os.curdir
    groups: dict[str, list[Row]] = defaultdict(list)
    for row, parent in zip(rows, parents, strict=True):
        below = os.path.relpath(parent, shared).split(os.sep)[0]
        groups[shared if below == os.curdir
               else os.path.normpath(os.path.join(shared, below))].append(row)
    return [Total(folder, len(mine), sum(r.points for r in mine), sum(r.max_points for r in mine))
            for folder, mine in groups.items()]


def exercise_names(rows: Sequence[Row]) -> list[str]:
    """The exercises the rows were graded on, in course order."""
    met = {x.name for row in rows for x in row.exercises}
    return [name for name in CHAPTERS if name in met]


def to_dict(rows: Sequence[Row]) -> dict[str, Any]:
    """The `--json` object: every submission, per exercise how many were graded on it and how
    many passed, and each student's total."""
    summary = {name: {"submissions": 0, "passed": 0} for name in exercise_names(rows)}
    for row in rows:
        for x in row.exercises:
            summary[x.name]["submissions"] += 1
            summary[x.name]["passed"] += x.passed
    return {"submissions": [row.to_dict() for row in rows], "exercises": summary,
            "students": [total.to_dict() for total in totals(rows)]}


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


def write_csv(rows: Sequence[Row], path: Path) -> None:
    names = exercise_names(rows)
    try:
        with path.open("w", newline="", encoding="utf-8") as f:
            out = csv.writer(f)
            out.writerow(["path", "chapter", *names, "points", "max_points", "error"])
            for row in rows:
                earned = {x.name: x.points for x in row.exercises}
                out.writerow([_safe(v) for v in (
                    row.path, row.chapter or "", *(earned.get(n, "") for n in names),
                    row.points, row.max_points, row.error or "")])
            for total in totals(rows):
                out.writerow([_safe(total.folder), "total", *("" for _ in names), total.points,
                              total.max_points, ""])
    except OSError as exc:
        raise LabError("cannot_write", N_("cannot write {path}: {reason}"),
                       path=path, reason=exc.strerror or exc) from exc


def table(rows: Sequence[Row], width: int) -> str:
    """One line per submission (its passed exercises and error), then one per exercise, then
    one per student."""
    lines = format_table([{
        "submission": row.path, "chapter": row.chapter or "-",
        "points": f"{row.points}/{row.max_points}",
        "passed": " ".join(x.name for x in row.exercises if x.passed) or "-",
        "error": row.error or ""} for row in rows], width=width)
    summary = to_dict(rows)["exercises"]
    passed = [f"{name}: {s['passed']}/{s['submissions']} passed" for name, s in summary.items()]
    students = format_table([{"student": t.folder, "notebooks": t.submissions,
                              "total": f"{t.points}/{t.max_points}"} for t in totals(rows)],
                            width=width)
    return "\n".join([lines, *(["", *passed] if passed else []), "", students])
