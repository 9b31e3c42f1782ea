import pytest

from keel_lab import (
    AssistantMessage,
    LabError,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolRequest,
    UserMessage,
    from_openai,
    parse_arguments,
    to_openai,
)
from keel_lab._core.protocol import call_problems

pytestmark = pytest.mark.ch1

HISTORY = [
    SystemMessage("You are on call."),
    UserMessage("Which is more severe, INC-001 or INC-002?"),
    AssistantMessage("", (ToolCall("call_a", "lookup_incident", '{"incident_id": "INC-001"}'),
                          ToolCall("call_b", "lookup_incident", '{"incident_id": "INC-002"}'))),
    ToolMessage("call_a", "lookup_incident", '{"id": "INC-001"}'),
    ToolMessage("call_b", "lookup_incident", '{"id": "INC-002"}'),
    AssistantMessage("INC-001 is more severe."),
]


def test_openai_round_trip_keeps_raw_arguments_and_ids():
    dicts = to_openai(HISTORY)
    assert dicts[2]["tool_calls"][1] == {
        "id": "call_b", "type": "function",
        "function": {"name": "lookup_incident", "arguments": '{"incident_id": "INC-002"}'}}
    assert dicts[2]["content"] is None
    assert dicts[3] == {"role": "tool", "tool_call_id": "call_a", "name": "lookup_incident",
                        "content": '{"id": "INC-001"}'}
    assert from_openai(dicts) == HISTORY


def test_from_openai_reads_content_parts():
    [m] = from_openai([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    assert m == UserMessage("hi")


@pytest.mark.parametrize(("bad", "expected"), [
    ({"role": "robot", "content": "x"}, r"messages\[0\]: unknown role 'robot'"),
    ({"role": "tool", "content": "x"}, r"messages\[0\]: a tool message needs"),
    ({"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]},
     r"messages\[0\]\.tool_calls\[0\]: the tool call has no 'id'"),
    ({"role": "assistant", "tool_calls": [{"id": "c1", "function": {"arguments": "{}"}}]},
     r"tool_calls\[0\] \(id c1\): the tool call has no function name"),
    ({"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f",
                                                                     "arguments": {}}}]},
     r"\(id c1\): 'function.arguments' must be a JSON string"),
    ("not a dict", r"messages\[0\]: expected an object"),
])
def test_from_openai_names_the_broken_message(bad, expected):
    with pytest.raises(LabError, match=expected):
        from_openai([bad])


@pytest.mark.parametrize(("text", "value", "code", "error"), [
    ('{"a": 1}', {"a": 1}, None, None),
    ("", {}, None, None),
    ('{"a": ', None, "not_json", "not valid JSON"),
    ("[1, 2]", None, "not_an_object", "must be a JSON object, got list"),
    ('"text"', None, "not_an_object", "must be a JSON object, got str"),
])
def test_parse_arguments(text, value, code, error):
    got, problem = parse_arguments(text)
    assert got == value
    assert (problem is None) if error is None else (
        problem.code == code and error in str(problem))


def test_request_keeps_both_shapes():
    r = ToolRequest.from_call(ToolCall("c1", "lookup_incident", '{"incident_id": "INC-001"}'))
    assert r.raw_arguments == '{"incident_id": "INC-001"}'
    assert r.input == {"incident_id": "INC-001"} and r.parse_error is None


def test_call_problems_name_each_bad_call():
    calls = [ToolCall("", "f", "{}"), ToolCall("x", "", "{}"), ToolCall("x", "f", "{}")]
    assert [p.message for p in call_problems(calls)] == [
        "tool_calls[0] has no id",
        "tool_calls[1] (id x) has no name",
        "tool_calls[2] (id x) reuses the id of tool_calls[1]",
    ]


@pytest.mark.parametrize(("text", "reason"), [
    ('{"n": %s}' % ("9" * 5000), "arguments: n: the number 99999999999999999999... (5000 "
                                 "characters) is too large"),
    ('{"n": -%s}' % ("9" * 5000), "(5001 characters) is too large"),
    ("[" * 100_000 + "]" * 100_000, "arguments: nested deeper than 100 levels"),
    ('{"a": ' * 100_000 + "1" + "}" * 100_000, "arguments: nested deeper than 100 levels"),
    ('{"x": NaN}', "arguments: x: NaN is not a JSON number"),
    ('{"x": Infinity}', "arguments: x: Infinity is not a JSON number"),
    ('{"x": -Infinity}', "arguments: x: -Infinity is not a JSON number"),
    ('{"x": 1e400}', "arguments: x: the number 1e400 is too large"),
])
def test_hostile_but_valid_json_is_refused_with_its_reason(text, reason):
    value, error = parse_arguments(text)
    assert value is None and error is not None and reason in str(error)


def test_ordinary_numbers_still_parse():
    assert parse_arguments('{"n": %s, "f": -1.5e300}' % ("9" * 4000)) == (
        {"n": int("9" * 4000), "f": -1.5e300}, None)
