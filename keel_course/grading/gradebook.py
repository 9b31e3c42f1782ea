"""A class's grades: one row per submission, as the JSON object `keel-course grade --json` prints,
as a CSV file for a gradebook or an LMS, and as a table for the terminal.

The CSV has one row per submission and one column per exercise (the points it earned; empty for
an exercise of another chapter). A text cell that a spreadsheet would run as a formula (it
starts with `=`, `+`, `-`, `@`, a tab or a carriage return - file names and error lines come
from the students) is written with a leading `'`.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.core.tables import format_table
from keel_lab.course.progress import CHAPTERS

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


def exercise_names(rows: Sequence[Row]) -> list[str]:
    """The exercises the rows were graded on, in course order."""
    met = {x.name for row in rows for x in row.exercises}
    return [name for name in CHAPTERS if name in met]


def to_dict(rows: Sequence[Row]) -> dict[str, Any]:
    """The `--json` object: every submission, and per exercise how many were graded on it and
    how many passed."""
    summary = {name: {"submissions": 0, "passed": 0} for name in exercise_names(rows)}
    for row in rows:
        for x in row.exercises:
            summary[x.name]["submissions"] += 1
            summary[x.name]["passed"] += x.passed
    return {"submissions": [row.to_dict() for row in rows], "exercises": summary}


def _safe(value: object) -> object:
    if isinstance(value, str) and value.startswith(_FORMULA):
        return "'" + value
    return value


def check_csv(path: Path, inputs: Sequence[Path]) -> None:
    """Refuse, before any grading, a CSV path that is one of the submissions, a folder, or in
    a folder this user cannot write: a `LabError` line."""
    target = path.resolve()
    if any(target == p.resolve() for p in inputs):
        raise LabError(f"--csv {path}: that is one of the submissions to grade; choose another "
                       "file")
    if path.is_dir():
        raise LabError(f"--csv {path}: a folder, not a file")
    folder = target.parent
    if not folder.is_dir():
        raise LabError(f"--csv {path}: no folder {folder}")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise LabError(f"--csv {path}: not writable by this user")


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
    except OSError as exc:
        raise LabError(f"cannot write {path}: {exc.strerror or exc}") from exc


def table(rows: Sequence[Row], width: int) -> str:
    """One line per submission (its passed exercises and error), then one per exercise."""
    lines = format_table([{
        "submission": row.path, "chapter": row.chapter or "-",
        "points": f"{row.points}/{row.max_points}",
        "passed": " ".join(x.name for x in row.exercises if x.passed) or "-",
        "error": row.error or ""} for row in rows], width=width)
    summary = to_dict(rows)["exercises"]
    totals = [f"{name}: {s['passed']}/{s['submissions']} passed" for name, s in summary.items()]
    return "\n".join([lines, "", *totals] if totals else [lines])
