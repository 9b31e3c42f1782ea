"""What a hostile tester found in `keel-lab validate`, each pinned: Gemini pairs by id or by name,
never by position; Anthropic's duplicate and misordered results; linear time on long
histories; bounded, specific error lines for ambiguous and mistaken files."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from keel_cli._command import main
from keel_cli._conversation import read_conversation, validate_conversation
from keel_lab import AssistantMessage, LabError, ToolCall, ToolMessage, UserMessage
from keel_lab._core.history import validate_history
from keel_lab.providers._anthropic_messages import validate_anthropic
from keel_lab.providers._formats import detect_history
from keel_lab.providers._gemini_messages import from_gemini, validate_gemini

pytestmark = pytest.mark.ch1


def gcall(name: str, id: str | None = None) -> dict[str, Any]:
    return {"functionCall": {"name": name, "args": {}} | ({"id": id} if id else {})}


def gresp(name: str, result: str = "", id: str | None = None) -> dict[str, Any]:
    return {"functionResponse": {"name": name, "response": {"result": result}}
            | ({"id": id} if id else {})}


def turn(calls: list[dict[str, Any]], responses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"role": "model", "parts": calls}, {"role": "user", "parts": responses}]


def kinds(contents: list[dict[str, Any]]) -> list[tuple[str, tuple[str, ...]]]:
    return [(p.kind, p.ids) for p in validate_gemini(contents)]


# Gemini ------------------------------------------------------------------------------------

def test_gemini_responses_in_another_order_are_paired_by_name():
    contents = turn([gcall("get_weather"), gcall("get_time")],
                    [gresp("get_time", "12:00"), gresp("get_weather", "sunny")])
    assert validate_gemini(contents) == []
    results = {m.tool_call_id: m.content for m in from_gemini(contents)[1:]}
    calls = {c.name: c.id for c in from_gemini(contents)[0].tool_calls}
    assert results[calls["get_time"]] == "12:00" and results[calls["get_weather"]] == "sunny"


def test_gemini_same_name_responses_answer_same_name_calls_in_order():
    contents = turn([gcall("f"), gcall("g"), gcall("f")],
                    [gresp("f", "first"), gresp("g", "g"), gresp("f", "second")])
    assert validate_gemini(contents) == []
    first, _, second = from_gemini(contents)[0].tool_calls
    tools = from_gemini(contents)[1:]
    assert [(m.tool_call_id, m.content) for m in tools if m.name == "f"] == [
        (first.id, "first"), (second.id, "second")]


def test_gemini_a_response_of_a_name_no_call_has_is_reported_and_the_call_unanswered():
    contents = turn([gcall("get_weather")], [gresp("delete_everything")])
    [missing, stray] = validate_gemini(contents)
    assert (missing.kind, missing.ids, missing.position) == (
        "missing_results", ("gemini-call-0-0",), 0)
    assert "contents.0.parts.0: functionCall 'get_weather' (no id) has no functionResponse" \
        in missing.message
    assert (stray.kind, stray.ids) == ("orphan_result", ())
    assert stray.message == (
        "contents.1.parts.0: functionResponse 'delete_everything' (no id) answers no call: the "
        "previous turn has no call named 'delete_everything' (the lab's check)")
    assert "gemini-response" not in missing.message + stray.message  # no id the file lacks


def test_gemini_a_second_answer_to_one_id_is_reported_and_the_other_call_unanswered():
    contents = turn([gcall("f", "a"), gcall("f", "b")], [gresp("f", id="a"), gresp("f", id="a")])
    assert kinds(contents) == [("missing_results", ("b",)), ("duplicate_result", ("a",))]


def test_gemini_more_responses_of_a_name_than_calls_of_it():
    contents = turn([gcall("f")], [gresp("f"), gresp("f")])
    problems = validate_gemini(contents)
    assert [p.kind for p in problems] == ["orphan_result", "orphan_result"]
    assert problems[1].message.endswith("is one response more than the calls named 'f' "
                                        "(the lab's check)")


def test_gemini_a_response_without_id_does_not_answer_a_call_with_one():
    contents = turn([gcall("f", "a"), gcall("g")], [gresp("g"), gresp("f")])
    assert kinds(contents) == [("missing_results", ("a",)), ("orphan_result", ())]
    assert "every call named 'f' has an id, which its response must send back" in \
        validate_gemini(contents)[1].message


def test_gemini_a_response_whose_name_is_not_its_calls():
    contents = turn([gcall("f", "a")], [gresp("g", id="a")])
    assert kinds(contents) == [("missing_results", ("a",)), ("name_mismatch", ("a",))]


def test_gemini_a_call_id_used_twice():
    contents = turn([gcall("f", "a"), gcall("g", "a")], [gresp("f", id="a"), gresp("g")])
    problems = validate_gemini(contents)
    assert (problems[0].kind, problems[0].ids) == ("duplicate_id", ("a",))
    assert problems[0].message.startswith("contents.0.parts.1: functionCall id 'a' was already "
                                          "used by contents.0.parts.0")


def test_gemini_responses_with_no_call_turn_before_them():
    problems = validate_gemini([{"role": "user", "parts": [gresp("f")]}])
    assert [p.kind for p in problems] == ["orphan_result", "orphan_result"]
    assert problems[0].ids == ()


# Anthropic ---------------------------------------------------------------------------------

USE = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f",
                                         "input": {}}]}


def result(i: str = "toolu_1") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": i, "content": "x"}


TEXT = {"type": "text", "text": "here"}


def test_anthropic_a_second_result_for_one_call_is_reported():
    [p] = validate_anthropic([{"role": "user", "content": "q"}, USE,
                              {"role": "user", "content": [result(), result()]}])
    assert (p.kind, p.ids, p.position) == ("duplicate_result", ("toolu_1",), 2)
    assert p.message.startswith("messages.2.content.1: a second `tool_result` block")


def test_anthropic_text_before_the_results_is_reported_text_after_them_is_not():
    """After tool_use blocks, in Anthropic's own words (anthropics/claude-code#37, the live
    API's 400); without any, the lab's check."""
    [p] = validate_anthropic([USE, {"role": "user", "content": [TEXT, result()]}])
    assert (p.kind, p.ids) == ("results_not_first", ("toolu_1",))
    assert p.message == ("messages.1: Did not find 1 `tool_result` block(s) at the beginning of "
                         "this message. Messages following `tool_use` blocks must begin with a "
                         "matching number of `tool_result` blocks.")
    [orphan, p] = validate_anthropic([{"role": "user", "content": [TEXT, result()]}])
    assert orphan.kind == "orphan_result" and p.message.startswith(
        "messages.0.content.0: a `text` block before the `tool_result` block at content.1")
    assert "(the lab's check)" in p.message
    assert validate_anthropic([USE, {"role": "user", "content": [result(), TEXT]}]) == []
    assert validate_anthropic([{"role": "user", "content": [TEXT, TEXT]}]) == []


def test_anthropic_an_image_only_history_is_detected_as_anthropic(tmp_path):
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "AAAA"}}
    history = [{"role": "user", "content": [image, TEXT]}]
    assert detect_history(history) == "anthropic"
    path = tmp_path / "h.json"
    path.write_text(json.dumps(history))
    assert validate_conversation(*reversed(read_conversation(path))) == []
    with pytest.raises(LabError, match=r"an 'image' block is Anthropic's format.*--format "
                                       r"anthropic"):
        validate_conversation(history, "openai-chat")


# time --------------------------------------------------------------------------------------

def test_a_turn_of_many_calls_answered_in_reverse_is_checked_in_linear_time():
    n = 50_000  # a list's `in` and `remove` took minutes here
    ids = [f"call_{i}" for i in range(n)]
    history = [UserMessage("q"), AssistantMessage("", tuple(ToolCall(i, "f", "{}") for i in ids)),
               *(ToolMessage(i, "f", "") for i in reversed(ids))]
    start = time.perf_counter()
    assert validate_history(history) == []
    assert time.perf_counter() - start < 5


def test_a_repeated_id_in_one_turn_is_still_owed_one_result_per_call():
    history = [AssistantMessage("", (ToolCall("a", "f", "{}"), ToolCall("a", "f", "{}"))),
               ToolMessage("a", "f", "")]
    assert [(p.kind, p.ids) for p in validate_history(history)] == [
        ("duplicate_id", ("a",)), ("missing_results", ("a",))]


# files and their error lines ---------------------------------------------------------------

def write(tmp_path, value: Any) -> str:
    path = tmp_path / "h.json"
    path.write_text(json.dumps(value))
    return str(path)


def test_a_body_with_two_histories_is_refused_as_ambiguous(tmp_path, capsys):
    call = {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}
    path = write(tmp_path, {"messages": [], "input": [call]})
    with pytest.raises(LabError, match=r"ambiguous: the body has both 'messages' and 'input'"):
        read_conversation(path)
    assert main(["validate", path]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_an_empty_object_is_named_as_such(tmp_path):
    with pytest.raises(LabError, match=r"\(got an empty object\)$"):
        read_conversation(write(tmp_path, {}))


def test_a_long_key_path_is_bounded_in_the_error_line(tmp_path, capsys):
    value: Any = 1
    for _ in range(150):
        value = {"k" * 5000: value}
    path = write(tmp_path, [{"role": "user", "content": "x", "extra": value}])
    assert main(["validate", path]) == 2
    err = capsys.readouterr().err
    assert "nested deeper than 100 levels" in err and len(err) < 600
    long_dup = tmp_path / "dup.json"
    key = "d" * 5000
    long_dup.write_text(f'[{{"{key}": 1, "{key}": 2}}]')
    with pytest.raises(LabError, match=r"the key 'd{40}'\.\.\. appears twice") as exc:
        read_conversation(long_dup)
    assert len(str(exc.value)) < 300


def test_a_responses_file_under_format_openai_chat_says_what_it_is(tmp_path):
    items = [{"role": "user", "content": "q"},
             {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}]
    with pytest.raises(LabError, match=r"messages\[1\]: a 'function_call' item is the Responses "
                                       r"API's.*--format openai-responses\)$"):
        validate_conversation(items, "openai-chat")
    typed = [{"role": "user", "content": [{"type": "input_text", "text": "q"}]}]
    assert detect_history(typed) == "openai-responses"
    with pytest.raises(LabError, match=r"an 'input_text' part is the Responses API's"):
        validate_conversation(typed, "openai-chat")


@settings(max_examples=300, derandomize=True, deadline=None, database=None)
@given(st.lists(st.tuples(st.sampled_from("fg"), st.sampled_from([None, "a", "b"])),
                min_size=1, max_size=4),
       st.lists(st.tuples(st.sampled_from("fgh"), st.sampled_from([None, "a", "b", "c"])),
                max_size=5))
def test_gemini_pairing_never_crosses_names_and_leaves_nothing_unsaid(calls, responses):
    own = [i for _, i in calls if i]
    assume(len(own) == len(set(own)))  # a repeated call id: test_gemini_a_call_id_used_twice
    contents = turn([gcall(n, i) for n, i in calls], [gresp(n, id=i) for n, i in responses])
    messages = from_gemini(contents)
    named = {c.id: c.name for c in messages[0].tool_calls}
    tools = [m for m in messages[1:] if isinstance(m, ToolMessage)]
    problems = validate_gemini(contents)
    reported_calls = {i for p in problems if p.position == 0 for i in p.ids}
    strays = [p for p in problems if p.position == 1 and p.message.startswith("contents.1.")]
    answered = [m for m in tools if named.get(m.tool_call_id) == m.name]
    if not problems:  # a response bound to a call carries that call's name
        assert all(named[m.tool_call_id] == m.name for m in tools)
    unique = {m.tool_call_id for m in answered}
    assert set(named) - unique <= reported_calls  # every call is answered or reported
    assert len(strays) >= len(tools) - len(unique)  # every response answers a call or is said
    assert (problems == []) == (len(unique) == len(named) == len(tools))
