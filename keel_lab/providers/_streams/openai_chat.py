"""OpenAI Chat Completions chunks (and the many servers that imitate them) into lab deltas.

Real servers bend the format; each bend has a rule here, and the note it makes says it:
tolerated when the call can still be known exactly, refused - never run - when it cannot.
docs/stream-quirks.md lists every rule (docs/stream-quirks-sources.md, where each bend was
reported). The choices that are the lab's own: a new id *together with a name* at an index
that holds a call starts a new call; a name fragment equal to the whole name so far is a repeat,
so a name made of one piece twice (`get` + `get`) reads as `get` (servers repeating whole names
are reported, tools named like that are not); a call said again at another index is held back
until the finish, when its content is known; any finish reason but `tool_calls`, `stop` and
`length` refuses its calls, since they may be cut or withheld.

Tolerated without a note: fragments of several calls interleaved (index 0 like any other) and
all arguments in one burst at the end are other chunkings of the documented shape, and the
diagnostics must not depend on chunking (tests/lab/test_rechunking.py); a name-only chunk before
the arguments lacks nothing (a missing `arguments` is no text yet, as `arguments: null`).

Servers that imitate the format (docs/stream-quirks-sources.md names each): Writer's
continuations carry `id`, `type` and `function.name` as `null` (nothing new) and repeat the delta
under `message`, which its SDK marks deprecated for streaming: only `delta` is read, so nothing
counts twice (`message_in_chunk`). Azure's first chunk has `choices: []`, an empty `id` and
`prompt_filter_results` (`prompt_filter_chunk`); its `content_filter_results` inside a choice are
annotations, and a filtered turn says so in its finish reason. Mistral sends each call whole, in
one chunk with its id and no `index` (read by id, as any call without an index). Kimi K2 repeats
the whole id and name in every chunk of a call (nothing new), and some servers end a turn with
`data: [DONE]` and no finish reason: `[DONE]` is the server's own end of the stream, so it closes
the turn as `tool_calls` (`stop` without calls) would (`done_without_finish`); each call still
runs only if its arguments are complete JSON, so a call cut by the server is refused all the
same. A stream that ends with neither is cut (`truncated`). Fields nobody documents for a chunk
(OpenRouter's `provider`, `native_finish_reason`, Groq's `x_groq`) are not read; a delta field the
lab does not read (`reasoning`, `reasoning_content`, `function_call`) is said once per stream
(`unread_delta_field`), since text or calls the lab ignores could hide there. SSE comments
(OpenRouter's `: OPENROUTER PROCESSING`) are no part of any event and never reach this module.
Foundry Local numbers the one choice of each chunk with a count (0, 1, 2, ...): read as the one
choice it is (`choice_index_rising`; `_counted` says how it is told from several choices).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from keel_lab._core.errors import Said
from keel_lab._core.streaming import Joined, StreamEvent, TextDelta, ToolCallDelta
from keel_lab._i18n import N_
from keel_lab.providers._fields import MAX_INDEX, Fields
from keel_lab.providers._formats import CUT_FINISHES
from keel_lab.providers._streams.common import Labelled, Reading, WireCall, closing
from keel_lab.providers._streams.diagnostics import Diagnostics

NORMAL = ("tool_calls", "stop", "length")  # content_filter, function_call or another: refused
READ = frozenset(("content", "tool_calls", "role", "refusal"))  # delta fields read or harmless


class _Normaliser:
    def __init__(self, diagnostics: Diagnostics) -> None:
        self.diag = diagnostics
        self.calls: dict[int, WireCall] = {}  # the lab's index -> what arrived
        self.slot: dict[int, int] = {}  # the provider's index -> the lab's index
        self.last: int | None = None
        self.echo: dict[int, int] = {}  # a call said again at another index -> the first saying
        self.ids: dict[str, int] = {}  # a call id -> the first call that carried it
        self.top = -1  # the highest index in `calls`

    def _add(self, index: int) -> int:
        """A new call at `index`, or after the highest index when `index` is taken; `top`
        follows the highest index, so a new call's index is found without scanning every call."""
        index = self.top + 1 if index in self.calls else index
        self.calls[index] = WireCall()
        self.top = max(self.top, index)
        return index

    def place(self, entry: Fields, call_id: str | None, name: str | None) -> int:
        """The lab's index for one tool-call entry of a chunk."""
        text = entry.raw("index")
        if isinstance(text, str) and text.isascii() and text.isdigit() and len(text) <= 9:
            self.diag.note(None, call_id, "index_string",
                           N_("index sent as the string {text}"), text=repr(text))
            raw: int | None = int(text)
        else:
            raw = entry.index("index")
        if raw is None:
            index = self._unindexed(call_id)
            self.diag.note(index, call_id, "index_missing",
                           N_("tool call without an index: placed by its id, or as the "
                              "continuation of the previous call"))
            return index
        if raw not in self.slot:
            return self._open(raw, call_id, name, entry.obj("function").raw("arguments"))
        index = self.slot[raw]
        current = self.calls[index]
        if call_id and current.id and call_id != current.id and name:
            self.slot[raw] = index = self._add(self.top + 1)
            self.diag.note(index, call_id, "index_reused",
                           N_("a new call (id {id}) arrived at index {index}, which already "
                              "held {held}: treated as a separate call"),
                           id=call_id, index=raw, held=current.id)
        return index

    def _open(self, raw: int, call_id: str | None, name: str | None, arguments: Any) -> int:
        """The lab's index for a provider index met for the first time."""
        count = len(self.calls) - len(self.echo)  # calls said once (echoes stay apart)
        if arguments and not call_id and not name and count:
            return self._drifted(raw, count)
        self.slot[raw] = index = self._add(raw)
        first = self.ids.get(call_id) if call_id else None
        if first is not None:
            self.echo[index] = first
        return index

    def _drifted(self, raw: int, count: int) -> int:
        """An argument fragment at an index no call opened (dirac-run/dirac#215)."""
        if count == 1:
            only = next(i for i in self.calls if i not in self.echo)
            self.slot[raw] = only
            self.diag.note(only, self.calls[only].id, "index_drift",
                           N_("argument fragments arrived at index {index}, which no call "
                              "opened; the turn has one call, so they continue it"), index=raw)
            return only
        self.slot[raw] = index = self._add(raw)
        self.diag.note(index, None, "index_drift",
                       N_("an argument fragment arrived at index {index}, which no call opened, "
                          "and the turn has {count} calls: which one it continues cannot be "
                          "known, so the turn is refused (fragments sent at their call's index "
                          "would be runnable)"), "refused", index=raw, count=count)
        return index

    def _unindexed(self, call_id: str | None) -> int:
        if call_id and call_id in self.ids:
            return self.ids[call_id]
        if call_id or self.last is None:
            return self._add(self.top + 1)
        return self.last

    def delta(self, index: int, call_id: str | None, name: str | None,
              arguments: str | None) -> ToolCallDelta | None:
        """The lab's delta for one entry; None for a call said again (held until the finish)."""
        call = self.calls[index]
        self.last = index
        if call_id and call.id and call_id != call.id:
            self.diag.note(index, call_id, "id_changed",
                           N_("the id changed from {old} to {new} in the middle of the "
                              "call"), "refused", old=call.id, new=call_id)
        elif call_id and call.id is None:
            call.id = call_id
            self.ids.setdefault(call_id, index)
        elif call_id:
            call_id = None  # the same id repeated: nothing new
        if name and call.name and name == call.name:
            self.diag.note(index, call.id, "name_repeated",
                           N_("the full name {name} was repeated in a later chunk; kept "
                              "once"), name=repr(name))
            name = None
        if name and call.name:
            self.diag.note(index, call.id, "name_split",
                           N_("the name arrived in pieces ({first}, then {then}); "
                              "joined"), first=repr(call.name), then=repr(name))
        elif name and call.parts:
            self.diag.note(index, call.id, "arguments_before_name",
                           N_("arguments arrived before the name {name}; the name completes "
                              "the call"), name=repr(name))
        if name:
            call.name += name
        call.add(arguments)
        if index in self.echo:
            return None
        return ToolCallDelta(index, call_id, name, arguments or None)

    def settle(self) -> Iterator[ToolCallDelta]:
        """At the finish, each call said again at another index (mudler/LocalAI#9722): the
        same name and arguments are one call said twice, dropped; anything else is passed on,
        and the duplicate id refuses the turn."""
        again: dict[int, list[int]] = {}
        for index, first in self.echo.items():
            echo, call = self.calls[index], self.calls[first]
            if (echo.name, echo.arguments) == (call.name, call.arguments):
                del self.calls[index]
                again.setdefault(first, []).append(index)
                continue
            self.diag.note(index, echo.id, "duplicate_id",
                           N_("call at index {index} (id {id}) reuses the id of call at "
                              "index {first} with another name or other arguments: which one is "
                              "the call cannot be known, so the turn is refused (the same call "
                              "sent again unchanged would be kept once)"), "refused",
                           index=index, id=echo.id, first=first)
            yield ToolCallDelta(index, echo.id, echo.name or None, echo.arguments or None)
        for first, indexes in again.items():
            self.diag.note(first, self.calls[first].id, "call_repeated",
                           N_("the same call (id, name and arguments) was sent again at index "
                              "{indexes}: one call said twice, kept once"),
                           indexes=Joined(tuple(indexes), Said("separator", N_(" and "))))

    def twins(self) -> None:
        """Calls with the same name and arguments but their own ids are calls of their own
        (run-llama/llama_index#22464): noted, so a reader does not merge them."""
        first: dict[tuple[str, str], int] = {}
        for index, call in sorted(self.calls.items()):
            seen = first.setdefault((call.name, call.arguments), index)
            if seen != index and call.id and call.id != self.calls[seen].id:
                self.diag.note(index, call.id, "identical_calls",
                               N_("same name and arguments as call {seen}, another id: two "
                                  "calls, each runs and each is answered"), seen=seen)


