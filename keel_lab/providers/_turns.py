"""What Anthropic's and Gemini's requests share, unlike OpenAI's: the system prompt apart from the
messages, a turn's tool results in one user turn, and a call's arguments sent as an object."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from keel_lab._core.errors import LabError
from keel_lab._core.messages import Message, SystemMessage, ToolMessage
from keel_lab._core.protocol import ToolCall, parse_arguments
from keel_lab._i18n import N_

Turns = list[Message | list[ToolMessage]]  # a run of tool results is one list: one user turn

def request_turns(messages: Iterable[Message]) -> tuple[list[str], Turns]:
    """The system texts apart, and the other messages with each run of tool results gathered."""
    system: list[str] = []
    turns: Turns = []
    for m in messages:
        last = turns[-1] if turns else None
        if isinstance(m, SystemMessage):
            system.append(m.content)
        elif isinstance(m, ToolMessage) and isinstance(last, list):
            last.append(m)
        else:
            turns.append([m] if isinstance(m, ToolMessage) else m)
    return system, turns


def arguments_object(call: ToolCall, needs: str) -> dict[str, Any]:
    """The call's arguments as the JSON object the request sends, or a `LabError` (`needs`)."""
    value, error = parse_arguments(call.arguments)
    if value is None:
        raise LabError("bad_arguments", N_("call {id}: {needs} as a JSON object; {error}"),
                       id=call.id, needs=needs, error=error)
    return value
