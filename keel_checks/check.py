"""`check(fn)`: the verdict on an exercise function, found by its name."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from keel_checks.exercises import EXERCISES
from keel_checks.progress import record
from keel_checks.verdict import ExerciseNotPassed, Verdict
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
    """Why a function of this `__name__` is no exercise (a lambda, a renamed copy), or None; the
    grader asks too, so its verdict is the notebook's."""
    if isinstance(name, str) and name in VERIFIERS:
        return None
    return _("no exercise is called {name}; exercises: {names}").format(
        name=repr(name), names=", ".join(VERIFIERS))


def check(fn: Callable[..., Any]) -> None:
    """Print the verdict on an exercise function (found by its name). In a notebook, an answer
    that does not pass yet shows NOT YET and its hints where it stands, and the notebook runs on,
    as otter-grader's checks do: Run All reaches the end. Where a failure must fail its cell
    (`make check`, nbval on the learner's copy, nbgrader: they set `KEEL_CHECKS=raise`), it
    raises `ExerciseNotPassed` with the hints. A pass returns nothing, so a notebook cell shows
    only the verdict lines."""
    __tracebackhide__ = True  # pytest and IPython show the hints, not this frame
    wrong = misnamed(getattr(fn, "__name__", fn))
    if wrong:
        _not_yet(wrong)
        return
    verdict = VERIFIERS[fn.__name__](fn)
    print(verdict)
    record(verdict)  # the learner's progress file; never fails the check, prints nothing
    if not verdict.passed:
        _not_yet("\n".join(verdict.hints) or _("no check ran"), shown=True)


SWITCH = "KEEL_CHECKS"  # "raise": a check that does not pass fails its cell


def _not_yet(hints: str, shown: bool = False) -> None:
    """A check that did not pass: raised where the switch says so, else shown (once)."""
    __tracebackhide__ = True
    if os.environ.get(SWITCH) == "raise":
        raise ExerciseNotPassed(hints)
    if not shown:
        print(hints)
