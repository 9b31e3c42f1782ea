"""A model adapter on the official `openai` SDK: any OpenAI-compatible server (OpenAI, Ollama's
/v1, vLLM, llama.cpp server, or the lab's replay server).

Streaming goes through the same converter and assembler as recorded streams, so every quirk rule
applies to live traffic too; `diagnostics` keeps what the converter noticed in each streamed
turn, as an assembler hears it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from keel_lab._core.messages import AssistantMessage, Message
from keel_lab._core.model import Turn
from keel_lab._core.streaming import Notice, StreamAssembler, StreamEvent
from keel_lab._core.tools import Toolset
from keel_lab.providers._diagnosis import to_events
from keel_lab.providers._openai_messages import from_openai, to_openai


def _sdk() -> Any:
    """The `openai` package, imported only when an adapter is built (it takes a second)."""
    import openai

    return openai


class OpenAIChatAdapter:
    def __init__(self, model: str, base_url: str, api_key: str = "keel-lab",
                 timeout: float = 30.0, client: Any = None) -> None:
        self.model = model
        self.client = client or _sdk().OpenAI(base_url=base_url, api_key=api_key,
                                              timeout=timeout, max_retries=0)
        self.diagnostics: list[list[Notice]] = []  # one list per streamed turn

    def _request(self, messages: Sequence[Message], tools: Toolset) -> dict[str, Any]:
        return {"model": self.model, "messages": to_openai(messages)} | (
            {"tools": tools.schemas()} if tools.tools else {})

    def complete(self, messages: Sequence[Message], tools: Toolset, turn: Turn
                 ) -> AssistantMessage:
        response = self.client.chat.completions.create(**self._request(messages, tools))
        [message] = from_openai([response.choices[0].message.to_dict()])
        assert isinstance(message, AssistantMessage)
        return message

    def stream(self, messages: Sequence[Message], tools: Toolset, turn: Turn
               ) -> Iterator[StreamEvent]:
        heard = StreamAssembler()
        self.diagnostics.append(heard.notices)
        chunks = self.client.chat.completions.create(stream=True,
                                                     **self._request(messages, tools))
        try:
            for event in to_events((chunk.to_dict() for chunk in chunks), "openai-chat"):
                heard.feed(event)
                yield event
        finally:
            chunks.close()
