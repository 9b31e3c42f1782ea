"""Reading a conversation file and checking it with the rules of the provider it is meant for.

A file is untrusted: it is parsed as strict JSON (no duplicate keys, no NaN, bounded depth and
integers, no lone surrogates), and every field the pairing rules read is type-checked by the
converters, so a malformed file ends in one `LabError` line and never in "valid".
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.core.history import HistoryProblem, validate_history
from keel_lab.providers.anthropic_messages import validate_anthropic
from keel_lab.providers.fields import shown
from keel_lab.providers.formats import HISTORY_FORMATS, detect_history
from keel_lab.providers.gemini_messages import validate_gemini
from keel_lab.providers.openai_messages import from_openai
from keel_lab.providers.responses_messages import validate_responses
from keel_lab.providers.streams.records import read_file

MAX_DEPTH = 100  # a message is a handful of levels; tool inputs get the rest
MAX_KEY = 40  # characters of one key an error line shows
MAX_PATH = 200  # characters of a key path an error line shows (its start and its end)
BODY_KEYS = ("messages", "contents", "input")  # where a request body keeps its history


class _Duplicates(dict[str, Any]):
    """An object that repeated a key; `loads` reports it with its path."""

    key = ""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            dup = _Duplicates(out)
            dup.key = key
            return dup
        out[key] = value
    return out


def loads(text: str, where: str) -> Any:
    """Strict JSON: any value a provider would not accept raises `LabError` naming its path."""
    try:
        value = json.loads(text, object_pairs_hook=_pairs)
    except json.JSONDecodeError as exc:
        raise LabError(f"{where}: not JSON ({exc.msg} at line {exc.lineno}, column "
                       f"{exc.colno})") from exc
    except RecursionError as exc:
        raise LabError(f"{where}: nested deeper than {MAX_DEPTH} levels") from exc
    except ValueError as exc:  # an integer beyond Python's digit limit
        raise LabError(f"{where}: a number too long to read ({str(exc).split(';')[0]})"
                       ) from exc
    _check(value, where)
    return value


def _check(value: Any, where: str) -> None:
    """Walk the value once, without recursion, for what `json.loads` lets through."""
    stack: list[tuple[Any, str, int]] = [(value, "messages" if isinstance(value, list) else "",
                                          0)]
    while stack:
        v, path, depth = stack.pop()
        here = f"{where}: {_bounded(path)}"
        if depth > MAX_DEPTH:
            raise LabError(f"{here}: nested deeper than {MAX_DEPTH} levels")
        if isinstance(v, _Duplicates):
            raise LabError(f"{here}: the key {shown(v.key)} appears twice")
        if isinstance(v, float) and not math.isfinite(v):
            raise LabError(f"{here}: {v} is not a JSON number")
        if isinstance(v, str):
            _text(v, here)
        elif isinstance(v, dict):
            for k in v:
                _text(k, f"{here}: a key")
            stack.extend((child, f"{path}.{_key(k)}" if path else _key(k), depth + 1)
                         for k, child in reversed(v.items()))
        elif isinstance(v, list):
            stack.extend((v[i], f"{path}[{i}]", depth + 1) for i in reversed(range(len(v))))


def _key(k: str) -> str:
    return k if len(k) <= MAX_KEY else f"{k[:MAX_KEY]}..."


def _bounded(path: str) -> str:
    """A key path short enough for one error line: long keys are cut where the path is built,
    and a deep path keeps its start and its end."""
    if not path:
        return "the top level"
    if len(path) <= MAX_PATH:
        return path
    return f"{path[:MAX_PATH // 2]}...{path[-MAX_PATH // 2:]}"


def _text(s: str, here: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise LabError(f"{here}: a lone surrogate (\\u{ord(s[exc.start]):04x}) is not text"
                       ) from None


def read_conversation(path: str | Path, fmt: str = "auto") -> tuple[str, list[dict[str, Any]]]:
    """The format and the messages of a JSON file: a list of messages or a request body
    (`messages`, Gemini's `contents` or the Responses API's `input`)."""
    value = loads(read_file(path), str(path))
    messages = _history(value, path) if isinstance(value, dict) else value
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise LabError(f"{path}: expected a list of message objects, or an object with "
                       f"'messages', 'contents' or 'input' (got {_got(value)})")
    return _format(messages, fmt), messages


def _history(body: dict[str, Any], path: str | Path) -> Any:
    """The history a request body holds; a body with two of them is refused, since which one
    a reader takes would decide the verdict (the lab's policy)."""
    found = [k for k in BODY_KEYS if k in body]
    if len(found) > 1:
        raise LabError(f"{path}: ambiguous: the body has both {shown(found[0])} and "
                       f"{shown(found[1])}; keep the one the provider reads")
    return body[found[0]] if found else None


def _got(value: Any) -> str:
    if isinstance(value, dict):
        return (f"an object with keys {', '.join(shown(k) for k in list(value)[:5])}"
                if value else "an empty object")
    return shown(value)


def _format(messages: list[dict[str, Any]], fmt: str) -> str:
    if fmt == "auto":
        return detect_history(messages)
    if fmt not in HISTORY_FORMATS:
        raise LabError(f"unknown history format {fmt!r}; one of {', '.join(HISTORY_FORMATS)}")
    return fmt


def validate_conversation(messages: list[dict[str, Any]], fmt: str) -> list[HistoryProblem]:
    """The provider's pairing problems; a message the format does not allow raises `LabError`."""
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise LabError("expected a list of message objects")
    fmt = _format(messages, fmt)
    if fmt == "anthropic":
        return validate_anthropic(messages)
    if fmt == "gemini":
        return validate_gemini(messages)
    if fmt == "openai-responses":
        return validate_responses(messages)
    return validate_history(from_openai(messages))
