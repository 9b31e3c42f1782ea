"""`keel-course grade` on a class: 30 submissions of chapter 2 (the slowest check: it runs the
lesson's acceptance test), a third solved, a third unsolved, a third wrong, graded 2 at once.
The budget: 90 s on 2 cores. CPU time (of the sandboxed submissions' processes and of the
grader, whose own process now makes every verdict) is printed beside the wall time, which other
processes on the machine lengthen.
Run: .venv/bin/python bench/grading.py
"""

from __future__ import annotations

import copy
import json
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from keel_cli._cells import tags
from keel_course.editions import fill_solutions
from keel_course.grading import grade

ROOT = Path(__file__).resolve().parent.parent / "notebooks"
CHAPTER, SUBMISSIONS, JOBS, BUDGET_S = "02_pairing", 30, 2, 90.0
WRONG = "def pair_results(calls, results):\n    return list(zip(calls, results))\n"


def submissions() -> list[dict[str, Any]]:
    learner = json.loads((ROOT / f"{CHAPTER}.ipynb").read_text("utf-8"))
    solved = fill_solutions(learner, json.loads(
        (ROOT / "solutions" / f"{CHAPTER}.ipynb").read_text("utf-8")))
    wrong = copy.deepcopy(solved)
    [c for c in wrong["cells"] if "exercise" in tags(c)][1]["source"] = WRONG
    return [(solved, learner, wrong)[i % 3] for i in range(SUBMISSIONS)]


def main() -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, nb in enumerate(submissions()):
            paths.append(Path(tmp) / f"student_{i:02}.ipynb")
            paths[-1].write_text(json.dumps(nb), "utf-8")
        own = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        rows = grade(paths, jobs=JOBS)
        wall = time.perf_counter() - start
    children, grader = (resource.getrusage(r) for r in (resource.RUSAGE_CHILDREN,
                                                         resource.RUSAGE_SELF))
    cpu = (children.ru_utime + children.ru_stime + grader.ru_utime + grader.ru_stime
           - own.ru_utime - own.ru_stime)
    assert [r.points for r in rows[:3]] == [3, 0, 1] and all(r.error is None for r in rows)
    verdict = "within" if wall <= BUDGET_S else "OVER"
    return {f"`keel-course grade`, {SUBMISSIONS} submissions of {CHAPTER}, {JOBS} jobs":
            f"{wall:.1f} s ({verdict} the {BUDGET_S:.0f} s budget); CPU {cpu:.1f} s, "
            f"{cpu / SUBMISSIONS:.2f} s a submission"}


if __name__ == "__main__":
    for k, v in main().items():
        print(f"{k}: {v}")