def convert(records: Labelled, diag: Diagnostics) -> Iterator[StreamEvent]:
    norm = _Normaliser(diag)
    finish: str | None = None
    stream = Reading(_counted(records, diag), error_field="error")
    unread = False  # whether a delta field the lab does not read was said
    for r in stream:
        fragment = None if stream.ended else _fragment(r.value)
        if fragment is not None and fragment[0] in norm.slot:
            made = norm.delta(norm.slot[fragment[0]], None, None, fragment[1])
            if made is not None:
                yield made
            continue
        where = r.where
        choices = r.objs("choices")
        if not choices:
            _no_choices(r, diag)
        for choice in choices:
            if choice.index("index") not in (None, 0):
                continue  # the lab follows the first choice
            delta = choice.obj("delta")
            if choice.raw("message") is not None:
                diag.note(None, None, "message_in_chunk", N_(
                    "a choice repeats its delta under `message` (Writer's SDK marks it "
                    "deprecated for streaming): read from `delta` only, so nothing counts "
                    "twice"))
            if not unread and not READ.issuperset(delta.value):
                unread = _unread(delta, diag)
            content = delta.text("content")
            if content and stream.ended:
                diag.note(None, None, "text_after_end", N_(
                    "text arrived after {ended} ({where}); it is not part of the "
                    "turn"), ended=stream.ended, where=where)
            elif content:
                yield TextDelta(content)
            for entry in delta.objs("tool_calls"):
                fn = entry.obj("function")
                call_id = entry.text("id") or None
                name = fn.text("name") or None
                arguments = fn.raw("arguments")
                index = norm.place(entry, call_id, name)
                if isinstance(arguments, dict):
                    diag.note(index, call_id, "arguments_object",
                              N_("arguments arrived as a JSON object, not a string; serialised"))
                if call_id and name and entry.raw("type") is None:  # the entry opening a call
                    diag.note(index, call_id, "type_missing", N_(
                        'the call came without "type": "function"; read as a function call'))
                made = norm.delta(index, call_id, name, fn.arguments("arguments"))
                if made is not None:
                    yield made
                stream.arrived(norm.calls[index], where)
            reason = choice.text("finish_reason")
            if reason and stream.ended is None:
                finish, stream.ended = reason, Said("finish_reason", N_(
                    "the finish reason {reason}"), {"reason": repr(reason)})
    inferred = finish is None and stream.ended is not None
    if inferred:  # ended by data: [DONE], the only other end
        finish = "tool_calls" if norm.calls else "stop"
        diag.note(None, None, "done_without_finish", N_(
            "the stream ended with data: [DONE] and no finish reason; [DONE] is the server's "
            "own end of the stream, so the turn is closed as with the finish reason {finish}: "
            "each call runs only if its arguments are complete JSON"), finish=repr(finish))
    if norm.slot and min(norm.slot) > 0:  # judged on the whole turn, not on arrival order
        low = min(norm.slot)
        diag.note(None, norm.calls[norm.slot[low]].id, "sparse_index",
                  N_("the first call is at index {low}; indexes are keys"), low=low)
    yield from norm.settle()
    norm.twins()
    for index, call in sorted(norm.calls.items()):
        if finish is not None and finish not in CUT_FINISHES and call.name and not call.parts:
            diag.note(index, call.id, "no_arguments", N_(
                "no argument text arrived for this call; read as no arguments ({empty}), as for a "
                "tool without parameters"), empty="{}")
    yield from closing(norm.calls, finish, diag, Said("a_finish_reason", N_("a finish reason")),
                       NORMAL, inferred=inferred)


