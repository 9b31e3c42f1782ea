"""Real providers' stream formats, converted into the lab's deltas and diagnosed call by call.

The assembler is the core one (`keel_lab.streaming`); each format only has a converter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import LabError
from ..protocol import parse_arguments
from ..streaming import CallState, StreamAssembler, StreamEvent
from ..tables import format_table
from . import anthropic, ollama, openai_chat, openai_responses
from .diagnostics import Diagnostic, Diagnostics
from .records import DONE, parse_records, read_file

Converter = Callable[[Iterable[dict[str, Any]], Diagnostics], Iterator[StreamEvent]]

CONVERTERS: dict[str, Converter] = {
    "openai-chat": openai_chat.convert,
    "openai-responses": openai_responses.convert,
    "anthropic": anthropic.convert,
    "ollama": ollama.convert,
}


def detect(records: Sequence[dict[str, Any]], where: str = "stream") -> str:
    """The format of a stream, from the shape of its first recognisable payload."""
    for r in records:
        if r is DONE:
            continue
        kind = str(r.get("type", ""))
        if "choices" in r or r.get("object") == "chat.completion.chunk":
            return "openai-chat"
        if kind.startswith("response."):
            return "openai-responses"
        if kind.startswith(("message_", "content_block_")) or kind == "ping":
            return "anthropic"
        if "message" in r and "done" in r:
            return "ollama"
    raise LabError(f"{where}: cannot tell the format (none of {', '.join(CONVERTERS)}); "
                   "pass --format")


@dataclass
class WireCallReport:
    index: int
    id: str | None
    name: str
    arguments: str
    input: dict[str, Any] | None
    executable: bool
    error: str | None


@dataclass
class Diagnosis:
    """What a recorded turn holds: its calls, whether each may run, and every quirk met."""

    format: str
    finish_reason: str | None
    calls: list[WireCallReport]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    interrupted: str | None = None
    text: str = ""  # the turn's text content, assembled alongside the calls

    @property
    def ok(self) -> bool:
        """The turn finished and every call in it may run (a turn without calls is fine)."""
        return (self.finish_reason is not None and self.interrupted is None
                and all(c.executable for c in self.calls))

    def to_dict(self) -> dict[str, Any]:
        return {"finish_reason": self.finish_reason,
                "calls": [vars(c) for c in self.calls],
                "diagnostics": [d.to_dict() for d in self.diagnostics]}

    def table(self) -> str:
        rows = [{"index": c.index, "id": c.id, "name": c.name, "arguments": c.arguments,
                 "executable": c.executable, "error": c.error} for c in self.calls]
        lines = [f"format: {self.format}, finish reason: {self.finish_reason}",
                 format_table(rows) if rows else "(no tool calls)"]
        lines += [f"- {d.action} {d.quirk}"
                  + (f" (call {d.index}{', id ' + d.id if d.id else ''})"
                     if d.index is not None else "") + f": {d.message}"
                  for d in self.diagnostics]
        return "\n".join(lines)


def to_events(records: Iterable[dict[str, Any]], fmt: str, diag: Diagnostics
              ) -> Iterator[StreamEvent]:
    if fmt not in CONVERTERS:
        raise LabError(f"unknown format {fmt!r}; formats: {', '.join(CONVERTERS)}")
    return CONVERTERS[fmt](records, diag)


def diagnose(records: Sequence[dict[str, Any]], fmt: str = "auto") -> Diagnosis:
    """Assemble a recorded turn with the core assembler and explain every call."""
    fmt = detect(records) if fmt == "auto" else fmt
    diag = Diagnostics()
    assembler, interrupted = StreamAssembler(), None
    try:
        for event in to_events(records, fmt, diag):
            assembler.feed(event)
    except ConnectionError as exc:
        interrupted = str(exc)
        diag.note(None, None, "server_error", f"the stream stopped with an error: {exc}",
                  "rejected")
    states = assembler.calls()
    for st in states:
        for field_name, value in (("id", st.id), ("name", st.name)):
            if not value:
                diag.note(st.index, st.id, "unusable_call", f"the call has no {field_name}",
                          "rejected")
    reports = []
    for st in states:
        error = _error(st, diag)
        reports.append(WireCallReport(st.index, st.id, st.name, st.arguments,
                                      None if st.rejected else parse_arguments(st.arguments)[0],
                                      error is None, error))
    return Diagnosis(fmt, assembler.finish_reason, reports, list(diag), interrupted,
                     assembler.text)


# Problems that make the core refuse the whole turn, not just the call they concern.
TURN_LEVEL = {"id_changed", "duplicate_id", "unusable_call", "truncated", "server_error"}


def _error(state: CallState, diag: Diagnostics) -> str | None:
    """Why this call may not run, or None: its own rejection first, then the turn's."""
    rejected = [d for d in diag if d.action == "rejected"]
    own = next((d for d in rejected if d.index == state.index), None)
    turn = next((d for d in rejected if d.quirk in TURN_LEVEL), None)
    if own:
        return own.message + ("; the turn is refused" if own.quirk in TURN_LEVEL else "")
    if turn:
        where = f" because of call {turn.index}" if turn.index is not None else ""
        return f"not run: the turn is refused{where} ({turn.quirk}: {turn.message})"
    if not state.closed:
        return "the stream never closed this call"
    return state.parse_error


def read_stream(path: str | Path, fmt: str = "auto") -> tuple[str, list[dict[str, Any]]]:
    """The format and payloads of a recorded stream file (SSE text or JSON lines)."""
    records = parse_records(read_file(path), str(path))
    if not records:
        raise LabError(f"{path}: no events in the file")
    return (detect(records, str(path)) if fmt == "auto" else fmt), records


def diagnose_file(path: str | Path, fmt: str = "auto") -> Diagnosis:
    """`diagnose` on a recorded stream file."""
    fmt, records = read_stream(path, fmt)
    return diagnose(records, fmt)


__all__ = ["CONVERTERS", "Diagnosis", "Diagnostic", "detect", "diagnose", "diagnose_file",
           "read_stream", "to_events"]
