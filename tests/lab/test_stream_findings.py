"""A hostile tester's findings about reading streams (duplicate keys, finish reasons, events
that disagree, FIFOs, BOMs, leaks past the first lines, time on large files), each pinned."""

import gc
import json
import os
import time

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from keel_cli._command import diagnosis_json
from keel_lab import LabError
from keel_lab._core.protocol import parse_arguments
from keel_lab.providers._diagnosis import diagnose, diagnose_file
from keel_lab.providers._leaks import leaked_calls
from keel_lab.providers._streams.diagnostics import Diagnostics
from keel_lab.providers._streams.records import read_bytes

pytestmark = pytest.mark.ch7


def _chat(arguments: str, finish: str = "tool_calls") -> list[dict]:
    call = {"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "read_file", "arguments": arguments}}
    return [{"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}]


def _quirks(d) -> set[tuple[str, str]]:
    return {(x.quirk, x.action) for x in d.diagnostics}


@pytest.mark.parametrize("text, said", [
    ('{"path":"/tmp/safe","path":"/etc/shadow"}', "the key 'path' appears twice"),
    ('{"a":{"b":1,"b":2}}', "the key 'b' appears twice"),
    ('{"a":"\\ud800"}', "lone surrogate"),
    ('{"\\udc00":1}', "lone surrogate"),
    ('{"a":["\ud800"]}', "lone surrogate"),
])
def test_arguments_with_duplicate_keys_or_lone_surrogates_are_refused(text, said):
    value, error = parse_arguments(text)
    assert value is None and said in str(error)
    d = diagnose(_chat(text), "openai-chat")
    assert not d.ok and not d.calls[0].executable and said in d.calls[0].error


def test_a_surrogate_pair_is_text():
    assert parse_arguments('{"a":"\\ud83d\\ude00"}') == ({"a": "\U0001F600"}, None)


def test_anthropic_partial_json_with_duplicate_keys_is_refused():
    records = [
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": '{"p":"/x","p":"/etc"}'}},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"}]
    d = diagnose(records, "anthropic")
    assert not d.calls[0].executable and "appears twice" in d.calls[0].error


@pytest.mark.parametrize("finish, runs", [("tool_calls", True), ("stop", True), ("length", True),
                                          ("content_filter", False), ("banana", False),
                                          ("function_call", False)])
def test_only_documented_closing_finish_reasons_run_chat_calls(finish, runs):
    d = diagnose(_chat('{"a":1}', finish), "openai-chat")
    assert d.calls[0].executable is runs and d.ok is runs
    if not runs:
        assert ("unusual_finish", "refused") in _quirks(d)
        assert repr(finish) in d.calls[0].error


@pytest.mark.parametrize("reason, runs", [("tool_use", True), ("max_tokens", True),
                                          ("refusal", False), ("pause_turn", False)])
def test_anthropic_stop_reasons(reason, runs):
    records = [
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": '{"a":1}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": reason}},
        {"type": "message_stop"}]
    assert diagnose(records, "anthropic").calls[0].executable is runs
    # a block the stream never closed never runs, whatever the stop reason
    unclosed = [r for r in records if r["type"] != "content_block_stop"]
    assert diagnose(unclosed, "anthropic").calls[0].error.startswith(
        "the stream never closed this call (content_block_stop never came for it)")


def _responses(*events: dict, status: str = "completed") -> list[dict]:
    """The events, each added item closed (`output_item.done`, with its final arguments: the
    `arguments.done` text, else the deltas), as real streams close them, then the status."""
    closes = []
    for added in (e for e in events if e["type"] == "response.output_item.added"):
        item_id, index = added["item"]["id"], added["output_index"]
        mine = [e for e in events if e.get("item_id") == item_id]
        final = next((e["arguments"] for e in mine if "arguments" in e),
                     "".join(e.get("delta", "") for e in mine))
        closes.append({"type": "response.output_item.done", "output_index": index,
                       "item": {**added["item"], "arguments": final, "status": "completed"}})
    return [*events, *closes, {"type": "response.completed", "response": {"status": status}}]


def _item(index: int, item_id: str, call_id: str) -> dict:
    return {"type": "response.output_item.added", "output_index": index,
            "item": {"type": "function_call", "id": item_id, "call_id": call_id, "name": "f",
                     "arguments": ""}}


def _delta(item_id: str, index: int, text: str) -> dict:
    return {"type": "response.function_call_arguments.delta", "item_id": item_id,
            "output_index": index, "delta": text}


