"""Real wire formats: every recorded stream, every quirk policy, bad files."""

import json
import os
import threading
import tracemalloc
from pathlib import Path

import pytest

from keel_cli._command import diagnosis_json
from keel_lab import LabError
from keel_lab._core.strict_json import read_json
from keel_lab.providers._diagnosis import diagnose, diagnose_file, read_stream
from keel_lab.providers._formats import DONE
from keel_lab.providers._formats import detect_stream as detect
from keel_lab.providers._streams.records import (
    MAX_BYTES,
    parse_records,
    read_bytes,
    sse_events,
)

pytestmark = pytest.mark.ch7

STREAMS = Path(__file__).resolve().parents[2] / "data" / "streams"
LOOKUP_1 = ("lookup_incident", {"incident_id": "INC-001"})
LOOKUP_2 = ("lookup_incident", {"incident_id": "INC-002"})
MIXED = [("lookup_incident", {"incident_id": "INC-003"}),
         ("get_service_status", {"service": "checkout"}),
         ("search_logs", {"service": "checkout", "query": "timeout"})]


def run(name, fmt="auto"):
    return diagnose_file(STREAMS / name, fmt)


def calls(d):
    return [(c.name, c.input) for c in d.calls]


@pytest.mark.parametrize(("name", "fmt", "expected"), [
    ("openai-chat/one_call.sse", "openai-chat", [LOOKUP_1]),
    ("openai-chat/parallel_calls.sse", "openai-chat", [LOOKUP_1, LOOKUP_2]),
    ("openai-chat/parallel_calls_interleaved.jsonl", "openai-chat", MIXED),
    ("openai-responses/one_call.sse", "openai-responses", [LOOKUP_1]),
    ("openai-responses/parallel_calls.sse", "openai-responses", [LOOKUP_1, LOOKUP_2]),
    ("openai-responses/after_reasoning.jsonl", "openai-responses", MIXED),
    ("anthropic/one_call.sse", "anthropic", [LOOKUP_1]),
    ("anthropic/parallel_calls.sse", "anthropic", [LOOKUP_1, LOOKUP_2]),
    ("anthropic/three_calls.jsonl", "anthropic", MIXED),
    ("ollama/one_call.jsonl", "ollama", [LOOKUP_1]),
    ("ollama/parallel_calls.jsonl", "ollama", [LOOKUP_1, LOOKUP_2]),
    ("ollama/calls_in_separate_lines.jsonl", "ollama", MIXED),
])
def test_every_format_assembles_its_calls(name, fmt, expected):
    d = run(name)
    assert d.format == fmt and d.ok
    assert calls(d) == expected
    assert len({c.id for c in d.calls}) == len(d.calls)


def test_format_specific_ids_and_indexes():
    responses = run("openai-responses/after_reasoning.jsonl")
    assert [c.index for c in responses.calls] == [1, 2, 3]  # a reasoning item took index 0
    assert all(c.id.startswith("call_") for c in responses.calls)  # call_id, not the fc_ item
    anthropic = run("anthropic/parallel_calls.sse")
    assert [c.index for c in anthropic.calls] == [1, 2]  # a text block took index 0
    assert all(c.id.startswith("toolu_") for c in anthropic.calls)
    assert [c.id for c in run("ollama/parallel_calls.jsonl").calls] == [
        "ollama-call-0", "ollama-call-1"]


def quirks(d):
    return {(x.quirk, x.action) for x in d.diagnostics}


TOLERATED = [
    ("index_missing.sse", {("index_missing", "tolerated")}),
    ("index_null.sse", {("index_missing", "tolerated")}),
    ("all_index_zero.sse", {("index_reused", "tolerated")}),
    ("sparse_index.sse", {("sparse_index", "tolerated")}),
    ("index_string.sse", {("index_string", "tolerated")}),
    ("name_repeated.sse", {("name_repeated", "tolerated")}),
    ("id_repeated.sse", set()),
    ("id_empty_on_continuation.sse", set()),
    ("arguments_null_tail.sse", set()),
    ("arguments_object.jsonl", {("arguments_object", "tolerated")}),
    ("finish_stop_with_calls.sse", {("finish_stop_with_calls", "tolerated")}),
]


