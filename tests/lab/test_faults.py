"""Chapter 6's faults: each goes in through a hook, and its symptom is computed from the runs."""

import asyncio

import pytest

from keel_lab import run_status
from keel_lab.course._experiments.faults import (
    FAULTS,
    LAB_FAULTS,
    SYMPTOMS,
    at_first_parse,
    observe,
    symptom,
)

pytestmark = pytest.mark.ch6


@pytest.mark.parametrize(("number", "letter"), [(1, "C"), (2, "D"), (3, "E"), (4, "A"), (5, "B")])
def test_each_lab_fault_shows_its_own_symptom(number, letter):
    correct, faulty = FAULTS[number - 1].runs(LAB_FAULTS[number - 1])
    assert symptom(correct, faulty) == letter


def test_the_lab_code_through_the_same_hooks_changes_nothing():
    async def gather_in_order(batch, run):
        return [(o.call_id, o) for o in await asyncio.gather(*(run(r) for r in batch))]

    def at_the_end(call):
        return call.closed and at_first_parse(call)

    hooks = [gather_in_order, gather_in_order, at_the_end, run_status, gather_in_order]
    for fault, hook in zip(FAULTS, hooks, strict=True):
        assert symptom(*fault.runs(hook)) == "F", fault.title


def test_observe_stays_silent_until_a_prediction_is_written():
    for prediction in ("", None, "maybe"):
        text = observe(1, prediction, LAB_FAULTS[0])
        assert text.startswith("Predict first") and "INC-00" not in text
    assert set(SYMPTOMS) == set("ABCDEF")


def test_observe_compares_the_prediction_with_what_happened():
    right = observe(2, " d ", LAB_FAULTS[1])
    assert "you predicted D" in right and "as you predicted" in right
    assert "tool messages call-1, call-0" in right
    wrong = observe(4, "C", LAB_FAULTS[3])
    assert "observed      A: the run fails with an error - not what you predicted" in wrong


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
def test_observe_asks_for_the_fault_while_the_hook_is_a_stub(number):
    async def collect(batch, run):
        raise NotImplementedError("your code here")

    def rule(_):
        raise NotImplementedError("your code here")

    hook = collect if number in (1, 2, 5) else rule
    assert observe(number, "A", hook).startswith("Write the fault first")


def test_a_cancelled_call_left_unanswered_breaks_the_history_and_the_lab_answers_it():
    """Fault 5: the call past the deadline is cancelled and gets no tool message; the lab's
    own time-out answers it `tool_timeout`, and the other call keeps its result."""
    correct, faulty = FAULTS[4].runs(LAB_FAULTS[4])
    assert [o.code for o in correct.outcomes] == ["tool_timeout", None]
    assert "call-0" not in FAULTS[4].shows(faulty) and "history invalid" in FAULTS[4].shows(faulty)
