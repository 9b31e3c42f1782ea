"""Ollama's native `/api/chat` stream (JSON lines) into lab deltas.

Ollama sends each tool call whole, with its arguments as a JSON object and, in most versions,
without an id; the turn ends with `"done": true` and `done_reason` "stop" even when calls were
made. Calls without an id get one here (`ollama-call-<n>`, in order of arrival), so results can
still be paired by id; a call's own `function.index` is used when the server sends one.
"""

from __future__ import annotations

from collections.abc import Iterator

from keel_lab._core.streaming import StreamEvent, TextDelta, ToolCallDelta
from keel_lab.providers._streams.common import Labelled, Reading, WireCall, closing, id_for
from keel_lab.providers._streams.diagnostics import Diagnostics

NORMAL = ("stop", "length")


def convert(records: Labelled, diag: Diagnostics) -> Iterator[StreamEvent]:
    calls: dict[int, WireCall] = {}
    top = -1  # the highest index so far: a call without its own index goes after it
    finish: str | None = None
    stream = Reading(records, error_field="error")
    for r in stream:
        message = r.obj("message")
        content = message.text("content")
        if content and not stream.ended:
            yield TextDelta(content)
        for entry in message.objs("tool_calls"):
            fn = entry.obj("function")
            index = fn.index("index")
            index = index if index is not None and index not in calls else top + 1
            top = max(top, index)
            call_id = id_for(entry.text("id"), "ollama-call", index, diag)
            call = calls[index] = WireCall(call_id, fn.text("name") or "")
            call.add(fn.arguments("arguments") or "{}")
            stream.arrived(call, r.where)
            yield ToolCallDelta(index, call_id, call.name or None, call.arguments)
        if r.flag("done") and stream.ended is None:
            finish = r.text("done_reason") or "stop"
            stream.ended = 'the line with "done": true'
    yield from closing(calls, finish, diag, '"done": true', NORMAL)
