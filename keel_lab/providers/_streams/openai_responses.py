"""OpenAI Responses API events into lab deltas.

A function call is an output item: `response.output_item.added` brings its `call_id` and its
name; `response.function_call_arguments.delta` events add argument text and name their item by
`item_id` (and `output_index`); `response.completed` (or `incomplete`) finishes the turn. The
call's id is its `call_id` (`call_...`), the id a `function_call_output` must answer; the item's
own `id` (`fc_...`) only routes argument events to their item (openai/openai-python#2852). A
reasoning item may take output index 0: indexes are keys here too. docs/stream-quirks.md
says what is tolerated (arguments before their item, held until it arrives) and what refused (an
item without a `call_id`, arguments whose item never arrives, a `done` text that is not the
deltas, two items with one item id, a status but `completed` or `incomplete`); as in every
format, a second item at an index that holds a call, or a call fragment after the turn's end,
makes that call one the lab never runs.

`response.output_item.done` closes an item: a function call's final `arguments` and `call_id`
there must be the streamed ones (a server that streamed no arguments sends them only there:
taken; other text refuses the call, `arguments_mismatch`; another call_id refuses the turn, as
an id changed mid-call). A call that comes only in its `done` item is read from it
(`item_done_only`), and a `response.completed` whose `output` is empty although items were
streamed (ChatGPT's Codex backend) changes nothing (`completed_without_output`): the lab reads
the calls from the streamed items, never from that list. A `done` item whose `status` still
says `in_progress` is closed all the same (`done_in_progress`: the event, not the field, says
the item is complete), one that says `incomplete` is refused (`item_incomplete`: its arguments
may be cut even when they parse). A function call made by a program of programmatic tool
calling (`caller` of type `program`) is the client's to run like any other (OpenAI's guide:
the application runs the client-owned calls); noted (`program_caller`). The built-in tools'
items (`PROVIDER_ITEMS`) are the provider's: shown as `ProviderCall`s, never run. A custom
tool's call (`custom_tool_call`, its free-form text streamed by
`response.custom_tool_call_input.delta` and `.done`, as a function call's arguments are) is read
as a call whose one argument `input` is that text, `{"input": text}`, so a lab tool with one
string parameter `input` runs it (noted, `custom_tool_call`); its answer is a
`custom_tool_call_output` item with the call's `call_id`, OpenAI's pair for it, not a
`function_call_output`. Other items the client runs that are no call (`CLIENT_ITEMS`: computer
use, shell, apply_patch, an MCP approval request) are reported (`client_item`): the lab reads
function and custom tool calls only. An item or event type it does not know is reported once
and skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from keel_lab._core.errors import Said
from keel_lab._core.streaming import ProviderCall, Refuse, StreamEvent, TextDelta, ToolCallDelta
from keel_lab._i18n import N_
from keel_lab.providers._fields import Fields, json_preview, shown, strict_dumps
from keel_lab.providers._streams.common import Labelled, Reading, WireCall, closing
from keel_lab.providers._streams.diagnostics import Diagnostics

NORMAL = ("completed", "incomplete")  # the statuses that end a response with its output

ARGUMENTS = ("response.function_call_arguments.delta", "response.function_call_arguments.done",
             "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done")
DELTAS = ARGUMENTS[0], ARGUMENTS[2]
CALLS = ("function_call", "custom_tool_call")  # the items the client runs as calls
ITEM = ("response.output_item.added", "response.output_item.done")
# the items the provider runs itself, each with the field that says what it was asked
PROVIDER_ITEMS: dict[str, str | None] = {
    "web_search_call": "action", "file_search_call": "queries", "code_interpreter_call": "code",
    "image_generation_call": None, "mcp_call": "arguments", "mcp_list_tools": None,
    "tool_search_call": "arguments", "program": "code"}
# the client runs these, but they are no function call: each has its own output item
CLIENT_ITEMS = ("computer_call", "local_shell_call", "shell_call", "apply_patch_call",
                "mcp_approval_request")
OUTPUTS = ("program_output", "tool_search_output")  # what a provider item gave, by call_id
OTHER_ITEMS = (*CALLS, "message", "reasoning", "compaction")
# the documented event families: `response.<family>.<...>`
FAMILIES = ("created", "in_progress", "queued", "completed", "incomplete", "failed",
            "output_item", "content_part", "output_text", "refusal", "function_call_arguments",
            "reasoning_summary_part", "reasoning_summary_text", "reasoning_text",
            "web_search_call", "file_search_call", "code_interpreter_call",
            "code_interpreter_call_code", "image_generation_call", "mcp_call",
            "mcp_call_arguments", "mcp_list_tools", "custom_tool_call_input", "audio",
            "audio_transcript")


def convert(records: Labelled, diag: Diagnostics) -> Iterator[StreamEvent]:
    calls: dict[int, WireCall] = {}
    by_item: dict[str, int] = {}
    early: list[Fields] = []  # argument events whose item has not been added yet
    provider: dict[int, ProviderCall] = {}  # the built-in tools' items, by output index
    results: dict[str, str] = {}  # a program's call id -> its output's status
    finish: str | None = None
    stream = Reading(records)
    for r in stream:
        kind = r.text("type") or ""
        index: int | None = None
        item = r.obj("item") if kind in ITEM else None
        if item is not None and item.text("type") in CALLS:
            index = r.required_index("output_index")
            if kind == ITEM[1] and index in calls:
                yield from _done(item, index, calls[index], diag)
            else:
                yield from _added(r, item, index, calls, by_item, early, diag)
        elif kind in ARGUMENTS:
            index = _owner(r, by_item, calls)
            if index is None:
                early.append(r)
            else:
                yield from _arguments(r, index, calls[index])
        elif item is not None:
            _item(item, r.required_index("output_index"), provider, results, diag)
        elif kind == "response.output_text.delta" and r.text("delta") and not stream.ended:
            yield TextDelta(r.value["delta"])
        elif kind in ("response.completed", "response.incomplete") and stream.ended is None:
            finish = r.obj("response").text("status") or kind.split(".")[1]
            stream.ended = kind
            if r.obj("response").raw("output") == [] and (calls or provider):
                diag.note(None, None, "completed_without_output", N_(
                    "{kind} lists no output although items were streamed (ChatGPT's Codex "
                    "backend is one server seen sending it so): the calls are read from the "
                    "streamed items"),
                    kind=kind)
        elif kind == "response.failed":  # the error sits in the response object
            raise ConnectionError(Said("server_error", N_("the server reported {kind}: {error}"),
                                       {"kind": kind,
                                        "error": json_preview(r.obj("response").raw("error"))}))
        elif kind == "error":  # a top-level code and message
            raise ConnectionError(Said("server_error", N_("the server reported an error: "
                                                          "{error}"),
                                       {"error": json_preview(r.raw("message"))}))
        elif kind.startswith("response.") and kind.split(".")[1] not in FAMILIES:
            diag.unknown("event", kind, r.where)
        if index is not None:
            stream.arrived(calls[index], r.where)
    if finish is not None:
        yield from _orphans(early, calls)
    for _index, call in sorted(provider.items()):
        yield replace(call, result=results.get(call.id or "", call.result))
    yield from closing(calls, finish, diag, "response.completed", NORMAL)


def _added(r: Fields, item: Fields, index: int, calls: dict[int, WireCall],
           by_item: dict[str, int], early: list[Fields], diag: Diagnostics
           ) -> Iterator[StreamEvent]:
    """A function call's item arrives (added, or whole in its `done`): a call at its output
    index, and the argument events held for it applied."""
    if r.value.get("type") == ITEM[1]:
        diag.note(index, item.text("call_id"), "item_done_only", N_(
            "the function_call item came whole in output_item.done, without "
            "output_item.added: read from it"))
    _caller(item, index, diag)
    call = WireCall(item.text("call_id"), item.text("name") or "",
                    free_form=item.value.get("type") == "custom_tool_call")
    call.add(item.text("input" if call.free_form else "arguments"))
    call.closes = True
    if r.value.get("type") != ITEM[1]:  # added: output_item.done closes it
        call.unclosed = ITEM[1]
    if call.free_form:
        diag.note(index, call.id, "custom_tool_call", N_(
            "a custom tool call: its input is free-form text, not JSON arguments; the lab runs "
            "it as a call of {name} with one argument, input (that text), and it is answered "
            "with a custom_tool_call_output item naming its call_id"), name=shown(call.name))
    if index in calls:
        call.late = Said("item_replaced", N_(
            "a second output_item.added at output index {index} ({where}) replaced a call: "
            "which one is meant is unknown, neither is run"), {"index": index, "where": r.where})
    calls[index] = call
    if item.text("id"):
        _reused(item.value["id"], index, by_item, calls)
        by_item[item.value["id"]] = index
        if not call.id:
            diag.note(index, None, "call_id_missing", N_(
                "the function_call item {item} has no call_id: its item id is not the call "
                "id, and an output must name the call_id, so the call can never be answered "
                "(a call_id would make it runnable)"), "refused", item=item.value["id"])
    yield ToolCallDelta(index, call.id, call.name or None, call.arguments or None)
    held = [e for e in early if _owner(e, by_item, calls) == index]
    early[:] = [e for e in early if e not in held]
    if held:
        diag.note(index, call.id, "arguments_before_item", N_(
            "argument events for item {item} came before its output_item.added; they name "
            "their item, so they were held and applied to it"), item=item.text("id") or index)
    for e in held:
        yield from _arguments(e, index, calls[index])


def _done(item: Fields, index: int, call: WireCall, diag: Diagnostics) -> Iterator[StreamEvent]:
    """A function call's finished item: its call_id and arguments checked against what was
    streamed (the core refuses a changed id; `_arguments` a changed text), its status read."""
    call.unclosed = None
    if item.text("call_id"):
        yield ToolCallDelta(index, id=item.value["call_id"])
    yield from _arguments(item, index, call)
    _caller(item, index, diag)
    status = item.text("status")
    if status == "in_progress":
        diag.note(index, call.id, "done_in_progress", N_(
            "output_item.done says the call is complete while its status still says "
            "in_progress: the event closes it (its arguments are final)"))
    elif status == "incomplete":
        call.refusal = ("item_incomplete", Said("item_incomplete", N_(
            "the call's item ended incomplete: its arguments may be cut even if they parse, "
            "so it never runs (a completed item would make it runnable)")))


def _caller(item: Fields, index: int, diag: Diagnostics) -> None:
    """A call made by a program of programmatic tool calling: noted, and run as any other."""
    caller = item.obj("caller")
    if caller.text("type") == "program":
        diag.note(index, item.text("call_id"), "program_caller", N_(
            "the call was made by the provider's program {program} (programmatic tool "
            "calling): it is still the client's to run and answer, like any function "
            "call"), program=shown(caller.text("caller_id")))


def _item(item: Fields, index: int, provider: dict[int, ProviderCall], results: dict[str, str],
          diag: Diagnostics) -> None:
    """An item that is no function call: a built-in tool's (kept, its `done` form replacing its
    `added` one), a provider item's output (its status is that item's result), a client item
    (reported), or an item type this reader does not know (reported once)."""
    kind = item.text("type") or ""
    if kind in PROVIDER_ITEMS and item.text("execution") != "client":
        field, label = PROVIDER_ITEMS[kind], item.text("server_label")
        name = item.text("name") or kind.removesuffix("_call")
        value = item.raw(field) if field else None
        asked = value if isinstance(value, str) else "" if value is None else \
            strict_dumps(value, f"{item.where}: field {item.path}.{field}")
        provider[index] = ProviderCall(index, item.text("call_id") or item.text("id"),
                                       f"{label}.{name}" if label else name, asked, kind,
                                       item.text("status"))
    elif kind in OUTPUTS:
        if item.text("call_id"):
            results[item.value["call_id"]] = item.text("status") or kind
    elif kind in CLIENT_ITEMS or kind in PROVIDER_ITEMS:  # the latter: a client tool search
        diag.note(index, item.text("call_id"), "client_item", N_(
            "a {kind} item: the client runs it, but it is no function call, and the lab reads "
            "function calls only; it is answered with its own output item, not run "
            "here"), "reported", kind=kind)
    elif kind not in OTHER_ITEMS:
        diag.unknown("item", kind, item.where)


def _owner(r: Fields, by_item: dict[str, int], calls: dict[int, WireCall]) -> int | None:
    """The index of the call an arguments event belongs to: by its item id when it names one
    (an item id that is not known yet is an item still to come), else by its output index."""
    item_id = r.text("item_id")
    if item_id:
        return by_item.get(item_id)
    index = r.required_index("output_index")
    return index if index in calls else None


def _arguments(r: Fields, index: int, call: WireCall) -> Iterator[StreamEvent]:
    """An arguments event (or a custom tool's input event) of a call, or its finished item."""
    if r.value.get("type") in DELTAS:
        fragment = r.text("delta")
        call.add(fragment)
        yield ToolCallDelta(index, arguments_delta=fragment or None)
        return
    done = r.text("input" if call.free_form else "arguments") or ""
    if not call.parts and done:
        call.add(done)  # a server that sends only the final text
        yield ToolCallDelta(index, arguments_delta=done)
    elif done != call.arguments:
        call.refusal = ("arguments_mismatch", Said("arguments_mismatch", N_(
            "the final arguments (the done event) differ from the streamed deltas: which text "
            "is the call cannot be known, so it never runs (a done event that repeats the "
            "deltas would make it runnable)")))


def _reused(item_id: str, index: int, by_item: dict[str, int], calls: dict[int, WireCall]
            ) -> None:
    """A second item with an item id already taken: argument events name their item by that
    id, so which call each one built cannot be known; neither call runs."""
    first = by_item.get(item_id)
    if first is None or first == index:
        return
    why = Said("item_id_reused", N_(
        "the items at output indexes {first} and {index} share the item id {item}: argument "
        "events name their item by it, so which call received which arguments cannot be known, "
        "and neither runs (distinct item ids would make them runnable)"),
        {"first": first, "index": index, "item": item_id})
    for at in (first, index):
        calls[at].refusal = ("item_id_reused", why)


def _orphans(early: list[Fields], calls: dict[int, WireCall]) -> Iterator[StreamEvent]:
    """Argument events whose item never arrived: a call with no name and no call_id, which
    cannot run nor be answered; the core refuses the turn that holds it."""
    seen: dict[str | int, int] = {}  # an item id, or an output index -> the call's index
    for r in early:
        wanted = r.required_index("output_index")
        item = r.text("item_id") or wanted
        if item not in seen:
            index = seen[item] = wanted if wanted not in calls else max(calls) + 1
            calls[index] = WireCall()
            yield Refuse(index, Said("arguments_without_item", N_(
                "arguments for item {item} ({where}) came, but no function_call item for them "
                "was ever added: the call has no name and no call_id, so it can neither run nor "
                "be answered (its output_item.added event would make it runnable)"),
                {"item": item if isinstance(item, str) else Said(
                    "at_output_index", N_("at output index {index}"), {"index": item}),
                 "where": r.where}), "arguments_without_item")
        if r.value.get("type") in DELTAS and r.text("delta"):
            calls[seen[item]].add(r.value["delta"])
            yield ToolCallDelta(seen[item], arguments_delta=r.value["delta"])
