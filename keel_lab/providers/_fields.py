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
from typing import Any, TypeVar

from keel_lab._core.errors import LabError
from keel_lab._i18n import N_

T = TypeVar("T")


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


def json_preview(value: Any, limit: int = 300) -> str:
    """A value from the file as JSON, for messages that quote a server's own words (its error),
    cut after `limit` characters."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "..."


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

    def _typed(self, key: str, kind: type[T], expected: str,
               ok: Callable[[T], bool] = lambda _: True) -> T | None:
        """`value[key]` when absent, null or an `ok` `kind`; else the coded error saying what
        was `expected`."""
        value = self.value.get(key)
        if value is None or (isinstance(value, kind) and ok(value)):
            return value
        raise self._wrong(key, expected)

    def text(self, key: str) -> str | None:
        return self._typed(key, str, "a string")

    def flag(self, key: str) -> bool | None:
        return self._typed(key, bool, "true or false")

    def index(self, key: str) -> int | None:
        """A whole number 0..MAX_INDEX (bools and floats are not)."""
        return self._typed(key, int, f"a whole number 0..{MAX_INDEX}",
                           lambda v: not isinstance(v, bool) and 0 <= v <= MAX_INDEX)

    def required_index(self, key: str) -> int:
        value = self.index(key)
        if value is None:
            raise LabError("missing_field", N_("{where}: field {field} is missing (a whole number "
                                               "0..{max} is expected)"),
                           where=self.where, field=repr(self._at(key)), max=MAX_INDEX)
        return value

    def obj(self, key: str) -> Fields:
        return Fields(self._typed(key, dict, "an object") or {}, self.where, self, key)

    def objs(self, key: str) -> list[Fields]:
        """A list of objects (absent or null: none)."""
        value = self._typed(key, list, "a list of objects") or []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise LabError("wrong_type", N_(
                    "{where}: field {field} must be an object, got {got}"), where=self.where,
                    field=f"{self._at(key)}[{i}]", got=json_type(item))
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


def wrong(where: str, value: Any, code: str, template: str, /, **params: Any) -> LabError:
    """The coded error of a check on `value` at `where`: its template may name the value as
    `{type}` (its type) or `{got}` (`shown`), the one shape of the converters' many checks."""
    named = {"type": type(value).__name__, "got": shown(value)}
    return LabError(code, template, where=where, **{
        k: v for k, v in named.items() if f"{{{k}}}" in template} | params)


def need(value: Any, kind: type | tuple[type, ...], where: str, code: str, template: str, /,
         **params: Any) -> Any:
    """`value` when it is a `kind`, else `wrong(...)` raised."""
    if isinstance(value, kind):
        return value
    raise wrong(where, value, code, template, **params)


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
        raise wrong(where, got, "wrong_type", N_("{where}.{field}: a {type} {of} needs a string, "
                                                 "got {got}") if empty else
                    N_("{where}.{field}: a {type} {of} needs a non-empty string, got {got}"),
                    field=field, type=value["type"], of=of)


def parts_text(content: Any, where: str, expected: str, part: Callable[[Any, str], str],
               null: bool = True) -> str:
    """The text of a message's content: a string, null (when `null`) or a list of content parts,
    each checked and read by `part` (at `where[k]`)."""
    if isinstance(content, str) or (content is None and null):
        return content or ""
    need(content, list, where, "wrong_type", N_("{where}: expected {expected}, got {type}"),
         expected=expected)
    return "".join(part(p, f"{where}[{k}]") for k, p in enumerate(content))
