"""Calls the provider runs itself (server tools) are shown apart and never run; unknown block,
delta, event and item types are reported once and never make a turn unreadable.

The payloads are cut down from real recordings in pydantic/pydantic-ai's VCR cassettes (MIT,
commit 4fda38988f2939fa6ea9cdefcf120693e10ef491), named per test.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel_cli._command import diagnosis_json
from keel_lab import LabError
from keel_lab._core.streaming import Finish, ProviderCall, assemble
from keel_lab.providers._diagnosis import Diagnosis, diagnose

pytestmark = pytest.mark.ch7

SRV = "srvtoolu_01FYcUbzEaqqQh1WBRj1QX3h"


def quirks(d: Diagnosis) -> list[tuple[Any, ...]]:
    return [(x.index, x.quirk, x.action) for x in d.diagnostics]


def calls(d: Diagnosis) -> list[tuple[Any, ...]]:
    return [(c.index, c.id, c.name, c.arguments, c.executable) for c in d.calls]


# --- Anthropic: a server tool, its result, then an ordinary tool_use ------------------------
# tests/models/cassettes/test_anthropic/test_anthropic_model_web_search_tool_stream.yaml

def start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": kind, **fields}}


def json_delta(index: int, text: str) -> dict[str, Any]:
    return delta(index, "input_json_delta", partial_json=text)


def stop(reason: str) -> list[dict[str, Any]]:
    return [{"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None}},
            {"type": "message_stop"}]


def web_search_turn(reason: str = "tool_use") -> list[dict[str, Any]]:
    return [
        {"type": "message_start", "message": {"id": "msg_01", "content": []}},
        start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, "thinking_delta", thinking="The user is asking about the weather"),
        delta(0, "signature_delta", signature="Er8E"),
        {"type": "content_block_stop", "index": 0},
        start(1, {"type": "server_tool_use", "id": SRV, "name": "web_search", "input": {}}),
        json_delta(1, ""), json_delta(1, '{"query": '), json_delta(1, '"San Francisco weather"}'),
        {"type": "content_block_stop", "index": 1},
        start(2, {"type": "web_search_tool_result", "tool_use_id": SRV,
                  "content": [{"type": "web_search_result", "title": "AccuWeather"}]}),
        {"type": "content_block_stop", "index": 2},
        start(3, {"type": "text", "text": ""}),
        delta(3, "text_delta", text="Based on the search results"),
        delta(3, "citations_delta", citation={"type": "web_search_result_location"}),
        {"type": "content_block_stop", "index": 3},
        start(4, {"type": "tool_use", "id": "toolu_01", "name": "get_forecast", "input": {}}),
        json_delta(4, '{"city": "SF"}'),
        {"type": "content_block_stop", "index": 4},
        *stop(reason)]


def test_a_server_tool_is_shown_apart_and_the_tool_use_after_it_runs():
    d = diagnose(web_search_turn(), "anthropic")
    assert calls(d) == [(4, "toolu_01", "get_forecast", '{"city": "SF"}', True)]
    assert d.provider_calls == [ProviderCall(1, SRV, "web_search",
                                             '{"query": "San Francisco weather"}',
                                             "server_tool_use", "web_search_tool_result")]
    assert d.ok and quirks(d) == [] and d.text == "Based on the search results"


def test_provider_calls_are_in_the_json_and_the_table_never_in_the_calls():
    d = diagnose(web_search_turn(), "anthropic")
    out = diagnosis_json(d)
    assert [c["id"] for c in out["calls"]] == ["toolu_01"]
    assert out["provider_calls"] == [{"index": 1, "id": SRV, "name": "web_search",
                                      "input": '{"query": "San Francisco weather"}',
                                      "kind": "server_tool_use",
                                      "result": "web_search_tool_result"}]
    assert (f'run by the provider: web_search {SRV} {{"query": "San Francisco weather"}} '
            "(web_search_tool_result)") in d.table().splitlines()


def test_a_turn_of_provider_calls_only_is_ok():
    events = [e for e in web_search_turn("end_turn") if e.get("index") != 4]
    d = diagnose(events, "anthropic")
    assert d.calls == [] and len(d.provider_calls) == 1 and d.ok


def test_an_mcp_tool_use_is_the_providers_named_with_its_server():
    # tests/models/cassettes/test_anthropic/test_anthropic_mcp_servers_stream.yaml
    d = diagnose([
        start(1, {"type": "mcp_tool_use", "id": "mcptoolu_01FZ", "name": "ask_question",
                  "input": {}, "server_name": "deepwiki"}),
        json_delta(1, '{"repoName": "pydantic/pydantic-ai"}'),
        start(2, {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_01FZ", "is_error": False,
                  "content": [{"type": "text", "text": "This repository..."}]}),
        *stop("end_turn")], "anthropic")
    assert d.provider_calls == [ProviderCall(1, "mcptoolu_01FZ", "deepwiki.ask_question",
                                             '{"repoName": "pydantic/pydantic-ai"}',
                                             "mcp_tool_use", "mcp_tool_result")]
    assert d.ok and d.calls == []


def test_an_input_json_delta_for_a_text_block_is_still_an_error():
    events = [start(0, {"type": "text", "text": ""}), json_delta(0, "{}"), *stop("end_turn")]
    with pytest.raises(LabError, match="input_json_delta for block 0, which is not a tool_use"):
        diagnose(events, "anthropic")


# --- Unknown types are reported once, never fatal -------------------------------------------

def test_unknown_block_delta_and_event_types_are_reported_once_and_skipped():
    events = web_search_turn()
    events[5:5] = [start(9, {"type": "hologram", "data": 1}), json_delta(9, '{"x": 1}'),
                   delta(9, "hologram_delta", x=1), delta(4, "hologram_delta", x=2),
                   {"type": "message_hologram"}, {"type": "message_hologram"}]
    d = diagnose(events, "anthropic")
    assert calls(d) == [(4, "toolu_01", "get_forecast", '{"city": "SF"}', True)] and d.ok
    assert quirks(d) == [(None, "unknown_block_type", "reported"),
                         (None, "unknown_delta_type", "reported"),
                         (None, "unknown_event_type", "reported")]
    assert "'hologram'" in d.diagnostics[0].message


def responses_call() -> list[dict[str, Any]]:
    item = {"id": "fc_1", "type": "function_call", "status": "in_progress", "arguments": "",
            "call_id": "call_1", "name": "get_capital"}
    return [{"type": "response.created", "response": {"status": "in_progress", "output": []}},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.function_call_arguments.delta", "item_id": "fc_1",
             "output_index": 0, "delta": '{"country":"France"}'},
            {"type": "response.output_item.done", "output_index": 0,
             "item": {**item, "status": "completed", "arguments": '{"country":"France"}'}},
            {"type": "response.completed", "response": {"status": "completed"}}]


def test_unknown_responses_item_and_event_types_are_reported_once():
    events = responses_call()
    events[1:1] = [{"type": "response.hologram.added", "output_index": 5},
                   {"type": "response.output_item.added", "output_index": 5,
                    "item": {"id": "h_1", "type": "hologram"}}]
    d = diagnose(events, "openai-responses")
    assert calls(d) == [(0, "call_1", "get_capital", '{"country":"France"}', True)] and d.ok
    assert quirks(d) == [(None, "unknown_event_type", "reported"),
                         (None, "unknown_item_type", "reported")]


ANTHROPIC_UNKNOWNS = st.sampled_from(["block", "delta", "event"])
NAMES = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)


def unknown(what: str, name: str, at: int) -> dict[str, Any]:
    if what == "block":
        return start(100 + at, {"type": f"x_{name}", "input": {}})  # a fresh index
    if what == "delta":
        return delta(at % 6, f"x_{name}_delta", partial_json='{"a": 1}')
    return {"type": f"message_x_{name}", "index": at}


@settings(max_examples=200, derandomize=True, deadline=None, database=None)
@given(st.lists(st.tuples(ANTHROPIC_UNKNOWNS, NAMES, st.integers(0, 30)), max_size=4))
def test_unknown_anthropic_types_anywhere_never_raise_nor_change_the_calls(inserted):
    events = web_search_turn()
    for what, name, at in inserted:
        events.insert(at % (len(events) + 1), unknown(what, name, at))
    d = diagnose(events, "anthropic")
    assert calls(d) == [(4, "toolu_01", "get_forecast", '{"city": "SF"}', True)]
    assert [p.id for p in d.provider_calls] == [SRV]
    assert {q for _, q, _ in quirks(d)} <= {"unknown_block_type", "unknown_delta_type",
                                           "unknown_event_type"}


@settings(max_examples=200, derandomize=True, deadline=None, database=None)
@given(st.lists(st.tuples(st.booleans(), NAMES, st.integers(0, 30)), max_size=4))
def test_unknown_responses_types_anywhere_never_raise_nor_change_the_calls(inserted):
    events = responses_call()
    for is_item, name, at in inserted:
        event = ({"type": "response.output_item.added", "output_index": 50 + at,
                  "item": {"id": f"x_{at}", "type": f"x_{name}"}} if is_item
                 else {"type": f"response.x_{name}.delta", "output_index": at})
        events.insert(at % (len(events) + 1), event)
    d = diagnose(events, "openai-responses")
    assert calls(d) == [(0, "call_1", "get_capital", '{"country":"France"}', True)]


# --- The core: a ProviderCall is collected, never a call -----------------------------------

def test_the_assembler_keeps_provider_calls_apart_even_when_interrupted():
    pc = ProviderCall(0, "ws_1", "web_search", '{"query": "x"}', "web_search_call", "completed")
    done = assemble([pc, Finish("completed")])
    assert done.provider_calls == (pc,) and done.calls == () and done.requests == ()
    cut = assemble([pc])
    assert cut.provider_calls == (pc,) and cut.refused == "stream ended before a finish reason"
