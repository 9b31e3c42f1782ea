"""Gemini, the fifth format: the stream converter (whole calls, ids at the boundary, same-name
calls apart, the thought signature kept with its call), detection, the CLI, the conversions and
Gemini's pairing rule with its error text."""

import json
from pathlib import Path

import pytest

from keel_cli._command import main
from keel_cli._conversation import read_conversation, validate_conversation
from keel_lab import LabError
from keel_lab._core.messages import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from keel_lab._core.protocol import ToolCall
from keel_lab.providers._diagnosis import diagnose, diagnose_file, read_stream
from keel_lab.providers._formats import detect_history, detect_stream
from keel_lab.providers._gemini_messages import (
    COUNT,
    from_gemini,
    thought_signatures,
    to_gemini,
    validate_gemini,
)

pytestmark = pytest.mark.ch7

STREAMS = Path(__file__).resolve().parents[2] / "data" / "streams" / "gemini"


def quirks(d):
    return [(x.index, x.quirk, x.action) for x in d.diagnostics]


def event(*parts, finish=None):
    cand = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    return {"candidates": [cand]}


def call(name, args, **extra):
    fn = {"name": name, "args": args}
    fn.update({k: v for k, v in extra.items() if k == "id"})
    part = {"functionCall": fn}
    part.update({k: v for k, v in extra.items() if k != "id"})
    return part


