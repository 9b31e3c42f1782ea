"""`check(fn)`: the verdict on an exercise function, found by its name."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from keel_lab._i18n import _
from keel_lab.course._checks.verdict import ExerciseNotPassed, Verdict
from keel_lab.course._exercises import EXERCISES
from keel_lab.course._named import load
from keel_lab.course._progress import record


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
        found: Callable[..., Verdict] = load(target, "keel_lab.course._checks")
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._targets)

    def __len__(self) -> int:
        return len(self._targets)


# Views of the exercise table, derived at import. Each exercise's verifier, module:function under
# keel_lab.course._checks: a module-level dict, so the grader's snapshot watches its contents.
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
    """Print the verdict on an exercise function (found by its name), then raise
    `ExerciseNotPassed` with the hints unless it passed, so a failing check fails its cell for
    every grader; a pass returns nothing, so a notebook cell shows only the verdict lines."""
    __tracebackhide__ = True  # pytest and IPython show the hints, not this frame
    wrong = misnamed(getattr(fn, "__name__", fn))
    if wrong:
        raise ExerciseNotPassed(wrong)
    verdict = VERIFIERS[fn.__name__](fn)
    print(verdict)
    record(verdict)  # the learner's progress file; never fails the check, prints nothing
    if not verdict.passed:
        raise ExerciseNotPassed("\n".join(verdict.hints) or _("no check ran"))