def _done(item_id: str, index: int, text: str) -> dict:
    return {"type": "response.function_call_arguments.done", "item_id": item_id,
            "output_index": index, "arguments": text}


def test_responses_done_text_that_disagrees_with_the_deltas_is_refused():
    d = diagnose(_responses(_item(0, "fc_1", "call_1"), _delta("fc_1", 0, '{"p":"/tmp/x"}'),
                            _done("fc_1", 0, '{"p":"/etc/shadow"}')), "openai-responses")
    assert not d.calls[0].executable and ("arguments_mismatch", "refused") in _quirks(d)
    same = diagnose(_responses(_item(0, "fc_1", "call_1"), _delta("fc_1", 0, '{"p":1}'),
                               _done("fc_1", 0, '{"p":1}')), "openai-responses")
    assert same.ok and same.diagnostics == []


def test_responses_two_items_with_one_item_id_are_both_refused():
    d = diagnose(_responses(_item(0, "fc_1", "call_1"), _item(1, "fc_1", "call_2"),
                            _delta("fc_1", 1, '{"p":"/a"}')), "openai-responses")
    assert [c.executable for c in d.calls] == [False, False]
    assert all("share the item id fc_1" in c.error for c in d.calls)


def test_responses_failed_status_refuses_the_calls():
    events = (_item(0, "fc_1", "call_1"), _delta("fc_1", 0, "{}"))
    assert diagnose(_responses(*events), "openai-responses").ok
    d = diagnose(_responses(*events, status="failed"), "openai-responses")
    assert not d.calls[0].executable and ("unusual_finish", "refused") in _quirks(d)


@pytest.mark.parametrize("event, said", [
    ({"type": "response.failed", "response": {"status": "failed", "error": {
        "code": "server_error", "message": "The model failed to generate a response."}}},
     'response.failed: {"code": "server_error", "message": "The model failed'),
    ({"type": "error", "code": "ERR_X", "message": "Something went wrong", "param": None},
     'an error: "Something went wrong"'),
])
def test_a_responses_error_event_shows_the_server_s_message(event, said):
    """`response.failed` carries its error inside `response`; `error` has a top-level message."""
    d = diagnose([_item(0, "fc_1", "call_1"), event], "openai-responses")
    [refused] = [x for x in d.diagnostics if x.quirk == "server_error"]
    assert said in refused.message and not d.ok


def _gemini(reason: str, parts: list[dict]) -> list[dict]:
    return [{"candidates": [{"content": {"role": "model", "parts": parts},
                             "finishReason": reason, "index": 0}]}]


def test_gemini_malformed_function_call_names_the_lost_call():
    d = diagnose(_gemini("MALFORMED_FUNCTION_CALL", [{"text": "x"}]), "gemini")
    assert d.calls == [] and not d.ok
    assert ("malformed_function_call", "refused") in _quirks(d)
    assert ("unusual_finish", "reported") in _quirks(d)


@pytest.mark.parametrize("reason, runs", [("STOP", True), ("MAX_TOKENS", True),
                                          ("SAFETY", False), ("RECITATION", False)])
def test_gemini_finish_reasons(reason, runs):
    part = {"functionCall": {"name": "f", "args": {"a": 1}, "id": "c1"}}
    assert diagnose(_gemini(reason, [part]), "gemini").calls[0].executable is runs


@pytest.mark.parametrize("text", ['{"a":1} {"a":1}', '{"a":1}{"a":1}', '{"a":1}\n\t{"a":1}'])
def test_a_repeat_is_a_repeat_with_or_without_whitespace_between(text):
    d = diagnose(_chat(text), "openai-chat")
    assert d.ok and d.calls[0].arguments == '{"a":1}'
    assert ("arguments_repeated", "tolerated") in _quirks(d)


def test_different_objects_stay_packed_calls_with_whitespace_between():
    d = diagnose(_chat('{"a":1} {"a":2}'), "openai-chat")
    assert ("packed_calls", "refused") in _quirks(d)


def test_a_leading_bom_is_ignored(tmp_path):
    plain = 'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'
    path = tmp_path / "bom.sse"
    path.write_bytes(b"\xef\xbb\xbf" + plain.encode())
    d = diagnose_file(path)
    assert d.ok and d.text == "hi"


def test_sse_without_blank_lines_says_so(tmp_path):
    path = tmp_path / "one.sse"
    path.write_text('data: {"choices":[]}\ndata: {"choices":[]}\n')
    with pytest.raises(LabError, match="2 data: lines, but no blank line ends an event"):
        diagnose_file(path)


