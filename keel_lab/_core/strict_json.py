"""The lab's one reader of untrusted JSON: a call's arguments, a recorded payload, a history, a
request body, a learner's file. Each refusal has one wording, whoever reads.

Strict means what RFC 8259 allows and every parser reads alike: no key twice in one object
(parsers disagree on which value wins, so the lab refuses rather than guess), no `NaN` or
`Infinity` (Python's extensions), no lone surrogate escape such as `\\ud800` (it is not Unicode
text), no nesting deeper than MAX_DEPTH, no number too large to hold (an integer past Python's
digit limit, a float that overflows) and no text longer than MAX_CHARS. A refusal is a
`LabError` that names where (the caller's `where`, then the path inside the value), coded by its
kind. A reader that names why a text is no JSON reads where the parser stopped (`error_place`),
never Python's words for it, which another Python may word otherwise.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Literal, NoReturn

from keel_lab._core.errors import LabError, Said
from keel_lab._core.tables import printable
from keel_lab._i18n import N_

MAX_DEPTH = 100  # a message or a payload is a handful of levels; tool inputs get the rest
MAX_CHARS = 32 * 1024 * 1024  # a call's arguments or a recorded turn are kilobytes
MAX_KEY = 40  # characters of one key a message shows
MAX_PATH = 200  # characters of a key path a message shows (its start and its end)
NOT_JSON = N_("not valid JSON")
_TWICE = N_("the key {key} appears twice in one object: JSON parsers disagree on which value wins")
_SURROGATE = {"a string": N_("a string holds a lone surrogate (\\u{code}), which is not Unicode "
                             "text"),
              "a key": N_("a key holds a lone surrogate (\\u{code}), which is not Unicode text")}


class _Refused:
    """Put in place of a value the parser met and the lab refuses; the walk adds its path."""

    def __init__(self, reason: Said) -> None:
        self.reason = reason


def read_json(text: str, where: str) -> Any:
    """The value of `text`, or a `LabError` naming `where` and the first refusal; its code says
    which: "not_json" (no JSON at all: `pos`, `line` and `column` say where), else the refusal
    of valid JSON ("duplicate_key", "lone_surrogate", "not_a_number", "number_too_large",
    "too_deep", "too_large")."""
    if len(text) > MAX_CHARS:
        raise LabError("too_large", N_("{where}: a text of {size} characters is too large (at "
                                       "most {limit})"),
                       where=where, size=len(text), limit=MAX_CHARS)
    try:
        value = json.loads(text, object_pairs_hook=_unique, parse_constant=_constant,
                           parse_float=_float, parse_int=_int)
    except json.JSONDecodeError as exc:  # the error shown is Python's, with line and column
        raise LabError("not_json", N_("{where}: not valid JSON: {error}"), where=where,
                       error=str(exc), pos=exc.pos, line=exc.lineno, column=exc.colno) from None
    except RecursionError:
        raise LabError("too_deep", N_("{where}: {reason}"), where=where, reason=_deep()) from None
    _walk(value, where)
    return value


@dataclass(frozen=True, slots=True)
class ErrorPlace:
    """Where a `json.JSONDecodeError` stands in its text, read from the text before it (which
    the parser took): inside a string (`string`: where it starts) or not, and what the text
    needed there - a value, a key, or a delimiter after a value."""

    string: int | None
    due: Literal["value", "key", "delimiter"]


# one token of JSON as Python's parser reads it (its constants too), or blanks
_TOKEN = re.compile(r'[ \t\n\r]+|[{}\[\],:]'
                    r'|"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"'
                    r"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|NaN|-?Infinity")


def error_place(text: str, pos: int, start: int = 0) -> ErrorPlace:
    """Where the decode error at `pos` of a value that begins at `start` stands: what a reader
    that names a broken shape decides by, never Python's wording of the error."""
    stack: list[str] = []
    due: Literal["value", "key", "delimiter"] = "value"
    at = start
    while at < pos:
        token = _TOKEN.match(text, at)
        if token is None or token.end() > pos:  # only a string reaches past the error
            return ErrorPlace(at if text.startswith('"', at) else None, due)
        word = token.group()
        if word in ("{", "["):
            stack.append(word)
            due = "key" if word == "{" else "value"
        elif word == ",":
            due = "key" if stack[-1:] == ["{"] else "value"
        elif word == ":":
            due = "value"
        elif not word.isspace():  # a value, or the end of one
            if word in ("}", "]"):
                stack[-1:] = []
            due = "delimiter"
        at = token.end()
    return ErrorPlace(None, due)


def unterminated(text: str, pos: int, start: int = 0) -> bool:
    """Whether the decode error at `pos` is a string the text ends inside: Python reports one at
    its opening quote, where a value or a key was due (a quote where a delimiter was due is that
    missing delimiter)."""
    place = error_place(text, pos, start)
    return place.string is None and text.startswith('"', pos) and place.due != "delimiter"


def _deep() -> Said:
    return Said("too_deep", N_("nested deeper than {depth} levels"), {"depth": MAX_DEPTH})


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any] | _Refused:
    value: dict[str, Any] = {}
    for key, item in pairs:
        if key in value:
            return _Refused(Said("duplicate_key", _TWICE, {"key": _shown(key)}))
        value[key] = item
    return value


def _constant(name: str) -> _Refused:
    return _Refused(Said("not_a_number", N_("{name} is not a JSON number"), {"name": name}))


def _float(text: str) -> float | _Refused:
    value = float(text)
    return value if math.isfinite(value) else _too_large(text)


def _int(text: str) -> int | _Refused:
    try:
        return int(text)
    except ValueError:  # past Python's digit limit (sys.get_int_max_str_digits)
        return _too_large(text)


def _too_large(number: str) -> _Refused:
    shown: str | Said = number if len(number) <= 20 else Said(
        "cut_number", N_("{start}... ({count} characters)"),
        {"start": number[:20], "count": len(number)})
    return _Refused(Said("number_too_large", N_("the number {number} is too large to hold"),
                         {"number": shown}))


def _walk(value: Any, where: str) -> None:
    """One pass without recursion over the value for what the parser let through."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, _Refused):
            _refuse(where, path, item.reason)
        if depth > MAX_DEPTH:
            _refuse(where, path, _deep())
        if isinstance(item, str):
            _text(item, "a string", where, path)
        elif isinstance(item, dict):
            for key in item:
                _text(key, "a key", where, path)
            stack.extend((child, f"{path}.{_key(key)}" if path else _key(key), depth + 1)
                         for key, child in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((item[i], f"{path}[{i}]", depth + 1) for i in reversed(range(len(item))))


def _text(text: str, what: str, where: str, path: str) -> None:
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        _refuse(where, path, Said("lone_surrogate", _SURROGATE[what],
                                  {"code": f"{ord(text[exc.start]):04x}"}))


def _refuse(where: str, path: str, reason: Said) -> NoReturn:
    """Raise the refusal, coded as its reason: the path is cut to its start and end when long."""
    if len(path) > MAX_PATH:
        path = f"{path[:MAX_PATH // 2]}...{path[-MAX_PATH // 2:]}"
    if path:
        raise LabError(reason.code, N_("{where}: {path}: {reason}"), where=where, path=path,
                       reason=reason)
    raise LabError(reason.code, N_("{where}: {reason}"), where=where, reason=reason)


def _key(key: str) -> str:
    return printable(key if len(key) <= MAX_KEY else f"{key[:MAX_KEY]}...")


def _shown(key: str) -> str:
    return repr(key[:MAX_KEY]) + ("..." if len(key) > MAX_KEY else "")
