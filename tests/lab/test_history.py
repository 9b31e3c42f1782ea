import pytest

from keel_lab import AssistantMessage, ToolCall, ToolMessage, UserMessage, validate_history
from keel_lab._core.history import MISSING_RESULTS

pytestmark = pytest.mark.ch1

Q = UserMessage("q")


def turn(*ids):
    return AssistantMessage("", tuple(ToolCall(i, "lookup_incident", "{}") for i in ids))


def result(i):
    return ToolMessage(i, "lookup_incident", "{}")


def test_complete_history_is_valid_in_any_result_order():
    assert validate_history([Q, turn("a", "b"), result("b"), result("a"),
                             AssistantMessage("done")]) == []


def test_missing_result_uses_the_provider_text_and_names_the_id():
    [p] = validate_history([Q, turn("call_a", "call_b"), result("call_a"), UserMessage("next")])
    assert p.kind == "missing_results" and p.ids == ("call_b",) and p.position == 1
    assert p.message == (
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        "call_b")


def test_results_at_the_end_of_the_history_are_still_required():
    [p] = validate_history([Q, turn("a", "b")])
    assert p.message == MISSING_RESULTS.format(ids="a, b")


def test_result_after_the_next_user_message_is_an_orphan_and_the_call_is_missing():
    problems = validate_history([Q, turn("a"), Q, result("a")])
    assert [p.kind for p in problems] == ["missing_results", "orphan_result"]
    assert "preceeding message with 'tool_calls'" in problems[1].message
    assert problems[1].ids == ("a",) and problems[1].position == 3


def test_result_for_an_unknown_id_is_an_orphan():
    problems = validate_history([Q, turn("a"), result("a"), result("zzz")])
    assert [(p.kind, p.ids) for p in problems] == [("orphan_result", ("zzz",))]


def test_second_result_for_one_call_is_reported():
    problems = validate_history([Q, turn("a"), result("a"), result("a")])
    assert [(p.kind, p.ids, p.position) for p in problems] == [("duplicate_result", ("a",), 3)]


def test_duplicate_call_ids_across_turns():
    problems = validate_history([Q, turn("a"), result("a"), turn("a"), result("a")])
    assert [(p.kind, p.ids) for p in problems] == [("duplicate_id", ("a",))]
    assert "messages[3].tool_calls[0]" in problems[0].message
    assert "messages[1]" in problems[0].message


def test_provider_dicts_are_refused_not_skipped():
    import pytest

    from keel_lab import LabError
    dicts = [{"role": "user", "content": "q"},
             {"role": "assistant", "tool_calls": [{"id": "a", "type": "function",
                                                   "function": {"name": "f", "arguments": ""}}]}]
    with pytest.raises(LabError, match=r"messages\[0\]: a dict, not a lab message; .*from_openai"):
        validate_history(dicts)
    with pytest.raises(LabError, match=r"messages\[1\]: expected a lab message .* got str"):
        validate_history([Q, "assistant"])
