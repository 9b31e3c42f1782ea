"""The grading process's steps, run in this process: a cell's planned code, a verdict."""

from __future__ import annotations

import builtins
from typing import Any

import pytest

from keel_checks.check import VERIFIERS
from keel_checks.verdict import Verdict
from keel_course.grading.child import run_chunk
from keel_course.grading.hints import moved, refusal, short
from keel_course.grading.remote import verify

pytestmark = pytest.mark.lab_wide


def namespace() -> dict[str, Any]:
    return {"__name__": "__main__", "__builtins__": builtins}


def test_a_whole_cell_runs_and_otherwise_only_the_statements_kept():
    ns = namespace()
    assert run_chunk({"cell": 1, "source": "A = 1\nB = len('ab')\n", "keep": None}, ns) is None
    assert run_chunk({"cell": 2, "source": "C = 1\nD = len('ab')\nimport json\n",
                      "keep": [0, 2]}, ns) is None
    assert (ns["A"], ns["B"], ns["C"]) == (1, 2, 1) and "D" not in ns and "json" in ns


def test_errors_name_the_cell_and_never_escape():
    ns = namespace()
    assert run_chunk({"cell": 4, "source": "def f(:\n", "keep": None}, ns) == \
        "cell 4: SyntaxError at line 1: invalid syntax"
    assert run_chunk({"cell": 5, "source": "raise SystemExit(3)", "keep": None}, ns) == \
        "cell 5 raised SystemExit: 3"
    assert run_chunk({"cell": 6, "source": "x = 1 / 0", "keep": None}, ns) == \
        "cell 6 raised ZeroDivisionError: division by zero"


def test_a_hint_points_at_the_line_of_the_learners_cell():
    ns = namespace()
    run_chunk({"cell": 7, "source": "def status_history(events):\n    return events[99]\n",
               "keep": None}, ns)
    passed, hint, _ = verify(VERIFIERS["status_history"], Verdict, ns["status_history"])
    assert not passed and hint is not None and "at line 2: return events[99]" in hint


def test_verify_survives_a_check_that_cannot_run_and_a_fake_verdict():
    def exploding(fn: Any) -> Verdict:
        raise KeyboardInterrupt

    assert verify(exploding, Verdict, None) == (
        False, "the check could not run your function: KeyboardInterrupt", 0)
    assert verify(lambda fn: "PASSED", Verdict, None) == (
        False, "the check returned no verdict", 0)
    assert verify(VERIFIERS["make_batches"], Verdict,
                  lambda requests, tools: [[r] for r in requests])[0] is False


def test_texts_crossing_to_the_grader_are_one_bounded_line():
    assert short("a\nb\tc") == "a b c"
    assert len(short("x" * 10_000)) == 500
    assert "no points" in refusal("builtins.len")


def test_an_exception_whose_text_fails_is_named_by_its_type():
    ns = namespace()
    text = "class E(Exception):\n    def __str__(self):\n        raise ValueError\nraise E()"
    assert run_chunk({"cell": 8, "source": text, "keep": None}, ns) == "cell 8 raised E"


def test_a_cell_may_await_at_top_level():
    ns = namespace()
    text = "import asyncio\nx = await asyncio.sleep(1, 'slept')\n"
    assert run_chunk({"cell": 1, "source": text, "keep": None}, ns) is None
    assert ns["x"] == "slept"


def test_a_name_error_for_a_name_set_elsewhere_says_why_and_where():
    ns = namespace()
    error = run_chunk({"cell": 3, "source": "y = FATAL", "keep": None}, ns, {"FATAL": 2})
    assert error is not None and error.startswith("cell 3 raised NameError")
    assert "FATAL is set in cell 2 by code the grader does not run" in error
    assert "move that line into the exercise cell" in error
    assert moved("your function raised NameError: name 'FATAL' is not defined", {"FATAL": 2})
    assert moved("NameError: name 'other' is not defined", {"FATAL": 2}) == ""


