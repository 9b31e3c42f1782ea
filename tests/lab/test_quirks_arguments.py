"""Issue 11, Q2's shapes of argument text, each on its recording: the calls assembled, each
call's verdict and the diagnostics; the CLI names the shape; negative cases keep each policy
from reaching past its shape."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from keel_cli._command import main
from keel_lab.providers._diagnosis import diagnose, diagnose_file, read_stream

pytestmark = pytest.mark.ch7

STREAMS = Path(__file__).resolve().parents[2] / "data" / "streams"
C0, C1 = "call_AeHwZJrCI8HiOtwIJvCqDIOi", "call_NlFHBx84ZVMNVZXm9PNuNalq"
INC1, INC2 = '{"incident_id": "INC-001"}', '{"incident_id": "INC-002"}'
LOOKUPS = [(0, C0, "lookup_incident", INC1, True), (1, C1, "lookup_incident", INC2, True)]
CUT = [(0, "call_c3j27xdcg2lMLzgeonyLGcTJ", "lookup_incident", INC1, True),
       (1, "call_oCmZ9cpvnpKnA1hEDCM4PmBx", "lookup_incident", '{"incident_id": "INC-002',
        False)]

RECORDINGS = {
    "quirks/cumulative_snapshots.sse": (
        LOOKUPS, [(0, "cumulative_snapshots", "tolerated"), (1, "cumulative_snapshots",
                                                             "tolerated")]),
    "quirks/arguments_repeated.sse": (
        LOOKUPS, [(0, "arguments_repeated", "tolerated"), (1, "arguments_repeated",
                                                           "tolerated")]),
    "quirks/packed_calls.sse": (
        [(0, "call_kKoO01Rep45i6hLp5n8gU9rh", "lookup_incident", INC1 + INC2, False)],
        [(0, "packed_calls", "refused")]),
    "quirks/invalid_escape.sse": (
        [LOOKUPS[0], (1, "call_hWlB1O5B4YX98Eb9TVGlg0JG", "search_logs",
                      '{"service": "checkout", "query": "C:\\Deploy\\checkout.log"}', False)],
        [(1, "invalid_escape", "refused")]),
    "quirks/raw_control_character.sse": (
        [LOOKUPS[0], (1, "call_jVwIvV3JSb9QkDvhw37zRpXz", "search_logs",
                      '{"service": "checkout", "query": "timeout\nretry"}', False)],
        [(1, "raw_control_character", "refused")]),
    "quirks/call_in_text.sse": ([LOOKUPS[0]], [(None, "call_in_text", "reported")]),
    "token_limit/finish_tool_calls.sse": (CUT, [(1, "arguments_cut", "refused")]),
    "token_limit/finish_length.sse": (CUT, [(1, "arguments_cut", "refused"),
                                            (None, "cut_turn_kept", "reported")]),
}


@pytest.mark.parametrize("name", RECORDINGS)
def test_each_recording_assembles_to_its_calls_verdicts_and_diagnostics(name):
    calls, diagnostics = RECORDINGS[name]
    d = diagnose_file(STREAMS / name)
    assert [(c.index, c.id, c.name, c.arguments, c.executable) for c in d.calls] == calls
    assert [(x.index, x.quirk, x.action) for x in d.diagnostics] == diagnostics
    assert all(x.id == next(c.id for c in d.calls if c.index == x.index)
               for x in d.diagnostics if x.index is not None)
    assert d.ok == all(c[4] for c in calls)


@pytest.mark.parametrize("name", [n for n, (_, ds) in RECORDINGS.items()
                                  if ds[0][2] == "refused"])
def test_a_refused_call_names_its_shape_and_keeps_the_json_error_position(name):
    d = diagnose_file(STREAMS / name)
    [refused] = [x for x in d.diagnostics if x.action == "refused"]
    [call] = [c for c in d.calls if c.index == refused.index]
    assert re.search(r"arguments: not valid JSON: .+ \(char \d+\)\)$", refused.message)
    assert call.error == refused.message and call.input is None
    shape_words = {"packed_calls": "2 JSON objects one after another",
                   "invalid_escape": "`\\D` at char 36 is no JSON escape",
                   "raw_control_character": "a raw control character (U+000A)",
                   "arguments_cut": "the arguments end inside a value"}
    assert shape_words[refused.quirk] in refused.message
    assert "runnable only when" in refused.message  # what would make it runnable


def test_the_cut_message_says_what_the_finish_reason_claimed():
    said = {finish: next(x.message for x in diagnose_file(
        STREAMS / f"token_limit/finish_{finish}.sse").diagnostics)
        for finish in ("length", "tool_calls")}
    assert "as the finish reason 'length' says" in said["length"]
    assert "although the finish reason 'tool_calls' says the call is complete" in \
        said["tool_calls"]


def test_the_tolerated_readings_are_the_history_the_model_meant():
    for name in ("quirks/cumulative_snapshots.sse", "quirks/arguments_repeated.sse"):
        d = diagnose_file(STREAMS / name)
        assert [c.input for c in d.calls] == [{"incident_id": "INC-001"},
                                              {"incident_id": "INC-002"}]
        assert all("read as deltas, arguments: not valid JSON" in x.message
                   for x in d.diagnostics)


def test_the_leaked_call_is_reported_with_what_and_where():
    d = diagnose_file(STREAMS / "quirks/call_in_text.sse")
    [leak] = d.diagnostics
    assert (leak.id, leak.action) == (None, "reported")
    assert "'lookup_incident' (<tool_call> tag, line 1, char 0)" in leak.message
    assert d.text.startswith("<tool_call>") and '"INC-002"' in d.text  # the text is kept
    assert d.ok  # nothing it holds may not run: the leaked call is no call


@pytest.mark.parametrize(("name", "quirk", "action", "code"), [
    ("quirks/cumulative_snapshots.sse", "cumulative_snapshots", "tolerated", 0),
    ("quirks/packed_calls.sse", "packed_calls", "refused", 1),
    ("quirks/call_in_text.sse", "call_in_text", "reported", 0),
])
def test_assemble_prints_the_shape_and_its_action(capsys, name, quirk, action, code):
    assert main(["assemble", str(STREAMS / name)]) == code
    assert f"- {action} {quirk}" in capsys.readouterr().out
    assert main(["assemble", str(STREAMS / name), "--json"]) == code
    out = json.loads(capsys.readouterr().out)
    assert (quirk, action) in [(x["quirk"], x["action"]) for x in out["diagnostics"]]


# --- the policies do not reach past their shapes ----------------------------------------------

def _chat(fragments: list[str], content: str = "", finish: str = "tool_calls") -> list[dict]:
    first = {"index": 0, "id": "call_x", "type": "function",
             "function": {"name": "lookup_incident", "arguments": ""}}
    entries = [first, *({"index": 0, "function": {"arguments": f}} for f in fragments)]
    chunks = [{"choices": [{"index": 0, "delta": {"tool_calls": [e]}}]} for e in entries]
    if content:
        chunks.append({"choices": [{"index": 0, "delta": {"content": content}}]})
    return [*chunks, {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}]


@pytest.mark.parametrize("fragments", [
    ['{"incident_id": ', '"INC-001"}'],  # plain deltas
    ['{"a": ', '{"a": 1}}'],  # deltas that chain, as snapshots would: the plain reading wins
    ['{"q": "{', '"}'],  # an object inside a string value looks like nothing
    ['{"incident_id": "INC-001"}'],  # one burst
])
def test_arguments_that_parse_as_deltas_are_never_read_otherwise(fragments):
    d = diagnose(_chat(fragments), "openai-chat")
    assert d.ok and d.diagnostics == []
    assert d.calls[0].arguments == "".join(fragments)


@pytest.mark.parametrize(("fragments", "quirk"), [
    (['{"a": 1,}'], None),  # a trailing comma: a plain syntax error, no shape
    (['[1, 2]'], None),  # JSON, but no object
    (['{"a": 1}', '{"b": 2}'], "packed_calls"),  # two different objects are no repeat
    ([INC1, INC1, INC1[:10], INC1[10:]], "packed_calls"),  # three copies: no single repeat
    (['{"a": "x', '{"a": "xy', '{"a": "xyz'], "cumulative_snapshots"),  # snapshots, cut
])
def test_shapes_that_leave_the_arguments_unknown_are_refused(fragments, quirk):
    d = diagnose(_chat(fragments), "openai-chat")
    assert not d.calls[0].executable
    assert [(x.quirk, x.action) for x in d.diagnostics] == ([(quirk, "refused")] if quirk
                                                            else [])


def test_three_copies_say_how_many_objects_they_hold():
    d = diagnose(_chat([INC1 + INC1 + INC1]), "openai-chat")
    assert d.diagnostics[0].message.startswith("3 JSON objects one after another")


@pytest.mark.parametrize("content", [
    'The tool takes JSON like {"name": "lookup_incident", "arguments": {}} in one line.',
    '```json\n{"name": "lookup_incident", "arguments": {"incident_id": "INC-1"}}\n```',
    "Wrap a call in `<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>` tags.",
    "I use the <tool_call> tag only when needed.",
    '{"name": "INC-001", "severity": "critical"}',  # an object with a name is no call
])
def test_text_that_merely_mentions_calls_is_not_reported(content):
    d = diagnose(_chat([INC1], content), "openai-chat")
    assert d.ok and d.diagnostics == [] and d.text == content


def test_a_bare_call_object_in_the_content_is_reported():
    content = 'Checking both.\n{"name": "lookup_incident", "parameters": {"incident_id": "X"}}'
    d = diagnose(_chat([INC1], content), "openai-chat")
    [leak] = d.diagnostics
    assert (leak.quirk, leak.action) == ("call_in_text", "reported")
    assert "'lookup_incident' (JSON object, line 2, char 15)" in leak.message


def test_every_recorded_stream_other_than_call_in_text_has_no_leak():
    reported = []
    for path in sorted(STREAMS.rglob("*.*")):
        fmt, records = read_stream(path)
        if any(x.quirk == "call_in_text" for x in diagnose(records, fmt).diagnostics):
            reported.append(path.name)
    assert reported == ["call_in_text.sse"]
