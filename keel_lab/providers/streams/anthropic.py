"""Anthropic Messages events into lab deltas.

`content_block_start` with a `tool_use` block brings the call's id and name at the block's
`index` (a text block before it takes index 0); `input_json_delta` events carry `partial_json`;
`message_delta` brings the `stop_reason` and `message_stop` ends the turn. A `tool_use` whose
input arrives whole in the start block (some proxies do this) is taken as it is; one with no
`input_json_delta` at all, or only empty ones (BerriAI/litellm#5063), is a tool without
parameters: its input is `{}`. A stop reason that does not end a turn with its output
(`refusal`, `pause_turn` - the turn is to be continued - or an unknown value) refuses the turn's
calls: the lab's policy.
"""

from __future__ import annotations

from collections.abc import Iterator

from keel_lab.core.errors import LabError
from keel_lab.core.streaming import StreamEvent, TextDelta, ToolCallDelta
from keel_lab.providers.fields import preview
from keel_lab.providers.streams.common import Labelled, Reading, WireCall, closing, late
from keel_lab.providers.streams.diagnostics import Diagnostics

# refusal (declined) and pause_turn (to be continued by a next request) are not among them
NORMAL = ("tool_use", "end_turn", "max_tokens", "stop_sequence",
          "model_context_window_exceeded")


def convert(records: Labelled, diag: Diagnostics) -> Iterator[StreamEvent]:
    calls: dict[int, WireCall] = {}
    stop_reason: str | None = None
    finished = False
    stream = Reading(records)
    for r in stream:
        where = r.where
        kind = r.text("type")
        index: int | None = None
        if kind == "content_block_start":
            block, at = r.obj("content_block"), r.required_index("index")
            if block.text("type") == "tool_use":
                index = at
                call = WireCall(block.text("id"), block.text("name") or "")
                call.add(block.arguments("input") if block.obj("input").value else None)
                if index in calls:
                    call.late = (f"a second content_block_start at index {index} ({where}) "
                                 "replaced a call: which one is meant is unknown, neither is run")
                calls[index] = call
                yield ToolCallDelta(index, call.id, call.name or None, call.arguments or None)
        elif kind == "content_block_delta":
            delta, at = r.obj("delta"), r.required_index("index")
            kind = delta.text("type")
            if kind == "text_delta" and delta.text("text") and not stream.ended:
                yield TextDelta(delta.value["text"])
            elif kind == "input_json_delta" and delta.text("partial_json"):
                index = at
                if index not in calls:
                    raise LabError(f"{where}: input_json_delta for block {index}, which is "
                                   "not a tool_use block")
                calls[index].add(delta.value["partial_json"])
                yield ToolCallDelta(index, arguments_delta=delta.value["partial_json"])
        elif kind == "message_delta":
            reason = r.obj("delta").text("stop_reason")
            if reason and stream.ended is None:
                stop_reason, stream.ended = reason, f"the stop reason {reason!r}"
        elif kind == "message_stop" and stream.ended != "data: [DONE]":
            finished = True
            stream.end("message_stop")
        elif kind == "error":
            raise ConnectionError(f"the server sent an error: {preview(r.raw('error'))}")
        if index is not None and stream.ended:
            calls[index].late = late(where, stream.ended)
    for index, call in sorted(calls.items()):
        if finished and not call.parts:
            diag.note(index, call.id, "no_arguments", "the tool_use block brought no input "
                      "(no input_json_delta, or only empty ones): a tool without parameters; "
                      "its input is {}")
    yield from closing(calls, (stop_reason or "end_turn") if finished else None, diag,
                       "message_stop", NORMAL)
