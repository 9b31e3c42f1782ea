"""Untrusted JSON from a provider: reading a payload field by field with the type each must
have, and naming a value in an error line - short, one line, always printable.

`repr` of a hostile value can itself fail (an integer past Python's digit limit, a list nested
100,000 deep): `shown` names only scalars and everything else by its type; `preview` bounds a
repr's length and depth (for a server's error object).
"""

from __future__ import annotations

import json
import reprlib
from collections.abc import Callable, Mapping
from typing import Any

from keel_lab._core.errors import LabError
from keel_lab._i18n import N_


def shown(value: Any) -> str:
    if isinstance(value, str):
        return repr(value[:40]) + ("..." if len(value) > 40 else "")
    if value is None or isinstance(value, bool | float):
        return repr(value)
    if isinstance(value, int):
        return repr(value) if abs(value) < 10**40 else "a huge integer"
    return f"a {type(value).__name__}"


MAX_INDEX = 2**31 - 1  # indexes are keys; anything larger is no position a server sends

_JSON_TYPE = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
              int: "a number", float: "a number", type(None): "null"}


class _Preview(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:  # repr() of a 5,000-digit int raises
        return shown(x)


_PREVIEW = _Preview()
_PREVIEW.maxstring = _PREVIEW.maxother = 120


def preview(value: Any) -> str:
    """A short repr of a value from the file, for messages (bounded in length and depth)."""
    return _PREVIEW.repr(value)


def json_type(value: Any) -> str:
    return _JSON_TYPE.get(type(value), type(value).__name__)


class Fields:
    """One JSON object of a payload, read field by field: absent or null reads as None (servers
    send `"id": null` on continuation chunks), another type than the one expected raises.

    A stream is read one payload of a few bytes at a time, so a `Fields` is cheap: its place in
    the payload (`path`, for error lines) is kept as its parent, key and list position, and
    spelled out only when a message needs it."""

    __slots__ = ("_item", "_key", "_parent", "value", "where")

    def __init__(self, value: Mapping[str, Any], where: str, parent: Fields | None = None,
                 key: str = "", item: int | None = None) -> None:
        self.value = value
        self.where = where  # the event: "stream.sse, line 7"
        self._parent, self._key, self._item = parent, key, item

    @property
    def path(self) -> str:
        """This object's place in the payload: "choices[0].delta" ("" for the payload)."""
        path = self._parent._at(self._key) if self._parent is not None else self._key
        return path if self._item is None else f"{path}[{self._item}]"

    def _at(self, key: str) -> str:
        path = self.path
        return f"{path}.{key}" if path else key

    def _wrong(self, key: str, expected: str) -> LabError:
        return LabError("wrong_type", N_("{where}: field {field} must be {expected}, got {got}"),
                        where=self.where, field=repr(self._at(key)), expected=expected,
                        got=json_type(self.value[key]))

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
            raise LabError("missing_field", N_("{where}: field {field} is missing (a whole number "
                                               "0..{max} is expected)"),
                           where=self.where, field=repr(self._at(key)), max=MAX_INDEX)
        return value

    def obj(self, key: str) -> Fields:
        value = self.value.get(key)
        if value is None:
            value = {}
        elif not isinstance(value, dict):
            raise self._wrong(key, "an object")
        return Fields(value, self.where, self, key)

    def objs(self, key: str) -> list[Fields]:
        """A list of objects (absent or null: none)."""
        value = self.value.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self._wrong(key, "a list of objects")
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise LabError("wrong_type", N_("{where}: field {field} must be an object, got "
                                                "{got}"),
                               where=self.where, field=f"{self._at(key)}[{i}]",
                               got=json_type(item))
        return [Fields(item, self.where, self, key, i) for i, item in enumerate(value)]

    def arguments(self, key: str) -> str | None:
        """Argument text: a string, or a JSON object serialised once (None when absent)."""
        value = self.value.get(key)
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, dict):
            try:
                return json.dumps(value, ensure_ascii=False)
            except RecursionError:
                raise LabError("too_deep", N_("{where}: field {field} is nested too deeply to "
                                              "serialise"),
                               where=self.where, field=repr(self._at(key))) from None
        raise self._wrong(key, "a string (or an object)")


def strict_dumps(value: Any, where: str) -> str:
    """`value` as strict JSON text (no NaN), or a LabError naming `where`."""
    try:
        return json.dumps(value, allow_nan=False)
    except (ValueError, TypeError, RecursionError) as exc:
        raise LabError("not_json_value", N_("{where}: not a JSON object ({error})"), where=where,
                       error=type(exc).__name__) from None


def string_field(value: Mapping[str, Any], field: str, where: str, of: str,
                 empty: bool = False) -> None:
    """`value[field]` is a string (non-empty unless `empty`), else a `LabError` says what a
    `value["type"]` `of` ("block", "item") needs."""
    got = value.get(field)
    if not isinstance(got, str) or not (got or empty):
        raise LabError("wrong_type", N_("{where}.{field}: a {type} {of} needs a string, got "
                                        "{got}") if empty else
                       N_("{where}.{field}: a {type} {of} needs a non-empty string, got {got}"),
                       where=where, field=field, type=value["type"], of=of, got=shown(got))


def parts_text(content: Any, where: str, expected: str, part: Callable[[Any, str], str],
               null: bool = True) -> str:
    """The text of a message's content: a string, null (when `null`) or a list of content parts,
    each checked and read by `part` (at `where[k]`)."""
    if isinstance(content, str) or (content is None and null):
        return content or ""
    if not isinstance(content, list):
        raise LabError("wrong_type", N_("{where}: expected {expected}, got {type}"), where=where,
                       expected=expected, type=type(content).__name__)
    return "".join(part(p, f"{where}[{k}]") for k, p in enumerate(content))
