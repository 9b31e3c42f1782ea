import json

import pytest

from keel_lab import (
    AssistantMessage,
    LabError,
    OfflineAdapter,
    Runner,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    validate_history,
)
from keel_lab.providers._anthropic_messages import from_anthropic, to_anthropic, validate_anthropic

pytestmark = pytest.mark.ch1

RUN = Runner(OfflineAdapter()).run("Which is more severe, INC-001 or INC-999?")
HISTORY = [SystemMessage("You are on call."), *RUN.messages]


def test_anthropic_round_trip_and_shape():
    body = to_anthropic(HISTORY)
    assert body["system"] == "You are on call."
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user", "assistant"]  # both results in one message
    results = body["messages"][2]["content"]
    assert [b["tool_use_id"] for b in results] == [c.id for c in RUN.messages[1].tool_calls]
    assert body["messages"][1]["content"][0]["input"] == {"incident_id": "INC-001"}
    assert from_anthropic(body["messages"], body["system"]) == HISTORY
    assert validate_anthropic(body["messages"]) == []


def test_anthropic_needs_object_arguments():
    bad = [UserMessage("q"), AssistantMessage("", (ToolCall("t1", "f", "{oops"),))]
    with pytest.raises(LabError, match="call t1: Anthropic needs `input` as a JSON object"):
        to_anthropic(bad)


def use(i, *ids):
    return {"role": "assistant", "content": [
        {"type": "tool_use", "id": x, "name": "f", "input": {}} for x in ids]}


def result(*ids):
    return {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": x, "content": "ok"} for x in ids]}


Q = {"role": "user", "content": "q"}


def test_anthropic_missing_result_text():
    [p] = validate_anthropic([Q, use(1, "toolu_a", "toolu_b"), result("toolu_a")])
    assert p.message == (
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the "
        "next message.")
    assert p.ids == ("toolu_b",)


def test_anthropic_results_must_come_immediately_after():
    problems = validate_anthropic([Q, use(1, "toolu_a"), Q, result("toolu_a")])
    assert [p.kind for p in problems] == ["missing_results", "orphan_result"]
    assert problems[1].message.startswith(
        "messages.3.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_a.")


def test_anthropic_duplicate_ids():
    problems = validate_anthropic([Q, use(1, "toolu_a"), result("toolu_a"), use(3, "toolu_a"),
                                   result("toolu_a")])
    assert [p.message for p in problems] == [
        "messages.3.content.0: `tool_use` ids must be unique"]


@pytest.mark.parametrize("bad", [[{"role": "system", "content": "x"}],
                                 [{"role": "user", "content": 5}], ["text"]])
def test_anthropic_malformed_messages(bad):
    with pytest.raises(LabError, match=r"messages\.0"):
        from_anthropic(bad)


def test_langchain_round_trip():
    from langchain_core.messages import AIMessage
    from langchain_core.messages import ToolMessage as LcToolMessage

    from keel_lab.providers._langchain_messages import from_langchain, to_langchain
    lc = to_langchain(HISTORY)
    ai = lc[2]
    assert isinstance(ai, AIMessage)
    assert [(c["id"], c["name"], c["args"]) for c in ai.tool_calls] == [
        (c.id, c.name, json.loads(c.arguments)) for c in RUN.messages[1].tool_calls]
    assert [m.tool_call_id for m in lc if isinstance(m, LcToolMessage)] == [
        c.id for c in RUN.messages[1].tool_calls]
    assert from_langchain(lc) == HISTORY


def test_langchain_keeps_bad_json_as_invalid_tool_calls():
    from keel_lab.providers._langchain_messages import from_langchain, to_langchain
    history = [UserMessage("q"), AssistantMessage("", (ToolCall("c1", "f", '{"a": '),)),
               ToolMessage("c1", "f", "error")]
    [_, ai, _] = to_langchain(history)
    assert ai.tool_calls == [] and ai.invalid_tool_calls[0]["args"] == '{"a": '
    back = from_langchain(to_langchain(history))
    assert back == history and validate_history(back) == []


def test_openai_reader_refuses_anthropic_blocks_instead_of_skipping_them():
    from keel_lab.providers._openai_messages import from_openai
    with pytest.raises(LabError, match=r"messages\[1\]\.content\[0\]: a 'tool_use' block is "
                                       r"Anthropic's format"):
        from_openai([Q, use(1, "toolu_a")])
    with pytest.raises(LabError, match=r"messages\[0\]\.content\[0\]: expected a content part "
                                       r"with 'type' one of text, .* got 'video'"):
        from_openai([{"role": "user", "content": [{"type": "video"}]}])


@pytest.mark.parametrize(("message", "expected"), [
    ({"role": "assistant", "tool_calls": "call"}, r"\.tool_calls: expected a list"),
    ({"role": "assistant", "tool_calls": [{"id": 7, "function": {"name": "f", "arguments": ""}}]},
     r"has no 'id' \(expected a non-empty string, got 7\)"),
    ({"role": "assistant", "tool_calls": [{"id": "c", "type": "custom", "function": {}}]},
     r"\.type: expected 'function', got 'custom'"),
    ({"role": "user", "content": [{"type": "text", "text": 5}]}, r"\.content\[0\]\.text: expected"),
    ({"role": "tool", "tool_call_id": "c", "name": ["f"], "content": ""}, r"\.name: expected"),
    ({"role": "tool", "tool_call_id": 10**5000, "content": ""}, "got a huge integer"),
])
def test_openai_reader_names_the_field_and_what_was_expected(message, expected):
    from keel_lab.providers._openai_messages import from_openai
    with pytest.raises(LabError, match=expected):
        from_openai([message])


@pytest.mark.parametrize(("message", "expected"), [
    ({"role": "tool", "tool_call_id": "t", "content": "x"}, r"messages\.0: role 'tool' is OpenAI"),
    ({"role": "assistant", "content": "", "tool_calls": []}, r"messages\.0\.tool_calls: OpenAI"),
    ({"role": "assistant", "content": [{"type": "tool_use", "id": 3, "name": "f", "input": {}}]},
     r"messages\.0\.content\.0\.id: a tool_use block needs a non-empty string, got 3"),
    ({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": 5}]},
     r"messages\.0\.content\.0\.content: expected a string or a list of blocks, got int"),
    ({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                   "content": [{"type": "tool_result", "tool_use_id": "u"}]}]},
     r"messages\.0\.content\.0\.content\.0: a tool_result holds text or images"),
    ({"role": "user", "content": [{"type": "image_url", "image_url": {}}]},
     r"messages\.0\.content\.0: a 'image_url' part is OpenAI chat's"),
    ({"role": "user", "content": [{"text": "no type"}]}, r"a string 'type'"),
])
def test_anthropic_reader_names_the_field_and_what_was_expected(message, expected):
    for read in (from_anthropic, validate_anthropic):
        with pytest.raises(LabError, match=expected):
            read([message])


def test_anthropic_blocks_in_the_wrong_message_are_problems():
    stray = {"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "f",
                                          "input": {}}]}
    [p] = validate_anthropic([stray])
    assert (p.kind, p.ids, p.position) == ("misplaced_block", ("t",), 0)
    assert p.message.startswith("messages.0.content.0: a `tool_use` block cannot appear in a "
                                "user message")


def test_anthropic_input_that_is_not_json_is_refused_from_python():
    nan = {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f",
                                             "input": {"x": float("nan")}}]}
    with pytest.raises(LabError, match=r"messages\.0\.content\.0\.input: not a JSON object"):
        from_anthropic([nan])