@pytest.mark.parametrize(("name", "expected"), TOLERATED)
def test_tolerated_quirks_still_give_the_exact_calls(name, expected):
    d = run(f"quirks/{name}")
    assert d.ok, d.table()
    assert calls(d) == [LOOKUP_1, LOOKUP_2]
    assert quirks(d) == expected


def test_split_escape_sequence_is_harmless():
    d = run("quirks/split_escape.sse")
    assert d.ok and d.calls[0].input == {"service": "checkout", "query": 'café "au lait"'}


@pytest.mark.parametrize(("name", "quirk", "index", "says"), [
    ("split_utf8.sse", "split_utf8", 0, "arguments contain U+FFFD"),
    ("id_changed.sse", "id_changed", 0, "the id changed from call_U8JZ"),
    ("duplicate_id.sse", "duplicate_id", 1, "reuses the id of call at index 0"),
    ("truncated.sse", "truncated", None, "ended before a finish reason"),
])
def test_refused_quirks_run_nothing_and_name_the_call(name, quirk, index, says):
    d = run(f"quirks/{name}")
    assert not d.ok and not [c for c in d.calls if c.executable]
    [diagnostic] = [x for x in d.diagnostics if x.action == "refused"]
    assert (diagnostic.quirk, diagnostic.index) == (quirk, index)
    assert says in diagnostic.message
    if index is not None:
        assert diagnostic.id == next(c.id for c in d.calls if c.index == index) or \
            quirk == "id_changed"
    assert all(c.error for c in d.calls)


def test_a_rejected_call_does_not_stop_a_sound_sibling():
    records = parse_records((STREAMS / "quirks/split_utf8.sse").read_text())[:-1]  # no DONE
    second = {**records[1], "choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 1, "id": "call_ok", "type": "function",
         "function": {"name": "lookup_incident", "arguments": '{"incident_id": "INC-002"}'}}]},
        "finish_reason": None}]}
    d = diagnose([records[0], records[1], second, *records[2:]], "openai-chat")
    assert [(c.index, c.executable) for c in d.calls] == [(0, False), (1, True)]


def test_detect():
    assert detect([{"choices": []}]) == "openai-chat"
    assert detect([{"type": "response.created"}]) == "openai-responses"
    assert detect([{"type": "message_start"}]) == "anthropic"
    assert detect([{"message": {}, "done": False}]) == "ollama"
    with pytest.raises(LabError, match="cannot tell the format"):
        detect([{"hello": 1}])


def test_sse_rules():
    text = ": comment\nevent: a\ndata: {\"x\":\ndata: 1}\n\nid: 7\ndata: [DONE]\n\ndata: {\"cut\""
    assert list(sse_events(text)) == [("a", '{"x":\n1}', 3), ("message", "[DONE]", 7)]
    assert parse_records(text)[0] == {"x": 1}


