"""docs/instructors-guide.md stays true: its generated parts equal what the notebooks, the checks
and the checks' test tables give now, and its hand-written class plans match the notebooks."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from keel_course.editions import exercises
from keel_lab.course.checks import VERIFIERS

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("make_guide", ROOT / "scripts" / "make_guide.py")
assert spec is not None and spec.loader is not None
guide_script = importlib.util.module_from_spec(spec)
sys.modules["make_guide"] = guide_script
spec.loader.exec_module(guide_script)

GUIDE = guide_script.GUIDE.read_text(encoding="utf-8")
CHAPTERS = guide_script.chapters()
PLANS = guide_script.plans(GUIDE)
ACTIVITIES = {"lecture", "exercise", "discussion"}


def test_every_generated_part_is_current():
    assert guide_script.stale(GUIDE) == [], "run .venv/bin/python scripts/make_guide.py"


def test_every_chapter_has_its_parts():
    regions = {(m.group(2), m.group(3)) for m in guide_script.REGION.finditer(GUIDE)}
    for chapter in CHAPTERS:
        assert {("goals", chapter), ("answers", chapter)} <= regions
        nb = guide_script.notebook(chapter)
        assert {("misconceptions", e) for e in exercises(nb)} <= regions
        assert f"## {guide_script.title(chapter)}\n" in GUIDE
    assert ("overview", "course") in regions


def test_every_exercise_has_a_table_of_wrong_answers():
    assert set(guide_script.WRONG_ANSWERS) == set(VERIFIERS)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_class_plan_covers_the_chapter_in_order_and_adds_up(chapter):
    total, rows = PLANS[chapter]
    assert [s for _, _, covered, _ in rows for s in covered] == guide_script.sections(chapter)
    assert sum(minutes for minutes, _, _, _ in rows) == total
    assert {activity for _, activity, _, _ in rows} <= ACTIVITIES
    assert rows[-1][1] == "discussion"
    exercise_rows = [r for r in rows if any(s.startswith("Exercise") for s in r[2])]
    assert all(activity == "exercise" and len(covered) == 1
               for _, activity, covered, _ in exercise_rows)
    named = {n for *_, how in exercise_rows for n in re.findall(r"`(\w+)`", how) if n in VERIFIERS}
    assert named == set(exercises(guide_script.notebook(chapter)))


def test_the_plans_are_read_from_the_guide():
    assert set(PLANS) == set(CHAPTERS)
    assert PLANS["01_history"][0] == 70
    assert PLANS["01_history"][1][0][:3] == (
        10, "lecture", ["The picture: one turn in the chat messages"])


def test_a_stale_part_is_named_and_rendering_fixes_it():
    text = "## x\n<!-- generated: goals 05_partial_success -->\nold\n<!-- /generated -->\n"
    assert guide_script.stale(text) == ["goals 05_partial_success"]
    fixed = guide_script.render(text)
    assert f"- {guide_script.goals('05_partial_success')[0]}\n" in fixed
    assert guide_script.stale(fixed) == []


def test_a_wrong_answers_hint_counts_lines_from_the_answer_itself():
    part = GUIDE.split("<!-- generated: misconceptions answer_all -->")[1]
    assert "at line 2: return [ToolMessage(c.id, c.name, execute(c)) for c in calls]" in part


def test_relative_links_point_at_files():
    links = re.findall(r"\]\(((?!https?:|#)[^)#]+)", GUIDE)
    missing = sorted({link for link in links if not (ROOT / "docs" / link).exists()})
    assert missing == []
