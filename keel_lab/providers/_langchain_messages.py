"""LangChain messages: `AIMessage.tool_calls` with parsed `args`, and `ToolMessage`s.

langchain-core is imported only when these functions are called (it is slow to load). A call
whose arguments do not parse goes into `invalid_tool_calls`, LangChain's own place for it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from keel_lab._core.errors import LabError
from keel_lab._core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from keel_lab._core.protocol import ToolCall, parse_arguments
from keel_lab._i18n import N_


def _core() -> Any:
    import langchain_core.messages as lc

    return lc


def to_langchain(messages: Iterable[Message]) -> list[Any]:
    lc = _core()
    out: list[Any] = []
    for m in messages:
        if isinstance(m, AssistantMessage):
            good, bad = [], []
            for c in m.tool_calls:
                value, error = parse_arguments(c.arguments)
                if value is None:
                    bad.append({"type": "invalid_tool_call", "id": c.id, "name": c.name,
                                "args": c.arguments, "error": str(error)})
                else:
                    good.append({"type": "tool_call", "id": c.id, "name": c.name,
                                 "args": value})
            out.append(lc.AIMessage(content=m.content, tool_calls=good,
                                    invalid_tool_calls=bad))
        elif isinstance(m, ToolMessage):
            out.append(lc.ToolMessage(content=m.content, tool_call_id=m.tool_call_id,
                                      name=m.name or None))
        elif isinstance(m, SystemMessage):
            out.append(lc.SystemMessage(content=m.content))
        else:
            out.append(lc.HumanMessage(content=m.content))
    return out


def from_langchain(messages: Sequence[Any]) -> list[Message]:
    lc = _core()
    out: list[Message] = []
    for n, m in enumerate(messages):
        text = m.content if isinstance(m.content, str) else "".join(
            p.get("text", "") if isinstance(p, dict) else str(p) for p in m.content)
        if isinstance(m, lc.AIMessage):
            calls = [ToolCall(c["id"] or "", c["name"], json.dumps(c["args"]))
                     for c in m.tool_calls]
            calls += [ToolCall(c.get("id") or "", c.get("name") or "", c.get("args") or "")
                      for c in m.invalid_tool_calls]
            out.append(AssistantMessage(text, tuple(calls)))
        elif isinstance(m, lc.ToolMessage):
            out.append(ToolMessage(m.tool_call_id, m.name or "", text))
        elif isinstance(m, lc.SystemMessage):
            out.append(SystemMessage(text))
        elif isinstance(m, lc.HumanMessage):
            out.append(UserMessage(text))
        else:
            raise LabError("unconvertible", N_("messages[{n}]: cannot convert {type}"), n=n,
                           type=type(m).__name__)
    return out