@pytest.mark.parametrize(("content", "message"), [
    (b"data: {not json}\n\n", "line 1: not valid JSON"),
    (b'{"a": 1}\n[1, 2]\n', "line 2: expected a JSON object, got list"),
    (b"\xff\xfe\x00garbage", "binary data (a NUL byte at offset 2)"),
    (b"\xc3\x28 not utf-8", "not UTF-8 text (invalid byte at offset 0)"),
    (b"", "no events in the file"),
    (b'{"hello": "world"}\n', "cannot tell the format"),
])
def test_bad_files_get_a_clear_error(tmp_path, content, message):
    path = tmp_path / "stream.txt"
    path.write_bytes(content)
    with pytest.raises(LabError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_stream(path)


def test_huge_file_is_refused_after_reading_the_cap(tmp_path):
    path = tmp_path / "huge.sse"
    with path.open("wb") as f:
        f.truncate(100 * 1000 * 1000)  # sparse: 100 MB on paper, nothing on disk
    with pytest.raises(LabError, match=r"more than 32 MiB, too large"):
        read_stream(path)
    assert MAX_BYTES == 32 * 1024 * 1024


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_endless_devices_are_read_up_to_the_cap_only(device):
    with pytest.raises(LabError, match="more than 32 MiB"):
        read_bytes(device)


def test_a_fifo_is_read_in_chunks(tmp_path):
    fifo = tmp_path / "stream.fifo"
    os.mkfifo(fifo)
    line = (STREAMS / "ollama/one_call.jsonl").read_bytes()
    writer = threading.Thread(target=fifo.write_bytes, args=(line,))
    writer.start()
    assert diagnose_file(fifo).ok
    writer.join()


def test_missing_file():
    with pytest.raises(LabError, match="cannot read"):
        read_stream("/nonexistent/stream.sse")


def test_bad_index_type_is_named():
    bad = [{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1.5, "id": "a"}]}}]}]
    with pytest.raises(LabError, match=r"event 0: field 'choices\[0\].delta.tool_calls\[0\]"
                                       r".index' must be a whole number 0..2147483647, got a "
                                       r"number"):
        diagnose(bad, "openai-chat")


def test_server_error_mid_stream_interrupts():
    records = [{"type": "message_start", "message": {}},
               {"type": "content_block_start", "index": 0,
                "content_block": {"type": "tool_use", "id": "t1", "name": "f", "input": {}}},
               {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}]
    d = diagnose(records, "anthropic")
    assert not d.ok and "overloaded_error" in str(d.interrupted)
    assert d.interrupted.code == "stream_raised"
    assert not d.calls[0].executable


@pytest.mark.parametrize("path", sorted(STREAMS.rglob("*.*")), ids=lambda p: p.name)
def test_sse_and_json_lines_give_the_same_diagnosis(tmp_path, path):
    records = parse_records(path.read_text())
    if path.suffix == ".sse":
        other = "".join(("[DONE]" if r.get("__done__") else json.dumps(r)) + "\n"
                        for r in records if not r.get("__done__"))
    else:
        other = "".join(f"data: {json.dumps(r)}\n\n" for r in records)
    twin = tmp_path / ("twin.jsonl" if path.suffix == ".sse" else "twin.sse")
    twin.write_text(other)
    fmt, _ = read_stream(path)
    assert diagnosis_json(diagnose_file(twin, fmt)) == diagnosis_json(diagnose(records, fmt))


def test_server_error_is_a_diagnostic_in_the_json():
    records = [{"type": "message_start", "message": {}},
               {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}]
    out = diagnosis_json(diagnose(records, "anthropic"))
    assert [(d["quirk"], d["action"]) for d in out["diagnostics"]] == [
        ("server_error", "refused")]


def chat(*tool_calls, finish=None, content=None):
    delta = {"tool_calls": list(tool_calls)} if tool_calls else {}
    if content:
        delta["content"] = content
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


CALL_B = {"index": 1, "id": "call_b", "function": {"name": "f", "arguments": "{}"}}


@pytest.mark.parametrize(("end", "quirk"), [
    ([chat(finish="tool_calls")], "after_finish"),
    ([chat(finish="tool_calls"), DONE], "after_finish"),
    # [DONE] ends the turn (done_without_finish): a finish after it finishes nothing
    ([DONE, chat(finish="tool_calls")], "after_finish"),
])
def test_a_call_after_the_finish_or_done_never_runs(end, quirk):
    first = chat({"index": 0, "id": "call_a", "function": {"name": "f", "arguments": "{}"}})
    d = diagnose([first, *end, chat(CALL_B)], "openai-chat")
    late = next(c for c in d.calls if c.id == "call_b")
    assert not late.executable and not d.ok
    assert (quirk, "refused") in quirks(d)


