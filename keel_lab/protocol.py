"""Protocol objects: one tool call in its two shapes, and the messages of a conversation.

A call has a *protocol form* (`ToolCall`: id, name, raw argument text) that goes back into the
history exactly as the model sent it, and an *execution form* (`ToolRequest`: parsed input or a
parse error) that the executor runs. Keeping both avoids re-serialising arguments the model wrote.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import LabError


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


def call_problems(calls: Sequence[ToolCall], labels: Sequence[str] | None = None) -> list[str]:
    """Problems that make a whole turn unusable: a call with no id or no name, an id used twice.

    `labels` name the calls in messages (e.g. "call at index 1"); by default their position.
    """
    problems: list[str] = []
    seen: dict[str, str] = {}
    for n, c in enumerate(calls):
        label = labels[n] if labels else f"tool_calls[{n}]"
        label += f" (id {c.id})" if c.id else ""
        if not c.id:
            problems.append(f"{label} has no id")
        elif c.id in seen:
            problems.append(f"{label} reuses the id of {seen[c.id]}")
        else:
            seen[c.id] = label.split(" (")[0]
        if not c.name:
            problems.append(f"{label} has no name")
    return problems


def parse_arguments(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """Parse argument text as JSON only (never evaluated); it must be an object.

    Empty text means "no arguments": some providers send nothing for a parameterless call.
    """
    if text.strip() == "":
        return {}, None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"arguments are not valid JSON ({exc.msg} at char {exc.pos})"
    if not isinstance(value, dict):
        return None, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


@dataclass(frozen=True, slots=True)
class SystemMessage:
    content: str
    role: str = "system"


@dataclass(frozen=True, slots=True)
class UserMessage:
    content: str
    role: str = "user"


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    role: str = "assistant"


@dataclass(frozen=True, slots=True)
class ToolMessage:
    tool_call_id: str
    name: str
    content: str
    role: str = "tool"


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage


def to_openai(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Chat Completions message dicts, as the `openai` SDK sends them."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, AssistantMessage):
            d: dict[str, Any] = {"role": "assistant", "content": m.content or None}
            if m.tool_calls:
                d["tool_calls"] = [
                    {"id": c.id, "type": "function",
                     "function": {"name": c.name, "arguments": c.arguments}}
                    for c in m.tool_calls
                ]
            out.append(d)
        elif isinstance(m, ToolMessage):
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "name": m.name,
                        "content": m.content})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def from_openai(dicts: Iterable[Mapping[str, Any]]) -> list[Message]:
    """Parse Chat Completions message dicts; a malformed one raises `LabError` naming it."""
    out: list[Message] = []
    for i, d in enumerate(dicts):
        where = f"messages[{i}]"
        if not isinstance(d, Mapping):
            raise LabError(f"{where}: expected an object, got {type(d).__name__}")
        role = d.get("role")
        content = _text(d.get("content"), where)
        if role in ("system", "developer"):
            out.append(SystemMessage(content))
        elif role == "user":
            out.append(UserMessage(content))
        elif role == "assistant":
            calls = tuple(_call(c, f"{where}.tool_calls[{j}]")
                          for j, c in enumerate(d.get("tool_calls") or []))
            out.append(AssistantMessage(content, calls))
        elif role == "tool":
            call_id = d.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise LabError(f"{where}: a tool message needs a non-empty 'tool_call_id'")
            out.append(ToolMessage(call_id, str(d.get("name") or ""), content))
        else:
            raise LabError(f"{where}: unknown role {role!r}")
    return out


def _text(content: Any, where: str) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):  # content parts: keep the text ones
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    raise LabError(f"{where}: 'content' must be a string, a list of parts or null")


def _call(c: Any, where: str) -> ToolCall:
    fn = c.get("function") if isinstance(c, Mapping) else None
    if not isinstance(fn, Mapping):
        raise LabError(f"{where}: a tool call needs a 'function' object")
    call_id, name, args = c.get("id"), fn.get("name"), fn.get("arguments")
    if not isinstance(call_id, str) or not call_id:
        raise LabError(f"{where}: the tool call has no 'id'")
    if not isinstance(name, str) or not name:
        raise LabError(f"{where} (id {call_id}): the tool call has no function name")
    if not isinstance(args, str):
        raise LabError(f"{where} (id {call_id}): 'function.arguments' must be a JSON string")
    return ToolCall(call_id, name, args)
