"""The official openai SDK on a real socket: recorded streams served by the replay server."""

import contextlib
import json
import os
import socket
import threading
import time
from pathlib import Path

import openai
import pytest

from keel_lab import LabError, Runner, incident_tools, validate_history
from keel_lab.providers._openai_adapter import OpenAIChatAdapter
from keel_lab.providers._replay import ReplayServer

pytestmark = pytest.mark.ch7

STREAMS = Path(__file__).resolve().parents[2] / "data" / "streams"
TURNS = [STREAMS / "openai-chat/parallel_calls.sse", STREAMS / "openai-chat/answer.sse"]
QUESTION = "Which is more severe, INC-001 or INC-002?"
TOOLS = incident_tools()


@pytest.fixture
def server():
    with ReplayServer(TURNS) as s:
        yield s


def test_streamed_run_end_to_end_over_http(server):
    model = OpenAIChatAdapter("replay", server.url)
    r = Runner(model, TOOLS, stream=True).run(QUESTION)
    assert r.status == "completed" and r.answer.startswith("INC-001 is more severe")
    assert [m.role for m in r.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert validate_history(r.messages) == []
    second = server.requests[1]
    assert second["stream"] is True
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "tool", "tool"]
    ids = [c["id"] for c in second["messages"][1]["tool_calls"]]
    assert [m["tool_call_id"] for m in second["messages"][2:]] == ids
    assert {t["function"]["name"] for t in second["tools"]} >= {"lookup_incident"}
    assert model.diagnostics[-1] == []


def test_non_streamed_run_gets_the_same_calls(server):
    streamed = Runner(OpenAIChatAdapter("replay", server.url), TOOLS, stream=True).run(QUESTION)
    plain = Runner(OpenAIChatAdapter("replay", server.url), TOOLS).run(QUESTION)
    assert plain.messages == streamed.messages


