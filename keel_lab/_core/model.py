"""What the runner needs of a model, and the simplest model: one that replays scripted turns.

A *turn* is one model response and the tool calls it asks for; turns are numbered from 0 within
a run, and that number is the *step* written in call ids (`run-<hex>:step-<n>:call-<i>`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from keel_lab._core.errors import LabError
from keel_lab._core.ids import RunIds
from keel_lab._core.messages import AssistantMessage, Message
from keel_lab._core.streaming import StreamEvent
from keel_lab._core.tools import Toolset
from keel_lab._i18n import N_, _


@dataclass(frozen=True, slots=True)
class Turn:
    """Which turn of which run the model is asked for; it names the calls it makes."""

    ids: RunIds
    step: int

    def call_id(self, index: int) -> str:
        return self.ids.call_id(self.step, index)


class Model(Protocol):
    def complete(self, messages: Sequence[Message], tools: Toolset, turn: Turn
                 ) -> AssistantMessage: ...

    def stream(self, messages: Sequence[Message], tools: Toolset, turn: Turn
               ) -> Iterator[StreamEvent]: ...


class ScriptedAdapter:
    """Replays fixed assistant turns, one per turn of the run."""

    def __init__(self, turns: Sequence[AssistantMessage]) -> None:
        self.turns = list(turns)

    def complete(self, messages: Sequence[Message], tools: Toolset, turn: Turn) -> AssistantMessage:
        if turn.step >= len(self.turns):
            raise LabError("script_exhausted", N_("the script has {turns} turns; step {step} has "
                                                  "none"), turns=len(self.turns), step=turn.step)
        return self.turns[turn.step]

    def stream(self, messages: Sequence[Message], tools: Toolset, turn: Turn
               ) -> Iterator[StreamEvent]:
        raise NotImplementedError(_(
            "ScriptedAdapter replays whole turns; a script has no fragments to stream. "
            "Use OfflineAdapter.stream() to study streamed tool calls."))


