"""The provider formats the lab reads, by name, and how each is told apart from the others.

One list of names serves the CLI's choices, the converters and detection: streams come in five
formats, conversations (histories) in four. A format has one name everywhere: OpenAI's Chat
Completions is `openai-chat`, its Responses API `openai-responses`; the CLI still reads the
older `openai` for `openai-chat` (`ALIASES`), with a note.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from keel_lab._core.errors import LabError, Said
from keel_lab._i18n import N_

StreamFormat = Literal["openai-chat", "openai-responses", "anthropic", "ollama", "gemini"]
HistoryFormat = Literal["openai-chat", "anthropic", "gemini", "openai-responses"]
STREAM_FORMATS: tuple[StreamFormat, ...] = get_args(StreamFormat)
HISTORY_FORMATS: tuple[HistoryFormat, ...] = get_args(HistoryFormat)
ALIASES: dict[str, str] = {"openai": "openai-chat"}  # other names the CLI reads
# the finish reasons that say the output limit cut the turn (OpenAI chat and Ollama, Anthropic
# and Gemini, the Responses API's status)
CUT_FINISHES = ("length", "max_tokens", "incomplete")
DONE: dict[str, Any] = {"__done__": True}  # OpenAI's `data: [DONE]` sentinel, as a record
# content block types only Anthropic's Messages API has (OpenAI chat's image is `image_url`,
# the Responses API's `input_image`)
ANTHROPIC_BLOCKS = ("tool_use", "tool_result", "image", "document", "thinking",
                    "redacted_thinking", "search_result", "server_tool_use")
RESPONSES_PARTS = ("input_text", "input_image", "input_file", "output_text")  # Responses only
RESPONSES_ITEMS = ("function_call", "function_call_output", "custom_tool_call",
                   "custom_tool_call_output", "message", "reasoning")


def record_format(record: dict[str, Any]) -> StreamFormat | None:
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


def article(fmt: str) -> Said:
    """The format's name with its article: "an openai-chat", "a gemini"."""
    return Said("format", N_("an {format}") if fmt[0] in "aeiou" else N_("a {format}"),
                {"format": fmt})


def detect_stream(records: Iterable[dict[str, Any]], where: str = "stream") -> StreamFormat:
    """The format of a stream, from the shape of its first recognisable payload."""
    for r in records:
        found = None if r is DONE else record_format(r)
        if found:
            return found
    raise LabError("unknown_format", N_("{where}: cannot tell the format (none of {formats}); "
                                        "pass --format"),
                   where=where, formats=", ".join(STREAM_FORMATS))


def detect_history(messages: Sequence[dict[str, Any]]) -> HistoryFormat:
    """Gemini when any message has `parts`, Anthropic when any carries a block only Anthropic has,
    the Responses API when any item is typed or has a part only it has, else OpenAI's Chat
    Completions."""
    if any("parts" in m for m in messages):
        return "gemini"
    kinds = {b.get("type") for m in messages if isinstance(m.get("content"), list)
             for b in m["content"] if isinstance(b, dict) and isinstance(b.get("type"), str)}
    if kinds & set(ANTHROPIC_BLOCKS):
        return "anthropic"
    if kinds & set(RESPONSES_PARTS) or any(m.get("type") in RESPONSES_ITEMS for m in messages):
        return "openai-responses"
    return "openai-chat"


SSE = "text/event-stream"


@dataclass(frozen=True)
class Provider:
    """What the lab knows of one provider's streaming endpoint."""

    model: str  # the default model
    url: str  # the default base URL, as its client takes it
    path: str  # the endpoint after the base URL; `{model}` is filled in
    keys: tuple[str, ...]  # environment variables that may hold its key; the first set wins
    stream_type: str = SSE  # the Content-Type its stream comes with


_OPENAI = "https://api.openai.com/v1"
PROVIDERS: dict[StreamFormat, Provider] = {
    "openai-chat": Provider("gpt-4.1-mini", _OPENAI, "/chat/completions", ("OPENAI_API_KEY",)),
    "openai-responses": Provider("gpt-4.1-mini", _OPENAI, "/responses", ("OPENAI_API_KEY",)),
    "anthropic": Provider("claude-haiku-4-5", "https://api.anthropic.com", "/v1/messages",
                          ("ANTHROPIC_API_KEY",)),
    # GOOGLE_API_KEY first when both are set, as Google's SDK reads them
    "gemini": Provider("gemini-2.5-flash", "https://generativelanguage.googleapis.com",
                       "/v1beta/models/{model}:streamGenerateContent?alt=sse",
                       ("GOOGLE_API_KEY", "GEMINI_API_KEY")),
    "ollama": Provider("qwen3:8b", "http://localhost:11434", "/api/chat", (),
                       "application/x-ndjson"),
}
