"""What every wire format shares: typed access to a payload's fields, the calls seen so far,
and the checks made at the finish.

Turn-level rules (ids missing, reused or changed) are the core assembler's; a converter only
rejects what the wire itself corrupted. A field of the wrong JSON type is a `LabError` that
names the event, the field and the type expected: the stream cannot be read as its format.
"""

from __future__ import annotations

import json
import reprlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.core.streaming import Finish, Reject, StreamEvent
from keel_lab.providers.streams.diagnostics import Diagnostics

REPLACEMENT = "\ufffd"
MAX_INDEX = 2**31 - 1  # indexes are keys; anything larger is no position a server sends
Labelled = Iterable[tuple[str, dict[str, Any]]]  # ("line 3" or "event 2", payload)

_JSON_TYPE = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
              int: "a number", float: "a number", type(None): "null"}


_PREVIEW = reprlib.Repr()
_PREVIEW.maxstring = _PREVIEW.maxother = 120


def preview(value: Any) -> str:
    """A short repr of a value from the file, for messages (bounded in length and depth)."""
    return _PREVIEW.repr(value)


def json_type(value: Any) -> str:
    return _JSON_TYPE.get(type(value), type(value).__name__)


@dataclass(frozen=True)
class Fields:
    """One JSON object of a payload, read field by field with the type each must have.

    A field that is absent or null reads as None (servers send `"id": null` on continuation
    chunks); any other type than the one expected is a `LabError`.
    """

    value: Mapping[str, Any]
    where: str  # the event: "stream.sse, line 7"
    path: str = ""  # this object's place in the payload: "choices[0].delta"

    def _at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def _wrong(self, key: str, expected: str) -> LabError:
        got = json_type(self.value[key])
        return LabError(f"{self.where}: field {self._at(key)!r} must be {expected}, got {got}")

    def raw(self, key: str) -> Any:
        return self.value.get(key)

    def text(self, key: str) -> str | None:
        value = self.value.get(key)
        if value is None or isinstance(value, str):
            return value
        raise self._wrong(key, "a string")

    def flag(self, key: str) -> bool | None:
        value = self.value.get(key)
        if value is None or isinstance(value, bool):
            return value
        raise self._wrong(key, "true or false")

    def index(self, key: str) -> int | None:
        """A whole number 0..MAX_INDEX (bools and floats are not)."""
        value = self.value.get(key)
        if value is None or (type(value) is int and 0 <= value <= MAX_INDEX):
            return value
        raise self._wrong(key, f"a whole number 0..{MAX_INDEX}")

    def required_index(self, key: str) -> int:
        value = self.index(key)
        if value is None:
            raise LabError(f"{self.where}: field {self._at(key)!r} is missing (a whole number "
                           f"0..{MAX_INDEX} is expected)")
        return value

    def obj(self, key: str) -> Fields:
        value = self.value.get(key)
        if value is None:
            value = {}
        elif not isinstance(value, dict):
            raise self._wrong(key, "an object")
        return Fields(value, self.where, self._at(key))

    def objs(self, key: str) -> list[Fields]:
        """A list of objects (absent or null: none)."""
        value = self.value.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self._wrong(key, "a list of objects")
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise LabError(f"{self.where}: field {self._at(key)}[{i}] must be an object, "
                               f"got {json_type(item)}")
        return [Fields(item, self.where, f"{self._at(key)}[{i}]") for i, item in enumerate(value)]

    def arguments(self, key: str) -> str | None:
        """Argument text: a string, or a JSON object serialised once (None when absent)."""
        value = self.value.get(key)
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, dict):
            try:
                return json.dumps(value, ensure_ascii=False)
            except RecursionError:
                raise LabError(f"{self.where}: field {self._at(key)!r} is nested too deeply "
                               "to serialise") from None
        raise self._wrong(key, "a string (or an object)")


@dataclass
class WireCall:
    """What a converter has seen of one call, to check it before the finish is passed on."""

    id: str | None = None
    name: str = ""
    parts: list[str] = field(default_factory=list)  # argument fragments, joined only on demand
    late: str | None = None  # why a fragment of it came after the turn had ended

    @property
    def arguments(self) -> str:
        return "".join(self.parts)

    def add(self, fragment: str | None) -> None:
        if fragment:
            self.parts.append(fragment)


def closing(calls: dict[int, WireCall], finish: str | None, diag: Diagnostics, end: str
            ) -> Iterator[StreamEvent]:
    """Checks every format shares at the finish, then the finish itself. Without a finish
    (`end` names the event that should have come) nothing is closed and nothing may run."""
    if finish is None:
        diag.note(None, None, "truncated", f"the stream ended before {end}: no call was "
                  "closed, nothing may run", "rejected")
        return
    if calls and finish == "stop":
        diag.note(None, None, "finish_stop_with_calls",
                  "finish reason 'stop' although calls were made; the calls are closed by it")
    for index, call in sorted(calls.items()):
        reason = call.late
        if reason:
            diag.note(index, call.id, "after_finish", reason, "rejected")
        elif any(REPLACEMENT in part for part in call.parts):
            reason = ("arguments contain U+FFFD: a UTF-8 character was split between chunks "
                      "and each half encoded on its own, so the arguments are corrupted")
            diag.note(index, call.id, "split_utf8", reason, "rejected")
        if reason:
            yield Reject(index, reason)
    yield Finish(finish)


def late(where: str, ended: str) -> str:
    """Why a call fragment that came after the end of the turn is never run."""
    return (f"a fragment of this call arrived after {ended} ({where}): the turn was over, "
            "so the call is never run")
