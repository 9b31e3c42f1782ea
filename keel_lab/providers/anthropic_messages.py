"""Anthropic Messages form of a conversation, and the pairing rules Anthropic enforces.

Calls are `tool_use` blocks in an assistant message; their results are `tool_result` blocks,
all of them in the *next* user message. The error texts are the ones Anthropic's API returns.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.core.history import HistoryProblem
from keel_lab.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from keel_lab.core.protocol import ToolCall, parse_arguments

MISSING = ("messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately "
           "after: {ids}. Each `tool_use` block must have a corresponding `tool_result` block "
           "in the next message.")
ORPHAN = ("messages.{n}.content.{k}: unexpected `tool_use_id` found in `tool_result` blocks: "
          "{id}. Each `tool_result` block must have a corresponding `tool_use` block in the "
          "previous message.")
DUPLICATE = "messages.{n}.content.{k}: `tool_use` ids must be unique"


def to_anthropic(messages: Iterable[Message]) -> dict[str, Any]:
    """A Messages API request body (`system` and `messages`); consecutive tool results are
    gathered into one user message, as Anthropic requires."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, SystemMessage):
            system.append(m.content)
        elif isinstance(m, AssistantMessage):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content \
                else []
            for c in m.tool_calls:
                value, error = parse_arguments(c.arguments)
                if value is None:
                    raise LabError(f"call {c.id}: Anthropic needs `input` as a JSON object; "
                                   f"{error}")
                blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": value})
            out.append({"role": "assistant", "content": blocks})
        elif isinstance(m, ToolMessage):
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list) \
                    and all(b.get("type") == "tool_result" for b in out[-1]["content"]):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        else:
            out.append({"role": "user", "content": m.content})
    body: dict[str, Any] = {"messages": out}
    if system:
        body["system"] = "\n\n".join(system)
    return body


def from_anthropic(messages: Sequence[Mapping[str, Any]], system: str | None = None
                   ) -> list[Message]:
    """Lab messages from Anthropic messages; each `tool_result` block becomes a tool message."""
    out: list[Message] = [SystemMessage(system)] if system else []
    names: dict[str, str] = {}
    for n, m in enumerate(messages):
        role, content = m.get("role") if isinstance(m, Mapping) else None, _blocks(m, n)
        if role == "assistant":
            calls = []
            for k, b in enumerate(content):
                if b.get("type") == "tool_use":
                    if not b.get("id") or not b.get("name"):
                        raise LabError(f"messages.{n}.content.{k}: a tool_use block needs an "
                                       "id and a name")
                    names[b["id"]] = b["name"]
                    calls.append(ToolCall(b["id"], b["name"], json.dumps(b.get("input", {}))))
            text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
            out.append(AssistantMessage(text, tuple(calls)))
        elif role == "user":
            for b in content:
                if b.get("type") == "tool_result":
                    out.append(ToolMessage(str(b.get("tool_use_id", "")),
                                           names.get(b.get("tool_use_id", ""), ""),
                                           _result_text(b.get("content"))))
            text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
            if text:
                out.append(UserMessage(text))
        else:
            raise LabError(f"messages.{n}: role must be 'user' or 'assistant', got {role!r}")
    return out


def _blocks(m: Any, n: int) -> list[dict[str, Any]]:
    if not isinstance(m, Mapping):
        raise LabError(f"messages.{n}: expected an object")
    content = m.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list) and all(isinstance(b, Mapping) for b in content):
        return [dict(b) for b in content]
    raise LabError(f"messages.{n}: 'content' must be a string or a list of blocks")


def _result_text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, Mapping))
    return "" if content is None else str(content)


def validate_anthropic(messages: Sequence[Mapping[str, Any]]) -> list[HistoryProblem]:
    """Every pairing problem Anthropic reports for these messages, with its wording."""
    problems: list[HistoryProblem] = []
    seen: set[str] = set()
    for n, m in enumerate(messages):
        content = _blocks(m, n)
        if m.get("role") == "assistant":
            uses = []
            for k, b in enumerate(content):
                if b.get("type") != "tool_use":
                    continue
                if b.get("id") in seen:
                    problems.append(HistoryProblem("duplicate_id", DUPLICATE.format(n=n, k=k),
                                                   (str(b.get("id")),), n))
                seen.add(str(b.get("id")))
                uses.append(str(b.get("id")))
            nxt = _blocks(messages[n + 1], n + 1) if n + 1 < len(messages) \
                and messages[n + 1].get("role") == "user" else []
            answered = {b.get("tool_use_id") for b in nxt if b.get("type") == "tool_result"}
            missing = [u for u in uses if u not in answered]
            if missing:
                problems.append(HistoryProblem("missing_results", MISSING.format(
                    n=n, ids=", ".join(missing)), tuple(missing), n))
        elif m.get("role") == "user":
            prev = messages[n - 1] if n > 0 else {}
            uses_before = {b.get("id") for b in _blocks(prev, n - 1)
                           if b.get("type") == "tool_use"} \
                if prev.get("role") == "assistant" else set()
            for k, b in enumerate(content):
                if b.get("type") == "tool_result" and b.get("tool_use_id") not in uses_before:
                    problems.append(HistoryProblem("orphan_result", ORPHAN.format(
                        n=n, k=k, id=b.get("tool_use_id")), (str(b.get("tool_use_id")),), n))
    return problems
