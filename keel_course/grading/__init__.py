"""`keel-course grade`: grading a class's submitted notebooks by what their functions do.

Each submission is read as untrusted input (`submission`), planned - its chapter, the code that
runs, the exercises refused without running (`plan`) - and run in a process of its own
(`sandbox`, `child`) with the same verifiers as the checks, while `integrity` watches the lab's
code for changes. `grade` runs a class, `gradebook` writes the JSON, CSV and table.
"""

from keel_course.grading.grade import find_submissions, grade, grade_one
from keel_course.grading.gradebook import Exercise, Row

__all__ = ["Exercise", "Row", "find_submissions", "grade", "grade_one"]
