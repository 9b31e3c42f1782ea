"""The messages of a conversation: one assistant message may carry N tool calls, and each
call gets exactly one tool message, matched by `tool_call_id`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from keel_lab._core.protocol import ToolCall


@dataclass(frozen=True, slots=True)
class SystemMessage:
    content: str
    role: Literal["system"] = "system"


@dataclass(frozen=True, slots=True)
class UserMessage:
    content: str
    role: Literal["user"] = "user"


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    role: Literal["assistant"] = "assistant"


@dataclass(frozen=True, slots=True)
class ToolMessage:
    tool_call_id: str
    name: str
    content: str
    role: Literal["tool"] = "tool"


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage
MESSAGE_TYPES = (SystemMessage, UserMessage, AssistantMessage, ToolMessage)  # for isinstance

