"""Anthropic Messages events into lab deltas.

`content_block_start` with a `tool_use` block brings the call's id and name at the block's
`index` (a text block before it takes index 0); `input_json_delta` events carry `partial_json`;
`message_delta` brings the `stop_reason` and `message_stop` ends the turn. A `tool_use` whose
input arrives whole in the start block (some proxies do this) is taken as it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.core.streaming import StreamEvent, TextDelta, ToolCallDelta
from keel_lab.providers.streams.common import WireCall, closing, whole_index
from keel_lab.providers.streams.diagnostics import Diagnostics


def convert(records: Iterable[dict[str, Any]], diag: Diagnostics) -> Iterator[StreamEvent]:
    calls: dict[int, WireCall] = {}
    stop_reason: str | None = None
    finished = False
    for n, r in enumerate(records):
        kind = r.get("type")
        if kind == "content_block_start":
            block, index = r.get("content_block") or {}, _index(r, n)
            if block.get("type") == "tool_use":
                start = block.get("input") or {}
                text = json.dumps(start, ensure_ascii=False) if start else ""
                calls[index] = WireCall(block.get("id"), block.get("name") or "", text)
                yield ToolCallDelta(index, block.get("id"), block.get("name"), text or None)
        elif kind == "content_block_delta":
            delta, index = r.get("delta") or {}, _index(r, n)
            if delta.get("type") == "text_delta" and delta.get("text"):
                yield TextDelta(delta["text"])
            elif delta.get("type") == "input_json_delta" and delta.get("partial_json"):
                if index not in calls:
                    raise LabError(f"event {n}: input_json_delta for block {index}, which is "
                                   "not a tool_use block")
                calls[index].arguments += delta["partial_json"]
                yield ToolCallDelta(index, arguments_delta=delta["partial_json"])
        elif kind == "message_delta":
            stop_reason = (r.get("delta") or {}).get("stop_reason") or stop_reason
        elif kind == "message_stop":
            finished = True
        elif kind == "error":
            raise ConnectionError(f"the server sent an error: {r.get('error')}")
    yield from closing(calls, (stop_reason or "end_turn") if finished else None, diag,
                       "message_stop")


def _index(record: dict[str, Any], n: int) -> int:
    return whole_index(record.get("index"), "content block index", f"event {n}")
