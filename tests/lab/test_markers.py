"""Every test file says what it is about, as the root conftest.py asks: its chapter, by one of the
exercise table's chapter markers (`pytestmark = pytest.mark.ch4`), or that it is lab-wide
(`pytest.mark.lab_wide`). So `pytest -m ch4` runs every test of chapter 4, and a new file cannot
fall out of every chapter unnoticed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from keel_checks.exercises import EXERCISES

pytestmark = pytest.mark.lab_wide

TESTS = Path(__file__).resolve().parents[1]
PLACES = {x.marker for x in EXERCISES} | {"lab_wide"}  # what a file may say it is about


def marks(path: Path) -> set[str]:
    """The names of the markers of a test file's module-level `pytestmark`, assigned there or
    imported from a sibling (test_live_lab_zh.py runs test_live_lab.py's tests)."""
    for statement in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(statement, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in statement.targets):
            return {node.attr for node in ast.walk(statement.value)
                    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                    and node.value.attr == "mark"}
        if isinstance(statement, ast.ImportFrom) and statement.module and any(
                a.name == "pytestmark" for a in statement.names):
            return marks(path.with_name(f"{statement.module}.py"))
    return set()


def unplaced(tests: Path) -> list[str]:
    """The test files under `tests` that do not name exactly one chapter, or lab-wide."""
    return [str(p.relative_to(tests)) for p in sorted(tests.rglob("test_*.py"))
            if len(marks(p) & PLACES) != 1]


def test_every_test_file_marks_its_chapter_or_says_it_is_lab_wide():
    assert unplaced(TESTS) == [], (
        "give each file `pytestmark = pytest.mark.chN` (the chapter it tests; a list with "
        "pytest.mark.slow when it takes minutes) or `pytestmark = pytest.mark.lab_wide`")


@pytest.mark.parametrize(("line", "placed"), [
    pytest.param("pytestmark = pytest.mark.ch4", True, id="a-chapter"),
    pytest.param("pytestmark = [pytest.mark.ch7, pytest.mark.slow]", True, id="slow-chapter"),
    pytest.param("pytestmark = [pytest.mark.filterwarnings('ignore'), pytest.mark.lab_wide]",
                 True, id="lab-wide-among-others"),
    pytest.param("pytestmark = pytest.mark.slow", False, id="only-slow"),
    pytest.param("pytestmark = pytest.mark.ch99", False, id="no-chapter-of-the-table"),
    pytest.param("pytestmark = [pytest.mark.ch1, pytest.mark.lab_wide]", False, id="both"),
    pytest.param("", False, id="unmarked"),
])
def test_a_file_is_placed_by_one_chapter_or_lab_wide(tmp_path, line, placed):
    (tmp_path / "test_x.py").write_text(f"import pytest\n\n{line}\n", encoding="utf-8")
    assert unplaced(tmp_path) == ([] if placed else ["test_x.py"])


def test_a_file_may_take_its_siblings_markers(tmp_path):
    (tmp_path / "test_en.py").write_text("import pytest\npytestmark = pytest.mark.ch2\n")
    (tmp_path / "test_zh.py").write_text("from test_en import pytestmark\n")
    assert marks(tmp_path / "test_zh.py") == {"ch2"} and unplaced(tmp_path) == []


def test_every_chapter_of_the_exercise_table_is_a_registered_marker(pytestconfig):
    registered = {line.split(":")[0] for line in pytestconfig.getini("markers")}
    assert PLACES | {"slow"} <= registered
