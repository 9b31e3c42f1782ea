"""OpenAI Chat Completions messages: the lab's messages to and from the dicts the SDK sends."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from keel_lab._core.errors import LabError
from keel_lab._core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from keel_lab._core.protocol import ToolCall
from keel_lab._i18n import N_
from keel_lab.providers._fields import parts_text, shown
from keel_lab.providers._formats import ANTHROPIC_BLOCKS, RESPONSES_ITEMS, RESPONSES_PARTS


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
            raise LabError("not_a_message", N_("{where}: expected an object (a message), got "
                                               "{type}"), where=where, type=type(d).__name__)
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
                raise LabError("wrong_type", N_("{where}.tool_calls: expected a list of calls, "
                                                "got {type}"), where=where,
                               type=type(calls).__name__)
            out.append(AssistantMessage(content, tuple(
                _call(c, f"{where}.tool_calls[{j}]") for j, c in enumerate(calls or []))))
        elif role == "tool":
            call_id = d.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise LabError("no_call_id", N_("{where}: a tool message needs a non-empty "
                                                "string 'tool_call_id', got {got}"), where=where,
                               got=shown(call_id))
            name = d.get("name")
            if name is not None and not isinstance(name, str):
                raise LabError("wrong_type", N_("{where}.name: expected a string, got {type}"),
                               where=where, type=type(name).__name__)
            out.append(ToolMessage(call_id, name or "", content))
        elif d.get("type") in RESPONSES_ITEMS:
            raise LabError("foreign_item", N_("{where}: a {got} item is the Responses API's, "
                                              "not a Chat Completions message (validate it as "
                                              "--format openai-responses)"), where=where,
                           got=shown(d["type"]))
        else:
            raise LabError("bad_role", N_("{where}: unknown role {got} (expected one of system, "
                                          "developer, user, assistant, tool)"), where=where,
                           got=shown(role))
    return out


PART_TYPES = ("text", "image_url", "input_audio", "file", "refusal")  # Chat Completions parts


def _part(p: Any, here: str) -> str:
    """One content part checked, and its text ("" for a part that is not text)."""
    kind = p.get("type") if isinstance(p, Mapping) else None
    if kind in ANTHROPIC_BLOCKS:
        raise LabError("foreign_block", N_("{where}: {kind} block is Anthropic's format, not "
                                           "OpenAI chat (validate it as --format anthropic; a "
                                           "history cannot mix both)"), where=here, kind=_a(kind))
    if kind in RESPONSES_PARTS:
        raise LabError("foreign_part", N_("{where}: {kind} part is the Responses API's, not "
                                          "OpenAI chat (validate it as --format "
                                          "openai-responses)"), where=here, kind=_a(kind))
    if kind not in PART_TYPES:
        raise LabError("bad_part", N_("{where}: expected a content part with 'type' one of "
                                      "{types}, got {got}"), where=here,
                       types=", ".join(PART_TYPES), got=shown(kind))
    if kind == "text" and not isinstance(p.get("text"), str):
        raise LabError("wrong_type", N_("{where}.text: expected a string, got {type}"), where=here,
                       type=type(p.get("text")).__name__)
    return p["text"] if kind == "text" else ""


def _a(kind: str) -> str:
    return f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind!r}"


def _call(c: Any, where: str) -> ToolCall:
    if not isinstance(c, Mapping):
        raise LabError("not_a_call", N_("{where}: expected a tool call object, got {type}"),
                       where=where, type=type(c).__name__)
    if c.get("type", "function") != "function":
        raise LabError("wrong_type", N_("{where}.type: expected 'function', got {got}"),
                       where=where, got=shown(c.get("type")))
    fn = c.get("function")
    if not isinstance(fn, Mapping):
        raise LabError("no_function", N_("{where}.function: a tool call needs a 'function' "
                                         "object"), where=where)
    call_id, name, args = c.get("id"), fn.get("name"), fn.get("arguments")
    if not isinstance(call_id, str) or not call_id:
        raise LabError("no_id", N_("{where}: the tool call has no 'id' (expected a non-empty "
                                   "string, got {got})"), where=where, got=shown(call_id))
    if not isinstance(name, str) or not name:
        raise LabError("no_name", N_("{where} (id {id}): the tool call has no function name "
                                     "('function.name' must be a non-empty string, got {got})"),
                       where=where, id=call_id, got=shown(name))
    if not isinstance(args, str):
        raise LabError("wrong_type", N_("{where} (id {id}): 'function.arguments' must be a JSON "
                                        "string, got {type}"), where=where, id=call_id,
                       type=type(args).__name__)
    return ToolCall(call_id, name, args)
