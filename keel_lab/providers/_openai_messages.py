"""OpenAI Chat Completions messages: the lab's messages to and from the dicts the SDK sends."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import NoneType
from typing import Any

from keel_lab._core.errors import LabError
from keel_lab._core.history import HistoryProblem
from keel_lab._core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from keel_lab._core.protocol import ToolCall
from keel_lab._i18n import N_
from keel_lab.providers._fields import need, parts_text, wrong
from keel_lab.providers._formats import ANTHROPIC_BLOCKS, RESPONSES_ITEMS, RESPONSES_PARTS


def to_openai(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Chat Completions message dicts, as the `openai` SDK sends them."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, AssistantMessage):
            calls = [{"id": c.id, "type": "function",
                      "function": {"name": c.name, "arguments": c.arguments}}
                     for c in m.tool_calls]
            out.append({"role": "assistant", "content": m.content or None}
                       | ({"tool_calls": calls} if calls else {}))
        elif isinstance(m, ToolMessage):
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "name": m.name,
                        "content": m.content})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


# OpenAI's 400 (`code: empty_array`) for an assistant message whose `tool_calls` is `[]`, as
# quoted in home-assistant/core#118577 and openai/openai-node#1341: omit the field instead.
EMPTY_CALLS = ("Invalid 'messages[{n}].tool_calls': empty array. Expected an array with minimum "
               "length 1, but got an empty array instead.")


def empty_tool_calls(dicts: Iterable[Mapping[str, Any]]) -> list[HistoryProblem]:
    """Each message whose `tool_calls` is an empty list, which the API refuses (an assistant
    message without calls leaves the field out)."""
    return [HistoryProblem("empty_tool_calls", EMPTY_CALLS.format(n=n), (), n,
                           EMPTY_CALLS.format(n=n))
            for n, d in enumerate(dicts) if d.get("tool_calls") == []]


def from_openai(dicts: Iterable[Mapping[str, Any]]) -> list[Message]:
    """Parse Chat Completions message dicts; a malformed one raises `LabError` naming the
    message, the field and what was expected. Anthropic's blocks are refused, not skipped."""
    out: list[Message] = []
    for i, d in enumerate(dicts):
        where = f"messages[{i}]"
        need(d, Mapping, where, "not_a_message", N_("{where}: expected an object (a message), "
                                                    "got {type}"))
        role = d.get("role")
        content = parts_text(d.get("content"), f"{where}.content",
                             "a string, a list of parts or null", _part)
        if role in ("system", "developer"):
            out.append(SystemMessage(content))
        elif role == "user":
            out.append(UserMessage(content))
        elif role == "assistant":
            calls = need(d.get("tool_calls"), (list, NoneType), where, "wrong_type", N_(
                "{where}.tool_calls: expected a list of calls, got {type}"))
            out.append(AssistantMessage(content, tuple(
                _call(c, f"{where}.tool_calls[{j}]") for j, c in enumerate(calls or []))))
        elif role == "tool":
            call_id = d.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise wrong(where, call_id, "no_call_id", N_(
                    "{where}: a tool message needs a non-empty string 'tool_call_id', got {got}"))
            name = need(d.get("name"), (str, NoneType), where, "wrong_type", N_(
                "{where}.name: expected a string, got {type}"))
            out.append(ToolMessage(call_id, name or "", content))
        elif d.get("type") in RESPONSES_ITEMS:
            raise wrong(where, d["type"], "foreign_item", N_(
                "{where}: a {got} item is the Responses API's, not a Chat Completions message "
                "(validate it as --format openai-responses)"))
        else:
            raise wrong(where, role, "bad_role", N_("{where}: unknown role {got} (expected one of "
                                                    "system, developer, user, assistant, tool)"))
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
        raise wrong(here, kind, "bad_part", N_("{where}: expected a content part with 'type' "
                                               "one of {types}, got {got}"),
                    types=", ".join(PART_TYPES))
    if kind == "text":
        need(p.get("text"), str, here, "wrong_type", N_("{where}.text: expected a string, got "
                                                        "{type}"))
    return p["text"] if kind == "text" else ""


def _a(kind: str) -> str:
    return f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind!r}"


def _call(c: Any, where: str) -> ToolCall:
    need(c, Mapping, where, "not_a_call", N_("{where}: expected a tool call object, got {type}"))
    if c.get("type", "function") != "function":
        raise wrong(where, c.get("type"), "wrong_type", N_("{where}.type: expected 'function', "
                                                           "got {got}"))
    fn = need(c.get("function"), Mapping, where, "no_function", N_(
        "{where}.function: a tool call needs a 'function' object"))
    call_id, name = c.get("id"), fn.get("name")
    if not isinstance(call_id, str) or not call_id:
        raise wrong(where, call_id, "no_id", N_(
            "{where}: the tool call has no 'id' (expected a non-empty string, got {got})"))
    if not isinstance(name, str) or not name:
        raise wrong(where, name, "no_name", N_("{where} (id {id}): the tool call has no function "
                                               "name ('function.name' must be a non-empty "
                                               "string, got {got})"), id=call_id)
    return ToolCall(call_id, name, need(fn.get("arguments"), str, where, "wrong_type", N_(
        "{where} (id {id}): 'function.arguments' must be a JSON string, got {type}"), id=call_id))
