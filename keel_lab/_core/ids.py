"""Stable call ids: `run-<12 hex>:step-<n>:call-<i>`, seeded so experiments replay exactly."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RunIds:
    run_id: str

    @classmethod
    def seeded(cls, seed: int) -> RunIds:
        return cls(f"run-{random.Random(seed).getrandbits(48):012x}")

    def call_id(self, step: int, index: int) -> str:
        return f"{self.run_id}:step-{step}:call-{index}"


def short_call_id(call_id: str) -> str:
    """`call-<i>`, the part of a call id a table or plot has room for."""
    return call_id.rsplit(":", 1)[-1]
