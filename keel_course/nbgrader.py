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
alone and stay out. A deeper notebook (optional, without exercises: every notebook but the
chapters `01_` to `09_`) has nothing to grade: it goes into an assignment of its own, `deeper`,
read-only, laid out with the chapter that links it (`00_asyncio_primer` and `02a_...` with
`02_pairing`). Beside the chapter it was one of the chapter's notebooks, which nbgrader's
autograde looks for in every submission ("No submitted file", once per optional notebook and
student). nbgrader releases each assignment into a folder of its own, so a link to another
assignment's notebook goes `../<assignment>/<notebook>.ipynb`.

The learner edition carries the same metadata on the cells nbgrader grades, and its check cells
are the source's to the character (`editions.graded_cells`), so students may hand in the
handout's notebooks instead of nbgrader's release: nbgrader gives them the points `keel-course
grade` gives a passed or failed exercise (nbgrader's check cell is all or nothing: a partial
answer's `parts` and the refusal of a copy of the lab's code are `keel-course grade`'s alone,
docs/grading.md). `check_submissions` reads what `nbgrader autograde` will, and says which notebooks
it would grade wrongly or stop on (no metadata, a deleted or copied graded cell, damaged
metadata, a misnamed file), why, and what to do.
"""

from __future__ import annotations

import copy
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keel_cli._cells import function_name, source, tags
from keel_course.checkout import Checkout
from keel_course.editions import (
    CHAPTER,
    NBGRADER_SCHEMA,
    STUB,
    Notebook,
    graded_cells,
    learner_edition,
    nbgrader_metadata,
    notebook_text,
    read_notebook,
    solution_paths,
)
from keel_course.grading.submission import read_notebook_bytes
from keel_course.sources import check_outside, failure, reading
from keel_lab._core.errors import LabError
from keel_lab._core.strict_json import read_json
from keel_lab._i18n import N_
from keel_lab.providers._streams.records import decode

SCHEMA_VERSION = NBGRADER_SCHEMA
COURSE_ID = "keel-lab"
# nbgrader's Execute step starts each submission's kernel confined (`nbgrader_kernel`).
CONFIG_LINE = ('c.Execute.kernel_manager_class = '
               '"keel_course.nbgrader_kernel.ConfinedKernelManager"')
DEEPER = "deeper"  # the assignment of the optional notebooks: released, never graded
CONFIG = f'''"""nbgrader's settings for the keel-lab course, written once by `keel-course nbgrader`
(which never overwrites this file: edit it freely). Run nbgrader's commands in this folder."""

import os

c = get_config()  # noqa: F821 - nbgrader defines it

