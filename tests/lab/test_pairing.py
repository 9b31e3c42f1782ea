import asyncio
import math

import pytest

from keel_lab import ToolCall, run_coroutine
from keel_lab._core.pairing import (
    STRATEGIES,
    Result,
    by_call_id,
    mismatches,
    position_over_completion,
    position_over_gather,
    position_over_gather_filtered,
    position_with_skip,
)

pytestmark = pytest.mark.ch2

CALLS = [ToolCall(f"call-{c}", "lookup_incident", "{}") for c in "abc"]
# The lesson's group 4: the first call made finishes last.
DELAYS = {"call-a": 0.3, "call-b": 0.1, "call-c": 0.2}


async def execute(call):
    await asyncio.sleep(DELAYS[call.id])
    if call.id == "call-fail":
        raise RuntimeError("boom")
    return Result(call.id, call.name)


def pair(strategy, calls=CALLS, denied=frozenset()):
    return run_coroutine(strategy(calls, execute, denied))


def got(pairs):
    return [(c.id, r.call_id if r else None) for c, r in pairs]


def test_gather_returns_in_argument_order_and_hides_the_problem():
    pairs = pair(position_over_gather)
    assert got(pairs) == [("call-a", "call-a"), ("call-b", "call-b"), ("call-c", "call-c")]
    assert mismatches(pairs, CALLS) == (0, 0)


def test_as_completed_exposes_it():
    pairs = pair(position_over_completion)
    assert got(pairs) == [("call-a", "call-b"), ("call-b", "call-c"), ("call-c", "call-a")]
    assert mismatches(pairs, CALLS) == (3, 0)


def test_a_skipped_call_breaks_position_without_any_concurrency():
    pairs = pair(position_with_skip, denied=frozenset({"call-a"}))
    assert got(pairs) == [("call-a", "call-b"), ("call-b", "call-c")]
    assert mismatches(pairs, CALLS) == (2, 1)


def test_call_id_survives_reordering_skips_and_failures():
    DELAYS["call-fail"] = 0.05
    calls = [*CALLS, ToolCall("call-fail", "lookup_incident", "{}")]
    pairs = pair(by_call_id, calls, frozenset({"call-b"}))
    assert mismatches(pairs, calls) == (0, 0)
    table = {c.id: r for c, r in pairs}
    assert table["call-b"].error == "denied_by_policy"
    assert table["call-fail"].error == "RuntimeError: boom"


def test_return_exceptions_then_filtering_shifts_later_pairs():
    DELAYS["call-fail"] = 0.05
    calls = [ToolCall("call-fail", "lookup_incident", "{}"), *CALLS]
    pairs = pair(position_over_gather_filtered, calls)
    assert got(pairs)[0] == ("call-fail", "call-a")
    assert mismatches(pairs, calls) == (3, 1)


def test_plain_gather_loses_the_turn_when_one_call_raises():
    DELAYS["call-fail"] = 0.05
    with pytest.raises(RuntimeError, match="boom"):
        pair(position_over_gather, [*CALLS, ToolCall("call-fail", "x", "{}")])


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_every_strategy_is_right_when_nothing_reorders_or_skips(name):
    DELAYS.update({"call-a": 0.1, "call-b": 0.2, "call-c": 0.3})
    try:
        assert mismatches(pair(STRATEGIES[name]), CALLS) == (0, 0)
    finally:
        DELAYS.update({"call-a": 0.3, "call-b": 0.1, "call-c": 0.2})


def test_theory_matches_factorial():
    from keel_lab.course._experiments.pairing import theory
    assert [round(theory(n), 4) for n in (1, 2, 3, 4)] == [0, 0.5, round(1 - 1 / 6, 4),
                                                           round(1 - 1 / math.factorial(4), 4)]
