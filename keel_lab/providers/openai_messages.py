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
from keel_lab.providers.fields import parts_text, shown
from keel_lab.providers.formats import ANTHROPIC_BLOCKS, RESPONSES_ITEMS, RESPONSES_PARTS


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
    """Parse Chat Completions message dicts; a malformed one raises `LabError` naming the
    message, the field and what was expected. Anthropic's blocks are refused, not skipped."""
    out: list[Message] = []
    for i, d in enumerate(dicts):
        where = f"messages[{i}]"
        if not isinstance(d, Mapping):
            raise LabError(f"{where}: expected an object (a message), got {type(d).__name__}")
        role = d.get("role")
        content = parts_text(d.get("content"), f"{where}.content",
                             "a string, a list of parts or null", _part)
        if role in ("system", "developer"):
            out.append(SystemMessage(content))
        elif role == "user":
            out.append(UserMessage(content))
        elif role == "assistant":
            calls = d.get("tool_calls")
            if calls is not None and not isinstance(calls, list):
                raise LabError(f"{where}.tool_calls: expected a list of calls, got "
                               f"{type(calls).__name__}")
            out.append(AssistantMessage(content, tuple(
                _call(c, f"{where}.tool_calls[{j}]") for j, c in enumerate(calls or []))))
        elif role == "tool":
            call_id = d.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise LabError(f"{where}: a tool message needs a non-empty string "
                               f"'tool_call_id', got {shown(call_id)}")
            name = d.get("name")
            if name is not None and not isinstance(name, str):
                raise LabError(f"{where}.name: expected a string, got {type(name).__name__}")
            out.append(ToolMessage(call_id, name or "", content))
        elif d.get("type") in RESPONSES_ITEMS:
            raise LabError(f"{where}: a {shown(d['type'])} item is the Responses API's, not a "
                           "Chat Completions message (validate it as --format openai-responses)")
        else:
            raise LabError(f"{where}: unknown role {shown(role)} (expected one of system, "
                           "developer, user, assistant, tool)")
    return out


PART_TYPES = ("text", "image_url", "input_audio", "file", "refusal")  # Chat Completions parts


def _part(p: Any, here: str) -> str:
    """One content part checked, and its text ("" for a part that is not text)."""
    kind = p.get("type") if isinstance(p, Mapping) else None
    if kind in ANTHROPIC_BLOCKS:
        raise LabError(f"{here}: {_a(kind)} block is Anthropic's format, not OpenAI chat "
                       "(validate it as --format anthropic; a history cannot mix both)")
    if kind in RESPONSES_PARTS:
        raise LabError(f"{here}: {_a(kind)} part is the Responses API's, not OpenAI chat "
                       "(validate it as --format openai-responses)")
    if kind not in PART_TYPES:
        raise LabError(f"{here}: expected a content part with 'type' one of "
                       f"{', '.join(PART_TYPES)}, got {shown(kind)}")
    if kind == "text" and not isinstance(p.get("text"), str):
        raise LabError(f"{here}.text: expected a string, got {type(p.get('text')).__name__}")
    return p["text"] if kind == "text" else ""


def _a(kind: str) -> str:
    return f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind!r}"


def _call(c: Any, where: str) -> ToolCall:
    if not isinstance(c, Mapping):
        raise LabError(f"{where}: expected a tool call object, got {type(c).__name__}")
    if c.get("type", "function") != "function":
        raise LabError(f"{where}.type: expected 'function', got {shown(c.get('type'))}")
    fn = c.get("function")
    if not isinstance(fn, Mapping):
        raise LabError(f"{where}.function: a tool call needs a 'function' object")
    call_id, name, args = c.get("id"), fn.get("name"), fn.get("arguments")
    if not isinstance(call_id, str) or not call_id:
        raise LabError(f"{where}: the tool call has no 'id' (expected a non-empty string, "
                       f"got {shown(call_id)})")
    if not isinstance(name, str) or not name:
        raise LabError(f"{where} (id {call_id}): the tool call has no function name "
                       f"('function.name' must be a non-empty string, got {shown(name)})")
    if not isinstance(args, str):
        raise LabError(f"{where} (id {call_id}): 'function.arguments' must be a JSON string, "
                       f"got {type(args).__name__}")
    return ToolCall(call_id, name, args)