c.CourseDirectory.course_id = "{COURSE_ID}"
# A released exercise reads as in the lab's learner edition.
c.ClearSolutions.code_stub = {{"python": {STUB!r}}}
# Each submission's kernel runs confined by bubblewrap: it cannot read the solutions in source/,
# write gradebook.db or reach the network (docs/grading.md#nbgraders-autograde).
{CONFIG_LINE}
# A check runs the lab's experiments: more than nbgrader's 30 s per cell on a slow machine.
c.Execute.timeout = 120
# The checks' progress file is for learners working alone: no file in graded folders.
os.environ["KEEL_PROGRESS"] = "off"
# A check that does not pass fails its cell, so autograde gives it no points (in a student's
# own notebook it shows NOT YET and the notebook runs on).
os.environ["KEEL_CHECKS"] = "raise"
'''


def nbgrader_source(solution: Notebook) -> Notebook:
    """A chapter's nbgrader source notebook, made from its solution notebook: the graded cells'
    metadata is the learner edition's (`editions.graded_cells`), every other cell read-only."""
    nb = copy.deepcopy(solution)
    learner = learner_edition(solution)["cells"]
    graded = graded_cells(solution)
    exercise = ""
    for n, cell in enumerate(nb["cells"]):
        kind = tags(cell)
        if "exercise" in kind:
            exercise = function_name(source(cell))
        if "prediction" in kind:
            cell["source"] = learner[n]["source"]
            continue
        if "check" in kind:
            if n not in graded:
                raise LabError("exercise_without_points", N_("exercise {exercise!r} has no "
                                                             "points in checks.check.POINTS"),
                               exercise=exercise)
            cell["source"] = learner[n]["source"]
        meta = graded.get(n) or nbgrader_metadata(str(cell.get("id") or f"cell-{n}"),
                                                  locked=True)
        cell.setdefault("metadata", {})["nbgrader"] = meta
    return nb


def assignment(path: Path) -> str:
    """The nbgrader assignment a solution notebook goes into: a chapter's own, else DEEPER."""
    return path.stem if CHAPTER.match(path.name) else DEEPER


def relink(nb: Notebook, here: str, assignments: dict[str, str]) -> Notebook:
    """`nb`, in assignment `here`, with each markdown link to a course notebook of another
    assignment (`assignments`: notebook stem to assignment) pointed into that one's folder."""
    link = re.compile(r"\]\((\w+)\.ipynb")

    def point(match: re.Match[str]) -> str:
        stem = match.group(1)
        there = assignments.get(stem, here)
        return match.group(0) if there == here else f"](../{there}/{stem}.ipynb"

    for cell in nb["cells"]:
        text = source(cell)
        if cell.get("cell_type") == "markdown" and link.search(text):
            cell["source"] = link.sub(point, text).splitlines(keepends=True)
    return nb


def layout_course(checkout: Checkout, root: Path, names: Sequence[str] = ()) -> list[Path]:
    """Write `root/source/<chapter>/<chapter>.ipynb` for every chapter, or those with a
    notebook whose name contains one of `names`, the deeper notebooks they link in
    `root/source/deeper/`, the glossary the links point to beside each, and
    `root/nbgrader_config.py` unless there is one; the files written. A chapter's source is
    replaced, nothing else of a course (its database, submissions, grades) is touched.
    `LabError`, before anything is written, for a folder inside the course's sources (the
    solutions would go to students), a damaged solution notebook, or a config that is a link
    to nothing (written through, it would land outside the course)."""
    check_outside(root, checkout)
    config = root / "nbgrader_config.py"
    if config.is_symlink() and not config.exists():
        raise LabError("dangling_config", N_("{config} is a link to a missing file: remove it, "
                                             "or point it at your nbgrader settings"),
                       config=config)
    chosen = solution_paths(checkout, names)
    sources, texts = {}, {}
    for path in solution_paths(checkout):
        with reading(path):
            solution = read_notebook(path)
            sources[path] = nbgrader_source(solution)
            texts[path] = "".join(source(cell) for cell in solution["cells"])
    chapter = chapters_of(texts)
    wanted = {chapter[p] for p in chosen}
    folders = {p.stem: assignment(p) for p in sources}
    written = []
    try:
        for path, nb in sources.items():
            if chapter[path] not in wanted:
                continue
            folder = root / "source" / folders[path.stem]
            folder.mkdir(parents=True, exist_ok=True)
            notebook = folder / path.name
            notebook.write_text(notebook_text(relink(nb, folders[path.stem], folders)),
                                encoding="utf-8")
            shutil.copy(checkout.notebooks / "glossary.md", folder / "glossary.md")
            written.append(notebook)
        if not config.exists():
            config.write_text(CONFIG, encoding="utf-8")
            written.append(config)
    except OSError as exc:
        raise LabError("course_unwritable", N_("cannot write the nbgrader course to {root}: "
                                               "{reason}"), root=root, reason=failure(exc)
                       ) from exc
    return written


def chapters_of(texts: dict[Path, str]) -> dict[Path, str]:
    """The chapter each solution notebook is laid out with, from the notebooks' texts in course
    order: a chapter's is itself, a deeper notebook's the first chapter that links it (its own
    name when no chapter does)."""
    chapters = [p for p in texts if CHAPTER.match(p.name)]
    return {p: p.stem if p in chapters else next(
        (c.stem for c in chapters if f"]({p.name}" in texts[c]), p.stem) for p in texts}


# Checking what nbgrader's autograde will read. nbgrader matches a submitted notebook's cells
# to its gradebook by their `nbgrader` metadata alone: a test scores only in a cell carrying its
# `grade_id`, so a notebook without the metadata gets 0 points and no message. Metadata outside
# nbgrader's schema, a `grade_id` the assignment lacks, or one carried by two cells (a copied
# cell; nbgrader empties all but the last, then refuses the empty one) stop its autograding.
# A locked cell - a check - is put back as the source has it, whatever the student made of it.
_META_KEYS = {"schema_version", "grade", "locked", "solution", "task", "grade_id", "points",
              "checksum", "cell_type"}
_GRADE_ID = re.compile(r"[A-Za-z0-9_\-]+")
KEEL_GRADE = "grade it with `keel-course grade`, which finds exercises by their functions"
STOPS = "nbgrader's autograde stops on this notebook"


@dataclass(frozen=True)
class Finding:
    """What `check_submissions` says about one submitted notebook (its path relative to the
    course folder): a reason nbgrader would grade it wrongly or not at all (`blocking`), or a
    note on where nbgrader and `keel-course grade` differ."""

    path: str
    text: str
    blocking: bool = True

    def __str__(self) -> str:
        return f"{self.path}: {'' if self.blocking else 'note: '}{self.text}"


@dataclass(frozen=True)
class Expected:
    """A cell of the assignment's source as nbgrader's gradebook has it."""

    grade: bool
    solution: bool
    points: float | None
    source: str


def check_submissions(root: Path, names: Sequence[str] = ()) -> tuple[int, list[Finding]]:
    """Read every notebook `nbgrader autograde` would grade in the course folder `root`
    (`submitted/<student>/<assignment>/<notebook>.ipynb`, of the assignments whose name contains
    one of `names`, or all) against its assignment's source: the number of notebooks expected
    and what is wrong with them. `LabError` when there is nothing to check, or for a source
    notebook `layout_course` did not write."""
    submitted = root / "submitted"
    try:
        if not submitted.is_dir():
            raise LabError("nothing_submitted", N_("{submitted} is not a folder: nothing was "
                                                   "submitted yet (run `nbgrader collect`, or "
                                                   "copy each notebook to "
                                                   "submitted/<student>/<chapter>/<chapter>.ipynb)"),
                           submitted=submitted)
        folders = [a for s in _folders(submitted) for a in _folders(s)
                   if not names or any(n in a.name for n in names)]
        if not folders:
            if names:
                raise LabError("no_matching_submission", N_("no submission in {submitted} of an "
                                                            "assignment matching {names}"),
                               submitted=submitted, names=", ".join(map(repr, names)))
            raise LabError("no_submission", N_("no submission in {submitted}"),
                           submitted=submitted)
        return _check(root, folders)
    except OSError as exc:
        raise LabError("course_unreadable", N_("cannot read the course in {root}: {reason}"),
                       root=root, reason=failure(exc)) from exc


def _folders(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def _check(root: Path, folders: list[Path]) -> tuple[int, list[Finding]]:
    count, findings = 0, []
    for folder in folders:
        expected = sorted((root / "source" / folder.name).glob("*.ipynb"))
        if not expected:
            findings.append(Finding(
                folder.relative_to(root).as_posix(),
                f"source/{folder.name}/ has no notebook, so nbgrader has no assignment "
                f"{_short(folder.name)}: lay it out with `keel-course nbgrader {root} "
                f"{folder.name}`, then run `nbgrader generate_assignment {folder.name}`"))
            continue
        others = sorted({p.name for p in folder.glob("*.ipynb")} - {p.name for p in expected})
        for source_path in expected:
            path = folder / source_path.name
            cells = _expected(source_path)
            if not path.exists() and not any(k.grade or k.solution for k in cells.values()):
                continue  # a deeper notebook, optional: nothing to grade, nothing missing
            count += 1
            where = path.relative_to(root).as_posix()
            if not path.exists():
                findings.append(Finding(where, "missing: nbgrader gives it 0 points; " + (
                    f"rename {_short(others[0])} to {path.name}, the only name nbgrader grades"
                    if others else "ask the student for it")))
                continue
            try:
                nb = read_json(decode(read_notebook_bytes(path), where), where)
            except LabError as exc:
                findings.append(Finding(where, f"nbgrader cannot read it "
                                        f"({str(exc).removeprefix(where + ': ')}); ask the "
                                        "student for the file again"))
                continue
            release = f"release/{folder.name}/{source_path.name}"
            findings.extend(Finding(where, text, blocking) for blocking, text
                            in submission_problems(nb, cells, release))
    return count, findings


def _expected(path: Path) -> dict[str, Expected]:
    """The cells of the source notebook at `path` that carry a `grade_id`, by it."""
    try:
        return expected_cells(read_notebook(path))
    except OSError as exc:
        raise LabError("cannot_read", N_("{path}: cannot read ({reason})"),
                       path=path, reason=exc.strerror or exc) from exc
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError) as exc:
        raise LabError("not_a_source_notebook", N_("{path} is not a source notebook "
                                                   "`keel-course nbgrader` wrote ({error}): lay "
                                                   "the course out again and rerun `nbgrader "
                                                   "generate_assignment`"),
                       path=path, error=type(exc).__name__) from exc


def expected_cells(source_nb: Notebook) -> dict[str, Expected]:
    """The cells of an assignment's source notebook that carry a `grade_id`, by it."""
    cells = {}
    for cell in source_nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader")
        if meta and meta.get("grade_id"):
            cells[meta["grade_id"]] = Expected(bool(meta["grade"]), bool(meta["solution"]),
                                               meta.get("points"), source(cell))
    return cells


def submission_problems(nb: Any, expected: dict[str, Expected],
                        release: str = "the released notebook") -> list[tuple[bool, str]]:
    """What keeps nbgrader from grading the submitted notebook `nb` (any JSON value) against the
    assignment's `expected` cells as `keel-course grade` would, each as (blocking, text) saying
    why and what to do; a non-blocking one is a note."""
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        return [(True, f"not a notebook (a JSON object whose 'cells' are objects): {STOPS}; "
                       "ask the student for the file again")]
    found: dict[str, list[int]] = {}
    problems: list[tuple[bool, str]] = []
    labelled = 0
    for n, cell in enumerate(cells, start=1):
        metadata = cell.get("metadata")
        meta = metadata.get("nbgrader") if isinstance(metadata, dict) else None
        if meta is None:
            continue
        labelled += 1
        damage = _damage(meta, cell.get("cell_type"))
        if damage:
            problems.append((True, f"cell {n}'s nbgrader metadata is damaged ({damage}): "
                                   f"{STOPS}; delete that metadata, or {KEEL_GRADE}"))
            continue
        if not (meta["grade"] or meta["solution"] or meta["locked"]):
            continue
        grade_id = meta["grade_id"]
        known = expected.get(grade_id)
        if known is None:
            problems.append((True, f"cell {n} carries nbgrader metadata for {_short(grade_id)}, "
                                   f"a cell the assignment's source has not: {STOPS}; lay the "
                                   "course out from the version the handout was made from, or "
                                   f"delete that cell's metadata, or {KEEL_GRADE}"))
        elif (meta["grade"], meta["solution"]) != (known.grade, known.solution):
            problems.append((True, f"cell {n}'s nbgrader metadata for {grade_id!r} is not the "
                                   f"course's (its grade or solution flag changed): {STOPS}, "
                                   f"or grades it wrongly; copy the cell back from {release}, "
                                   f"or {KEEL_GRADE}"))
        else:
            found.setdefault(grade_id, []).append(n)
    if not labelled and any(k.grade or k.solution for k in expected.values()):
        return [(True, "no cell carries nbgrader metadata (it was made from an older handout, "
                       "or its cells were pasted into a new notebook): nbgrader would give it 0 "
                       f"points; {KEEL_GRADE}")]
    for grade_id, where in found.items():
        if len(where) > 1:
            problems.append((True, f"cells {', '.join(map(str, where))} carry the same nbgrader "
                                   f"grade_id {grade_id!r} (a copied cell): {STOPS}; delete the "
                                   "copies, or their nbgrader metadata"))
    for grade_id, known in expected.items():
        where = found.get(grade_id, [])
        if not known.grade:
            continue
        if not where:
            problems.append((True, f"the check cell {grade_id!r} is missing (deleted, or its "
                                   f"nbgrader metadata lost): nbgrader would score it 0 (of "
                                   f"{known.points}); paste it back from {release} below its "
                                   f"exercise, or {KEEL_GRADE}"))
        elif len(where) == 1 and _text(cells[where[0] - 1]) != known.source:
            problems.append((False, f"the check cell {grade_id!r} (cell {where[0]}) was edited: "
                                    "nbgrader runs the course's copy in its place, while "
                                    "`keel-course grade` gives no points for a check whose code "
                                    "changed"))
    return problems


def _damage(meta: Any, cell_type: Any) -> str | None:
    """What in a cell's `nbgrader` metadata breaks nbgrader's schema (version 3), or None."""
    if not isinstance(meta, dict):
        return "not an object"
    extra = sorted(set(meta) - _META_KEYS)
    if extra:
        return f"unknown key {_short(extra[0])}"
    version = meta.get("schema_version")
    if version != SCHEMA_VERSION or isinstance(version, bool):
        return f"schema_version {_short(version)}, not {SCHEMA_VERSION}"
    flags = [k for k in ("grade", "solution", "locked") if not isinstance(meta.get(k), bool)]
    if flags:
        return f"{flags[0]!r} is not true or false"
    if not (meta["grade"] or meta["solution"] or meta["locked"]):
        return None
    grade_id = meta.get("grade_id")
    if not isinstance(grade_id, str) or not _GRADE_ID.fullmatch(grade_id):
        return f"grade_id {_short(grade_id)}"
    points = meta.get("points")
    if meta["grade"] and (isinstance(points, bool) or not isinstance(points, int | float)
                          or points < 0):
        return f"points {_short(points)}"
    if cell_type == "markdown" and meta["grade"] != meta["solution"]:
        return "a markdown cell is either graded and a solution, or neither"
    return None


def _text(cell: dict[str, Any]) -> str | None:
    """A submitted cell's source (a string, or a list of strings), or None for anything else."""
    text = cell.get("source")
    if isinstance(text, list) and all(isinstance(line, str) for line in text):
        return "".join(text)
    return text if isinstance(text, str) else None


def _short(value: Any) -> str:
    """A value from a submission, quoted and cut short (it may be any length)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