def test_server_rejects_a_broken_history_with_the_providers_text(server):
    client = OpenAIChatAdapter("replay", server.url).client
    with pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(model="replay", messages=[
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_x", "type": "function",
                 "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "user", "content": "and?"}])
    assert err.value.status_code == 400
    assert "The following tool_call_ids did not have response messages: call_x" in str(
        err.value)


def test_quirky_stream_through_the_sdk_is_diagnosed():
    with ReplayServer([STREAMS / "quirks/all_index_zero.sse", TURNS[1]]) as s:
        model = OpenAIChatAdapter("replay", s.url)
        r = Runner(model, TOOLS, stream=True).run(QUESTION)
    assert r.status == "completed" and len(r.messages[1].tool_calls) == 2
    assert [d.quirk for d in model.diagnostics[0]] == ["index_reused"]
    assert model.diagnostics[-1] == []  # the answer turn was clean


def test_truncated_stream_through_the_sdk_runs_nothing():
    with ReplayServer([STREAMS / "quirks/truncated.sse"]) as s:
        model = OpenAIChatAdapter("replay", s.url)
        r = Runner(model, TOOLS, stream=True).run(QUESTION)
    assert r.status == "failed" and "nothing was run" in r.error
    assert not [e for e in r.events if e.kind.startswith("tool.")]
    assert [d.quirk for d in model.diagnostics[-1]] == ["truncated"]


def test_only_loopback():
    with pytest.raises(LabError, match="loopback only"):
        ReplayServer(TURNS, host="0.0.0.0")
    with ReplayServer(TURNS) as s:
        assert s.url.startswith("http://127.0.0.1:")


def test_a_server_that_is_gone_fails_the_run_with_a_message():
    with ReplayServer(TURNS) as s:
        url = s.url
    for stream in (False, True):
        r = Runner(OpenAIChatAdapter("replay", url, timeout=2), TOOLS, stream=stream).run(QUESTION)
        assert r.status == "failed" and "APIConnectionError" in r.error
        assert "nothing was run" in r.error


def _raw(server, data, wait=5.0):
    """Send raw bytes to the server and read its whole answer."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=wait) as s:
        s.sendall(data)
        return _read_all(s)


def _read_all(s):
    chunks = []
    while chunk := s.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _post(body: bytes, length: int | None = None) -> bytes:
    n = len(body) if length is None else length
    return (f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {n}\r\n\r\n"
            ).encode() + body


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def _sockets() -> int:
    """Open socket descriptors of this process (Linux), e.g. a server's or a connection's."""
    count = 0
    for fd in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else []:
        with contextlib.suppress(OSError):  # the descriptor listdir itself used
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
    return count


def test_a_server_never_started_holds_no_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    idle = ReplayServer(TURNS, port=port)
    with socket.socket() as again:
        again.bind(("127.0.0.1", port))  # free: the idle server did not take it
    idle.close()
    with pytest.raises(LabError, match="no address before it starts"):
        _ = ReplayServer(TURNS).url  # closing an idle server is harmless


def test_a_slow_request_gets_408_however_its_bytes_trickle():
    with ReplayServer(TURNS, read_timeout=0.5) as s:
        started = time.monotonic()
        assert _status(_raw(s, _post(b'{"messages": [', length=100))) == 408
        with socket.create_connection(("127.0.0.1", s.port), timeout=5) as c:
            for byte in b"POST /v1/chat/completions HTTP/1.1\r\n":  # one byte per 0.1 s
                try:
                    c.sendall(bytes([byte]))
                except OSError:
                    break
                time.sleep(0.1)
            answer = _read_all(c)
        assert _status(answer) == 408 and b"within 0.5 s" in answer
        assert time.monotonic() - started < 4


@pytest.mark.parametrize(("request_bytes", "status", "text"), [
    (_post(b"", length=10**9), 413, b"larger than"),
    (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n\r\n", 411, b"Content-Length"),
    (_post(b"[" * 100_000 + b"]" * 100_000), 400, b"nested deeper than"),
    (_post(b'{"messages": [], "messages": []}'), 400, b"appears twice"),
    (_post(b'{"messages": [{"role": "user", "content": NaN}]}'), 400, b"not a JSON number"),
    (_post(b'{"messages": 3}'), 400, b"must be a list"),
    (_post(b"\xff"), 400, b"unreadable request"),
])
def test_hostile_requests_get_a_clear_http_error(request_bytes, status, text):
    with ReplayServer(TURNS, max_body=1_000_000) as s:
        answer = _raw(s, request_bytes)
        assert _status(answer) == status and text in answer
        assert _status(_raw(s, _post(b'{"messages": [{"role": "user", "content": "q"}]}'))) \
            == 200  # and the server still serves


def test_the_request_log_keeps_only_the_newest():
    with ReplayServer(TURNS, max_logged=3) as s:
        for n in range(5):
            body = json.dumps({"n": n, "messages": [{"role": "user", "content": "q"}]})
            assert _status(_raw(s, _post(body.encode()))) == 200
    assert [r["n"] for r in s.requests] == [2, 3, 4]


def test_ipv6_loopback_works_or_says_why():
    try:
        server = ReplayServer(TURNS, host="::1").__enter__()
    except LabError as exc:
        assert "cannot listen on ::1" in str(exc)
        return
    try:
        assert server.url.startswith("http://[::1]:")
        with socket.create_connection(("::1", server.port), timeout=5) as c:
            c.sendall(_post(b'{"messages": [{"role": "user", "content": "q"}]}'))
            assert _status(_read_all(c)) == 200
    finally:
        server.close()


def test_closing_leaves_no_thread_or_socket_even_with_stalled_clients():
    threads, sockets = set(threading.enumerate()), _sockets()
    with ReplayServer(TURNS, read_timeout=60) as s:
        stalled = [socket.create_connection(("127.0.0.1", s.port), timeout=5)
                   for _ in range(3)]
        stalled[1].sendall(b"POST /v1/chat/comp")  # half a request line
        stalled[2].sendall(_post(b'{"messages"', length=500))  # half a body
        deadline = time.monotonic() + 5
        while len(threading.enumerate()) < len(threads) + 1 + 2 * 3:  # serve loop, 3 x 2
            assert time.monotonic() < deadline
            time.sleep(0.01)
        started = time.monotonic()
    assert time.monotonic() - started < 2  # not the 60 s read timeout
    for c in stalled:
        assert _read_all(c) == b""  # the server hung up
        c.close()
    assert set(threading.enumerate()) == threads
    assert _sockets() == sockets
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", s.port), timeout=1).close()


# A route per format: recorded streams served as the provider sends them.

def test_a_chat_turn_in_sse_is_served_byte_for_byte(server):
    body = json.dumps({"stream": True, "messages": [{"role": "user", "content": "q"}]})
    answer = _raw(server, _post(body.encode()))
    head, _, sent = answer.partition(b"\r\n\r\n")
    assert b"Content-Type: text/event-stream" in head
    assert sent == TURNS[0].read_bytes()


def _request(server, path, body, headers=()):
    data = json.dumps(body).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in headers)
    return _raw(server, (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n"
                         f"{head}\r\n").encode() + data)


def test_each_format_has_its_route_and_content_type():
    streams = {"anthropic": STREAMS / "anthropic/one_call.sse",
               "gemini": STREAMS / "gemini/one_call.sse",
               "ollama": STREAMS / "ollama/one_call.jsonl",
               "openai-responses": STREAMS / "openai-responses/one_call.sse"}
    with ReplayServer(streams=streams) as s:
        for path, fmt, kind in [
                ("/v1/messages", "anthropic", b"text/event-stream"),
                ("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "gemini",
                 b"text/event-stream"),
                ("/api/chat", "ollama", b"application/x-ndjson"),
                ("/v1/responses", "openai-responses", b"text/event-stream")]:
            head, _, sent = _request(s, path, {"stream": True}).partition(b"\r\n\r\n")
            assert _status(head) == 200 and b"Content-Type: " + kind in head
            assert sent == streams[fmt].read_bytes()
        assert _status(_request(s, "/api/chat", {})) == 200  # Ollama streams by default
        assert b"no recorded turn 0" in _request(s, "/v1/chat/completions", {"messages": []})


@pytest.mark.parametrize(("path", "body", "says"), [
    ("/v1/messages", {}, b'"type": "error", "error": {"type": "invalid_request_error", '
                         b'"message": "this replay server serves streams only: send stream: '
                         b'true"}'),
    ("/v1beta/models/m:streamGenerateContent", {},
     b'"message": "this replay server serves streams only: add ?alt=sse"'),
    ("/api/chat", {"stream": False}, b'{"error": "this replay server serves streams only'),
    ("/v1/responses", {"stream": True}, b"no recorded openai-responses stream"),
])
def test_a_route_answers_what_it_cannot_serve_in_its_providers_shape(path, body, says):
    with ReplayServer(streams={"anthropic": STREAMS / "anthropic/one_call.sse",
                               "gemini": STREAMS / "gemini/one_call.sse",
                               "ollama": STREAMS / "ollama/one_call.jsonl"}) as s:
        answer = _request(s, path, body)
    assert _status(answer) == 400 and says in answer


def test_a_key_is_asked_where_each_provider_reads_it():
    streams = {"anthropic": STREAMS / "anthropic/one_call.sse",
               "gemini": STREAMS / "gemini/one_call.sse"}
    with ReplayServer(TURNS, streams=streams, key="k1") as s:
        chat = {"stream": True, "messages": [{"role": "user", "content": "q"}]}
        assert _status(_request(s, "/v1/chat/completions", chat,
                                [("Authorization", "Bearer k1")])) == 200
        refused = _request(s, "/v1/chat/completions", chat, [("Authorization", "Bearer k2")])
        assert _status(refused) == 401 and b'"code": "invalid_api_key"' in refused
        assert _status(_request(s, "/v1/messages", {"stream": True}, [("x-api-key", "k1")])) \
            == 200
        assert b'"authentication_error"' in _request(s, "/v1/messages", {"stream": True})
        gemini = "/v1beta/models/m:streamGenerateContent?alt=sse"
        assert _status(_request(s, gemini, {}, [("x-goog-api-key", "k1")])) == 200
        assert _status(_request(s, gemini + "&key=k1", {})) == 200
        assert b'"status": "UNAUTHENTICATED"' in _request(s, gemini, {})


def test_a_stream_in_json_lines_is_framed_as_its_providers_sse():
    """Anthropic's SDK reads only named events: the framing names each by its type."""
    import anthropic

    with ReplayServer(streams={"anthropic": STREAMS / "anthropic/three_calls.jsonl"}) as s:
        client = anthropic.Anthropic(base_url=s.root, api_key="k", max_retries=0)
        events = list(client.messages.create(model="m", max_tokens=10, stream=True,
                                             messages=[{"role": "user", "content": "q"}]))
    assert [e.type for e in events][:2] == ["message_start", "content_block_start"]
    assert sum(e.type == "content_block_start" for e in events) == 3


def test_streams_are_checked_when_the_server_is_made():
    with pytest.raises(LabError, match="gemini stream, not anthropic"):
        ReplayServer(streams={"anthropic": STREAMS / "gemini/one_call.sse"})
    with pytest.raises(LabError, match="takes openai-chat streams as its turns"):
        ReplayServer(streams={"openai-chat": TURNS[0]})
    with pytest.raises(LabError, match="at least one recorded turn or stream"):
        ReplayServer()


def test_the_chinese_edition_replays_a_chinese_answer_the_same_way():
    """`answer_stream()` is chapter 7's final turn in the learner's language: the Chinese twin
    is the same kind of stream (content deltas, finish "stop"), generated by make_streams."""
    from keel_lab._i18n import speaking
    from keel_lab.course import answer_stream

    assert answer_stream() == TURNS[1]
    with speaking("zh"):
        zh = answer_stream()
        assert zh != TURNS[1] and zh.parts[-4:] == ("zh", "streams", "openai-chat", "answer.sse")
        with ReplayServer([TURNS[0], zh]) as s:
            r = Runner(OpenAIChatAdapter("replay", s.url), TOOLS, stream=True).run(QUESTION)
    assert r.status == "completed" and r.answer.startswith("INC-001 更严重")
    assert validate_history(r.messages) == []
