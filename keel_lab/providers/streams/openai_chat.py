"""OpenAI Chat Completions chunks (and the many servers that imitate them) into lab deltas.

Real servers bend the format (see shared/reference/stream-quirks.md). Each bend has a rule here:
tolerated when the call can still be known exactly, refused - never run - when it cannot.

- `index` missing or null: a chunk with a new id starts a new call; one without an id continues
  the most recent call.
- `index` as a digit string ("0"): read as the number.
- every call at index 0 (or two at one index): a *new id together with a name* at an index that
  already holds a call starts a new call.
- a different id on a continuation chunk (no name): the id changed mid-call; the turn is refused.
- the full name repeated in every chunk: a fragment equal to the whole name so far is dropped.
- `id` "" or null, `arguments` null: nothing new; ignored.
- `arguments` sent as a JSON object: serialised once as the call's arguments.
- the first call at index 1 (sparse indexes): indexes are keys, not positions; kept as they are.
- finish reason `stop` although calls were made: the calls are closed by it all the same.
- arguments carrying U+FFFD (a UTF-8 character split and each half encoded): refused.
- two calls with one id: the turn is refused (which result would belong to which call?).
- no finish reason (a cut-off stream): nothing is closed, so nothing runs.
- a call fragment after the finish reason or after `data: [DONE]`: the turn was over; that
  call is never run (the SDK stops reading at `[DONE]`; the lab reports what came after it).
"""

from __future__ import annotations

from collections.abc import Iterator

from keel_lab.core.streaming import StreamEvent, TextDelta, ToolCallDelta
from keel_lab.providers.fields import Fields
from keel_lab.providers.streams.common import Labelled, Reading, WireCall, closing, late
from keel_lab.providers.streams.diagnostics import Diagnostics


class _Normaliser:
    def __init__(self, diagnostics: Diagnostics) -> None:
        self.diag = diagnostics
        self.calls: dict[int, WireCall] = {}  # the lab's index -> what arrived
        self.slot: dict[int, int] = {}  # the provider's index -> the lab's index
        self.last: int | None = None

    def _new(self) -> int:
        index = max(self.calls, default=-1) + 1
        self.calls[index] = WireCall()
        return index

    def place(self, entry: Fields, call_id: str | None, name: str | None) -> int:
        """The lab's index for one tool-call entry of a chunk."""
        text = entry.raw("index")
        if isinstance(text, str) and text.isascii() and text.isdigit() and len(text) <= 9:
            self.diag.note(None, call_id, "index_string", f"index sent as the string {text!r}")
            raw: int | None = int(text)
        else:
            raw = entry.index("index")
        if raw is None:
            index = self._unindexed(call_id)
            self.diag.note(index, call_id, "index_missing",
                           "tool call without an index: placed by its id, or as the "
                           "continuation of the previous call")
            return index
        if raw not in self.slot:
            self.slot[raw] = raw if raw not in self.calls else self._new()
            self.calls.setdefault(self.slot[raw], WireCall())
            return self.slot[raw]
        index = self.slot[raw]
        current = self.calls[index]
        if call_id and current.id and call_id != current.id and name:
            self.slot[raw] = index = self._new()
            self.diag.note(index, call_id, "index_reused",
                           f"a new call (id {call_id}) arrived at index {raw}, which already "
                           f"held {current.id}: treated as a separate call")
        return index

    def _unindexed(self, call_id: str | None) -> int:
        for index, call in self.calls.items():
            if call_id and call.id == call_id:
                return index
        if call_id or self.last is None:
            return self._new()
        return self.last

    def delta(self, index: int, call_id: str | None, name: str | None,
              arguments: str | None) -> ToolCallDelta:
        call = self.calls[index]
        self.last = index
        if call_id and call.id and call_id != call.id:
            self.diag.note(index, call_id, "id_changed",
                           f"the id changed from {call.id} to {call_id} in the middle of the "
                           "call", "refused")
        elif call_id and call.id is None:
            call.id = call_id
        elif call_id:
            call_id = None  # the same id repeated: nothing new
        if name and call.name and name == call.name:
            self.diag.note(index, call.id, "name_repeated",
                           f"the full name {name!r} was repeated in a later chunk; kept once")
            name = None
        if name:
            call.name += name
        call.add(arguments)
        return ToolCallDelta(index, call_id, name, arguments or None)


def convert(records: Labelled, diag: Diagnostics) -> Iterator[StreamEvent]:
    norm = _Normaliser(diag)
    finish: str | None = None
    stream = Reading(records, error_field="error")
    for r in stream:
        where = r.where
        for choice in r.objs("choices"):
            if choice.index("index") not in (None, 0):
                continue  # the lab follows the first choice
            delta = choice.obj("delta")
            content = delta.text("content")
            if content and stream.ended:
                diag.note(None, None, "text_after_end", f"text arrived after {stream.ended} "
                          f"({where}); it is not part of the turn")
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
                              "arguments arrived as a JSON object, not a string; serialised")
                yield norm.delta(index, call_id, name, fn.arguments("arguments"))
                if stream.ended:
                    norm.calls[index].late = late(where, stream.ended)
            reason = choice.text("finish_reason")
            if reason and stream.ended is None:
                finish, stream.ended = reason, f"the finish reason {reason!r}"
    if norm.slot and min(norm.slot) > 0:  # judged on the whole turn, not on arrival order
        low = min(norm.slot)
        diag.note(None, norm.calls[norm.slot[low]].id, "sparse_index",
                  f"the first call is at index {low}; indexes are keys")
    yield from closing(norm.calls, finish, diag, "a finish reason")
