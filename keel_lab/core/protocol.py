"""A tool call in its two shapes, and the problems that make a turn's calls unusable.

A call has a *protocol form* (`ToolCall`: id, name, raw argument text) that goes back into the
history exactly as the model sent it, and an *execution form* (`ToolRequest`: parsed input or a
parse error) that the executor runs. Keeping both avoids re-serialising arguments the model wrote.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call as it stands in the assistant message: arguments are the raw JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolRequest:
    """A call as the executor sees it: `input` when the arguments parsed, else `parse_error`."""

    call_id: str
    name: str
    raw_arguments: str
    input: dict[str, Any] | None = None
    parse_error: str | None = None

    @classmethod
    def from_call(cls, call: ToolCall) -> ToolRequest:
        value, error = parse_arguments(call.arguments)
        return cls(call.id, call.name, call.arguments, value, error)


@dataclass(frozen=True, slots=True)
class CallProblem:
    """Why a call makes its whole turn unusable; `index` is the call's stream index, or its
    position in the assistant message when it was not streamed."""

    index: int
    kind: str  # "unusable_call" (no id or no name) | "duplicate_id" | "id_changed" (streamed)
    message: str


def call_problems(calls: Sequence[ToolCall], labels: Sequence[str] | None = None
                  ) -> list[CallProblem]:
    """Problems that make a whole turn unusable: a call with no id or no name, an id used twice.

    `labels` name the calls in messages (e.g. "call at index 1"); by default their position.
    """
    problems: list[CallProblem] = []
    seen: dict[str, str] = {}
    for n, c in enumerate(calls):
        label = labels[n] if labels else f"tool_calls[{n}]"
        named = label + (f" (id {c.id})" if c.id else "")
        if not c.id:
            problems.append(CallProblem(n, "unusable_call", f"{named} has no id"))
        elif c.id in seen:
            problems.append(CallProblem(n, "duplicate_id",
                                        f"{named} reuses the id of {seen[c.id]}"))
        else:
            seen[c.id] = label
        if not c.name:
            problems.append(CallProblem(n, "unusable_call", f"{named} has no name"))
    return problems


def parse_arguments(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """Parse argument text as JSON only (never evaluated); it must be an object.

    Empty text means "no arguments": some providers send nothing for a parameterless call.
    Valid JSON that Python cannot hold safely is refused with its reason, never raised: an
    integer past Python's digit limit, nesting past the recursion limit, and `NaN`, `Infinity`
    or a number that overflows to it (Python's extensions; RFC 8259 JSON has no such numbers).
    The lab's policy, as for recorded payloads: a duplicate key is refused (JSON parsers
    disagree on which value wins, so the tool might run with the other one), and so is a lone
    surrogate escape such as `\\ud800` (it is not Unicode text).
    """
    if text.strip() == "":
        return {}, None
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant,
                           parse_float=_finite_float, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        return None, f"arguments are not valid JSON: {exc.msg} (char {exc.pos})"
    except RecursionError:
        return None, "arguments are nested too deeply to parse"
    except ValueError as exc:  # one of the hooks below
        return None, f"arguments cannot be read: {exc}"
    if not isinstance(value, dict):
        return None, f"arguments must be a JSON object, got {type(value).__name__}"
    if _MAYBE_SURROGATE.search(text) and _has_lone_surrogate(value):
        return None, ("arguments cannot be read: a string holds a lone surrogate "
                      "(\\ud800-\\udfff without its pair), which is not Unicode text")
    return value, None


_MAYBE_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]")


def repeated_key(pairs: list[tuple[str, Any]]) -> str | None:
    """The first key an object's pairs name twice (JSON allows it; parsers then disagree on
    which value wins), or None. Shared by every strict reader in the lab."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return key
        seen.add(key)
    return None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    key = repeated_key(pairs)
    if key is not None:
        raise ValueError(f"the key {key!r} appears twice in one object: JSON parsers "
                         "disagree on which value wins, so the call is refused")
    return dict(pairs)


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and not item.isascii():
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
    return False


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _bounded_int(text: str) -> int:
    digits, limit = len(text.lstrip("-")), sys.get_int_max_str_digits()  # 0: no limit
    if limit and digits > limit:
        raise ValueError(f"an integer of {digits} digits is past Python's limit of {limit}")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:20]}{'...' if len(text) > 20 else ''} "
                         "is too large for a float")
    return value
