"""Ollama's native `/api/chat` stream (JSON lines) into lab deltas.

Ollama sends each tool call whole, with its arguments as a JSON object and, in most versions,
without an id; the turn ends with `"done": true` and `done_reason` "stop" even when calls were
made. Calls without an id get one here (`ollama-call-<n>`, in order of arrival), so results can
still be paired by id; a call's own `function.index` is used when the server sends one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from keel_lab.core.streaming import StreamEvent, TextDelta, ToolCallDelta
from keel_lab.providers.streams.common import WireCall, closing
from keel_lab.providers.streams.diagnostics import Diagnostics


def convert(records: Iterable[dict[str, Any]], diag: Diagnostics) -> Iterator[StreamEvent]:
    calls: dict[int, WireCall] = {}
    finish: str | None = None
    for r in records:
        if "error" in r:
            raise ConnectionError(f"the server sent an error: {r['error']}")
        message = r.get("message") or {}
        if message.get("content"):
            yield TextDelta(message["content"])
        for entry in message.get("tool_calls") or []:
            fn = entry.get("function") or {}
            index = fn.get("index")
            index = index if type(index) is int and index >= 0 and index not in calls \
                else max(calls, default=-1) + 1
            call_id = entry.get("id") or f"ollama-call-{index}"
            if not entry.get("id"):
                diag.note(index, call_id, "id_assigned",
                          f"the call came without an id; it is {call_id} from here on")
            arguments = fn.get("arguments")
            text = arguments if isinstance(arguments, str) else json.dumps(
                arguments if arguments is not None else {}, ensure_ascii=False)
            calls[index] = WireCall(call_id, fn.get("name") or "", text)
            yield ToolCallDelta(index, call_id, fn.get("name") or None, text)
        if r.get("done"):
            finish = r.get("done_reason") or "stop"
    yield from closing(calls, finish, diag, '"done": true')
