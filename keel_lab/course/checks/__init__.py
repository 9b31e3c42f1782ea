"""Checks for the notebooks' exercises: they judge what a learner's function does, not its text.

Each `verify_*` runs the learner's function through the lab's own experiments and returns a
verdict; `check(fn)` picks the verifier by the function's name, prints the verdict's lines and
raises `ExerciseNotPassed` (an `AssertionError`) with the hints when it did not pass. A passing
function prints the same lines whatever its implementation, so the solution notebooks compare
them with saved output; an answer that only calls the lab's own implementation is reported as
such (`delegation`).
"""

from keel_lab.course.checks.batching import verify_make_batches
from keel_lab.course.checks.check import VERIFIERS, check
from keel_lab.course.checks.history import verify_answer_all
from keel_lab.course.checks.pairing import verify_pair_results
from keel_lab.course.checks.partial_success import verify_run_status
from keel_lab.course.checks.streaming import CallView, verify_is_executable
from keel_lab.course.checks.verdict import ExerciseNotPassed, Verdict

__all__ = ["VERIFIERS", "CallView", "ExerciseNotPassed", "Verdict", "check", "verify_answer_all",
           "verify_is_executable", "verify_make_batches", "verify_pair_results",
           "verify_run_status"]
