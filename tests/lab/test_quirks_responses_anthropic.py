"""Stream shapes of the Responses API (the call id is `call_id`, arguments before their item) and
of Anthropic (parameterless calls), and the replayed Anthropic histories the API rejects, with
its own error texts. The Responses API's histories: tests/lab/test_responses_messages.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from keel_cli._command import main
from keel_cli._conversation import validate_conversation
from keel_lab import LabError
from keel_lab.providers._anthropic_messages import from_anthropic, validate_anthropic
from keel_lab.providers._diagnosis import diagnose, diagnose_file
from keel_lab.providers._formats import detect_history
from keel_lab.providers._responses_messages import validate_responses

pytestmark = pytest.mark.ch7

STREAMS = Path(__file__).resolve().parents[2] / "data" / "streams"
INC1, INC2 = '{"incident_id": "INC-001"}', '{"incident_id": "INC-002"}'


def calls(d: Any) -> list[tuple[Any, ...]]:
    return [(c.index, c.id, c.name, c.arguments, c.input, c.executable) for c in d.calls]


def quirks(d: Any) -> list[tuple[Any, ...]]:
    return [(x.index, x.quirk, x.action) for x in d.diagnostics]


# --- Responses stream: arguments before their item ------------------------------------------

def test_arguments_before_their_item_are_held_for_it():
    d = diagnose_file(STREAMS / "openai-responses/arguments_before_item.sse")
    assert calls(d) == [
        (0, "call_ZZx6HQO35UWzQXzoohJKjqqR", "lookup_incident", INC1, {"incident_id": "INC-001"},
         True),
        (1, "call_looXL3Gv3fgrMRcnNfzSgQGH", "lookup_incident", INC2, {"incident_id": "INC-002"},
         True)]
    assert quirks(d) == [(1, "arguments_before_item", "tolerated")]
    assert "fc_VBFRN2YZl7c5mG3pr4Hl" in d.diagnostics[0].message and d.ok


def test_the_call_id_is_call_id_never_the_item_id():
    for name in ("openai-responses/arguments_before_item.sse", "openai-responses/one_call.sse"):
        d = diagnose_file(STREAMS / name)
        assert all(c.id.startswith("call_") for c in d.calls), name


def added(index: int, item_id: str | None, call_id: str) -> dict[str, Any]:
    item = {"type": "function_call", "call_id": call_id, "name": "f", "arguments": ""}
    if item_id:
        item["id"] = item_id
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def delta(index: int, item_id: str | None, text: str) -> dict[str, Any]:
    event = {"type": "response.function_call_arguments.delta", "output_index": index,
             "delta": text}
    if item_id:
        event["item_id"] = item_id
    return event


COMPLETED = {"type": "response.completed", "response": {"status": "completed"}}


def done(index: int, item_id: str | None, call_id: str, arguments: str) -> dict[str, Any]:
    """The item's close, as every real stream sends it (without it the call never runs)."""
    event = added(index, item_id, call_id) | {"type": "response.output_item.done"}
    event["item"] = {**event["item"], "arguments": arguments, "status": "completed"}
    return event


def test_an_early_event_without_item_id_waits_for_its_output_index():
    d = diagnose([delta(0, None, '{"a": '), added(0, None, "call_a"), delta(0, None, "1}"),
                  done(0, None, "call_a", '{"a": 1}'), COMPLETED], "openai-responses")
    assert calls(d) == [(0, "call_a", "f", '{"a": 1}', {"a": 1}, True)]
    assert quirks(d) == [(0, "arguments_before_item", "tolerated")]


def test_an_early_event_goes_to_the_item_it_names_not_to_its_neighbour():
    d = diagnose([added(0, "fc_a", "call_a"), delta(1, "fc_b", '{"b": 2}'),
                  delta(0, "fc_a", '{"a": 1}'), added(1, "fc_b", "call_b"),
                  done(0, "fc_a", "call_a", '{"a": 1}'), done(1, "fc_b", "call_b", '{"b": 2}'),
                  COMPLETED], "openai-responses")
    assert [(c.id, c.input) for c in d.calls] == [("call_a", {"a": 1}), ("call_b", {"b": 2})]
    assert quirks(d) == [(1, "arguments_before_item", "tolerated")]


def test_arguments_whose_item_never_comes_refuse_the_turn():
    d = diagnose([added(0, "fc_a", "call_a"), delta(0, "fc_a", "{}"),
                  delta(0, "fc_ghost", '{"x": 1}'), COMPLETED], "openai-responses")
    assert [(c.index, c.id, c.executable) for c in d.calls] == [(0, "call_a", False),
                                                                 (1, None, False)]
    assert (1, "arguments_without_item", "refused") in quirks(d)
    assert "fc_ghost" in d.calls[1].error and "output_item.added" in d.calls[1].error
    assert not d.ok


