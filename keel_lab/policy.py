"""Partial success, decided before production decides it for you.

A business error is a fact the model can explain, so it goes back and the run may complete; an
approval pauses the run because a side effect must not run ahead of a person; a broken tool or
an unknown one fails the run, because the model cannot repair it.
"""

from __future__ import annotations

from collections.abc import Iterable

FATAL_CODES = frozenset({"unknown_tool", "tool_internal_error", "invalid_tool_output"})
PAUSE_CODE = "approval_required"

COMPLETED, WAITING, FAILED, CANCELLED = "completed", "waiting_for_approval", "failed", "cancelled"


def run_status(codes: Iterable[str | None]) -> str:
    """The run's status after a step whose outcomes have these codes (None = success).

    A fatal code outranks a pause: nothing waits for a person on a run that cannot go on.
    """
    seen = set(codes)
    if seen & FATAL_CODES:
        return FAILED
    if PAUSE_CODE in seen:
        return WAITING
    return COMPLETED


def is_business_error(code: str | None) -> bool:
    """An error the model receives as a fact and can explain (`incident_not_found`, ...)."""
    return code is not None and code not in FATAL_CODES and code != PAUSE_CODE
