"""`check(fn)`: the verdict on an exercise function, found by the exercise name it is bound to."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from keel_checks.exercises import EXERCISES
from keel_checks.progress import record
from keel_checks.verdict import ExerciseNotPassed, Verdict, advice_first
from keel_lab._i18n import _
from keel_lab.course._named import load


class _Verifiers(Mapping[str, Callable[..., Verdict]]):
    """Exercise name -> its verifier, whose module loads on first use: a check loads its own
    chapter's verifier only. `dict(VERIFIERS)` loads them all (the grader does, before any
    submitted code runs)."""

    def __init__(self, targets: dict[str, str]) -> None:
        self._targets = targets

    def __getitem__(self, name: str) -> Callable[..., Verdict]:
        target = self._targets.get(name) if isinstance(name, str) else None
        if target is None:
            raise KeyError(name)
        found: Callable[..., Verdict] = load(target, "keel_checks")
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._targets)

    def __len__(self) -> int:
        return len(self._targets)


# Views of the exercise table, derived at import. Each exercise's verifier, module:function under
# keel_checks: a module-level dict, so the grader's snapshot watches its contents.
TARGETS: dict[str, str] = {x.name: x.verifier for x in EXERCISES}
VERIFIERS = _Verifiers(TARGETS)

# What each exercise is worth when a class is graded (`keel-course grade`, nbgrader): one table
# for every grader.
POINTS: dict[str, int] = {x.name: x.points for x in EXERCISES}


def misnamed(name: object) -> str | None:
    """Why a function of this name, bound to no exercise's name, is no exercise, or None; the
    grader asks too, so its verdict is the notebook's."""
    if isinstance(name, str) and name in VERIFIERS:
        return None
    return _("no exercise is called {name}; exercises: {names}").format(
        name=repr(name), names=", ".join(VERIFIERS))


def exercise_of(fn: object, where: Mapping[str, Any]) -> str | None:
    """The exercise `fn` answers: the exercise name it is bound to in `where` (the namespace the
    check runs in), so a lambda, a `functools.partial`, a callable object or a function defined
    under another name and assigned is judged as what it answers; else its own `__name__`. The
    grader serves a submission's function by the exercise name it is bound to, so both agree."""
    bound = [name for name in VERIFIERS if where.get(name) is fn]
    if len(bound) == 1:
        return bound[0]
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) and name in VERIFIERS else None


def check(fn: Callable[..., Any]) -> None:
    """Print the verdict on an exercise function (found by the exercise name it is bound to,
    or its own name: `exercise_of`). In a notebook, an answer
    that does not pass yet shows NOT YET and its hints where it stands, and the notebook runs on,
    as otter-grader's checks do: Run All reaches the end. Where a failure must fail its cell
    (`make check`, nbval on the learner's copy, nbgrader: they set `KEEL_CHECKS=raise`), it
    raises `ExerciseNotPassed` with the hints. A pass returns nothing, so a notebook cell shows
    only the verdict lines."""
    __tracebackhide__ = True  # pytest and IPython show the hints, not this frame
    exercise = exercise_of(fn, sys._getframe(1).f_globals)
    if exercise is None:
        _not_yet(misnamed(getattr(fn, "__name__", fn)) or "")
        return
    verdict = VERIFIERS[exercise](fn)
    print(verdict)
    record(verdict)  # the learner's progress file; never fails the check, prints nothing
    if not verdict.passed:
        _not_yet("\n".join(map(advice_first, verdict.hints)) or _("no check ran"), shown=True)


SWITCH = "KEEL_CHECKS"  # "raise": a check that does not pass fails its cell


def _not_yet(hints: str, shown: bool = False) -> None:
    """A check that did not pass: raised where the switch says so, else shown (once)."""
    __tracebackhide__ = True
    if os.environ.get(SWITCH) == "raise":
        raise ExerciseNotPassed(hints)
    if not shown:
        print(hints)
