"""OpenAI Responses API events into lab deltas.

A function call is an output item: `response.output_item.added` brings its `call_id` and its
name; `response.function_call_arguments.delta` events add argument text and name their item by
`item_id` (and `output_index`); `response.completed` (or `incomplete`) finishes the turn. The
call's id is its `call_id` (`call_...`), the id a `function_call_output` must answer; the item's
own `id` (`fc_...`) only routes argument events to their item (openai/openai-python#2852). A
reasoning item may take output index 0: indexes are keys here too. The README's "Quirk policies"
says what is tolerated (arguments before their item, held until it arrives) and what refused (an
item without a `call_id`, arguments whose item never arrives, a `done` text that is not the
deltas, two items with one item id, a status but `completed` or `incomplete`); as in every
format, a second item at an index that holds a call, or a call fragment after the turn's end,
makes that call one the lab never runs.
"""

from __future__ import annotations

from collections.abc import Iterator

from keel_lab.core.streaming import Refuse, StreamEvent, TextDelta, ToolCallDelta
from keel_lab.providers.fields import Fields, preview
from keel_lab.providers.streams.common import Labelled, Reading, WireCall, closing, late
from keel_lab.providers.streams.diagnostics import Diagnostics

NORMAL = ("completed", "incomplete")  # the statuses that end a response with its output

ARGUMENTS = ("response.function_call_arguments.delta", "response.function_call_arguments.done")


def convert(records: Labelled, diag: Diagnostics) -> Iterator[StreamEvent]:
    calls: dict[int, WireCall] = {}
    by_item: dict[str, int] = {}
    early: list[Fields] = []  # argument events whose item has not been added yet
    finish: str | None = None
    stream = Reading(records)
    for r in stream:
        kind = r.text("type") or ""
        index: int | None = None
        if kind == "response.output_item.added" and r.obj("item").text("type") == \
                "function_call":
            item, index = r.obj("item"), r.required_index("output_index")
            call = WireCall(item.text("call_id"), item.text("name") or "")
            call.add(item.text("arguments"))
            if index in calls:
                call.late = (f"a second output_item.added at output index {index} ({r.where}) "
                             "replaced a call: which one is meant is unknown, neither is run")
            calls[index] = call
            if item.text("id"):
                _reused(item.value["id"], index, by_item, calls)
                by_item[item.value["id"]] = index
                if not call.id:
                    diag.note(index, None, "call_id_missing", f"the function_call item "
                              f"{item.value['id']} has no call_id: its item id is not the call "
                              "id, and an output must name the call_id, so the call can never "
                              "be answered (a call_id would make it runnable)", "refused")
            yield ToolCallDelta(index, call.id, call.name or None, call.arguments or None)
            held = [e for e in early if _owner(e, by_item, calls) == index]
            early = [e for e in early if e not in held]
            if held:
                diag.note(index, call.id, "arguments_before_item",
                          f"argument events for item {item.text('id') or index} came before "
                          "its output_item.added; they name their item, so they were held "
                          "and applied to it")
            for e in held:
                yield from _arguments(e, index, calls[index])
        elif kind in ARGUMENTS:
            index = _owner(r, by_item, calls)
            if index is None:
                early.append(r)
            else:
                yield from _arguments(r, index, calls[index])
        elif kind == "response.output_text.delta" and r.text("delta") and not stream.ended:
            yield TextDelta(r.value["delta"])
        elif kind in ("response.completed", "response.incomplete") and stream.ended is None:
            finish = r.obj("response").text("status") or kind.split(".")[1]
            stream.ended = kind
        elif kind == "response.failed":  # the error sits in the response object
            raise ConnectionError(f"the server reported {kind}: "
                                  + preview(r.obj("response").raw("error")))
        elif kind == "error":  # a top-level code and message
            raise ConnectionError(f"the server reported an error: {preview(r.raw('message'))}")
        if index is not None and stream.ended:
            calls[index].late = late(r.where, stream.ended)
    if finish is not None:
        yield from _orphans(early, calls)
    yield from closing(calls, finish, diag, "response.completed", NORMAL)


def _owner(r: Fields, by_item: dict[str, int], calls: dict[int, WireCall]) -> int | None:
    """The index of the call an arguments event belongs to: by its item id when it names one
    (an item id that is not known yet is an item still to come), else by its output index."""
    item_id = r.text("item_id")
    if item_id:
        return by_item.get(item_id)
    index = r.required_index("output_index")
    return index if index in calls else None


def _arguments(r: Fields, index: int, call: WireCall) -> Iterator[StreamEvent]:
    if r.value.get("type") == ARGUMENTS[0]:
        fragment = r.text("delta")
        call.add(fragment)
        yield ToolCallDelta(index, arguments_delta=fragment or None)
        return
    done = r.text("arguments") or ""
    if not call.parts and done:
        call.add(done)  # a server that sends only the final text
        yield ToolCallDelta(index, arguments_delta=done)
    elif done != call.arguments:
        call.refusal = ("arguments_mismatch", "the final arguments (the done event) differ from "
                        "the streamed deltas: which text is the call cannot be known, so it never "
                        "runs (a done event that repeats the deltas would make it runnable)")


def _reused(item_id: str, index: int, by_item: dict[str, int], calls: dict[int, WireCall]
            ) -> None:
    """A second item with an item id already taken: argument events name their item by that
    id, so which call each one built cannot be known; neither call runs."""
    first = by_item.get(item_id)
    if first is None or first == index:
        return
    why = (f"the items at output indexes {first} and {index} share the item id {item_id}: "
           "argument events name their item by it, so which call received which arguments "
           "cannot be known, and neither runs (distinct item ids would make them runnable)")
    for at in (first, index):
        calls[at].refusal = ("item_id_reused", why)


def _orphans(early: list[Fields], calls: dict[int, WireCall]) -> Iterator[StreamEvent]:
    """Argument events whose item never arrived: a call with no name and no call_id, which
    cannot run nor be answered; the core refuses the turn that holds it."""
    seen: dict[str, int] = {}
    for r in early:
        item = r.text("item_id") or f"at output index {r.required_index('output_index')}"
        if item not in seen:
            wanted = r.required_index("output_index")
            index = seen[item] = wanted if wanted not in calls else max(calls) + 1
            calls[index] = WireCall()
            reason = (f"arguments for item {item} ({r.where}) came, but no function_call item "
                      "for them was ever added: the call has no name and no call_id, so it "
                      "can neither run nor be answered (its output_item.added event would make "
                      "it runnable)")
            yield Refuse(index, reason, "arguments_without_item")
        if r.value.get("type") == ARGUMENTS[0] and r.text("delta"):
            calls[seen[item]].add(r.value["delta"])
            yield ToolCallDelta(seen[item], arguments_delta=r.value["delta"])
