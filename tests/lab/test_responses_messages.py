"""The Responses API's `input` items: conversions to and from the lab's messages, and the
pairing rules, reported with OpenAI's texts (an output naming the item id `fc_...` first)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from keel_cli._command import main
from keel_cli._conversation import read_conversation
from keel_lab import LabError
from keel_lab._core.messages import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from keel_lab._core.protocol import ToolCall
from keel_lab.providers._formats import HISTORY_FORMATS, detect_history
from keel_lab.providers._responses_messages import (
    from_responses,
    to_responses,
    validate_responses,
)

pytestmark = pytest.mark.ch7

INC1, INC2 = '{"incident_id": "INC-001"}', '{"incident_id": "INC-002"}'


def call(n: str, item_id: str | None = None) -> dict[str, Any]:
    item = {"type": "function_call", "call_id": f"call_{n}", "name": "lookup_incident",
            "arguments": INC1}
    return {**item, "id": item_id} if item_id else item


def output(call_id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": "{}"}


USER = {"role": "user", "content": "Compare INC-001 and INC-002"}


def test_an_output_naming_the_item_id_is_reported_with_openais_texts():
    items = [USER, call("1", "fc_1"), call("2", "fc_2"), output("call_1"), output("fc_2")]
    problems = validate_responses(items)
    assert [(p.kind, p.ids, p.position) for p in problems] == [
        ("missing_results", ("call_2",), 2), ("orphan_result", ("fc_2",), 4)]
    assert problems[0].message.startswith("No tool output found for function call call_2.")
    assert "names the item id fc_2" in problems[0].message
    assert problems[1].message.startswith(
        "No tool call found for function call output with call_id fc_2.")
    assert "not its call_id call_2" in problems[1].message


def test_a_well_paired_responses_history_is_valid():
    items = [USER, call("1", "fc_1"), call("2"), {"type": "reasoning", "summary": []},
             output("call_2"), output("call_1"), {"role": "assistant", "content": "done"}]
    assert validate_responses(items) == []


@pytest.mark.parametrize(("items", "kind", "says"), [
    ([call("1")], "missing_results", "No tool output found for function call call_1."),
    ([output("call_9")], "orphan_result",
     "No tool call found for function call output with call_id call_9. (input[0])"),
    ([output("call_1"), call("1")], "orphan_result", "No tool call found"),
    ([call("1", "call_1"), output("call_1")], "invalid_item_id",
     "Invalid 'input[0].id': 'call_1'. Expected an ID that begins with 'fc'."),
    ([call("1"), call("1"), output("call_1")], "duplicate_id", "the lab's check"),
    ([call("1"), output("call_1"), output("call_1")], "duplicate_result", "the lab's check"),
])
def test_each_responses_rule(items, kind, says):
    problems = validate_responses(items)
    assert kind in [p.kind for p in problems]
    assert any(p.message.startswith(says) or says in p.message for p in problems
               if p.kind == kind)


@pytest.mark.parametrize(("item", "says"), [
    ("x", r"input\[0\]: expected an object"),
    ({"type": "function_call", "name": "f", "arguments": "{}"}, r"input\[0\]\.call_id"),
    ({"type": "function_call", "call_id": "c", "name": "f", "arguments": {}},
     r"input\[0\]\.arguments: a function_call needs a JSON string"),
    ({"type": "function_call", "call_id": "c", "name": "f", "arguments": "", "id": 5},
     r"input\[0\]\.id: expected a string"),
    ({"type": "function_call_output", "call_id": "c", "output": 5}, r"input\[0\]\.output"),
    ({"type": "function_call_output", "call_id": "c"}, r"input\[0\]\.output"),
    ({"role": "tool", "tool_call_id": "c", "content": ""}, r"OpenAI chat's"),
    ({"role": "robot", "content": ""}, "role must be one of"),
    ({"type": 3}, r"input\[0\]\.type: expected a string"),
    ({"type": "tool_use", "id": "t"}, "Anthropic's"),
    ({"role": "user", "content": [{"text": "no type"}]}, "a string 'type'"),
])
def test_a_malformed_item_names_the_field(item, says):
    for read in (from_responses, validate_responses):
        with pytest.raises(LabError, match=says):
            read([item])


def test_responses_round_trip():
    messages = [SystemMessage("You are on call."), UserMessage("Compare"),
                AssistantMessage("Looking.", (ToolCall("call_1", "lookup_incident", INC1),
                                              ToolCall("call_2", "lookup_incident", INC2))),
                ToolMessage("call_1", "lookup_incident", "{}"),
                ToolMessage("call_2", "lookup_incident", "{}"),
                AssistantMessage("INC-001 is worse.")]
    items = to_responses(messages)
    assert all("id" not in i for i in items if i.get("type") == "function_call")
    assert from_responses(items) == messages
    assert validate_responses(items) == []


def test_responses_histories_are_detected_and_validated_from_the_cli(tmp_path, capsys):
    assert "openai-responses" in HISTORY_FORMATS
    broken = [USER, call("1", "fc_1"), output("fc_1")]
    assert detect_history(broken) == "openai-responses"
    assert detect_history([USER]) == "openai-chat"
    path = tmp_path / "body.json"
    path.write_text(json.dumps({"model": "gpt-4.1", "input": broken}))
    assert read_conversation(path)[0] == "openai-responses"
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "No tool output found for function call call_1." in out
    assert main(["validate", str(path), "--format", "openai-responses", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["valid"] is False
    path.write_text(json.dumps([USER, call("1", "fc_1"), output("call_1")]))
    assert main(["validate", str(path)]) == 0
    path.write_text(json.dumps({"input": [{"type": "function_call"}]}))
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


CUSTOM = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_p", "name": "apply_patch",
          "input": "*** Begin Patch"}  # OpenAI's free-form tool call (custom tools)


def test_a_custom_tool_call_pairs_with_its_custom_output_by_call_id():
    """Codex desktop's 400 for a custom tool call left unanswered (diegosouzapw/OmniRoute#8946);
    its item id is no `fc_...` and that is no problem."""
    items = [{"role": "user", "content": "patch it"}, CUSTOM, call("a"), output("call_a")]
    [problem] = validate_responses(items)
    assert (problem.kind, problem.message) == (
        "missing_results", "No tool output found for custom tool call call_p. (input[1])")
    answered = [*items, {"type": "custom_tool_call_output", "call_id": "call_p", "output": "ok"}]
    assert validate_responses(answered) == []
    assert detect_history(answered) == "openai-responses"
    [_, turn, *results] = from_responses(answered)
    assert turn.tool_calls[0] == ToolCall("call_p", "apply_patch", "*** Begin Patch")
    assert [r.tool_call_id for r in results] == ["call_a", "call_p"]
    [orphan] = validate_responses([*items[:1], {"type": "custom_tool_call_output",
                                                "call_id": "call_x", "output": "ok"}])
    assert orphan.kind == "orphan_result" and "(the lab's check)" in orphan.message


def test_a_custom_tool_call_without_its_input_names_the_field():
    with pytest.raises(LabError, match=r"input\[0\]\.input: a custom_tool_call needs"):
        validate_responses([{**CUSTOM, "input": {"patch": 1}}])


def test_a_body_that_continues_a_previous_response_is_not_refused_for_its_outputs(tmp_path,
                                                                                  capsys):
    """OpenAI's documented way to send results: `previous_response_id` and the outputs alone.
    `validate` called each output an orphan."""
    body = {"model": "m", "previous_response_id": "resp_1",
            "input": [output("call_a"), output("call_b")]}
    path = tmp_path / "next.json"
    path.write_text(json.dumps(body))
    assert main(["validate", str(path)]) == 0
    assert "continues the response resp_1" in capsys.readouterr().out
    # without it, the same outputs answer nothing
    path.write_text(json.dumps({"model": "m", "input": body["input"]}))
    assert main(["validate", str(path), "--json"]) == 1
    assert [p["code"] for p in json.loads(capsys.readouterr().out)["problems"]] == [
        "orphan_result", "orphan_result"]
    # an output answered twice is still a problem
    assert [p.kind for p in validate_responses([output("call_a"), output("call_a")],
                                               previous="resp_1")] == ["duplicate_result"]
