"""docs/instructors-guide.md stays true: its generated parts equal what the notebooks, the checks
and the checks' test tables give now, and its hand-written class plans match the notebooks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from keel_checks import VERIFIERS
from keel_course import guide
from keel_course.checkout import Checkout
from keel_course.cli import main
from keel_course.editions import exercises

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
CHECKOUT = Checkout.at(ROOT)
GUIDE = guide.guide_path(CHECKOUT).read_text(encoding="utf-8")
CHAPTERS = guide.chapters(CHECKOUT)
PLANS = guide.plans(CHECKOUT, GUIDE)
ACTIVITIES = {"lecture", "exercise", "discussion"}


def test_every_generated_part_is_current():
    assert guide.stale(CHECKOUT, GUIDE) == [], "run .venv/bin/keel-course guide"


def test_every_chapter_has_its_parts():
    regions = {(m.group(2), m.group(3)) for m in guide.REGION.finditer(GUIDE)}
    for chapter in CHAPTERS:
        assert {("goals", chapter), ("answers", chapter)} <= regions
        nb = guide.notebook(CHECKOUT, chapter)
        assert {("misconceptions", e) for e in exercises(nb)} <= regions
        assert f"## {guide.title(CHECKOUT, chapter)}\n" in GUIDE
    assert ("overview", "course") in regions


def test_every_exercise_has_a_table_of_wrong_answers():
    assert set(guide.wrong_answers(CHECKOUT)) == set(VERIFIERS)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_class_plan_covers_the_chapter_in_order_and_adds_up(chapter):
    total, rows = PLANS[chapter]
    assert [s for _, _, covered, _ in rows for s in covered] == guide.sections(CHECKOUT, chapter)
    assert sum(minutes for minutes, _, _, _ in rows) == total
    assert {activity for _, activity, _, _ in rows} <= ACTIVITIES
    assert rows[-1][1] == "discussion"
    exercise_rows = [r for r in rows if any(s.startswith("Exercise") for s in r[2])]
    assert all(activity == "exercise" and len(covered) == 1
               for _, activity, covered, _ in exercise_rows)
    named = {n for *_, how in exercise_rows for n in re.findall(r"`(\w+)`", how) if n in VERIFIERS}
    assert named == set(exercises(guide.notebook(CHECKOUT, chapter)))


def test_the_plans_are_read_from_the_guide():
    assert set(PLANS) == set(CHAPTERS)
    assert PLANS["01_history"][0] == 70
    assert PLANS["01_history"][1][0][:3] == (
        10, "lecture", ["The picture: one turn in the chat messages"])


def test_a_stale_part_is_named_and_rendering_fixes_it():
    text = "## x\n<!-- generated: goals 05_partial_success -->\nold\n<!-- /generated -->\n"
    assert guide.stale(CHECKOUT, text) == ["goals 05_partial_success"]
    fixed = guide.render(CHECKOUT, text)
    assert f"- {guide.goals(CHECKOUT, '05_partial_success')[0]}\n" in fixed
    assert guide.stale(CHECKOUT, fixed) == []


def test_a_wrong_answers_hint_counts_lines_from_the_answer_itself():
    part = GUIDE.split("<!-- generated: misconceptions answer_all -->")[1]
    assert "at line 2: return [ToolMessage(c.id, c.name, execute(c)) for c in calls]" in part


def test_relative_links_point_at_files():
    prose = re.sub(r"```.*?```", "", GUIDE, flags=re.DOTALL)  # code may hold `x[...](...)`
    links = re.findall(r"\]\(((?!https?:|#)[^)#]+)", prose)
    missing = sorted({link for link in links if not (ROOT / "docs" / link).exists()})
    assert missing == []


def small_checkout(tmp_path: Path, part: str) -> Path:
    """A checkout with one solution notebook and a guide whose one generated part is `part`."""
    (tmp_path / "notebooks" / "solutions").mkdir(parents=True)
    name = "05_partial_success.ipynb"
    (tmp_path / "notebooks" / "solutions" / name).write_bytes(
        (ROOT / "notebooks" / "solutions" / name).read_bytes())
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "instructors-guide.md").write_text(
        f"## x\n<!-- generated: {part} -->\nold\n<!-- /generated -->\n", encoding="utf-8")
    return tmp_path


def test_the_command_names_a_stale_part_then_writes_it(tmp_path, capsys):
    root = small_checkout(tmp_path, "goals 05_partial_success")
    assert main(["--checkout", str(root), "guide", "--check"]) == 1
    err = capsys.readouterr().err
    assert err == ("instructors-guide.md: 'goals 05_partial_success' is stale: run keel-course "
                   f"--checkout {root} guide\n")
    assert main(["--checkout", str(root), "guide"]) == 0
    written = (root / "docs" / "instructors-guide.md").read_text(encoding="utf-8")
    assert written == guide.render(Checkout.at(root), written)
    assert main(["--checkout", str(root), "guide", "--check"]) == 0
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize(("part", "says"), [
    ("goals 09_nothing", "'goals 09_nothing' names no chapter"),
    ("misconceptions nothing", "'misconceptions nothing' names no exercise"),
    ("recipes course", "unknown generated part 'recipes'"),
])
def test_a_part_the_guide_cannot_have_is_one_line(tmp_path, capsys, part, says):
    root = small_checkout(tmp_path, part)
    assert main(["--checkout", str(root), "guide", "--check"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("keel-course: error: ") and says in err and err.count("\n") == 1


def test_a_checkout_without_the_guide_is_one_line(tmp_path, capsys):
    root = small_checkout(tmp_path, "goals 05_partial_success")
    (root / "docs" / "instructors-guide.md").unlink()
    assert main(["--checkout", str(root), "guide"]) == 2
    err = capsys.readouterr().err
    assert "instructors-guide.md: cannot read (No such file or directory)" in err
    assert err.count("\n") == 1
