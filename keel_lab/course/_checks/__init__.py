"""Checks for the notebooks' exercises: they judge what a learner's function does, not its text.

`check(fn)` runs the verifier of the exercise the function is named after. A passing function
prints the same lines whatever its implementation, so the solution notebooks compare them with
saved output; an answer that only calls the lab's own implementation is reported as such
(`delegation`).
"""

from keel_lab.course._checks.check import VERIFIERS, check
from keel_lab.course._checks.verdict import ExerciseNotPassed, Verdict

__all__ = ["VERIFIERS", "ExerciseNotPassed", "Verdict", "check"]
