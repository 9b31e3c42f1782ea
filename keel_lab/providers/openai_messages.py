"""OpenAI Chat Completions messages: the lab's messages to and from the dicts the SDK sends."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from keel_lab.core.protocol import ToolCall


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