def test_a_fifo_without_a_writer_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "stream.fifo"
    os.mkfifo(fifo)
    start = time.monotonic()
    with pytest.raises(LabError, match="a FIFO no program writes to"):
        read_bytes(fifo)
    assert time.monotonic() - start < 10


def test_the_article_fits_the_format():
    gemini = _gemini("STOP", [{"text": "x"}])[0]
    with pytest.raises(LabError, match="it is a gemini event"):
        diagnose([gemini], "openai-chat")


def test_a_call_after_many_object_lines_is_found():
    text = "{not json}\n" * 200 + '{"name": "delete_all", "arguments": {}}\n'
    assert [(leak.name, leak.line) for leak in leaked_calls(text)] == [("delete_all", 201)]


@pytest.mark.parametrize("line", ['{"a":[', '{"a":{"b":', '{"a":1,', '{"s":"',
                                  '{"name":"x","arguments":{}}'])
def test_leaks_are_found_in_bounded_time(line):
    text = (line + "\n") * (600_000 // (len(line) + 1))
    start = time.perf_counter()
    leaked_calls(text)
    assert time.perf_counter() - start < 2


def test_diagnostics_are_noted_once_per_call_and_quirk():
    diag = Diagnostics()
    for _ in range(3):
        diag.note(0, "a", "q", "m")
        diag.note(None, None, "q", "m")
    assert [(d.index, d.quirk) for d in diag.said()] == [(0, "q"), (None, "q")]


def _many_calls(n: int, fmt: str) -> list[dict]:
    """n calls of one turn, each in its own payload, in the format's shape (chat without
    indexes too: each call placed by its id)."""
    if fmt == "gemini":
        parts = [{"functionCall": {"name": "f", "args": {"n": i}}} for i in range(n)]
        return [{"candidates": [{"content": {"parts": [p]}, "index": 0}]} for p in parts] + [
            _gemini("STOP", [])[0]]
    if fmt == "ollama":
        lines = [{"message": {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "f", "arguments": {"n": i}}}]}, "done": False}
            for i in range(n)]
        return [*lines, {"message": {"role": "assistant", "content": ""}, "done": True}]
    records = []
    for i in range(n):
        call = {"id": f"call_{i}", "type": "function",
                "function": {"name": "f", "arguments": json.dumps({"n": i})}}
        if fmt == "openai-chat":
            call["index"] = i
        records.append({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
    return [*records, {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]


@pytest.mark.parametrize("fmt", ["openai-chat", "unindexed", "gemini", "ollama"])
def test_many_calls_are_read_in_linear_time(fmt):
    def seconds(n: int) -> float:
        """CPU time, best of three, the garbage collector paused: other processes on a busy
        machine and a collection that happens to fall in one run do not count."""
        records = _many_calls(n, fmt)
        best = float("inf")
        gc.collect()
        gc.disable()
        try:
            for _ in range(3):
                start = time.process_time()
                d = diagnose(records, "openai-chat" if fmt == "unindexed" else fmt)
                best = min(best, time.process_time() - start)
                assert len(d.calls) == n and d.ok
        finally:
            gc.enable()
        return best

    # Four times the calls: linear is about 4x, quadratic 16x; 10x leaves room for noise.
    small, large = seconds(2000), seconds(8000)
    assert large < 2 and large < 10 * max(small, 0.02)


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(st.text(alphabet='{}[]":,\\ud800abc\ud800 \n', max_size=60))
def test_argument_text_of_any_kind_is_judged_without_raising(text):
    value, error = parse_arguments(text)
    assert (value is None) != (error is None)
    if value is not None:  # what parses is text a tool can be given
        json.dumps(value, ensure_ascii=False).encode("utf-8")


@settings(max_examples=100, derandomize=True, database=None, deadline=None)
@given(st.binary(max_size=40))
def test_bytes_after_a_bom_are_read_like_bytes_without_one(tmp_path_factory, raw):
    assume(not raw.startswith(b"\xef\xbb\xbf"))  # only one mark is dropped, as SSE says
    folder = tmp_path_factory.mktemp("bom")
    plain, marked = folder / "plain", folder / "marked"
    plain.write_bytes(raw)
    marked.write_bytes(b"\xef\xbb\xbf" + raw)
    outcomes = []
    for path in (plain, marked):
        try:
            outcomes.append(diagnosis_json(diagnose_file(path)))
        except LabError as exc:
            outcomes.append(str(exc).replace(str(path), "FILE"))
    assert outcomes[0] == outcomes[1]
