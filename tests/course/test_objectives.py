"""Every objective of every core chapter is practised and assessed: the chapter declares, for each
"After this chapter you can" bullet, the cells where the learner practises it (code they run,
change or write) and the cells that assess it (a check, a prediction answered back, an observed
fault, a written answer compared with the hidden one) - and docs/authors.md shows the table
scripts/objectives.py computes from those declarations."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("objectives", ROOT / "scripts" / "objectives.py")
assert spec and spec.loader
objectives = importlib.util.module_from_spec(spec)
sys.modules["objectives"] = objectives  # its dataclass looks its module up
spec.loader.exec_module(objectives)
SOLUTIONS = ROOT / "notebooks" / "solutions"
CORE = sorted(SOLUTIONS.glob("0[1-8]_*.ipynb"))


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.stem)
def test_each_objective_is_practised_and_assessed(path):
    cells = {c["id"]: c for c in json.loads(path.read_text(encoding="utf-8"))["cells"]}
    head = next(c for c in cells.values() if objectives.HEAD in objectives.source(c))
    found = objectives.objectives(path)
    assert len(head["metadata"].get("objectives", [])) == len(found) >= 3, (
        "one declaration per objective")
    for o in found:
        assert set(o.activity) <= set(cells) and set(o.assessment) <= set(cells), o
        assert any(cells[c]["cell_type"] == "code" for c in o.activity), (
            f"{o.text}: practised only by reading")
        assert o.assessment, f"{o.text}: not assessed"
        for cell in o.assessment:
            kind = set(objectives.tags(cells[cell]))
            assert kind & objectives.ASSESSING, f"{o.text}: {cell} assesses nothing"
            described = objectives.describe(cell, list(cells.values()))
            assert described != "written summary", f"{o.text}: a summary is not its assessment"


def test_the_authors_table_is_current():
    authors = (ROOT / "docs" / "authors.md").read_text(encoding="utf-8")
    shown = re.search(r"<!-- objectives -->\n(.*?)\n<!-- /objectives -->", authors, re.DOTALL)
    assert shown and shown.group(1) == objectives.table(SOLUTIONS), (
        "run .venv/bin/python scripts/objectives.py and paste its table into docs/authors.md")
    assert "**none**" not in shown.group(1)
