"""A replay server: recorded OpenAI Chat Completions streams served as real HTTP on 127.0.0.1.

The official SDK talks to it over a real socket and parses real SSE bytes. Turn n of a
conversation (n = assistant messages in the request) gets the n-th recorded stream. Like a
provider, it checks the history it receives and answers a broken one with HTTP 400 and the
provider's error text. It never listens anywhere but the loopback interface.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.core.history import validate_history
from keel_lab.providers.diagnosis import diagnose
from keel_lab.providers.formats import DONE
from keel_lab.providers.openai_messages import from_openai
from keel_lab.providers.streams.records import parse_records, read_file

LOOPBACK = ("127.0.0.1", "::1", "localhost")


class ReplayServer:
    def __init__(self, turns: Sequence[str | Path], host: str = "127.0.0.1", port: int = 0
                 ) -> None:
        if host not in LOOPBACK:
            raise LabError(f"the replay server listens on loopback only, not {host!r}")
        if not turns:
            raise LabError("the replay server needs at least one recorded turn")
        self.turns = [parse_records(read_file(t), str(t)) for t in turns]
        self.requests: list[dict[str, Any]] = []
        self.host = host
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ReplayServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None
                 ) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        replay = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test and notebook output clean
                pass

            def do_POST(self) -> None:
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._json(404, _error(f"no route {self.path}"))
                try:
                    body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                    messages = from_openai(body["messages"])
                except (ValueError, KeyError, TypeError, LabError) as exc:
                    return self._json(400, _error(f"unreadable request: {exc}"))
                replay.requests.append(body)
                problems = validate_history(messages)
                if problems:
                    return self._json(400, _error(problems[0].message))
                step = sum(1 for m in body["messages"] if m.get("role") == "assistant")
                if step >= len(replay.turns):
                    return self._json(400, _error(f"no recorded turn {step}"))
                records = replay.turns[step]
                if body.get("stream"):
                    return self._stream(records)
                return self._json(200, _completion(records))

            def _stream(self, records: list[dict[str, Any]]) -> None:
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
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


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
