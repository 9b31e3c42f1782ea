"""What of a submission runs, its chapter, and what is refused without running."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from keel_checks.progress import CHAPTERS
from keel_cli._cells import source, tags
from keel_course.editions import IMPORT_CHECK, exercises
from keel_course.grading.plan import chapter_of, plan, python
from keel_course.grading.submission import Cell, Submission

pytestmark = pytest.mark.lab_wide

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def submission(*cells: tuple[str, set[str]]) -> Submission:
    return Submission(Path("s.ipynb"), tuple(
        Cell(n, True, text, frozenset(t)) for n, (text, t) in enumerate(cells, start=1)))


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("0*.ipynb")), ids=lambda p: p.stem)
def test_every_learner_edition_is_planned_as_its_chapter(path):
    nb = json.loads(path.read_text("utf-8"))
    sub = submission(*((source(c), set(tags(c))) for c in nb["cells"]
                       if c["cell_type"] == "code"))
    got = plan(sub)
    names = exercises(nb)
    assert got.chapter == (path.stem if names else None)
    # every exercise is still the stub: said so, and not run
    assert list(got.exercises) == names and set(got.refused) == got.stubs == set(names)
    checks = [source(c) for c in nb["cells"] if "check" in tags(c)]
    # the check cell the plan expects, importing `check` as nbgrader runs it
    assert checks == [f"{IMPORT_CHECK}check({x})" for x in names]


def test_only_definitions_of_other_cells_run_and_the_answer_cell_runs_whole():
    sub = submission(
        ("import json\nimport matplotlib.pyplot as plt\nfrom os import path as p, sep\n"
         "x = compute()\nLIMIT = {'a': (1, -2)}\n%time 1\n"
         "class Helper:\n    pass\nprint('hi')", set()),
        ("def status_history(events):\n    return sep.join(events)\nprint('checked')",
         {"exercise"}),
        ("check(status_history)", {"check"}),
        ("from keel_lab.course._notebook import show\nshow(plt.plot())", set()),
        ("def helper():\n    return json.dumps(LIMIT)", set()))
    got = plan(sub)
    assert got.chapter == "05_partial_success" and got.to_run == ["status_history"]
    assert [(c.cell, c.keep) for c in got.chunks] == [(1, (0, 2, 4, 5)), (2, None), (5, (0,))]
    # json (used by a helper) and sep (by the answer) are imported; matplotlib and show are not


def test_magics_become_blank_lines_so_line_numbers_stay():
    assert python("%matplotlib inline\nx = 1\n!ls\n") == "\nx = 1\n\n"
    assert ast.parse(python("%time 1\ndef f():\n    return 1")).body[0].lineno == 2


def test_a_missing_function_and_an_edited_check_are_refused():
    sub = submission(("def count_in_order(trials, calls, seed):\n    return 0", {"exercise"}),
                     ("check(count_in_order)  # my comment", {"check"}),
                     ("def pair(calls, results):\n    return []", {"exercise"}),
                     ("print('pair_results: PASSED')", {"check"}))
    got = plan(sub)
    assert got.chapter == "02_pairing"
    assert got.to_run == ["count_in_order"]
    assert "no function pair_results" in got.refused["pair_results"]


def test_an_edited_check_cell_refuses_a_right_function():
    sub = submission(("def status_history(events):\n    return ['failed']", {"exercise"}),
                     ("check(status_history); print('PASSED')", {"check"}))
    got = plan(sub)
    assert got.to_run == [] and "was edited or removed" in got.refused["status_history"]


def test_a_cell_that_does_not_parse_is_still_found_by_its_def():
    sub = submission(("def make_batches(requests, tools):\n    return [", {"exercise"}),
                     ("check(make_batches)", {"check"}))
    got = plan(sub)
    assert got.chapter == "03_batching" and got.to_run == ["make_batches"]
    assert [(c.cell, c.keep) for c in got.chunks] == [(1, None)]  # the child reports it


@pytest.mark.parametrize(("cells", "error"), [
    ((), "no exercise of the course"),
    ((("def answer_all(a, b):\n    pass\ndef status_history(e):\n    pass", set()),),
     "exercises of several chapters in one notebook: 01_history, 05_partial_success"),
])
def test_no_chapter_says_why(cells, error):
    chapter, why = chapter_of(submission(*cells))
    assert chapter is None and why is not None and error in why


def test_every_exercise_has_a_chapter():
    assert sorted(CHAPTERS) == sorted(
        x for p in NOTEBOOKS.glob("0*.ipynb") for x in exercises(json.loads(p.read_text())))


@pytest.mark.parametrize(("check", "intact"), [
    ("check(make_batches)", True),
    ("# NBVAL_CHECK_OUTPUT\ncheck( make_batches )  # done", True),
    ("from keel_lab.course import check\n\ncheck(make_batches)", True),  # nbgrader's
    ("from mine import check\ncheck(make_batches)", False),
    ("from keel_lab.course import check as c\nc(make_batches)", False),
    ("check(make_batches)\nprint('PASSED')", False),
    ("print('make_batches: PASSED')", False),
])
def test_a_check_cell_is_intact_only_as_the_course_wrote_it(check, intact):
    sub = submission(("def make_batches(requests, tools):\n    return []", {"exercise"}),
                     (check, {"check"}))
    assert (plan(sub).to_run == ["make_batches"]) is intact


def test_a_check_cell_is_found_by_its_code_without_its_tag():
    sub = submission(("def status_history(events):\n    return ['failed']", set()),
                     ("check(status_history)", set()))
    got = plan(sub)
    assert got.to_run == ["status_history"] and got.checked_after == {"status_history": 1}
    assert [c.cell for c in got.chunks] == [1]  # the check cell itself never runs


@pytest.mark.parametrize("answer", [
    "status_history = lambda events: ['failed']",
    "class S:\n    def __call__(self, events):\n        return ['failed']\nstatus_history = S()",
    "if True:\n    def status_history(events):\n        return ['failed']",
    "try:\n    def status_history(events):\n        return ['failed']\nexcept Exception:\n    pass",
])
def test_any_binding_of_the_name_is_an_answer(answer):
    sub = submission((answer, {"exercise"}), ("check(status_history)", {"check"}))
    got = plan(sub)
    assert got.chapter == "05_partial_success" and got.refused == {}
    assert [(c.cell, c.keep) for c in got.chunks] == [(1, None)]


def test_the_check_stands_where_its_cell_is_and_a_cell_tagged_both_runs():
    sub = submission(("def status_history(events):\n    return ['failed']",
                      {"exercise", "check"}),
                     ("X = 1", set()),
                     ("check(status_history)", {"check"}),
                     ("def status_history(events):\n    return ['completed']", set()))
    got = plan(sub)
    assert [c.cell for c in got.chunks] == [1, 2, 4]
    assert got.checked_after == {"status_history": 2}  # after cells 1 and 2, before cell 4


def test_names_set_by_code_that_does_not_run_are_kept_for_the_hint():
    sub = submission(("FATAL = frozenset({'x'})\nPAUSE = 'a' + 'b'\nLIMIT = 3", set()),
                     ("def status_history(events):\n    return FATAL", {"exercise"}),
                     ("check(status_history)", {"check"}))
    got = plan(sub)
    assert got.elsewhere == {"PAUSE": 1}  # FATAL, which the answer reads, runs
