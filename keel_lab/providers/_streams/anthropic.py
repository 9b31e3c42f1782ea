"""Anthropic Messages events into lab deltas.

`content_block_start` with a `tool_use` block brings the call's id and name at the block's
`index` (a text block before it takes index 0); `input_json_delta` events carry `partial_json`;
`message_delta` brings the `stop_reason` and `message_stop` ends the turn. A `tool_use` whose
input arrives whole in the start block (some proxies do this) is taken as it is; one with no
`input_json_delta` at all, or only empty ones (BerriAI/litellm#5063), is a tool without
parameters: its input is `{}`. A stop reason that does not end a turn with its output
(`refusal`, `pause_turn` - the turn is to be continued - or an unknown value) refuses the turn's
calls: the lab's policy.

Server tools (web search, web fetch, code execution, MCP, the advisor) are the provider's: a
`server_tool_use`, `mcp_tool_use` or any other `*_tool_use` block is read like a call, its input
from its own `input_json_delta` events, and passed on as a `ProviderCall` - shown, never run,
since Anthropic runs it and sends its `*_tool_result` block in the same turn (that block is
skipped; its type is the call's result). A paused turn (`pause_turn`) is said by name: the
provider stopped its own long turn, to be resumed by sending it back, so its client calls stay
unrun while its provider calls are shown; a result block whose call is not in the turn answers
a call of an earlier turn (a paused one resumed, say): reported, `provider_result_without_call`.
Anthropic may add block, delta and event types: an unknown one is reported once and skipped,
never the end of the reading. Lines padded with blanks inside the JSON (`{"index":1      }`, as
Anthropic sends them) are plain JSON whitespace: read, not noted.
"""

from __future__ import annotations

from collections.abc import Iterator

from keel_lab._core.errors import LabError, Said
from keel_lab._core.streaming import ProviderCall, StreamEvent, TextDelta, ToolCallDelta
from keel_lab._i18n import N_
from keel_lab.providers._fields import Fields, shown
from keel_lab.providers._formats import record_format
from keel_lab.providers._streams.common import Labelled, Reading, WireCall, closing, server_error
from keel_lab.providers._streams.diagnostics import Diagnostics

# refusal (declined) and pause_turn (to be continued by a next request) are not among them
NORMAL = ("tool_use", "end_turn", "max_tokens", "stop_sequence",
          "model_context_window_exceeded")
EVENTS = ("message_start", "content_block_start", "content_block_delta", "content_block_stop",
          "message_delta", "message_stop", "ping", "error")
BLOCKS = ("text", "thinking", "redacted_thinking", "compaction")  # no call in them
DELTAS = ("text_delta", "input_json_delta", "thinking_delta", "signature_delta",
          "citations_delta", "compaction_delta")


