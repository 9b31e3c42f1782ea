"""The README's course table is what scripts/course_table.py computes from the notebooks now."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("course_table", ROOT / "scripts" / "course_table.py")
assert spec is not None and spec.loader is not None
course_table = importlib.util.module_from_spec(spec)
sys.modules["course_table"] = course_table  # its dataclass looks its module up
spec.loader.exec_module(course_table)


def test_the_readme_table_is_current():
    chapters = [course_table.chapter(p)
                for p in sorted((ROOT / "notebooks" / "solutions").glob("[0-9][0-9]_*.ipynb"))]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"<!-- course-table -->\n(.*?)\n<!-- /course-table -->", readme, re.DOTALL)
    assert shown and shown.group(1) == course_table.table(chapters), \
        "run .venv/bin/python scripts/course_table.py and paste its table into README.md"


def test_words_leave_out_code_and_link_targets():
    assert course_table.prose_words("Read [the glossary](glossary.md#delta) and `StreamAssembler`"
                                    "\n```python\nx = 1\n```") == 6
    row = course_table.Chapter("x", words=300, code_cells=2, learner_cells=1, exercises=1)
    assert row.minutes == 2 + 2 + 5 + 10
