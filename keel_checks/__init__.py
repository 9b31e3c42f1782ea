"""The course's exercises and the checks that judge them, beside the lab, as otter-grader stands
beside a course's material: keel_lab holds the lesson a learner reads, this package the exercise
table (`exercises`), their checks, verdicts and the learner's progress log (`progress`).
Notebooks reach `check` and `show_progress` through `keel_lab.course`. A check judges what a
learner's function does, not its text.

`check(fn)` runs the verifier of the exercise whose name `fn` is bound to. A passing function
prints the same lines whatever its implementation, so the solution notebooks compare them with
saved output; an answer that only calls the lab's own implementation is reported as such
(`delegation`).
"""

from keel_checks.check import VERIFIERS, check
from keel_checks.progress import show_progress
from keel_checks.verdict import ExerciseNotPassed, Verdict

__all__ = ["VERIFIERS", "ExerciseNotPassed", "Verdict", "check", "show_progress"]
