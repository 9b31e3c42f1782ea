"""OpenAI Responses API events into lab deltas.

A function call is an output item: `response.output_item.added` brings its `call_id` (the id a
`function_call_output` must answer; the item's own `id` is different) and its name;
`response.function_call_arguments.delta` events add argument text by `output_index`;
`response.completed` (or `incomplete`) finishes the turn. A reasoning item may take output index
0, so the first call can sit at index 1: indexes are keys here too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.core.streaming import StreamEvent, TextDelta, ToolCallDelta
from keel_lab.providers.streams.common import WireCall, closing, whole_index
from keel_lab.providers.streams.diagnostics import Diagnostics


def convert(records: Iterable[dict[str, Any]], diag: Diagnostics) -> Iterator[StreamEvent]:
    calls: dict[int, WireCall] = {}
    by_item: dict[str, int] = {}
    finish: str | None = None
    for n, r in enumerate(records):
        kind = r.get("type", "")
        if kind == "response.output_item.added" and (r.get("item") or {}).get("type") == \
                "function_call":
            item, index = r["item"], _index(r, f"event {n}")
            call = calls[index] = WireCall(item.get("call_id"), item.get("name") or "",
                                           item.get("arguments") or "")
            if item.get("id"):
                by_item[item["id"]] = index
            yield ToolCallDelta(index, call.id, call.name or None, call.arguments or None)
        elif kind == "response.function_call_arguments.delta":
            index = _locate(r, by_item, n)
            if index not in calls:
                raise LabError(f"event {n}: arguments for output index {index} before its "
                               "output_item.added")
            calls[index].arguments += r.get("delta") or ""
            yield ToolCallDelta(index, arguments_delta=r.get("delta") or None)
        elif kind == "response.function_call_arguments.done":
            index = _locate(r, by_item, n)
            done = r.get("arguments") or ""
            if index in calls and not calls[index].arguments and done:
                calls[index].arguments = done  # a server that sends only the final text
                yield ToolCallDelta(index, arguments_delta=done)
            elif index in calls and done != calls[index].arguments:
                diag.note(index, calls[index].id, "arguments_mismatch",
                          "the final arguments differ from the streamed deltas; the "
                          "streamed text is kept", "tolerated")
        elif kind == "response.output_text.delta" and r.get("delta"):
            yield TextDelta(r["delta"])
        elif kind in ("response.completed", "response.incomplete"):
            finish = (r.get("response") or {}).get("status") or kind.split(".")[1]
        elif kind in ("response.failed", "error"):
            raise ConnectionError(f"the server reported {kind}: {r.get('error') or r}")
    yield from closing(calls, finish, diag, "response.completed")


def _locate(record: dict[str, Any], by_item: dict[str, int], n: int) -> int:
    """A call's index by its item id, or by the output index when the id is unknown."""
    index = by_item.get(record.get("item_id") or "")
    return _index(record, f"event {n}") if index is None else index


def _index(record: dict[str, Any], where: str) -> int:
    return whole_index(record.get("output_index"), "output_index", where)
