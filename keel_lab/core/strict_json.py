"""The lab's one reader of untrusted JSON: a call's arguments, a recorded payload, a history, a
request body, a learner's file. Each refusal has one wording, whoever reads.

Strict means what RFC 8259 allows and every parser reads alike: no key twice in one object
(parsers disagree on which value wins, so the lab refuses rather than guess), no `NaN` or
`Infinity` (Python's extensions), no lone surrogate escape such as `\\ud800` (it is not Unicode
text), no nesting deeper than MAX_DEPTH, no number too large to hold (an integer past Python's
digit limit, a float that overflows) and no text longer than MAX_CHARS. A refusal is a
`LabError` that names where (the caller's `where`, then the path inside the value).
"""

from __future__ import annotations

import json
import math
from string import Formatter
from typing import Any, NoReturn

from keel_lab.core.errors import LabError
from keel_lab.core.tables import printable
from keel_lab.i18n import N_, _

MAX_DEPTH = 100  # a message or a payload is a handful of levels; tool inputs get the rest
MAX_CHARS = 32 * 1024 * 1024  # a call's arguments or a recorded turn are kilobytes
MAX_KEY = 40  # characters of one key a message shows
MAX_PATH = 200  # characters of a key path a message shows (its start and its end)
NOT_JSON = N_("not valid JSON")
_NOT_JSON_AT = N_("{where}: not valid JSON: {error}")  # the error is Python's json message
_DEEP = N_("nested deeper than {depth} levels")
_TWICE = N_("the key {key} appears twice in one object: JSON parsers disagree on which value "
            "wins")
_SURROGATE = {"a string": N_("a string holds a lone surrogate (\\u{code}), which is not Unicode "
                             "text"),
              "a key": N_("a key holds a lone surrogate (\\u{code}), which is not Unicode text")}


class _Refused:
    """Put in place of a value the parser met and the lab refuses; the walk adds its path."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def read_json(text: str, where: str) -> Any:
    """The value of `text`, or a `LabError` naming `where` and the first refusal."""
    if len(text) > MAX_CHARS:
        raise LabError(_("{where}: a text of {size} characters is too large (at most {limit})")
                       .format(where=where, size=len(text), limit=MAX_CHARS))
    try:
        value = json.loads(text, object_pairs_hook=_unique, parse_constant=_constant,
                           parse_float=_float, parse_int=_int)
    except json.JSONDecodeError as exc:
        raise LabError(_(_NOT_JSON_AT).format(where=where, error=exc)) from None  # line, column
    except RecursionError:
        raise LabError(_("{where}: {reason}").format(where=where, reason=_deep())) from None
    _walk(value, where)
    return value


def refusal(error: str, where: str) -> str | None:
    """Which of `read_json`'s refusals for `where` the message `error` is, in the language
    shown: "not_json" (no JSON at all), "duplicate_key" or "lone_surrogate" (valid JSON refused),
    else None. A reader that names shapes asks this, never the English words."""
    if error.startswith(_(_NOT_JSON_AT).partition("{error}")[0].format(where=where)):
        return "not_json"
    for kind, templates in (("duplicate_key", [_TWICE]),
                            ("lone_surrogate", list(_SURROGATE.values()))):
        if any(_fixed(_(t)) in error for t in templates):
            return kind
    return None


def _fixed(template: str) -> str:
    """The longest text of a template between its fields: what every message made of it says."""
    return max((literal for literal, *_rest in Formatter().parse(template)), key=len)


def _deep() -> str:
    return _(_DEEP).format(depth=MAX_DEPTH)


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any] | _Refused:
    value: dict[str, Any] = {}
    for key, item in pairs:
        if key in value:
            return _Refused(_(_TWICE).format(key=_shown(key)))
        value[key] = item
    return value


def _constant(name: str) -> _Refused:
    return _Refused(_("{name} is not a JSON number").format(name=name))


def _float(text: str) -> float | _Refused:
    value = float(text)
    return value if math.isfinite(value) else _too_large(text)


def _int(text: str) -> int | _Refused:
    try:
        return int(text)
    except ValueError:  # past Python's digit limit (sys.get_int_max_str_digits)
        return _too_large(text)


def _too_large(number: str) -> _Refused:
    shown = number if len(number) <= 20 else _("{start}... ({count} characters)").format(
        start=number[:20], count=len(number))
    return _Refused(_("the number {number} is too large to hold").format(number=shown))


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
        _refuse(where, path, _(_SURROGATE[what]).format(code=f"{ord(text[exc.start]):04x}"))


def _refuse(where: str, path: str, reason: str) -> NoReturn:
    """Raise the refusal: the path is cut to its start and end when long."""
    if len(path) > MAX_PATH:
        path = f"{path[:MAX_PATH // 2]}...{path[-MAX_PATH // 2:]}"
    raise LabError(_("{where}: {path}: {reason}").format(where=where, path=path, reason=reason)
                   if path else _("{where}: {reason}").format(where=where, reason=reason))


def _key(key: str) -> str:
    return printable(key if len(key) <= MAX_KEY else f"{key[:MAX_KEY]}...")


def _shown(key: str) -> str:
    return repr(key[:MAX_KEY]) + ("..." if len(key) > MAX_KEY else "")