def _fragment(chunk: Mapping[str, Any]) -> tuple[int, str] | None:
    """(provider index, argument text) when a chunk is the commonest one of a long turn: one
    more argument fragment of one call and nothing else - no id, name, text, finish reason or
    field the lab does not read, every value of exactly its type. Any other chunk is None and
    is read field by field; this only spares the long tail of a turn that path's cost. (Taking
    one item out of a string or a one-key object, or a key out of a list, raises: the shapes
    this accepts are one-item lists of objects.)"""
    try:
        (choice,) = chunk["choices"]
        delta = choice["delta"]
        (entry,) = delta["tool_calls"]
        index, text = entry["index"], entry["function"]["arguments"]
    except (KeyError, TypeError, ValueError):
        return None
    if (type(text) is not str or not text or type(index) is not int
            or not 0 <= index <= MAX_INDEX or not READ.issuperset(delta)
            or delta.get("content") not in (None, "") or entry.get("id") is not None
            or entry["function"].get("name") is not None
            or choice.get("finish_reason") is not None or choice.get("message") is not None):
        return None
    at = choice.get("index", 0)
    return (index, text) if type(at) is int and at == 0 else None


def _counted(records: Labelled, diag: Diagnostics) -> Iterator[tuple[str, dict[str, Any]]]:
    """The chunks, with a choice index that counts them read as the one choice it is.

    Foundry Local (microsoft/foundry-local#263), like TGI before
    huggingface/text-generation-inference#1648, numbers the one choice of each chunk 0, 1, 2, ...:
    read as choices, every chunk after the first was another choice and its text was lost.
    Several real choices bring each index back, a counter never does; so from the first chunk
    whose one choice has an index other than 0, the chunks are held while each one's single
    choice has the index after the last one, and passed on with index 0 when the stream ends
    so (noted); as they came as soon as an index comes back or a chunk holds several choices.
    The lab's choice: a stream whose two chunks are choices 0 and 1, one chunk each, is read
    as one choice."""
    chunks = iter(records)
    held: list[tuple[str, dict[str, Any]]] = []
    last: int | None = None  # the index of the last chunk's one choice, while they count
    for where, record in chunks:
        choices = record.get("choices") if isinstance(record, dict) else None
        at = _only_index(choices)
        if not choices and held:  # no choice (usage, [DONE]): kept in its place
            held.append((where, record))
            continue
        if not choices:
            yield where, record
            continue
        if at is not None and (at == 0 if last is None else at == last + 1):
            last = at
            if at:
                held.append((where, record))
            else:
                yield where, record
            continue
        yield from held  # several choices, or an index that does not count: as they came
        yield where, record
        yield from chunks
        return
    if held:
        diag.note(None, None, "choice_index_rising", N_(
            "the one choice of each chunk had the next index (up to {last}): a count of the "
            "chunks (Foundry Local), not several choices; read as the one choice"), last=last)
    for where, record in held:
        choices = record.get("choices")
        yield where, {**record, "choices": [{**choices[0], "index": 0}]} if choices else record


