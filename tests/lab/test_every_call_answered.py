"""Property: whatever the model asks and whatever the tools do, every call of a turn ends with
exactly one tool message carrying its id, and the history is one a provider accepts.

Generated turns mix known and unknown tool names, ordinary and hostile arguments, and tools
that return, raise, time out, cancel themselves, return what is not JSON or wait for approval;
each turn runs streamed and not. The profile is derandomized and small: a few seconds.
"""

import asyncio
import json
import random
import time
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel_lab import (
    AssistantMessage,
    Executor,
    Runner,
    ScriptedAdapter,
    Tool,
    ToolCall,
    ToolError,
    Toolset,
    validate_history,
)
from keel_lab._core.streaming import Finish, ToolCallDelta

pytestmark = pytest.mark.ch1


def _deep(depth):
    value = {}
    for _ in range(depth):
        value = {"a": value}
    return value


async def _never_in_time():
    await asyncio.sleep(60)
    return {}


async def _cancels_itself():
    asyncio.current_task().cancel()
    await asyncio.sleep(1)


def _raise(make, *args):
    def tool(**_):
        raise make(*args)
    return tool


BEHAVIOURS = {
    "answers": lambda **kw: {"echo": sorted(kw)},
    "business_error": _raise(ToolError, "incident_not_found", "no such incident"),
    "raises": _raise(KeyError, "shard 7"),
    "no_code": _raise(ToolError, None, "forgot the code"),
    "asks_approval": _raise(ToolError, "approval_required", "ask first"),
    "raises_cancelled": _raise(asyncio.CancelledError),
    "cancels_itself": lambda **_: _cancels_itself(),
    "times_out": lambda **_: _never_in_time(),
    "blocks": lambda **_: time.sleep(0.05) or {},  # a thread past its 0.01 s timeout
    "not_json": lambda **_: {"x": float("nan")},
    "too_deep": lambda **_: _deep(100_000),
}
TOOLS = Toolset.of(
    [Tool(name, "", {"type": "object"}, fn, concurrency_safe=n % 2 == 0, timeout=0.01)
     for n, (name, fn) in enumerate(BEHAVIOURS.items())]
    + [Tool("gated", "", {"type": "object"}, lambda **_: {"done": True},
            concurrency_safe=True, requires_approval=True)])
NAMES = [*TOOLS.tools, "unknown_tool_x", "gated"]
HOSTILE = ['{"n": %s}' % ("7" * 5000), "[" * 100_000 + "]" * 100_000,
           '{"a": ' * 100_000 + "1" + "}" * 100_000, '{"x": NaN}', '{"x": -Infinity}',
           '{"x": 1e999}', '{"x": "\\ud800"}', "", "{", "[1, 2]", "null", '"text"']
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                           max_leaves=8)
arguments = st.one_of(st.sampled_from(HOSTILE),
                      st.dictionaries(st.text(max_size=5), json_values, max_size=3).map(json.dumps),
                      st.text(max_size=12))


class StreamedScript(ScriptedAdapter):
    """The scripted turns, each call cut into deltas of a seeded size and interleaved."""

    def __init__(self, turns, seed):
        super().__init__(turns)
        self.seed = seed

    def stream(self, messages, tools, turn):
        rng = random.Random(f"{self.seed}:{turn.step}")
        message = self.complete(messages, tools, turn)
        pending = []
        for i, c in enumerate(message.tool_calls):
            size = rng.randint(1, 50_000)
            parts = [c.arguments[k:k + size] for k in range(0, len(c.arguments), size)]
            pending.append([ToolCallDelta(i, c.id, c.name, parts[0] if parts else None),
                            *(ToolCallDelta(i, arguments_delta=p) for p in parts[1:])])
        while any(pending):
            yield rng.choice([p for p in pending if p]).pop(0)
        yield Finish("tool_calls" if message.tool_calls else "stop")


def run_to_the_end(runner, decide):
    """Run, and decide every pause until the run no longer waits."""
    result = runner.run("q")
    while result.status == "waiting_for_approval":
        result = runner.approve(result, {result.pending[0].call_id: decide})
    return result


def assert_every_call_answered(result, calls):
    assistant = [m for m in result.messages if m.role == "assistant" and m.tool_calls]
    assert [c.id for c in assistant[0].tool_calls] == [c.id for c in calls]
    answers = Counter(m.tool_call_id for m in result.messages if m.role == "tool")
    assert answers == Counter(c.id for c in calls)
    assert validate_history(result.messages) == []


@settings(derandomize=True, max_examples=120, deadline=None, database=None)
@given(calls=st.lists(st.tuples(st.sampled_from(NAMES), arguments), min_size=1, max_size=5),
       stream=st.booleans(), limit=st.integers(1, 4), decide=st.booleans(),
       seed=st.integers(0, 9))
def test_every_call_ends_with_exactly_one_tool_message(calls, stream, limit, decide, seed):
    turn = tuple(ToolCall(f"call-{i}", name, args) for i, (name, args) in enumerate(calls))
    model = StreamedScript([AssistantMessage("", turn), AssistantMessage("done")], seed)
    result = run_to_the_end(Runner(model, TOOLS, Executor(limit), stream=stream), decide)
    assert result.status in {"completed", "failed"}
    assert_every_call_answered(result, turn)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("hostile", HOSTILE[:6])
def test_hostile_arguments_are_that_calls_own_problem(stream, hostile):
    turn = (ToolCall("bad", "answers", hostile), ToolCall("good", "answers", '{"k": 1}'))
    model = StreamedScript([AssistantMessage("", turn), AssistantMessage("done")], 0)
    result = Runner(model, TOOLS, Executor(2), stream=stream).run("q")
    assert result.status == "completed" and result.partial
    assert [(o.call_id, o.code) for o in result.outcomes] == [("bad", "invalid_arguments"),
                                                               ("good", None)]
    assert_every_call_answered(result, turn)


def test_calls_waiting_on_a_failed_run_are_answered_as_not_run():
    turn = (ToolCall("a", "raises", "{}"), ToolCall("b", "gated", "{}"),
            ToolCall("c", "answers", "{}"))
    result = Runner(ScriptedAdapter([AssistantMessage("", turn)]), TOOLS).run("q")
    assert result.status == "failed" and result.pending == ()
    assert [(o.call_id, o.code) for o in result.outcomes] == [
        ("a", "tool_internal_error"), ("b", "approval_required"), ("c", "approval_required")]
    assert result.outcomes[1].detail == "not run: no person decided, the run is failed"
    assert_every_call_answered(result, turn)