def test_one_call_gets_a_stable_id_and_keeps_its_signature():
    d = diagnose_file(STREAMS / "one_call.sse")
    assert d.format == "gemini" and d.ok and d.finish_reason == "stop"
    [c] = d.calls
    assert (c.id, c.name, c.input) == ("gemini-call-0", "lookup_incident",
                                       {"incident_id": "INC-001"})
    # STOP is Gemini's normal end of a turn with calls: nothing to say of it
    assert quirks(d) == [(0, "id_assigned", "tolerated"), (0, "thought_signature", "tolerated")]
    _, records = read_stream(STREAMS / "one_call.sse")
    signature = records[0]["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    assert signature in d.diagnostics[1].message


def test_two_calls_with_the_same_name_stay_apart():
    d = diagnose_file(STREAMS / "parallel_calls.sse")
    assert d.ok
    assert [(c.index, c.id, c.name, c.input) for c in d.calls] == [
        (0, "gemini-call-0", "lookup_incident", {"incident_id": "INC-001"}),
        (1, "gemini-call-1", "lookup_incident", {"incident_id": "INC-002"})]
    assert (1, "same_name", "tolerated") in quirks(d)
    # on parallel calls only the first part carries a signature
    assert [i for i, q, _ in quirks(d) if q == "thought_signature"] == [0]


def test_calls_in_separate_events_keep_their_own_ids_and_the_text():
    d = diagnose_file(STREAMS / "calls_in_separate_events.sse")
    assert d.ok and d.text == "I'll check the checkout service."  # the thought is no text
    _, records = read_stream(STREAMS / "calls_in_separate_events.sse")
    sent = [p["functionCall"]["id"] for r in records
            for p in r["candidates"][0]["content"]["parts"] if "functionCall" in p]
    assert [c.id for c in d.calls] == sent and len(set(sent)) == 3
    assert [c.name for c in d.calls] == ["lookup_incident", "get_service_status", "search_logs"]
    assert "id_assigned" not in [q for _, q, _ in quirks(d)]


def test_a_call_after_the_finish_is_never_run():
    d = diagnose([event(call("f", {}), finish="STOP"), event(call("g", {"a": 1}))], "gemini")
    assert [c.executable for c in d.calls] == [True, False]
    assert (1, "after_finish", "refused") in quirks(d)


def test_a_stream_without_finish_runs_nothing():
    d = diagnose([event(call("f", {}))], "gemini")
    assert not d.ok and not d.calls[0].executable
    assert (None, "truncated", "refused") in quirks(d)


def test_two_calls_with_one_id_refuse_the_turn():
    d = diagnose([event(call("f", {}, id="x"), call("f", {}, id="x"), finish="STOP")], "gemini")
    assert not any(c.executable for c in d.calls)


def test_a_max_tokens_finish_is_passed_on_and_other_candidates_are_noted():
    other = {"content": {"role": "model", "parts": [call("g", {})]}, "index": 1}
    d = diagnose([{"candidates": [event(call("f", {}))["candidates"][0], other]},
                  event(finish="MAX_TOKENS")], "gemini")
    assert d.finish_reason == "max_tokens" and [c.name for c in d.calls] == ["f"]
    assert (None, "other_candidate", "tolerated") in quirks(d)


@pytest.mark.parametrize(("part", "field"), [
    ({"functionCall": {"name": "f", "args": "{}"}}, "functionCall.args"),
    ({"functionCall": {"name": "f", "id": 3}}, "functionCall.id"),
    ({"functionCall": {"name": "f"}, "thoughtSignature": 1}, "thoughtSignature"),
])
def test_a_field_of_the_wrong_type_names_itself(part, field):
    with pytest.raises(LabError, match=f"field 'candidates\\[0\\].content.parts\\[0\\].{field}'"):
        diagnose([event(part, finish="STOP")], "gemini")


def test_a_server_error_is_a_diagnostic():
    d = diagnose([event(call("f", {})), {"error": {"code": 429,
                                                   "status": "RESOURCE_EXHAUSTED"}}], "gemini")
    assert not d.ok and not d.calls[0].executable and "RESOURCE_EXHAUSTED" in str(d.interrupted)
    assert (None, "server_error", "refused") in quirks(d)


def test_detection():
    assert detect_stream([{"candidates": []}]) == "gemini"
    assert detect_stream([{"usageMetadata": {"totalTokenCount": 1}}]) == "gemini"
    assert detect_history([{"role": "user", "parts": [{"text": "q"}]}]) == "gemini"


@pytest.mark.parametrize("fmt", [[], ["--format", "gemini"], ["--format", "auto"]])
def test_cli_assemble(capsys, fmt):
    assert main(["assemble", str(STREAMS / "parallel_calls.sse"), "--json", *fmt]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in out["calls"]] == ["gemini-call-0", "gemini-call-1"]
    assert "same_name" in [d["quirk"] for d in out["diagnostics"]]


def test_cli_assemble_refuses_another_format_as_gemini(capsys):
    path = STREAMS.parent / "anthropic" / "one_call.sse"
    assert main(["assemble", str(path), "--format", "gemini"]) == 2
    assert "this is not gemini" in capsys.readouterr().err


LAB = [SystemMessage("be brief"), UserMessage("q"),
       AssistantMessage("two lookups", (ToolCall("a", "lookup_incident", '{"incident_id": "1"}'),
                                        ToolCall("b", "lookup_incident", '{"incident_id": "2"}'))),
       ToolMessage("a", "lookup_incident", "one"), ToolMessage("b", "lookup_incident", "two"),
       AssistantMessage("done")]


def test_round_trip_keeps_messages_and_signatures():
    body = to_gemini(LAB, {"a": "c2ln"})
    assert body["systemInstruction"] == {"parts": [{"text": "be brief"}]}
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user", "model"]
    assert len(body["contents"][2]["parts"]) == 2  # both results in one user content
    assert from_gemini(body["contents"], body["systemInstruction"]) == LAB
    assert thought_signatures(body["contents"]) == {"a": "c2ln"}
    assert validate_gemini(body["contents"]) == []


def test_to_gemini_needs_object_arguments():
    with pytest.raises(LabError, match="call a: Gemini needs `args` as a JSON object"):
        to_gemini([AssistantMessage("", (ToolCall("a", "f", "[1]"),))])


def test_calls_without_ids_are_named_and_answered_by_name_in_order():
    contents = [{"role": "model", "parts": [call("f", {"x": 1}), call("f", {"x": 2})]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "f", "response": {"out": 1}}},
                    {"functionResponse": {"name": "f", "response": {"result": "2"}}}]}]
    messages = from_gemini(contents)
    assert [c.id for c in messages[0].tool_calls] == ["gemini-call-0-0", "gemini-call-0-1"]
    assert [(m.tool_call_id, m.content) for m in messages[1:]] == [
        ("gemini-call-0-0", '{"out": 1}'), ("gemini-call-0-1", "2")]
    assert validate_gemini(contents) == []


