"""The switches providers offer around parallel calls, as request bodies the lab builds:
OpenAI's `parallel_tool_calls: false` (at most one call per turn) and Anthropic's
`disable_parallel_tool_use: true` on `tool_choice` (at most one call with `auto`, exactly one
with `any` or `tool`). An Anthropic `tool_result` of a failed tool carries `is_error: true` and
still answers its `tool_use` id: an error is a result, not a missing one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

from keel_lab._core.messages import Message
from keel_lab._core.tools import ToolOutcome, Toolset
from keel_lab.providers._anthropic_messages import to_anthropic
from keel_lab.providers._openai_messages import to_openai


def openai_chat_request(model: str, messages: Sequence[Message], tools: Toolset, *,
                        parallel: bool = True) -> dict[str, Any]:
    """A Chat Completions request; `parallel=False` asks for at most one call per turn."""
    return {"model": model, "messages": to_openai(messages), "tools": tools.schemas()} | (
        {} if parallel else {"parallel_tool_calls": False})


def anthropic_request(model: str, messages: Sequence[Message], tools: Toolset, *,
                      parallel: bool = True, choice: Literal["auto", "any"] = "auto",
                      max_tokens: int = 1024) -> dict[str, Any]:
    """A Messages request; `parallel=False` sets `disable_parallel_tool_use` on `tool_choice`."""
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, **to_anthropic(messages),
                            "tools": [{"name": t.name, "description": t.description,
                                       "input_schema": t.parameters} for t in tools.tools.values()]}
    if not parallel or choice != "auto":
        body["tool_choice"] = {"type": choice}
        if not parallel:
            body["tool_choice"]["disable_parallel_tool_use"] = True
    return body


def anthropic_results(outcomes: Iterable[ToolOutcome]) -> dict[str, Any]:
    """The user message that answers a turn: one `tool_result` per outcome, `is_error` on
    each failed one (its content still says which code and why)."""
    return {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": o.call_id, "content": o.content}
        | ({} if o.ok else {"is_error": True}) for o in outcomes]}
