"""Partial success, decided before production decides it for you.

A business error is a fact the model can explain, so it goes back and the run may complete; an
approval pauses the run because a side effect must not run ahead of a person; a broken tool or
an unknown one fails the run, because the model cannot repair it. A person's "no"
(`approval_denied`) is a fact like a business error: the model is told, the run goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Protocol, TypeVar


class Code(StrEnum):
    """The error codes the lab itself gives an outcome; tools add business codes of their own
    (`incident_not_found`, ...), which are plain strings."""

    INVALID_ARGUMENTS = "invalid_arguments"
    UNKNOWN_TOOL = "unknown_tool"
    TOOL_INTERNAL_ERROR = "tool_internal_error"
    INVALID_TOOL_OUTPUT = "invalid_tool_output"
    TOOL_TIMEOUT = "tool_timeout"
    APPROVAL_REQUIRED = "approval_required"
    APPROVAL_DENIED = "approval_denied"


class Status(StrEnum):
    COMPLETED = "completed"
    WAITING = "waiting_for_approval"
    FAILED = "failed"
    CANCELLED = "cancelled"


FATAL_CODES = frozenset({Code.UNKNOWN_TOOL, Code.TOOL_INTERNAL_ERROR, Code.INVALID_TOOL_OUTPUT})
PAUSE_CODE = Code.APPROVAL_REQUIRED


class Coded(Protocol):
    @property
    def code(self) -> str | None: ...

StatusRule = Callable[[list[str | None]], str]  # a turn's outcome codes -> the run's status


def run_status(codes: Iterable[str | None]) -> Status:
    """The run's status after a turn whose outcomes have these codes (None = success); a fatal
    code outranks a pause: nothing waits for a person on a run that cannot go on."""
    seen = set(codes)
    if seen & FATAL_CODES:
        return Status.FAILED
    if PAUSE_CODE in seen:
        return Status.WAITING
    return Status.COMPLETED


def is_business_error(code: str | None) -> bool:
    """An error the model receives as a fact and can explain: the run completes, marked partial."""
    return code is not None and code not in FATAL_CODES and code != PAUSE_CODE


T = TypeVar("T", bound=Coded)


def failure_cause(outcomes: Iterable[T]) -> T | None:
    """The outcome that explains a failed run: the first fatal one, else the first error."""
    errors = [o for o in outcomes if o.code]
    return next((o for o in errors if o.code in FATAL_CODES), errors[0] if errors else None)
