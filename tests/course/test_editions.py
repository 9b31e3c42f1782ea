"""The editions module's own parts: the progress cells, finding the sources in a checkout,
saving, and `build_notebooks.py --editions-only` (the learner edition without executing
anything)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from keel_cli._cells import source
from keel_course.checkout import Checkout
from keel_course.cli import main
from keel_course.editions import (
    PROGRESS_CELLS,
    exercises,
    learner_edition,
    notebook_text,
    read_notebook,
    solution_paths,
)
from keel_lab._core.errors import LabError

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
CHECKOUT = Checkout.at(ROOT)
SCRIPT = ROOT / "scripts" / "build_notebooks.py"


def _script():
    spec = importlib.util.spec_from_file_location("build_notebooks", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", solution_paths(CHECKOUT), ids=lambda p: p.stem)
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
                                 "from keel_lab.course import show_progress", "",
                                 "show_progress()"]
    assert source(PROGRESS_CELLS[0]).startswith("## Your progress\n")
    compile(code, "progress", "exec")


def test_solution_paths_in_course_order_and_by_name():
    """The asyncio primer (00) first, then the chapters 01 to 08 and the capstone, 09, each
    deeper notebook (04a, ...) after its chapter."""
    stems = [p.stem for p in solution_paths(CHECKOUT)]
    assert stems == sorted(stems) and stems[0] == "00_asyncio_primer"
    assert [s[:2] for s in stems if s[2] == "_"] == [f"0{n}" for n in range(10)]
    assert stems.index("04a_where_calls_close") == stems.index("04_streaming") + 1
    assert [p.stem for p in solution_paths(CHECKOUT, ["05", "history"])] == [
        "01_history", "05_partial_success"]
    assert [p.stem for p in solution_paths(CHECKOUT, ["04a", "00"])] == [
        "00_asyncio_primer", "04a_where_calls_close"]


def test_an_unknown_chapter_or_an_empty_checkout_is_a_lab_error(tmp_path):
    with pytest.raises(LabError, match="no chapter matches 'zz'; chapters: 00_asyncio_primer, "
                                       "01_history, "):
        solution_paths(CHECKOUT, ["zz"])
    (tmp_path / "notebooks" / "solutions").mkdir(parents=True)
    with pytest.raises(LabError, match=r"no solution notebooks in .*solutions: give a checkout"):
        solution_paths(Checkout.at(tmp_path))


def test_the_checkout_is_where_the_course_is():
    assert CHECKOUT.root == ROOT
    assert (CHECKOUT.solutions, CHECKOUT.edition("zh"), CHECKOUT.locale) == (
        ROOT / "notebooks" / "solutions", ROOT / "notebooks" / "zh", ROOT / "locale")
    assert Checkout.at(ROOT / "notebooks" / "..") == CHECKOUT  # resolved


@pytest.mark.parametrize("where", ["", "notebooks", "missing"])
def test_a_folder_that_is_no_checkout_is_one_line_naming_it(tmp_path, monkeypatch, capsys,
                                                             where):
    monkeypatch.chdir(tmp_path)  # the default checkout, the current folder, is none either
    (tmp_path / "notebooks").mkdir()
    given = tmp_path / where
    with pytest.raises(LabError, match=rf"^{given} is not a keel-lab checkout \(no "
                                       r"notebooks/solutions/\)$"):
        Checkout.at(given)
    for argv in (["--checkout", str(given), "handout", "out"], ["handout", "out"],
                 ["--checkout", str(given), "nbgrader", "course"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.endswith("is not a keel-lab checkout (no "
                                                     "notebooks/solutions/)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notebooks"]  # nothing written


def test_notebook_text_is_how_the_course_saves_notebooks():
    path = solution_paths(CHECKOUT, ["05"])[0]
    assert notebook_text(read_notebook(path)) == path.read_text(encoding="utf-8")


def test_editions_only_writes_the_learner_edition_without_executing(tmp_path, monkeypatch,
                                                                     capsys):
    """It takes the outputs its saved learner edition has for the same code."""
    names = ("05_partial_success.ipynb", "08_production.ipynb")
    (tmp_path / "notebooks" / "solutions").mkdir(parents=True)
    for name in names:
        shutil.copy(CHECKOUT.solutions / name, tmp_path / "notebooks" / "solutions")
        shutil.copy(CHECKOUT.notebooks / name, tmp_path / "notebooks")
    script = _script()
    monkeypatch.setattr(script, "CHECKOUT", Checkout.at(tmp_path))
    monkeypatch.setattr(script, "execute", lambda path: pytest.fail("executed " + path.name))
    assert script.main(["--editions-only", "--language", "en"]) == 0
    assert sorted(p.name for p in (tmp_path / "notebooks").iterdir()) == [*names, "solutions"]
    for name in names:
        assert read_notebook(tmp_path / "notebooks" / name) == read_notebook(
            CHECKOUT.notebooks / name)
    assert "learner edition written" in capsys.readouterr().out


def test_editions_only_needs_a_learner_edition_executed_before(tmp_path, monkeypatch, capsys):
    (tmp_path / "notebooks" / "solutions").mkdir(parents=True)
    shutil.copy(CHECKOUT.solutions / "08_production.ipynb", tmp_path / "notebooks" / "solutions")
    script = _script()
    monkeypatch.setattr(script, "CHECKOUT", Checkout.at(tmp_path))
    assert script.main(["--editions-only", "--language", "en"]) == 2
    assert "08_production.ipynb does not exist yet: build it without --editions-only" in (
        capsys.readouterr().err)


def test_build_notebooks_names_an_unknown_chapter(capsys):
    assert _script().main(["--editions-only", "nine"]) == 2
    assert "no chapter matches 'nine'" in capsys.readouterr().err