def convert(records: Labelled, diag: Diagnostics) -> Iterator[StreamEvent]:
    calls: dict[int, WireCall] = {}
    provider: dict[int, tuple[str, WireCall]] = {}  # server tool blocks: (block type, call)
    unknown: set[int] = set()  # indexes of blocks of a type this reader does not know
    results: dict[str, str] = {}  # a server tool's id -> its result block's type
    stop_reason: str | None = None
    finished = False
    stream = Reading(records)
    for r in stream:
        where = r.where
        kind = r.text("type")
        index: int | None = None
        if kind == "content_block_start":
            block, at = r.obj("content_block"), r.required_index("index")
            block_type = block.text("type") or ""
            if block_type == "tool_use":
                index = at
                call = _call(block)
                call.closes, call.unclosed = True, "content_block_stop"
                if index in calls:
                    call.late = Said("block_replaced", N_(
                        "a second content_block_start at index {index} ({where}) replaced a "
                        "call: which one is meant is unknown, neither is run"),
                        {"index": index, "where": where})
                calls[index] = call
                yield ToolCallDelta(index, call.id, call.name or None, call.arguments or None)
            elif block_type.endswith("_tool_use"):
                provider[at] = (block_type, _call(block, block.text("server_name")))
            elif block_type.endswith("_tool_result"):
                results[block.text("tool_use_id") or ""] = block_type
            elif block_type not in BLOCKS:
                unknown.add(at)
                diag.unknown("block", block_type, where)
        elif kind == "content_block_delta":
            delta, at = r.obj("delta"), r.required_index("index")
            kind = delta.text("type") or ""
            if kind == "text_delta" and delta.text("text") and not stream.ended:
                yield TextDelta(delta.value["text"])
            elif kind == "input_json_delta" and delta.text("partial_json"):
                fragment = delta.value["partial_json"]
                if at in calls:
                    index = at
                    calls[index].add(fragment)
                    yield ToolCallDelta(index, arguments_delta=fragment)
                elif at in provider:
                    provider[at][1].add(fragment)
                elif at not in unknown:
                    raise LabError("delta_without_block", N_(
                        "{where}: input_json_delta for block {block}, which is not a tool_use "
                        "block (nor a server tool's)"), where=where, block=at)
            elif kind not in DELTAS:
                diag.unknown("delta", kind, where)
        elif kind == "content_block_stop":
            at = r.required_index("index")
            if at in calls and not stream.ended:
                calls[at].unclosed = None
        elif kind == "message_delta":
            reason = r.obj("delta").text("stop_reason")
            if reason and stream.ended is None:
                stop_reason, stream.ended = reason, Said("stop_reason", N_(
                    "the stop reason {reason}"), {"reason": repr(reason)})
        elif kind == "message_stop" and stream.ended != "data: [DONE]":
            finished = True
            stream.end("message_stop")
        elif kind == "error":
            raise ConnectionError(server_error(r.raw("error")))
        elif kind not in EVENTS and record_format(dict(r.value)) == "anthropic":
            diag.unknown("event", kind or "", where)
        if index is not None:
            stream.arrived(calls[index], where)
    for index, call in sorted(calls.items()):
        if finished and not call.parts and not call.unclosed:
            diag.note(index, call.id, "no_arguments", N_(
                "the tool_use block brought no input (no input_json_delta, or only empty "
                "ones): a tool without parameters; its input is {empty}"), empty="{}")
    yield from _provider_calls(provider, results, diag)
    if stop_reason == "pause_turn":
        diag.note(None, None, "pause_turn", N_(
            "the provider paused its own turn after {n} call(s) of its tools: it is to be "
            "resumed by sending the turn back; what it ran is shown, no client call of the "
            "turn runs"), "reported", n=len(provider))
    yield from closing(calls, (stop_reason or "end_turn") if finished else None, diag,
                       "message_stop", NORMAL)


def _call(block: Fields, server: str | None = None) -> WireCall:
    """A tool block's id, name (an MCP tool's with its server's) and whole input when the start
    block brings one."""
    name = block.text("name") or ""
    call = WireCall(block.text("id"), f"{server}.{name}" if server else name)
    call.add(block.arguments("input") if block.obj("input").value else None)
    return call


def _provider_calls(provider: dict[int, tuple[str, WireCall]], results: dict[str, str],
                    diag: Diagnostics) -> Iterator[ProviderCall]:
    """The server tools' calls, each with the type of its result block when the turn has one;
    results whose call is not in the turn are noted (a resumed paused turn starts with them)."""
    ids = set()
    for index, (kind, call) in sorted(provider.items()):
        ids.add(call.id)
        yield ProviderCall(index, call.id, call.name or kind, call.arguments or "{}", kind,
                           results.get(call.id or ""))
    orphans = [i for i in results if i not in ids]
    if orphans:
        diag.note(None, orphans[0], "provider_result_without_call", N_(
            "{n} result block(s) of the provider's tools answer calls not in this turn "
            "(first: {first}): calls of an earlier turn (a paused one resumed, or one that "
            "stopped for a client call first); nothing in them runs here"), "reported",
            n=len(orphans), first=shown(orphans[0]))
