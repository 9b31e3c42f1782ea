"""Checks for the notebooks' exercises: they judge what a learner's function does, not its text.

Each `verify_*` runs the learner's function through the lab's own experiments and returns a
verdict; `check(fn)` picks the verifier by the function's name and prints the verdict's lines.
A passing function prints the same lines whatever its implementation, so a notebook can compare
them with saved output; a failing one prints a hint of what went wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .answers import verify_answer_all
from .batches import verify_make_batches
from .executable import CallView, verify_is_executable
from .pairing import verify_pair_results
from .status import verify_run_status
from .verdict import Verdict

VERIFIERS: dict[str, Callable[..., Verdict]] = {
    "answer_all": verify_answer_all, "pair_results": verify_pair_results,
    "make_batches": verify_make_batches, "is_executable": verify_is_executable,
    "run_status": verify_run_status,
}


def check(fn: Callable[..., Any]) -> None:
    """Print the verdict on an exercise function (found by its name); returns nothing, so a
    notebook cell shows only the verdict lines."""
    verifier = VERIFIERS.get(getattr(fn, "__name__", ""))
    if verifier is None:
        print(f"no exercise is called {getattr(fn, '__name__', fn)!r}; exercises: "
              + ", ".join(VERIFIERS))
        return
    print(verifier(fn))


__all__ = ["VERIFIERS", "CallView", "Verdict", "check", "verify_answer_all",
           "verify_is_executable", "verify_make_batches", "verify_pair_results",
           "verify_run_status"]
