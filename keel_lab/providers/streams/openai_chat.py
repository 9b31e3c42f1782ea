"""OpenAI Chat Completions chunks (and the many servers that imitate them) into lab deltas.

Real servers bend the format (see shared/reference/stream-quirks.md). Each bend has a rule here:
tolerated when the call can still be known exactly, rejected - never run - when it cannot.

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
- arguments carrying U+FFFD (a UTF-8 character split and each half encoded): rejected.
- two calls with one id: the turn is refused (which result would belong to which call?).
- no finish reason (a cut-off stream): nothing is closed, so nothing runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.core.streaming import StreamEvent, TextDelta, ToolCallDelta
from keel_lab.providers.formats import DONE
from keel_lab.providers.streams.common import WireCall, closing, whole_index
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

    def place(self, raw: Any, call_id: str | None, name: str | None, where: str) -> int:
        """The lab's index for one tool-call entry of a chunk."""
        if raw is None:
            index = self._unindexed(call_id)
            self.diag.note(index, call_id, "index_missing",
                           "tool call without an index: placed by its id, or as the "
                           "continuation of the previous call")
            return index
        if isinstance(raw, str) and raw.isdigit():
            self.diag.note(None, call_id, "index_string", f"index sent as the string {raw!r}")
            raw = int(raw)
        raw = whole_index(raw, "tool call index", where)
        if raw not in self.slot:
            if not self.slot and raw > 0:
                self.diag.note(None, call_id, "sparse_index",
                               f"the first call arrived at index {raw}; indexes are keys")
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
              arguments: Any) -> ToolCallDelta:
        call = self.calls[index]
        self.last = index
        if call_id and call.id and call_id != call.id:
            self.diag.note(index, call_id, "id_changed",
                           f"the id changed from {call.id} to {call_id} in the middle of the "
                           "call", "rejected")
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
        if isinstance(arguments, dict):
            self.diag.note(index, call.id, "arguments_object",
                           "arguments arrived as a JSON object, not a string; serialised")
            arguments = json.dumps(arguments, ensure_ascii=False)
        elif arguments is not None and not isinstance(arguments, str):
            raise LabError(f"call at index {index}: arguments must be a string, got "
                           f"{type(arguments).__name__}")
        if arguments:
            call.arguments += arguments
        return ToolCallDelta(index, call_id, name, arguments or None)


def convert(records: Iterable[dict[str, Any]], diag: Diagnostics) -> Iterator[StreamEvent]:
    norm = _Normaliser(diag)
    finish: str | None = None
    for n, record in enumerate(records):
        if record is DONE:
            continue
        if "error" in record:
            raise ConnectionError(f"the server sent an error: {record['error']}")
        for choice in record.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue  # the lab follows the first choice
            delta = choice.get("delta") or {}
            if delta.get("content"):
                yield TextDelta(delta["content"])
            for entry in delta.get("tool_calls") or []:
                fn = entry.get("function") or {}
                call_id = entry.get("id") or None
                name = fn.get("name") or None
                index = norm.place(entry.get("index"), call_id, name, f"chunk {n}")
                yield norm.delta(index, call_id, name, fn.get("arguments"))
            finish = choice.get("finish_reason") or finish
    yield from closing(norm.calls, finish, diag, "a finish reason")
