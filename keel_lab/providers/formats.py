"""The provider formats the lab reads, by name, and how each is told apart from the others.

One list of names serves the CLI's choices, the converters and detection: streams come in five
formats, conversations (histories) in three.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from keel_lab.core.errors import LabError

STREAM_FORMATS = ("openai-chat", "openai-responses", "anthropic", "ollama", "gemini")
HISTORY_FORMATS = ("openai", "anthropic", "gemini")
DONE: dict[str, Any] = {"__done__": True}  # OpenAI's `data: [DONE]` sentinel, as a record


def record_format(record: dict[str, Any]) -> str | None:
    """The stream format one payload belongs to, or None when its shape says nothing (an
    `error` payload looks alike in several formats, and is each converter's to read)."""
    kind = record.get("type")
    kind = kind if isinstance(kind, str) else ""
    if "choices" in record or record.get("object") == "chat.completion.chunk":
        return "openai-chat"
    if kind.startswith("response."):
        return "openai-responses"
    if kind.startswith(("message_", "content_block_")) or kind == "ping":
        return "anthropic"
    if "message" in record and "done" in record:
        return "ollama"
    if "candidates" in record or "usageMetadata" in record or "promptFeedback" in record:
        return "gemini"
    return None


def detect_stream(records: Iterable[dict[str, Any]], where: str = "stream") -> str:
    """The format of a stream, from the shape of its first recognisable payload."""
    for r in records:
        found = None if r is DONE else record_format(r)
        if found:
            return found
    raise LabError(f"{where}: cannot tell the format (none of {', '.join(STREAM_FORMATS)}); "
                   "pass --format")


def detect_history(messages: Sequence[dict[str, Any]]) -> str:
    """Gemini when any message has `parts`, Anthropic when any message carries tool_use or
    tool_result blocks, else OpenAI."""
    if any("parts" in m for m in messages):
        return "gemini"
    for m in messages:
        content = m.get("content")
        if isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result")
                for b in content):
            return "anthropic"
    return "openai"
