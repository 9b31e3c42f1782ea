"""The course itself: conventions, the two editions, and unsolved learner notebooks that run to
their end."""

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

from keel_cli._cells import CHECK_MARK, source, tags
from keel_course import translation
from keel_course.editions import (
    IMPORT_CHECK,
    PROGRESS_CELLS,
    STUB,
    exercises,
    fill_solutions,
    learner_edition,
    problems,
    strip_solutions,
    unmarked,
)
from keel_lab._i18n import _, speaking

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2] / "notebooks"
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
CHAPTERS = [p for p in SOLUTIONS if re.match(r"0[1-9]_", p.name)]  # the core path
DEEPER = [p for p in SOLUTIONS if p not in CHAPTERS]  # optional notebooks beside a chapter


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def test_eight_chapters_a_capstone_and_their_exercises():
    assert [p.name[:2] for p in CHAPTERS] == ["01", "02", "03", "04", "05", "06", "07", "08",
                                              "09"]
    names = [name for p in SOLUTIONS for name in exercises(load(p))]
    assert names == ["accumulate", "answer_all", "count_in_order", "pair_results",
                     "make_batches", "read_turn", "is_executable", "status_history",
                     "collect_batch", "answer_responses", "calls_to_resume", "agent_loop"]


PLOT = '<img alt="'  # a plot is shown as an image with its alt text (keel_lab.course.show)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapter_conventions(path):
    nb = load(path)
    assert problems(nb) == []
    text = [source(c) for c in nb["cells"] if c["cell_type"] == "markdown"]
    assert "After this chapter you can" in text[0]
    assert any(t.startswith("## Checkpoint questions") for t in text)
    assert any(t.startswith("<details>") for t in text)
    assert any(t.startswith("## Summary") for t in text)
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    # chapter 6 predicts and observes: its plots and widget were re-plots of chapters 2 and 5;
    # the capstone draws the learner's loop, with nothing to explore beside it
    replotted = path.stem == "06_faults"
    capstone = path.stem == "09_capstone"
    assert any(PLOT in "".join(o.get("data", {}).get("text/html", "")) for o in outputs) \
        or replotted, "at least one plot"
    widget_cells = [c for c in nb["cells"] if "widget" in tags(c)]
    assert widget_cells or replotted or capstone
    assert all(source(c).startswith("# NBVAL_IGNORE_OUTPUT") for c in widget_cells)
    code = [c for c in nb["cells"] if c["cell_type"] == "code" and "widget" not in tags(c)]
    assert all(c["execution_count"] for c in code), "saved with outputs (make notebooks)"
    assert not [o for c in code for o in c["outputs"] if o["output_type"] == "error"]


@pytest.mark.parametrize("path", DEEPER, ids=lambda p: p.name)
def test_a_deeper_notebook_says_it_is_optional_and_links_its_chapter(path):
    nb = load(path)
    assert problems(nb) == [] and not exercises(nb)
    first = source(nb["cells"][0])
    chapter = next((p for p in CHAPTERS if p.name[:2] == path.name[:2]), None)
    assert "ptional" in first and (chapter is None or chapter.name in first)
    linked = chapter is None or f"]({path.name}" in "".join(map(source, load(chapter)["cells"]))
    assert linked, f"its chapter links {path.name}"
    code = [c for c in nb["cells"] if c["cell_type"] == "code" and "widget" not in tags(c)]
    assert all(c["execution_count"] for c in code), "saved with outputs (make notebooks)"
    assert not [o for c in code for o in c["outputs"] if o["output_type"] == "error"]


def _cells(nb):
    """A notebook's cells without what running them gives (their outputs and counts)."""
    return [(c["cell_type"], source(c), c.get("metadata", {})) for c in nb["cells"]]


def _reads(cell, names):
    return cell["cell_type"] == "code" and bool(
        {n.id for n in ast.walk(ast.parse(source(cell))) if isinstance(n, ast.Name)} & names)


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_learner_edition_is_in_sync(path):
    """The saved learner edition is the solution's, executed as Run All leaves it: the same cells,
    and the solution's outputs wherever no cell reads a stub or an empty prediction."""
    learner, solution = load(ROOT / path.name), load(path)
    assert _cells(learner) == _cells(learner_edition(solution)), "run `make notebooks`"
    unwritten = set(exercises(solution)) | {n.id for c in solution["cells"]
                                            if "prediction" in tags(c)
                                            for n in ast.walk(ast.parse(source(c)))
                                            if isinstance(n, ast.Name)}
    for s, lc in zip(solution["cells"], learner["cells"], strict=False):
        if not ({"exercise", "check", "observe", "prediction"} & set(tags(s))
                or _reads(s, unwritten)):
            assert lc.get("outputs") == s.get("outputs"), ("run `make notebooks`", source(s))


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_learner_edition_has_stubs_and_no_saved_verdicts(path):
    solution, learner = load(path), load(ROOT / path.name)
    chapter, progress = learner["cells"][:len(solution["cells"])], \
        learner["cells"][len(solution["cells"]):]
    assert _cells({"cells": progress}) == _cells(
        {"cells": PROGRESS_CELLS if exercises(solution) else []})
    assert all(c.get("outputs", []) == [] for c in progress)  # this machine's table: never saved
    for s, lc in zip(solution["cells"], chapter, strict=True):
        if "exercise" in tags(s):
            assert STUB in source(lc) and "### BEGIN SOLUTION" not in source(lc)
            assert lc["outputs"] == []
        elif "check" in tags(s):  # judged by what check raises, never by saved output
            assert lc["outputs"] == [] and lc["execution_count"] is None
            assert CHECK_MARK not in source(lc)
            assert source(lc) == IMPORT_CHECK + unmarked(source(s))  # as nbgrader runs it
        elif "observe" in tags(s):  # the learner writes the fault; no outcome shows ahead
            assert STUB in source(lc) and "### BEGIN SOLUTION" not in source(lc)
            assert lc["outputs"] != s["outputs"] and s["outputs"]  # it asks (test_predictions)
        elif "prediction" in tags(s):  # the solution's guess is not given away
            assert re.search(r'= "[^"]+"', source(s)) and '= ""' in source(lc)
            assert not re.search(r'= "[^"]+"', source(lc)) and lc["outputs"] == []
        else:
            assert source(lc) == source(s)


