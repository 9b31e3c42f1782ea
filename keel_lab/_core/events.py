"""Run events, each tied to a call by its id (never by the tool's name)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

EventKind = Literal["tool.requested", "tool.finished", "tool.failed", "tool.awaiting_approval",
                    "model.called"]


@dataclass(frozen=True, slots=True)
class Event:
    kind: EventKind
    ref: str  # the call id; for model.called, "step-<n>"
    time: float  # seconds on the loop's clock
    code: str | None = None

    def __str__(self) -> str:
        code = f"  code={self.code}" if self.code else ""
        return f"[{self.kind:<21}] {self.ref}{code}"
