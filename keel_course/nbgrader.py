"""The course as an nbgrader course: each chapter an assignment, so a class that runs nbgrader
releases and autogrades the chapters with its usual commands (`nbgrader generate_assignment`,
`nbgrader autograde`, the formgrader).

The source notebook of a chapter is its solution notebook with nbgrader's cell metadata
(schema version 3): an exercise cell is an autograded answer (a solution cell, whose
`### BEGIN SOLUTION` block nbgrader replaces with the learner edition's stub), its check cell an
autograded test worth the exercise's `POINTS` (nbgrader gives the points when the cell raises
nothing, and `check` raises unless the exercise passed), every other cell read-only. Chapter 6's
observe cells are solution cells too (nbgrader strips their blocks), worth nothing; its
prediction cells carry no metadata, so the learner may write a letter, and are emptied in the
source already, as in the learner edition. The "Your progress" cells are for a learner working
alone and stay out.
"""

from __future__ import annotations

import copy
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from keel_course.editions import (
    COURSE,
    STUB,
    Notebook,
    learner_edition,
    notebook_text,
    read_notebook,
    solution_paths,
    unmarked,
)
from keel_course.sources import check_outside, failure, reading
from keel_lab.core.errors import LabError
from keel_lab.course.cells import function_name, source, tags
from keel_lab.course.checks.check import POINTS

SCHEMA_VERSION = 3
COURSE_ID = "keel-lab"
# A test cell imports `check` itself: an answer cell that rebinds the name changes nothing.
IMPORT_CHECK = "from keel_lab.course.checks import check\n\n"

CONFIG = f'''"""nbgrader's settings for the keel-lab course, written once by `keel-course nbgrader`
(which never overwrites this file: edit it freely). Run nbgrader's commands in this folder."""

import os

c = get_config()  # noqa: F821 - nbgrader defines it

c.CourseDirectory.course_id = "{COURSE_ID}"
# A released exercise reads as in the lab's learner edition.
c.ClearSolutions.code_stub = {{"python": {STUB!r}}}
# A check runs the lab's experiments: more than nbgrader's 30 s per cell on a slow machine.
c.Execute.timeout = 120
# The checks' progress file is for learners working alone: no file in graded folders.
os.environ["KEEL_PROGRESS"] = "off"
'''


def _metadata(grade_id: str, *, solution: bool = False, grade: bool = False,
              locked: bool = False, points: int | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"grade": grade, "grade_id": grade_id, "locked": locked,
                            "schema_version": SCHEMA_VERSION, "solution": solution}
    if points is not None:
        meta["points"] = points
    return meta


def nbgrader_source(solution: Notebook) -> Notebook:
    """A chapter's nbgrader source notebook, made from its solution notebook."""
    nb = copy.deepcopy(solution)
    learner = learner_edition(solution)["cells"]
    exercise = ""
    for n, cell in enumerate(nb["cells"]):
        kind = tags(cell)
        if "prediction" in kind:
            cell["source"] = learner[n]["source"]
            continue
        if "exercise" in kind:
            exercise = function_name(source(cell))
            meta = _metadata(exercise, solution=True)
        elif "check" in kind:
            if exercise not in POINTS:
                raise LabError(f"exercise {exercise!r} has no points in checks.check.POINTS")
            cell["source"] = IMPORT_CHECK + unmarked(source(cell))
            meta = _metadata(f"{exercise}_check", grade=True, locked=True,
                             points=POINTS[exercise])
        elif "observe" in kind:
            meta = _metadata(f"observe_{function_name(source(cell))}", solution=True)
        else:
            meta = _metadata(str(cell.get("id") or f"cell-{n}"), locked=True)
        cell.setdefault("metadata", {})["nbgrader"] = meta
    return nb


def layout_course(root: Path, names: Sequence[str] = ()) -> list[Path]:
    """Write `root/source/<chapter>/<chapter>.ipynb` (with the glossary its links point to) for
    every chapter, or those whose name contains one of `names`, and `root/nbgrader_config.py`
    unless there is one; the files written. A chapter's source is replaced, nothing else of a
    course (its database, submissions, grades) is touched. `LabError`, before anything is
    written, for a folder inside the course's sources (the solutions would go to students), a
    damaged solution notebook, or a config that is a link to nothing (written through, it
    would land outside the course)."""
    check_outside(root)
    config = root / "nbgrader_config.py"
    if config.is_symlink() and not config.exists():
        raise LabError(f"{config} is a link to a missing file: remove it, or point it at your "
                       "nbgrader settings")
    sources = {}
    for path in solution_paths(names):
        with reading(path):
            sources[path] = notebook_text(nbgrader_source(read_notebook(path)))
    written = []
    try:
        for path, text in sources.items():
            folder = root / "source" / path.stem
            folder.mkdir(parents=True, exist_ok=True)
            notebook = folder / path.name
            notebook.write_text(text, encoding="utf-8")
            shutil.copy(COURSE / "glossary.md", folder / "glossary.md")
            written.append(notebook)
        if not config.exists():
            config.write_text(CONFIG, encoding="utf-8")
            written.append(config)
    except OSError as exc:
        raise LabError(f"cannot write the nbgrader course to {root}: {failure(exc)}") from exc
    return written