def test_strip_solutions_keeps_indentation_and_the_rest():
    text = 'def f(x):\n    """Doc."""\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n'
    assert strip_solutions(text) == f'def f(x):\n    """Doc."""\n    {STUB}\n'


def test_fill_solutions_restores_every_exercise():
    for path in SOLUTIONS:
        solution = load(path)
        filled = fill_solutions(load(ROOT / path.name), solution)
        assert [unmarked(source(c)).removeprefix(IMPORT_CHECK)
                for c in filled["cells"][:len(solution["cells"])]] == \
            [unmarked(source(c)) for c in solution["cells"]]


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


def _execute(nb, tmp_path):
    """Run All in a fresh kernel, reached over Unix sockets: over TCP, a client that retries
    its connect while a loaded machine starts the kernel can be handed its own port as the
    source (Linux's TCP self-connect) and wait out the cell's time-out for a reply that never
    comes - 120 s, seen beside the cheating class's grading."""
    node = nbformat.reads(json.dumps(nb), as_version=4)
    km = KernelManager(kernel_name="python3", transport="ipc", ip=str(tmp_path / "kernel"))
    NotebookClient(node, km=km, timeout=120, allow_errors=True,
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    return node


def _stream_text(outputs):
    return "".join(source({"source": o.get("text", "")}) for o in outputs)


EXERCISED = [p for p in SOLUTIONS if exercises(load(p))]
UNSOLVED = [(code, folder / p.name) for code, folder in
            (("en", ROOT), *((code, ROOT / code) for code in translation.LOCALES))
            for p in EXERCISED]


@pytest.mark.parametrize(("code", "path"), UNSOLVED,
                         ids=lambda x: getattr(x, "name", x))
def test_run_all_on_an_unsolved_learner_notebook_runs_to_its_end(code, path, monkeypatch,
                                                                  tmp_path):
    """Run All in the learner's Jupyter (no `KEEL_CHECKS`): nothing raises, every check says
    NOT YET where it stands, and every other cell shows what its saved learner edition shows."""
    monkeypatch.delenv("KEEL_CHECKS", raising=False)  # notebooks/conftest.py sets it for nbval
    saved = load(path)
    run = _execute(saved, tmp_path)
    with speaking(code):
        not_yet = _("NOT YET")
    for cell, was in zip(run.cells, saved["cells"], strict=True):
        if cell.cell_type != "code" or "widget" in tags(cell):
            continue
        assert not [o for o in cell.outputs if o.output_type == "error"], source(cell)
        shown = _stream_text(cell.outputs)
        if "check" in tags(cell):
            assert not_yet in shown and "NotImplementedError" in shown, source(cell)
        elif not source(cell).startswith("# NBVAL_IGNORE_OUTPUT"):
            assert shown == _stream_text(was["outputs"]), source(cell)


WRONG_STATUS_HISTORY = '''def status_history(events):
    codes = {e.code for e in events if e.code}  # the end only: as if a pause were no stop
    if {"unknown_tool", "tool_internal_error", "invalid_tool_output"} & codes:
        return ["failed"]
    return ["partial"] if codes - {"approval_required"} else ["completed"]
'''


def _make_check(tmp_path, nb):
    """`make check`'s command on one learner notebook (with the course's conftest), piped."""
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    (tmp_path / "05_partial_success.ipynb").write_text(json.dumps(nb))
    makefile = (ROOT.parent / "Makefile").read_text()
    line = makefile.split("$(BIN)/pytest --nbval-lax")[1].split("\n")[0]
    flags = line[:line.index(" -qq ") + 4].split()  # what follows names the notebooks checked
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}  # the width when piped
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval-lax", *flags, "05_partial_success.ipynb"],
        capture_output=True, text=True, cwd=tmp_path, env=env)


CHAPTER_5 = ROOT / "05_partial_success.ipynb"


def test_make_check_passes_a_right_answer_and_says_so(tmp_path):
    solution = load(ROOT / "solutions" / CHAPTER_5.name)
    result = _make_check(tmp_path, fill_solutions(load(CHAPTER_5), solution))
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines()[-3:] == [
        "05_partial_success  status_history  passed",
        "progress not recorded (KEEL_PROGRESS=off)",  # as the course's own test runs set it
        "1 of 1 exercises pass; every exercise, with its last hint: "
        f"{Path(sys.executable).parent / 'keel-lab'} progress"]


def test_make_check_fails_a_wrong_answer_with_its_first_hint_in_plain_text(tmp_path):
    nb = load(CHAPTER_5)
    exercise = next(c for c in nb["cells"] if "exercise" in tags(c))
    exercise["source"] = WRONG_STATUS_HISTORY
    result = _make_check(tmp_path, nb)
    assert result.returncode == 1
    assert "\x1b[" not in result.stdout and "Traceback" not in result.stdout
    assert "Cell outputs differ" not in result.stdout
    assert result.stdout.splitlines()[-3] == (  # cut to 99: the width when piped, 100, less one
        "05_partial_success  status_history  not yet  the trace ends at the pause: the run still "
        "waits, n...")  # the advice first: the case, a long trace, is what the cut takes
    assert result.stdout.splitlines()[-1].startswith("0 of 1 exercises pass; ")
