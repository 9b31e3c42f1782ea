"""A replay server: recorded provider streams served as real HTTP on 127.0.0.1.

The official SDKs talk to it over a real socket and parse real stream bytes. A route per
format serves a recorded stream as the provider sends it, with its Content-Type: OpenAI's
`/v1/chat/completions` and `/v1/responses`, Anthropic's `/v1/messages`, Gemini's
`/v1beta/models/{model}:streamGenerateContent?alt=sse`, Ollama's `/api/chat` (JSON lines). A
file in its provider's wire form (SSE text; JSON lines for Ollama) is served byte for byte, any
other one event by event in that form. Chat turns follow the conversation: turn n (n =
assistant messages in the request) gets the n-th recorded stream, and like a provider it checks
the history it receives and answers a broken one with HTTP 400 and the provider's error text;
the other routes serve their one stream to every request. Given a `key`, every route refuses a
request without it, with HTTP 401 and an error body in its provider's shape. It never listens
anywhere but the loopback interface.

Clients are untrusted: a whole request must arrive within `read_timeout` (else 408), its body
within `max_body` bytes (else 413) and be strict JSON of bounded depth (else 400); only the
newest `max_logged` requests are kept.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from keel_lab._core.errors import LabError, Said
from keel_lab._core.history import validate_history
from keel_lab._core.messages import AssistantMessage
from keel_lab._core.strict_json import read_json
from keel_lab._i18n import N_
from keel_lab.providers._diagnosis import diagnose
from keel_lab.providers._formats import DONE, PROVIDERS, StreamFormat, detect_stream
from keel_lab.providers._openai_messages import from_openai
from keel_lab.providers._streams.records import decode, is_sse, no_events, parse_records, read_bytes

LOOPBACK = ("127.0.0.1", "::1", "localhost")
READ_TIMEOUT = 10.0  # seconds for a whole request: line, headers and body
MAX_BODY = 4 * 1024 * 1024  # a lab conversation is kilobytes
MAX_LOGGED = 100  # requests kept in `requests`, the newest
ROUTES: dict[str, StreamFormat] = {"/v1/chat/completions": "openai-chat",
                                   "/v1/responses": "openai-responses",
                                   "/v1/messages": "anthropic", "/api/chat": "ollama"}
GEMINI_ROUTE = re.compile(r"/v1beta/models/[^/]+:streamGenerateContent")


@dataclass(frozen=True)
class Recorded:
    """A recorded stream: its payloads, and the bytes served for it."""

    records: list[dict[str, Any]]
    wire: bytes

    @classmethod
    def read(cls, path: str | Path, fmt: StreamFormat) -> Recorded:
        raw = read_bytes(path)
        text = decode(raw, str(path))
        records = parse_records(text, str(path))
        if not records:
            raise no_events(text, str(path))
        if is_sse(text) != (fmt == "ollama"):
            return cls(records, raw)
        return cls(records, b"".join(_framed(r, fmt) for r in records))


def _framed(record: dict[str, Any], fmt: StreamFormat) -> bytes:
    """One payload in its provider's wire form: a JSON line for Ollama, else an SSE event,
    named by its type where the provider names its events (Anthropic's SDK reads only named
    ones)."""
    data = "[DONE]" if record is DONE else json.dumps(record, separators=(",", ":"))
    if fmt == "ollama":
        return f"{data}\n".encode()
    kind = record.get("type") if fmt in ("anthropic", "openai-responses") else None
    return (f"event: {kind}\n" if isinstance(kind, str) else "").encode() + \
        f"data: {data}\n\n".encode()


class ReplayServer:
    """Serves recorded streams while it is open (`with ReplayServer(turns) as server:`); it
    holds a port only then, and closing it ends every connection and thread it started.
    `turns` are OpenAI Chat Completions turns; `streams` gives the other formats' routes one
    recorded stream each (`{"anthropic": path}`)."""

    def __init__(self, turns: Sequence[str | Path] = (), host: str = "127.0.0.1", port: int = 0,
                 read_timeout: float = READ_TIMEOUT, max_body: int = MAX_BODY,
                 max_logged: int = MAX_LOGGED, *,
                 streams: Mapping[StreamFormat, str | Path] | None = None,
                 key: str | None = None) -> None:
        if host not in LOOPBACK:
            raise LabError("not_loopback", N_("the replay server listens on loopback only, not "
                                              "{host!r}"), host=host)
        streams = dict(streams or {})
        if not turns and not streams:
            raise LabError("no_turns", N_("the replay server needs at least one recorded turn "
                                          "or stream"))
        if "openai-chat" in streams:
            raise LabError("wrong_format", N_("the replay server takes openai-chat streams as "
                                              "its turns"))
        self.turns = [Recorded.read(t, "openai-chat") for t in turns]
        self.streams = {fmt: Recorded.read(path, fmt) for fmt, path in streams.items()}
        for fmt, path in streams.items():
            found = detect_stream(self.streams[fmt].records, str(path))
            if found != fmt:
                raise LabError("wrong_format", N_("{path}: {found} stream, not {format}"),
                               path=path, found=found, format=fmt)
        self.key = key
        self.requests: deque[dict[str, Any]] = deque(maxlen=max_logged)
        self.host, self.port = host, port
        self.read_timeout, self.max_body = read_timeout, max_body
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"{self.root}/v1"

    @property
    def root(self) -> str:
        """The base URL of the clients that add `/v1` themselves (Anthropic's SDK), or another
        prefix (Gemini, Ollama); `url` is OpenAI's SDKs'."""
        if not self.port:
            raise LabError("not_started", N_("the replay server has no address before it "
                                             "starts: use `with ReplayServer(turns) as server:`"))
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def __enter__(self) -> ReplayServer:
        if self._server is not None:
            raise LabError("already_running", N_("the replay server is already running"))
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        try:
            self._server = _Server((self.host, self.port), self._handler(), family)
        except OSError as exc:
            hint = Said("no_ipv6", N_(" (no IPv6 loopback on this machine; use 127.0.0.1)")) \
                if family == socket.AF_INET6 else ""
            raise LabError("cannot_listen", N_("the replay server cannot listen on {host} port "
                                               "{port}: {reason}{hint}"), host=self.host,
                           port=self.port, reason=exc.strerror or exc, hint=hint) from None
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        name="keel-lab-replay", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop accepting, cut every open connection (stalled ones too), join every thread."""
        server, thread, self._server, self._thread = self._server, self._thread, None, None
        if server is None or thread is None:
            return
        server.shutdown()
        server.drop_connections()
        server.server_close()  # joins the connection threads
        thread.join()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        replay = self

        class Handler(BaseHTTPRequestHandler):
            timeout = replay.read_timeout * 3  # a client that stops reading our answer

            def setup(self) -> None:
                super().setup()
                self._answered = threading.Lock()  # held by whoever answers this request
                self._watchdog = threading.Timer(replay.read_timeout, self._too_slow)
                self._watchdog.daemon = True
                self._watchdog.start()

            def finish(self) -> None:
                self._watchdog.cancel()
                self._watchdog.join()
                super().finish()

            def _too_slow(self) -> None:
                """408 for a request not read in time, however slowly its bytes trickle."""
                if not self._answered.acquire(blocking=False):
                    return
                data = json.dumps(_error(f"the request was not received within "
                                         f"{replay.read_timeout:g} s")).encode()
                head = (f"HTTP/1.0 408 Request Timeout\r\nContent-Type: application/json\r\n"
                        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n")
                with contextlib.suppress(OSError):  # the client may be gone already
                    self.connection.sendall(head.encode() + data)
                    self.connection.shutdown(socket.SHUT_RDWR)

            def log_message(self, *args: Any) -> None:  # keep test and notebook output clean
                pass

            def send_error(self, code: int, message: str | None = None,
                           explain: str | None = None) -> None:
                if self._answered.acquire(blocking=False):
                    super().send_error(code, message, explain)

            def do_POST(self) -> None:
                where = urlsplit(self.path)
                route = where.path.rstrip("/")
                fmt = ROUTES.get(route) or ("gemini" if GEMINI_ROUTE.fullmatch(route) else None)
                if fmt is None:
                    return self._json(404, _error(f"no route {self.path[:100]}"))
                body = self._body(fmt)
                if body is None:
                    return None
                replay.requests.append(body)
                got = _key(self.headers, where.query, fmt)
                if replay.key is not None and got != replay.key:  # a wrong key is repeated, as
                    said = ("no API key was given" if got is None else  # some servers do: a
                            f"incorrect API key provided: {got[:100]}")  # client must not print it
                    return self._json(401, _error(said, fmt, 401))
                if fmt == "openai-chat":
                    return self._chat(body)
                recorded = replay.streams.get(fmt)
                streamed = ("sse" in parse_qs(where.query).get("alt", []) if fmt == "gemini"
                            else body.get("stream", fmt == "ollama") is True)
                if recorded is None:
                    return self._json(400, _error(f"no recorded {fmt} stream", fmt))
                if not streamed:
                    return self._json(400, _error("this replay server serves streams only: " + (
                        "add ?alt=sse" if fmt == "gemini" else "send stream: true"), fmt))
                return self._send(recorded.wire, PROVIDERS[fmt].stream_type)

            def _body(self, fmt: StreamFormat) -> dict[str, Any] | None:
                """The request's JSON object, or None once an error has answered it."""
                length = self.headers.get("Content-Length", "")
                if not length.isdigit():
                    self._json(411, _error("a request needs a Content-Length", fmt))
                    return None
                if int(length) > replay.max_body:
                    self._json(413, _error(f"the body is larger than {replay.max_body} bytes",
                                           fmt))
                    return None
                try:
                    raw = self.rfile.read(int(length))
                except OSError:
                    return None  # the watchdog cut the connection
                if len(raw) < int(length):
                    self._json(400, _error("the body ended before Content-Length", fmt))
                    return None
                try:
                    body = read_json(raw.decode("utf-8"), "request body")
                    if not isinstance(body, dict):
                        raise LabError("bad_body", N_("request body: expected a JSON object"))
                except (UnicodeDecodeError, LabError) as exc:
                    self._json(400, _error(f"unreadable request: {exc}", fmt))
                    return None
                return body

            def _chat(self, body: dict[str, Any]) -> None:
                try:
                    if not isinstance(body.get("messages"), list):
                        raise LabError("bad_body", N_("request body: 'messages' must be a list "
                                                      "of messages"))
                    messages = from_openai(body["messages"])
                except LabError as exc:
                    return self._json(400, _error(f"unreadable request: {exc}"))
                problems = validate_history(messages)
                if problems:
                    return self._json(400, _error(problems[0].verbatim or problems[0].message))
                step = sum(isinstance(m, AssistantMessage) for m in messages)
                if step >= len(replay.turns):
                    return self._json(400, _error(f"no recorded turn {step}"))
                turn = replay.turns[step]
                if body.get("stream"):
                    return self._send(turn.wire, PROVIDERS["openai-chat"].stream_type)
                return self._json(200, _completion(turn.records))

            def _send(self, data: bytes, content_type: str) -> None:
                if not self._answered.acquire(blocking=False):
                    return
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
                self.close_connection = True

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                if not self._answered.acquire(blocking=False):
                    return  # the watchdog answered already
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


class _Server(ThreadingHTTPServer):
    """Tracks its connections and threads so that closing it leaves nothing behind."""

    daemon_threads = False  # joined by server_close (block_on_close)

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 family: socket.AddressFamily) -> None:
        self.address_family = family
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        with self._lock:
            for s in self._open:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that left mid-answer is its own business: no traceback on stderr."""


def _error(message: str, fmt: StreamFormat = "openai-chat", status: int = 400
           ) -> dict[str, Any]:
    """An error body in the shape of the format's provider."""
    if fmt == "anthropic":
        kind = "authentication_error" if status == 401 else "invalid_request_error"
        return {"type": "error", "error": {"type": kind, "message": message}}
    if fmt == "gemini":
        return {"error": {"code": status, "message": message,
                          "status": "UNAUTHENTICATED" if status == 401 else "INVALID_ARGUMENT"}}
    if fmt == "ollama":
        return {"error": message}
    return {"error": {"message": message, "type": "invalid_request_error",
                      "param": None if status == 401 else "messages",
                      "code": "invalid_api_key" if status == 401 else None}}


def _key(headers: Message, query: str, fmt: StreamFormat) -> str | None:
    """The key a request carries, where the format's provider reads it (Anthropic's SDK sends
    `x-api-key` or, in newer versions, a bearer token)."""
    if fmt == "anthropic" and headers.get("x-api-key"):
        return headers.get("x-api-key")
    if fmt == "gemini":
        return headers.get("x-goog-api-key") or next(iter(parse_qs(query).get("key", [])), None)
    bearer = headers.get("Authorization", "")
    return bearer.removeprefix("Bearer ") if bearer.startswith("Bearer ") else None


def _completion(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The non-streaming response for a recorded turn, built from its assembly."""
    d = diagnose(records, "openai-chat")
    calls = [{"id": c.id, "type": "function", "function": {"name": c.name,
                                                           "arguments": c.arguments}}
             for c in d.calls]
    message: dict[str, Any] = {"role": "assistant", "content": d.text or None}
    if calls:
        message["tool_calls"] = calls
    first = next(r for r in records if r is not DONE)
    return {"id": first.get("id", "chatcmpl-replay"), "object": "chat.completion",
            "created": first.get("created", 0), "model": first.get("model", "replay"),
            "choices": [{"index": 0, "message": message, "finish_reason": d.finish_reason,
                         "logprobs": None}]}
