"""A replay server: recorded OpenAI Chat Completions streams served as real HTTP on 127.0.0.1.

The official SDK talks to it over a real socket and parses real SSE bytes. Turn n of a
conversation (n = assistant messages in the request) gets the n-th recorded stream. Like a
provider, it checks the history it receives and answers a broken one with HTTP 400 and the
provider's error text. It never listens anywhere but the loopback interface.

Clients are untrusted: a whole request must arrive within `read_timeout` (else 408), its body
within `max_body` bytes (else 413) and be strict JSON of bounded depth (else 400); only the
newest `max_logged` requests are kept.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections import deque
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.core.history import validate_history
from keel_lab.core.messages import AssistantMessage
from keel_lab.core.strict_json import read_json
from keel_lab.providers.diagnosis import diagnose
from keel_lab.providers.formats import DONE
from keel_lab.providers.openai_messages import from_openai
from keel_lab.providers.streams.records import parse_records, read_file

LOOPBACK = ("127.0.0.1", "::1", "localhost")
READ_TIMEOUT = 10.0  # seconds for a whole request: line, headers and body
MAX_BODY = 4 * 1024 * 1024  # a lab conversation is kilobytes
MAX_LOGGED = 100  # requests kept in `requests`, the newest


class ReplayServer:
    """Serves recorded turns while it is open (`with ReplayServer(turns) as server:`); it
    holds a port only then, and closing it ends every connection and thread it started."""

    def __init__(self, turns: Sequence[str | Path], host: str = "127.0.0.1", port: int = 0,
                 read_timeout: float = READ_TIMEOUT, max_body: int = MAX_BODY,
                 max_logged: int = MAX_LOGGED) -> None:
        if host not in LOOPBACK:
            raise LabError(f"the replay server listens on loopback only, not {host!r}")
        if not turns:
            raise LabError("the replay server needs at least one recorded turn")
        self.turns = [parse_records(read_file(t), str(t)) for t in turns]
        self.requests: deque[dict[str, Any]] = deque(maxlen=max_logged)
        self.host, self.port = host, port
        self.read_timeout, self.max_body = read_timeout, max_body
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if not self.port:
            raise LabError("the replay server has no address before it starts: use "
                           "`with ReplayServer(turns) as server:`")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    def __enter__(self) -> ReplayServer:
        if self._server is not None:
            raise LabError("the replay server is already running")
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        try:
            self._server = _Server((self.host, self.port), self._handler(), family)
        except OSError as exc:
            hint = " (no IPv6 loopback on this machine; use 127.0.0.1)" \
                if family == socket.AF_INET6 else ""
            raise LabError(f"the replay server cannot listen on {self.host} port {self.port}: "
                           f"{exc.strerror or exc}{hint}") from None
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        name="keel-lab-replay", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None
                 ) -> None:
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
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._json(404, _error(f"no route {self.path[:100]}"))
                length = self.headers.get("Content-Length", "")
                if not length.isdigit():
                    return self._json(411, _error("a request needs a Content-Length"))
                if int(length) > replay.max_body:
                    return self._json(413, _error(f"the body is larger than "
                                                  f"{replay.max_body} bytes"))
                try:
                    raw = self.rfile.read(int(length))
                except OSError:
                    return  # the watchdog cut the connection
                if len(raw) < int(length):
                    return self._json(400, _error("the body ended before Content-Length"))
                try:
                    body = read_json(raw.decode("utf-8"), "request body")
                    if not isinstance(body, dict):
                        raise LabError("request body: expected a JSON object")
                    if not isinstance(body.get("messages"), list):
                        raise LabError("request body: 'messages' must be a list of messages")
                    messages = from_openai(body["messages"])
                except (UnicodeDecodeError, LabError) as exc:
                    return self._json(400, _error(f"unreadable request: {exc}"))
                replay.requests.append(body)
                problems = validate_history(messages)
                if problems:
                    return self._json(400, _error(problems[0].message))
                step = sum(isinstance(m, AssistantMessage) for m in messages)
                if step >= len(replay.turns):
                    return self._json(400, _error(f"no recorded turn {step}"))
                records = replay.turns[step]
                if body.get("stream"):
                    return self._stream(records)
                return self._json(200, _completion(records))

            def _stream(self, records: list[dict[str, Any]]) -> None:
                if not self._answered.acquire(blocking=False):
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                for r in records:
                    data = "[DONE]" if r is DONE else json.dumps(r, separators=(",", ":"))
                    self.wfile.write(f"data: {data}\n\n".encode())
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


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": "messages",
                      "code": None}}


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