def _only_index(choices: Any) -> int | None:
    """The index of a chunk's one choice; None when there are several, or it is no number."""
    if isinstance(choices, list) and len(choices) == 1 and isinstance(choices[0], dict):
        at = choices[0].get("index", 0)
        return at if type(at) is int else None
    return None


def _no_choices(r: Fields, diag: Diagnostics) -> None:
    """A chunk without choices carries no call and no text: said for the two kinds documented."""
    if r.raw("prompt_filter_results") is not None:
        diag.note(None, None, "prompt_filter_chunk", N_(
            "a chunk without choices carries Azure's `prompt_filter_results` (the content "
            "filter's verdict on the prompt; its id empty) and no call or text; skipped"))
    elif r.raw("usage") is not None:
        diag.note(None, None, "usage_chunk", N_(
            "a usage-only chunk without choices carries no call or text; skipped (with "
            "stream_options.include_usage OpenAI documents one before data: [DONE], its "
            "choices always empty)"))


def _unread(delta: Fields, diag: Diagnostics) -> bool:
    """Whether the delta has a field, not null, that the lab does not read (said once)."""
    names = sorted(k for k, v in delta.value.items() if v is not None and k not in READ)
    if names:
        diag.note(None, None, "unread_delta_field", N_(
            "a delta has fields the lab does not read ({names}; said for the first such "
            "delta): text and calls are read from `content` and `tool_calls` only"),
            names=", ".join(names))
    return bool(names)
