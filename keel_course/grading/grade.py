"""Grading a class: find the submitted notebooks, grade each in its own process, several at
once, and give every submission its row - a broken one with its error, never stopping the rest.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from keel_checks.check import POINTS
from keel_checks.progress import CHAPTERS
from keel_course.grading import sandbox
from keel_course.grading.gradebook import Exercise, Row
from keel_course.grading.plan import Plan, plan
from keel_course.grading.remote import Judgement
from keel_course.grading.submission import read_submission
from keel_lab._core.errors import LabError
from keel_lab._i18n import N_

TIMEOUT = 60.0  # seconds for one submission, its imports and every check included
MAX_ERROR = 1000
GRADED = tuple(dict.fromkeys(CHAPTERS.values()))  # the chapters with exercises, in course order


def chapters(given: Iterable[str] | None = None) -> tuple[str, ...]:
    """The chapters an assignment names (`--chapter`, repeated or a comma list), each by its name
    or number (`03_batching`, `03`), in course order; every chapter with exercises when none is
    given. A notebook without exercises (00_asyncio_primer, 08a_screen_frames) is no chapter."""
    if given is None:
        return GRADED
    wanted = set()
    for piece in (p.strip() for text in given for p in text.split(",")):
        named = [c for c in GRADED if piece in (c, c.split("_", 1)[0])]
        if not named:
            raise LabError("unknown_chapter", N_("{given!r} is not a chapter's name or number "
                                                 "(the chapters with exercises: {chapters})"),
                           given=piece[:40], chapters=", ".join(GRADED))
        wanted.update(named)
    return tuple(c for c in GRADED if c in wanted)


def find_submissions(paths: Iterable[Path], warn: Callable[[str], None]) -> list[Path]:
    """Every notebook the paths name: a file as given (whatever its name or kind: a file that
    is not a notebook, a FIFO or a device gets its row, never read), a folder searched
    recursively for `*.ipynb` (any case) without following links or entering hidden folders
    (`.ipynb_checkpoints`). A path that does not exist is `warn`ed about; `LabError` when
    nothing is left to grade."""
    found: dict[Path, Path] = {}
    for path in paths:
        if path.is_dir():
            inside = sorted(_notebooks(path))
            if not inside:
                warn(f"{path}: no *.ipynb in this folder")
            found.update((p.resolve(), p) for p in inside)
        elif path.exists():
            found.setdefault(path.resolve(), path)
        else:
            warn(f"{path}: no such file or folder")
    if not found:
        raise LabError("nothing_to_grade", N_("no notebook to grade: {paths}"),
                       paths=", ".join(map(str, paths)))
    return list(found.values())


def _notebooks(folder: Path) -> Iterable[Path]:
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        yield from (Path(root) / f for f in files if f.lower().endswith(".ipynb"))


def grade(paths: Sequence[Path], timeout: float = TIMEOUT, jobs: int | None = None,
          done: Callable[[int], object] = lambda n: None,
          only: Collection[str] = ()) -> list[Row]:
    """A row per submission, in the order of `paths`; `done(1)` after each (a progress bar).
    With `only` (chapters), a notebook of another chapter gets no row (see `grade_one`)."""
    def one(path: Path) -> Row | None:
        row = grade_one(path, timeout, only)
        done(1)
        return row

    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        return [row for row in pool.map(one, paths) if row is not None]


def grade_one(path: Path, timeout: float = TIMEOUT, only: Collection[str] = ()) -> Row | None:
    """The submission's row; None when `only` names chapters and the notebook is of another
    (read, never run). A notebook whose chapter cannot be told keeps its error row."""
    try:
        the_plan = plan(read_submission(path))
    except LabError as exc:
        return _kept(_unread(path, str(exc)), only)
    if the_plan.chapter is None:
        return _kept(_unread(path, the_plan.error or ""), only)
    if only and the_plan.chapter not in only:
        return None
    try:
        outcome = sandbox.run(the_plan, timeout) if the_plan.to_run else sandbox.Outcome()
    except LabError:
        raise  # the grader's own setup (grading as root without a sandbox): the whole run
    except Exception as exc:  # whatever a submission made of the grader: its row, not the run
        outcome = sandbox.Outcome(stopped=f"grading failed: {type(exc).__name__}: {exc}"[:300])
    return _row(path, the_plan, outcome)


def _kept(row: Row, only: Collection[str]) -> Row | None:
    return None if only and row.chapter is not None and row.chapter not in only else row


def _unread(path: Path, error: str) -> Row:
    """The row of a submission that could not be graded: its chapter's exercises at 0 points
    when its file name names a chapter (`05_partial_success.ipynb`), so a gradebook still sees
    what it was worth; else no chapter."""
    chapter = next((c for c in GRADED if c in path.name), None)
    exercises = tuple(Exercise(x, False, 0, POINTS[x], "not graded: see the error")
                      for x, c in CHAPTERS.items() if c == chapter)
    return Row(str(path), chapter, exercises, _bounded([error]))


def _row(path: Path, the_plan: Plan, outcome: sandbox.Outcome) -> Row:
    exercises = []
    for name in the_plan.exercises:
        passed, hint, points = outcome.verdicts.get(
            name, Judgement(False, the_plan.refused.get(name)))
        if hint is None and not passed:
            hint = f"not checked: {outcome.stopped}"
        exercises.append(Exercise(name, passed, points, POINTS[name], hint))
    untouched = ([NOT_STARTED] if the_plan.stubs and the_plan.stubs == set(the_plan.exercises)
                 else [])
    problems = [*untouched, *(why for x, why in the_plan.refused.items()
                              if x not in the_plan.stubs), *outcome.errors,
                *([outcome.stopped] if outcome.stopped else [])]
    return Row(str(path), the_plan.chapter, tuple(exercises), _bounded(problems))


NOT_STARTED = "not started: every exercise is still the handout's stub"


def _bounded(problems: list[str]) -> str | None:
    text = "; ".join(problems)
    return (text if len(text) <= MAX_ERROR else text[: MAX_ERROR - 3] + "...") or None
