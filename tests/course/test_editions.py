"""The editions module's own parts: the progress cells, finding the sources, saving, and
`build_notebooks.py --editions-only` (the learner edition without executing anything)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from keel_course import editions
from keel_course.editions import (
    PROGRESS_CELLS,
    exercises,
    learner_edition,
    notebook_text,
    read_notebook,
    solution_paths,
)
from keel_lab.core.errors import LabError
from keel_lab.course.cells import source

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "build_notebooks.py"


def _script():
    spec = importlib.util.spec_from_file_location("build_notebooks", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", solution_paths(), ids=lambda p: p.stem)
def test_a_chapter_with_exercises_ends_with_your_progress(path):
    solution = read_notebook(path)
    learner = learner_edition(solution)
    if exercises(solution):
        assert learner["cells"][-2:] == PROGRESS_CELLS
        assert len(learner["cells"]) == len(solution["cells"]) + 2
    else:
        assert len(learner["cells"]) == len(solution["cells"])
    assert len({c["id"] for c in learner["cells"]}) == len(learner["cells"])  # ids unique


def test_the_progress_cell_shows_the_progress_and_is_not_compared():
    code = source(PROGRESS_CELLS[1])
    assert code.splitlines() == ["# NBVAL_IGNORE_OUTPUT",
                                 "from keel_lab.course.progress import show_progress", "",
                                 "show_progress()"]
    assert source(PROGRESS_CELLS[0]).startswith("## Your progress\n")
    compile(code, "progress", "exec")


def test_solution_paths_in_course_order_and_by_name():
    assert [p.stem[:2] for p in solution_paths()] == [f"0{n}" for n in range(1, 9)]
    assert [p.stem for p in solution_paths(["05", "history"])] == [
        "01_history", "05_partial_success"]


def test_an_unknown_chapter_or_a_missing_checkout_is_a_lab_error(tmp_path, monkeypatch):
    with pytest.raises(LabError, match="no chapter matches 'zz'; chapters: 01_history"):
        solution_paths(["zz"])
    monkeypatch.setattr(editions, "SOLUTIONS", tmp_path)
    with pytest.raises(LabError, match="from a checkout"):
        solution_paths()


def test_notebook_text_is_how_the_course_saves_notebooks():
    path = solution_paths(["05"])[0]
    assert notebook_text(read_notebook(path)) == path.read_text(encoding="utf-8")


def test_editions_only_writes_the_learner_edition_without_executing(tmp_path, monkeypatch,
                                                                     capsys):
    script = _script()
    monkeypatch.setattr(script, "COURSE", tmp_path)
    monkeypatch.setattr(script, "execute", lambda path: pytest.fail("executed " + path.name))
    assert script.main(["--editions-only", "05", "08"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "05_partial_success.ipynb", "08_production.ipynb"]
    for name in ("05_partial_success.ipynb", "08_production.ipynb"):
        expected = learner_edition(read_notebook(ROOT / "notebooks" / "solutions" / name))
        assert json.loads((tmp_path / name).read_text()) == expected
    assert "learner edition written" in capsys.readouterr().out


def test_build_notebooks_names_an_unknown_chapter(capsys):
    assert _script().main(["--editions-only", "nine"]) == 2
    assert "no chapter matches 'nine'" in capsys.readouterr().err