def test_validate_counts_response_parts_with_geminis_text():
    calls = {"role": "model", "parts": [call("f", {}, id="a"), call("f", {}, id="b")]}
    one = {"role": "user", "parts": [{"functionResponse": {"id": "a", "name": "f",
                                                           "response": {}}}]}
    left, count = validate_gemini([calls, one])
    assert (count.kind, count.message, count.ids, count.position) == (
        "missing_results", COUNT, ("b",), 1)
    assert (left.kind, left.ids, left.position) == ("missing_results", ("b",), 0)
    assert left.message == ("contents.0.parts.1: functionCall 'f' (id 'b') has no "
                            "functionResponse in contents.1 (the lab's check)")
    count, *calls_left = validate_gemini([{"role": "user", "parts": [{"text": "q"}]}, calls])
    assert (count.kind, count.ids) == ("missing_results", ("a", "b"))
    assert [p.ids for p in calls_left] == [("a",), ("b",)]
    assert "in a user turn after it" in calls_left[0].message
    count, stray = validate_gemini([{"role": "user", "parts": [{"text": "q"}]}, one])
    assert (count.kind, count.message, count.ids) == ("orphan_result", COUNT, ("a",))
    assert stray.message == ("contents.1.parts.0: functionResponse 'f' (id 'a') names an id "
                             "no functionCall of the previous turn has (the lab's check)")
    wrong = {"role": "user", "parts": [{"functionResponse": {"id": i, "name": "f",
                                                             "response": {}}} for i in "ac"]}
    missing, p = validate_gemini([calls, wrong])
    assert (missing.kind, missing.ids, missing.position) == ("missing_results", ("b",), 0)
    assert (p.kind, p.ids) == ("orphan_result", ("c",)) and "the lab's check" in p.message


@pytest.mark.parametrize(("contents", "expected"), [
    ([{"role": "assistant", "parts": []}], r"contents.0: role must be 'user' or 'model'"),
    ([{"role": "user", "content": "q"}], r"contents.0.content: not Gemini's"),
    ([{"role": "user", "parts": [call("f", {})]}], r"contents.0.parts.0: a functionCall part "
                                                  r"belongs in a model content"),
    ([{"role": "model", "parts": [{"functionCall": {"name": ""}}]}],
     r"contents.0.parts.0.functionCall.name: a non-empty string"),
    ([{"role": "model", "parts": [{"functionCall": {"name": "f", "args": [1]}}]}],
     r"contents.0.parts.0.functionCall.args: expected an object"),
    ([{"role": "model", "parts": "x"}], r"contents.0.parts: expected a list"),
])
def test_malformed_contents_raise_one_line(contents, expected):
    with pytest.raises(LabError, match=expected):
        validate_gemini(contents)


def test_validate_command_reads_a_gemini_request_body(tmp_path, capsys):
    body = to_gemini(LAB[:4])
    path = tmp_path / "h.json"
    path.write_text(json.dumps(body))
    fmt, contents = read_conversation(path)
    assert fmt == "gemini" and [p.kind for p in validate_conversation(contents, fmt)] == [
        "missing_results", "missing_results"]
    assert main(["validate", str(path), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["problems"] == [
        {"message": "contents.1.parts.2: functionCall 'lookup_incident' (id 'b') has no "
                    "functionResponse in contents.2 (the lab's check)", "ids": ["b"],
         "code": "missing_results"},
        {"message": COUNT, "ids": ["b"], "code": "missing_results"}]
