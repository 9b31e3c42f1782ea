"""A tool call in its two shapes, and the problems that make a turn's calls unusable.

A call has a *protocol form* (`ToolCall`: id, name, raw argument text) that goes back into the
history exactly as the model sent it, and an *execution form* (`ToolRequest`: parsed input or a
parse error) that the executor runs. Keeping both avoids re-serialising arguments the model wrote.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from keel_lab._core.errors import LabError, Said
from keel_lab._core.strict_json import read_json
from keel_lab._i18n import N_


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call as it stands in the assistant message: arguments are the raw JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolRequest:
    """A call as the executor sees it: `input` when the arguments parsed, else `parse_error`."""

    call_id: str
    name: str
    raw_arguments: str
    input: dict[str, Any] | None = None
    parse_error: str | None = None

    @classmethod
    def from_call(cls, call: ToolCall) -> ToolRequest:
        value, error = parse_arguments(call.arguments)
        return cls(call.id, call.name, call.arguments, value, None if error is None else str(error))


# no id or no name | an id used twice | an id that changed in mid-stream (streamed calls)
CallProblemKind = Literal["unusable_call", "duplicate_id", "id_changed"]


@dataclass(frozen=True, slots=True)
class CallProblem:
    """Why a call makes its whole turn unusable; `index` is the call's stream index, or its
    position in the assistant message when it was not streamed. `said` is the problem coded
    (`message` its words, rendered when read)."""

    index: int
    kind: CallProblemKind
    said: Said

    @property
    def message(self) -> str:
        return str(self.said)


def call_problems(calls: Sequence[ToolCall], labels: Sequence[str | Said] | None = None
                  ) -> list[CallProblem]:
    """Problems that make a whole turn unusable: a call with no id or no name, an id used twice;
    `labels` name the calls in messages (e.g. "call at index 1"), by default their position."""
    problems: list[CallProblem] = []
    seen: dict[str, str | Said] = {}
    for n, c in enumerate(calls):
        label = labels[n] if labels else f"tool_calls[{n}]"
        named = Said("call_with_id", N_("{call} (id {id})"), {"call": label, "id": c.id}) \
            if c.id else label
        if not c.id:
            problems.append(CallProblem(n, "unusable_call", Said(
                "no_id", N_("{call} has no id"), {"call": named})))
        elif c.id in seen:
            problems.append(CallProblem(n, "duplicate_id", Said(
                "duplicate_id", N_("{call} reuses the id of {other}"),
                {"call": named, "other": seen[c.id]})))
        else:
            seen[c.id] = label
        if not c.name:
            problems.append(CallProblem(n, "unusable_call", Said(
                "no_name", N_("{call} has no name"), {"call": named})))
    return problems


def parse_arguments(text: str) -> tuple[dict[str, Any] | None, Said | None]:
    """Parse argument text as strict JSON (never evaluated); it must be an object. A refusal is
    the parse error, returned, never raised: the call is answered with it instead of run; its
    `code` (`read_json`'s, or "not_an_object") is what a reader that names shapes decides by.
    Empty text means "no arguments": some providers send nothing for a parameterless call."""
    if text.strip() == "":
        return {}, None
    try:
        value = read_json(text, "arguments")
    except LabError as exc:
        return None, exc.said
    if not isinstance(value, dict):
        return None, Said("not_an_object", N_("arguments must be a JSON object, got {type}"),
                          {"type": type(value).__name__})
    return value, None
