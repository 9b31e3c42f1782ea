"""OpenAI Responses API events into lab deltas.

A function call is an output item: `response.output_item.added` brings its `call_id` (the id a
`function_call_output` must answer; the item's own `id` is different) and its name;
`response.function_call_arguments.delta` events add argument text by `output_index`;
`response.completed` (or `incomplete`) finishes the turn. A reasoning item may take output index
0, so the first call can sit at index 1: indexes are keys here too. A second
`output_item.added` at an index that holds a call, or a call fragment after the turn's end, makes
that call one the lab never runs.
"""

from __future__ import annotations

from collections.abc import Iterator

from keel_lab.core.errors import LabError
from keel_lab.core.streaming import StreamEvent, TextDelta, ToolCallDelta
from keel_lab.providers.fields import Fields, preview
from keel_lab.providers.streams.common import Labelled, Reading, WireCall, closing, late
from keel_lab.providers.streams.diagnostics import Diagnostics


def convert(records: Labelled, diag: Diagnostics) -> Iterator[StreamEvent]:
    calls: dict[int, WireCall] = {}
    by_item: dict[str, int] = {}
    finish: str | None = None
    stream = Reading(records)
    for r in stream:
        where = r.where
        kind = r.text("type") or ""
        index: int | None = None
        if kind == "response.output_item.added" and r.obj("item").text("type") == \
                "function_call":
            item, index = r.obj("item"), r.required_index("output_index")
            call = WireCall(item.text("call_id"), item.text("name") or "")
            call.add(item.text("arguments"))
            if index in calls:
                call.late = (f"a second output_item.added at output index {index} ({where}) "
                             "replaced a call: which one is meant is unknown, neither is run")
            calls[index] = call
            if item.text("id"):
                by_item[item.value["id"]] = index
            yield ToolCallDelta(index, call.id, call.name or None, call.arguments or None)
        elif kind == "response.function_call_arguments.delta":
            index = _locate(r, by_item, calls)
            fragment = r.text("delta")
            calls[index].add(fragment)
            yield ToolCallDelta(index, arguments_delta=fragment or None)
        elif kind == "response.function_call_arguments.done":
            index = _locate(r, by_item, calls)
            done = r.text("arguments") or ""
            if not calls[index].parts and done:
                calls[index].add(done)  # a server that sends only the final text
                yield ToolCallDelta(index, arguments_delta=done)
            elif done != calls[index].arguments:
                diag.note(index, calls[index].id, "arguments_mismatch",
                          "the final arguments differ from the streamed deltas; the "
                          "streamed text is kept", "tolerated")
        elif kind == "response.output_text.delta" and r.text("delta") and not stream.ended:
            yield TextDelta(r.value["delta"])
        elif kind in ("response.completed", "response.incomplete") and stream.ended is None:
            finish = r.obj("response").text("status") or kind.split(".")[1]
            stream.ended = kind
        elif kind in ("response.failed", "error"):
            raise ConnectionError(f"the server reported {kind}: {preview(r.raw('error'))}")
        if index is not None and stream.ended:
            calls[index].late = late(where, stream.ended)
    yield from closing(calls, finish, diag, "response.completed")


def _locate(r: Fields, by_item: dict[str, int], calls: dict[int, WireCall]) -> int:
    """A call's index by its item id, or by the output index when the id is unknown."""
    index = by_item.get(r.text("item_id") or "")
    index = r.required_index("output_index") if index is None else index
    if index not in calls:
        raise LabError(f"{r.where}: arguments for output index {index}, which holds no "
                       "function_call item (its output_item.added is missing)")
    return index
