"""`check(fn)`: the verdict on an exercise function, found by its name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from keel_lab.course.checks.batching import verify_make_batches
from keel_lab.course.checks.history import verify_answer_all
from keel_lab.course.checks.pairing import verify_pair_results
from keel_lab.course.checks.partial_success import verify_run_status
from keel_lab.course.checks.streaming import verify_is_executable
from keel_lab.course.checks.verdict import Verdict

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