def test_in_order_events_note_nothing():
    """The tolerance does not over-reach: the ordinary recordings hold no such diagnostic."""
    for name in ("one_call.sse", "parallel_calls.sse", "after_reasoning.jsonl"):
        d = diagnose_file(STREAMS / "openai-responses" / name)
        assert quirks(d) == [] and d.ok, name


def test_assemble_prints_the_shape_and_its_action(capsys):
    path = STREAMS / "openai-responses/arguments_before_item.sse"
    assert main(["assemble", str(path)]) == 0
    assert "- tolerated arguments_before_item (call 1" in capsys.readouterr().out
    assert main(["assemble", str(path), "--json"]) == 0
    diagnostics = json.loads(capsys.readouterr().out)["diagnostics"]
    assert [(x["index"], x["quirk"], x["action"]) for x in diagnostics] == [
        (1, "arguments_before_item", "tolerated")]


# --- Anthropic stream: a tool without parameters --------------------------------------------

def test_parameterless_calls_run_with_an_empty_input():
    d = diagnose_file(STREAMS / "anthropic/no_arguments.sse")
    assert calls(d) == [
        (0, "toolu_019NAhvCK6PBD4zrJ2sXPHVdtW", "list_open_incidents", "", {}, True),
        (1, "toolu_01ZQWO72N3WzUOT7ugaOkd1afF", "list_open_incidents", "", {}, True)]
    assert quirks(d) == [(0, "no_arguments", "tolerated"), (1, "no_arguments", "tolerated")]


def test_calls_with_arguments_are_not_called_parameterless():
    for name in ("one_call.sse", "parallel_calls.sse", "three_calls.jsonl"):
        d = diagnose_file(STREAMS / "anthropic" / name)
        assert "no_arguments" not in {x.quirk for x in d.diagnostics} and d.ok, name


def test_a_cut_off_parameterless_call_is_not_tolerated():
    d = diagnose([{"type": "message_start", "message": {}},
                  {"type": "content_block_start", "index": 0, "content_block": {
                      "type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}}],
                 "anthropic")
    assert [x.quirk for x in d.diagnostics] == ["truncated"] and not d.ok


# --- Anthropic histories: a streamed turn replayed raw --------------------------------------

def tool_use(value: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_1", "name": "lookup_incident", "input": value}


RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                       "content": "{}"}]}


def test_a_raw_input_json_delta_block_is_reported_with_anthropics_text():
    replay = [{"role": "user", "content": "Look up INC-001"},
              {"role": "assistant", "content": [
                  tool_use({}), {"type": "input_json_delta", "partial_json": '{"incident_'}]},
              RESULT]
    [p] = validate_anthropic(replay)
    assert (p.kind, p.position) == ("stream_delta_block", 1)
    assert p.message == ("messages.1.content.1: Input tag 'input_json_delta' found using 'type' "
                         "does not match any of the expected tags")


def test_a_string_input_is_reported_with_anthropics_text():
    replay = [{"role": "user", "content": "Look up INC-001"},
              {"role": "assistant", "content": [tool_use(INC1)]}, RESULT]
    [p] = validate_anthropic(replay)
    assert (p.kind, p.ids, p.position) == ("input_not_an_object", ("toolu_1",), 1)
    assert p.message == "messages.1.content.0.tool_use.input: Input should be a valid dictionary"
    with pytest.raises(LabError, match=r"messages\.1\.content\.0\.input: a tool_use block needs "
                                       "an object, got str"):
        from_anthropic(replay)


def test_an_assembled_replay_is_valid():
    replay = [{"role": "user", "content": "Look up INC-001"},
              {"role": "assistant", "content": [tool_use({"incident_id": "INC-001"})]}, RESULT]
    assert validate_anthropic(replay) == []
    assert validate_conversation(replay, "anthropic") == []


def test_validate_reports_a_raw_replay_from_the_cli(tmp_path, capsys):
    path = tmp_path / "replay.json"
    path.write_text(json.dumps([{"role": "user", "content": "Look up INC-001"},
                                {"role": "assistant", "content": [tool_use(INC1)]}, RESULT]))
    assert main(["validate", str(path), "--format", "anthropic"]) == 1
    assert "Input should be a valid dictionary" in capsys.readouterr().out


def test_an_anthropic_message_object_is_not_read_as_a_responses_item():
    """An Anthropic response saved whole carries `"type": "message"` too: its blocks decide."""
    saved = {"type": "message", "role": "assistant", "content": [tool_use({})]}
    assert detect_history([saved]) == "anthropic"
    with pytest.raises(LabError, match="Anthropic's format"):
        validate_responses([saved])


def test_an_item_without_call_id_is_never_run_under_its_item_id():
    d = diagnose([added(0, "fc_1", ""), delta(0, "fc_1", "{}"), COMPLETED], "openai-responses")
    assert [(c.id, c.executable) for c in d.calls] == [(None, False)]
    assert quirks(d)[0] == (0, "call_id_missing", "refused")
    assert "fc_1 has no call_id" in d.calls[0].error and not d.ok
