"""Run events, each tied to a call by its id (never by the tool's name)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Event:
    kind: str  # tool.requested|finished|failed|awaiting_approval, model.called
    ref: str  # the call id; for model.called, "step-<n>"
    time: float  # seconds on the loop's clock
    code: str | None = None

    def __str__(self) -> str:
        code = f"  code={self.code}" if self.code else ""
        return f"[{self.kind:<21}] {self.ref}{code}"
