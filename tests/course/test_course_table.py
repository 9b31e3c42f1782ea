"""The README's course table is what scripts/course_table.py computes from the notebooks now, and
the core path keeps the size and the hands-on share the course promises."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("course_table", ROOT / "scripts" / "course_table.py")
assert spec is not None and spec.loader is not None
course_table = importlib.util.module_from_spec(spec)
sys.modules["course_table"] = course_table  # its dataclass looks its module up
spec.loader.exec_module(course_table)
NOTEBOOKS = course_table.chapters(ROOT / "notebooks" / "solutions")
CORE = [c for c in NOTEBOOKS if c.core]


def test_the_readme_table_is_current():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"<!-- course-table -->\n(.*?)\n<!-- /course-table -->", readme, re.DOTALL)
    assert shown and shown.group(1) == course_table.table(NOTEBOOKS), \
        "run .venv/bin/python scripts/course_table.py and paste its table into README.md"


@pytest.mark.parametrize("chapter", CORE, ids=lambda c: c.name)
def test_a_core_chapter_is_short_and_asks_the_learner_to_write(chapter):
    assert chapter.words <= 1600 and chapter.minutes <= 50
    assert chapter.exercises >= 1 and chapter.learner_cells >= 3


def test_the_core_path_is_about_five_hours_with_thirty_learner_cells():
    assert [c.name[:2] for c in CORE] == [f"0{n}" for n in range(1, 9)]
    assert sum(c.words for c in CORE) <= 11_000
    assert sum(c.learner_cells for c in CORE) >= 30


def test_the_capstone_is_one_chapter_of_at_most_about_ninety_minutes():
    [capstone] = [c for c in NOTEBOOKS if c.capstone]
    assert capstone.words <= 1600 and capstone.exercises == 1 and 45 <= capstone.minutes <= 95


def test_words_are_runs_of_letters_without_fenced_code_tags_or_link_targets():
    assert course_table.prose_words("Read [the glossary](glossary.md#delta) and `StreamAssembler`"
                                    "\n```python\nx = 1\n```") == 5
    assert course_table.prose_words("<details><summary>Show it</summary> `a.b(c)` - don't") == 6


def test_the_estimate_counts_reading_cells_and_each_exercise_by_its_size():
    row = course_table.Chapter("01_x", words=300, code_cells=2, learner_cells=3,
                               exercise_lines=(10,))
    assert row.core and row.minutes == 2 + 2 + 2 * 3 + (2 + 10)
    assert not course_table.Chapter("07a_quirks", 0, 0, 0, ()).core
    assert course_table.solution_lines("def f():\n    ### BEGIN SOLUTION\n    # a comment\n\n"
                                       "    x = 1\n    return x\n    ### END SOLUTION\n") == 2


@pytest.mark.parametrize("chapter", NOTEBOOKS, ids=lambda c: c.name)
def test_each_notebook_opens_with_its_own_estimate(chapter):
    cells = json.loads((ROOT / "notebooks" / "solutions" / f"{chapter.name}.ipynb").read_text(
        encoding="utf-8"))["cells"]
    [estimate] = [c for c in cells if "estimate" in course_table.tags(c)]
    assert cells.index(estimate) == 1 and "".join(estimate["source"]) == chapter.estimate
