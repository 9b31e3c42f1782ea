"""`check(fn)`: the verdict on an exercise function, found by its name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from keel_lab.course.checks.batching import verify_make_batches
from keel_lab.course.checks.collect import verify_collect_batch
from keel_lab.course.checks.history import verify_answer_all
from keel_lab.course.checks.in_order import verify_count_in_order
from keel_lab.course.checks.pairing import verify_pair_results
from keel_lab.course.checks.partial_success import verify_run_status
from keel_lab.course.checks.providers import verify_answer_responses
from keel_lab.course.checks.streaming import verify_is_executable
from keel_lab.course.checks.verdict import ExerciseNotPassed, Verdict
from keel_lab.course.i18n import _
from keel_lab.course.progress import record

VERIFIERS: dict[str, Callable[..., Verdict]] = {
    "answer_all": verify_answer_all, "pair_results": verify_pair_results,
    "make_batches": verify_make_batches, "is_executable": verify_is_executable,
    "run_status": verify_run_status,
    "count_in_order": verify_count_in_order,
    "collect_batch": verify_collect_batch,
    "answer_responses": verify_answer_responses,
}

# What each exercise is worth when a class is graded (`keel-course grade`, nbgrader): the course's
# choice, by the number of ideas an exercise combines; one table for every grader.
POINTS: dict[str, int] = {
    "answer_all": 2, "count_in_order": 1, "pair_results": 2, "make_batches": 2,
    "is_executable": 2, "run_status": 2, "collect_batch": 3, "answer_responses": 2,
}


def check(fn: Callable[..., Any]) -> None:
    """Print the verdict on an exercise function (found by its name), then raise
    `ExerciseNotPassed` with the hints unless it passed, so a failing check fails its cell for
    every grader; a pass returns nothing, so a notebook cell shows only the verdict lines."""
    __tracebackhide__ = True  # pytest and IPython show the hints, not this frame
    verifier = VERIFIERS.get(getattr(fn, "__name__", ""))
    if verifier is None:
        raise ExerciseNotPassed(_("no exercise is called {name}; exercises: {names}").format(
            name=repr(getattr(fn, "__name__", fn)), names=", ".join(VERIFIERS)))
    verdict = verifier(fn)
    print(verdict)
    record(verdict)  # the learner's progress file; never fails the check, prints nothing
    if not verdict.passed:
        raise ExerciseNotPassed("\n".join(verdict.hints) or _("no check ran"))