def test_a_fragment_after_the_finish_spoils_its_call():
    first = chat({"index": 0, "id": "call_a", "function": {"name": "f", "arguments": "{"}})
    d = diagnose([first, chat(finish="tool_calls"), chat({"index": 0, "function": {
        "arguments": "}"}})], "openai-chat")
    assert not d.calls[0].executable and not d.ok


def test_late_calls_in_every_format():
    anthropic = [{"type": "message_start", "message": {}}, {"type": "message_stop"},
                 {"type": "content_block_start", "index": 0, "content_block": {
                     "type": "tool_use", "id": "t", "name": "f", "input": {}}}]
    responses = [{"type": "response.completed", "response": {"status": "completed"}},
                 {"type": "response.output_item.added", "output_index": 0, "item": {
                     "type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}}]
    ollama = [{"message": {}, "done": True}, {"message": {"tool_calls": [{"function": {
        "name": "f", "arguments": {}}}]}, "done": False}]
    for records, fmt in [(anthropic, "anthropic"), (responses, "openai-responses"),
                         (ollama, "ollama")]:
        d = diagnose(records, fmt)
        assert d.calls and not d.ok and not d.calls[0].executable, fmt


def test_a_repeated_start_at_one_index_runs_neither():
    start = {"type": "content_block_start", "index": 0, "content_block": {
        "type": "tool_use", "id": "t", "name": "f", "input": {}}}
    d = diagnose([{"type": "message_start", "message": {}}, start, start,
                  {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
                  {"type": "message_stop"}], "anthropic")
    assert not d.ok and "second content_block_start" in d.calls[0].error


@pytest.mark.parametrize(("records", "fmt", "says"), [
    ([chat({"index": 0, "id": 7})], "openai-chat", r"tool_calls\[0\].id' must be a string, "
                                                   "got a number"),
    ([chat({"index": 0, "function": {"name": 3}})], "openai-chat", "name' must be a string"),
    ([{"choices": "x"}], "openai-chat", "'choices' must be a list of objects, got a string"),
    ([{"choices": [{"delta": []}]}], "openai-chat", r"'choices\[0\].delta' must be an object"),
    ([{"choices": [{"delta": {}, "finish_reason": 1}]}], "openai-chat",
     "finish_reason' must be a string"),
    ([chat({"index": [0]})], "openai-chat", "index' must be a whole number"),
    ([{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta",
                                                            "text": 5}}],
     "anthropic", "delta.text' must be a string, got a number"),
    ([{"message": {}, "done": "yes"}], "ollama", "'done' must be true or false"),
    ([{"type": "response.output_item.added", "item": {"type": "function_call"}}],
     "openai-responses", "'output_index' is missing"),
])
def test_a_wrong_type_names_the_event_the_field_and_the_type(records, fmt, says):
    with pytest.raises(LabError, match=f"event 0: field .*{says}"):
        diagnose(records, fmt)


def test_another_formats_event_is_an_error_not_ignored():
    with pytest.raises(LabError, match="event 1: an anthropic event in an openai-chat stream"):
        diagnose([chat(), {"type": "message_stop"}], "openai-chat")
    with pytest.raises(LabError, match="event 0: this is not ollama: it is an anthropic event"):
        diagnose([{"type": "message_stop"}], "ollama")
    with pytest.raises(LabError, match="stream: this is not ollama: none of its events is one"):
        diagnose([{"x": 1}], "ollama")


def test_an_unknown_payload_is_noted():
    d = diagnose([chat(), {"x": 1}, chat(finish="stop")], "openai-chat")
    assert ("unknown_event", "tolerated") in quirks(d) and d.ok


@pytest.mark.parametrize(("text", "says"), [
    ('{"a": 1, "a": 2}', "the key 'a' appears twice in one object"),
    ('{"a": NaN}', "a: NaN is not a JSON number"),
    ('{"a": 1e400}', "a: the number 1e400 is too large"),
    ('{"a": ' + "9" * 5000 + "}", r"a: the number 9+\.\.\. \(5000 characters\) is too large"),
    ("[" * 100_000 + "]" * 100_000, "nested deeper than 100 levels"),
    ('{"a": {"b": ["\\udc00"]}}', r"a\.b\[0\]: a string holds a lone surrogate"),
    ('{"a": "\\ud83d\\ude00"}', None),  # a pair is one character, and fine
])
def test_strict_json(text, says):
    if says is None:
        assert read_json(text, "line 1") == {"a": "\U0001f600"}
        return
    with pytest.raises(LabError, match=f"line 1: .*{says}"):
        read_json(text, "line 1")


def test_lines_split_only_at_line_ends():
    text = '{"message": {"content": "a\u2028b"}, "done": true}\n'
    assert diagnose_file_text(text).text == "a\u2028b"


def diagnose_file_text(text, tmp=Path("/tmp")):
    path = tmp / f"keel-lab-{os.getpid()}.jsonl"
    path.write_text(text)
    try:
        return diagnose_file(path)
    finally:
        path.unlink()


def test_names_and_ids_print_safely():
    d = diagnose([chat({"index": 0, "id": "call_\x1b[2J", "function": {
        "name": "f\x1b]0;owned\x07", "arguments": "{}"}}), chat(finish="tool_calls")],
        "openai-chat")
    table = d.table()
    assert "\x1b" not in table and "\x07" not in table
    assert "call_\\x1b[2J" in table and "f\\x1b]0;owned\\x07" in table


def test_peak_memory_stays_under_ten_times_the_file(tmp_path):
    path = tmp_path / "big.sse"
    fragments = [chat({"index": i % 8, "function": {"arguments": "x" * 40}})
                 for i in range(40_000)]
    starts = [chat({"index": i, "id": f"call_{i}", "function": {"name": "f", "arguments": ""}})
              for i in range(8)]
    path.write_text("".join(f"data: {json.dumps(r)}\n\n" for r in [
        *starts, *fragments, chat(finish="tool_calls")]) + "data: [DONE]\n\n")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        d = diagnose_file(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(d.calls) == 8 and size > 3_000_000
    assert peak < 10 * size, f"peak {peak / size:.1f}x the file"


def _chunk(index: int, call_id: str, arguments: str) -> dict:
    return {"choices": [{"index": 0, "finish_reason": None, "delta": {"tool_calls": [
        {"index": index, "id": call_id, "type": "function",
         "function": {"name": "f", "arguments": arguments}}]}}]}


def test_a_calls_own_problem_is_kept_when_another_call_refuses_the_turn():
    """A closed call with bad JSON in a turn another call refused: its own error comes first,
    then the turn's refusal, in the JSON and in the table (a note and the quirk, each once)."""
    records = [_chunk(0, "call_0", "{bad}"), _chunk(1, "call_1", '{"a": 1}'),
               _chunk(2, "call_1", '{"a": 2}'),
               {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]
    d = diagnose(records, "openai-chat")
    first, second, third = d.calls
    assert first.error.startswith("arguments: not valid JSON")
    assert "; the turn is refused because of call 2 (duplicate_id: " in first.error
    assert second.error.startswith("not run: the turn is refused because of call 2")
    assert third.error.endswith("; the turn is refused")
    table = d.table().splitlines()
    assert [line.split()[-1] for line in table[3:6]] == ["2)", "2)", "duplicate_id"]
    assert table[3].endswith("[1]; duplicate_id (call 2)")
    notes = [line for line in table if line.startswith("[1] ")]
    assert len(notes) == 1 and notes[0].startswith("[1] arguments: not valid JSON")
