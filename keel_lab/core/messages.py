"""The messages of a conversation: one assistant message may carry N tool calls, and each
call gets exactly one tool message, matched by `tool_call_id`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from keel_lab.core.protocol import ToolCall


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
MESSAGE_TYPES = (SystemMessage, UserMessage, AssistantMessage, ToolMessage)  # for isinstance


def system_apart(messages: Iterable[Message]) -> tuple[list[str], list[Message]]:
    """The system texts and the rest of the conversation: Anthropic and Gemini take the system
    prompt apart from the messages."""
    system: list[str] = []
    rest: list[Message] = []
    for m in messages:
        if isinstance(m, SystemMessage):
            system.append(m.content)
        else:
            rest.append(m)
    return system, rest
