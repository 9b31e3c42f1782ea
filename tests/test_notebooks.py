"""The course itself: conventions, the two editions, and learner notebooks failing unsolved."""

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from keel_lab.course.editions import (
    STUB,
    exercises,
    fill_solutions,
    learner_edition,
    problems,
    source,
    strip_solutions,
    tags,
)

ROOT = Path(__file__).resolve().parent.parent / "notebooks"
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def test_seven_chapters_with_at_least_five_exercises():
    assert [p.name[:2] for p in SOLUTIONS] == ["01", "02", "03", "04", "05", "06", "07"]
    names = [name for p in SOLUTIONS for name in exercises(load(p))]
    assert names == ["answer_all", "pair_results", "make_batches", "is_executable",
                     "run_status"]


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_chapter_conventions(path):
    nb = load(path)
    assert problems(nb) == []
    text = [source(c) for c in nb["cells"] if c["cell_type"] == "markdown"]
    assert "After this chapter you can" in text[0]
    assert any(t.startswith("## Checkpoint questions") and "<details>" in t for t in text)
    assert any(t.startswith("## Summary") for t in text)
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert any("image/png" in o.get("data", {}) for o in outputs), "at least one plot"
    widget_cells = [c for c in nb["cells"] if "widget" in tags(c)]
    assert widget_cells and all(source(c).startswith("# NBVAL_IGNORE_OUTPUT")
                                for c in widget_cells)
    code = [c for c in nb["cells"] if c["cell_type"] == "code" and "widget" not in tags(c)]
    assert all(c["execution_count"] for c in code), "saved with outputs (make notebooks)"
    assert not [o for c in code for o in c["outputs"] if o["output_type"] == "error"]


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_learner_edition_is_in_sync(path):
    learner = ROOT / path.name
    assert load(learner) == learner_edition(load(path)), "run `make notebooks`"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_learner_edition_has_stubs_and_keeps_expected_verdicts(path):
    solution, learner = load(path), load(ROOT / path.name)
    for s, lc in zip(solution["cells"], learner["cells"], strict=True):
        if "exercise" in tags(s):
            assert STUB in source(lc) and "### BEGIN SOLUTION" not in source(lc)
            assert lc["outputs"] == []
        else:
            assert lc == s


def test_strip_solutions_keeps_indentation_and_the_rest():
    text = 'def f(x):\n    """Doc."""\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n'
    assert strip_solutions(text) == f'def f(x):\n    """Doc."""\n    {STUB}\n'


def test_fill_solutions_restores_every_exercise():
    for path in SOLUTIONS:
        solution = load(path)
        filled = fill_solutions(load(ROOT / path.name), solution)
        assert [source(c) for c in filled["cells"]] == [source(c) for c in solution["cells"]]


def test_problems_catch_broken_conventions():
    nb = {"cells": [
        {"cell_type": "code", "metadata": {"tags": ["exercise"]},
         "source": "def a():\n    pass\ndef b():\n    pass\n"},
        {"cell_type": "code", "metadata": {"tags": ["check"]}, "source": "check(a)"},
    ]}
    assert problems(nb) == [
        "cell 0: an exercise cell defines exactly one top-level function",
        "cell 0: an exercise cell has one ### BEGIN SOLUTION ... ### END SOLUTION block",
        "cell 1: a check cell starts with # NBVAL_CHECK_OUTPUT",
    ]


def _execute(nb):
    node = nbformat.reads(json.dumps(nb), as_version=4)
    NotebookClient(node, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    return node


def _stream_text(outputs):
    return "".join(source({"source": o.get("text", "")}) for o in outputs)


EXERCISED = [p for p in SOLUTIONS if exercises(load(p))]


@pytest.mark.parametrize("path", EXERCISED, ids=lambda p: p.name)
def test_unsolved_learner_notebook_fails_exactly_at_its_checks(path):
    solution, run = load(path), _execute(load(ROOT / path.name))
    for s, cell in zip(solution["cells"], run.cells, strict=True):
        if cell.cell_type != "code" or "widget" in tags(cell):
            continue
        text = _stream_text(cell.outputs)
        if "check" in tags(cell):
            assert "not implemented yet" in text and "NOT YET" in text
            assert text != _stream_text(s["outputs"])
        else:
            assert not [o for o in cell.outputs if o.output_type == "error"], source(cell)


def test_make_check_names_each_exercise(tmp_path):
    learner = ROOT / "02_pairing.ipynb"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env", "-p",
         "no:cacheprovider", str(learner)], capture_output=True, text=True, cwd=ROOT.parent)
    assert result.returncode == 1
    assert "notebooks/02_pairing.ipynb: pair_results: NOT YET" in result.stdout
    assert "1 failed" in result.stdout
