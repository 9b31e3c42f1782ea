"""A recorded turn of a real provider, judged by the core assembler and explained call by call.

The converter of the stream's format turns payloads into the lab's deltas and notes every quirk
it meets; the core assembler decides, as it does for the runner, which calls may run. The
diagnosis only explains that verdict: there is no second set of rules here. It also reads the
turn's text for calls written into it (`leaks.py`): reported, never run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.core.protocol import parse_arguments
from keel_lab.core.streaming import Assembly, CallState, StreamEvent, assemble
from keel_lab.core.tables import format_table, printable
from keel_lab.providers.formats import DONE, STREAM_FORMATS, detect_stream, record_format
from keel_lab.providers.leaks import describe, leaked_calls
from keel_lab.providers.streams import anthropic, gemini, ollama, openai_chat, openai_responses
from keel_lab.providers.streams.common import Labelled
from keel_lab.providers.streams.diagnostics import Diagnostic, Diagnostics
from keel_lab.providers.streams.records import iter_records, no_events, parse_records, read_file

Converter = Callable[[Labelled, Diagnostics], Iterator[StreamEvent]]

CONVERTERS: dict[str, Converter] = dict(zip(STREAM_FORMATS, (
    openai_chat.convert, openai_responses.convert, anthropic.convert, ollama.convert,
    gemini.convert),
    strict=True))


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
        """The turn finished, every call in it may run (a turn without calls is fine), and
        nothing refused the turn as a whole (a call the provider dropped, say)."""
        return (self.finish_reason is not None and self.interrupted is None
                and all(c.executable for c in self.calls)
                and not any(d.action == "refused" and d.index is None
                            for d in self.diagnostics))

    def to_dict(self) -> dict[str, Any]:
        return {"finish_reason": self.finish_reason,
                "calls": [vars(c) for c in self.calls],
                "diagnostics": [d.to_dict() for d in self.diagnostics]}

    def table(self) -> str:
        rows = [{"index": c.index, "id": c.id, "name": c.name, "arguments": c.arguments,
                 "executable": c.executable, "error": c.error} for c in self.calls]
        lines = [f"format: {self.format}, finish reason: {printable(self.finish_reason)}",
                 format_table(rows) if rows else "(no tool calls)"]
        lines += [printable(f"- {d.action} {d.quirk}"
                            + (f" (call {d.index}{', id ' + d.id if d.id else ''})"
                               if d.index is not None else "") + f": {d.message}")
                  for d in self.diagnostics]
        return "\n".join(lines)


def to_events(records: Iterable[dict[str, Any]], fmt: str, diag: Diagnostics
              ) -> Iterator[StreamEvent]:
    """The lab's events of a stream's payloads; messages name payloads as "event N" (from 0)."""
    return _convert(((f"event {n}", r) for n, r in enumerate(records)), fmt, diag, "stream")


def _convert(records: Labelled, fmt: str, diag: Diagnostics, source: str
             ) -> Iterator[StreamEvent]:
    if fmt not in CONVERTERS:
        raise LabError(f"unknown format {fmt!r}; formats: {', '.join(CONVERTERS)}")
    return CONVERTERS[fmt](_of_format(records, fmt, diag, source), diag)


def _of_format(records: Labelled, fmt: str, diag: Diagnostics, source: str) -> Labelled:
    """The payloads, checked to be of `fmt`: another format's payload is an error (a wrong
    --format, or two streams mixed up); one of no known shape is noted and passed on."""
    own = errors = unknown = False
    for where, record in records:
        error = record is not DONE and _is_error(record)
        found = None if record is DONE or error else record_format(record)
        if found is not None and found != fmt:
            raise LabError(f"{where}: {_a(found)} event in {_a(fmt)} stream" if own else
                           f"{where}: this is not {fmt}: it is {_a(found)} event")
        if found is None and record is not DONE and not error:
            unknown = True
            diag.note(None, None, "unknown_event", f"{where} is no {fmt} event (the first "
                      "such payload); payloads of no known shape add nothing")
        own, errors = own or found == fmt, errors or error
        yield where, record
    if unknown and not own and not errors:
        raise LabError(f"{source}: this is not {fmt}: none of its events is one")


def _a(fmt: str) -> str:
    """The format's name with its article: "an openai-chat", "a gemini"."""
    return f"{'an' if fmt[0] in 'aeiou' else 'a'} {fmt}"


def _is_error(record: dict[str, Any]) -> bool:
    return "error" in record or record.get("type") in ("error", "response.failed")


def diagnose(records: Sequence[dict[str, Any]], fmt: str = "auto") -> Diagnosis:
    """Assemble a recorded turn with the core assembler and explain every call."""
    fmt = detect_stream(records) if fmt == "auto" else fmt
    return _diagnose(((f"event {n}", r) for n, r in enumerate(records)), fmt, "stream")


def _diagnose(records: Labelled, fmt: str, source: str) -> Diagnosis:
    diag = Diagnostics()
    assembly = assemble(_noting_server_errors(_convert(records, fmt, diag, source), diag))
    states = {s.index: s for s in assembly.calls}
    for p in assembly.problems:  # the converter's own wording, where it noted one, comes first
        diag.note(p.index, states[p.index].id, p.kind, p.message, "refused")
    leaks = leaked_calls(assembly.text)
    if leaks:
        diag.note(None, None, "call_in_text", describe(leaks), "reported")
    refusals = _Refusals(diag, states)
    reports = [WireCallReport(s.index, s.id, s.name, s.arguments,
                              None if s.refused else parse_arguments(s.arguments)[0],
                              assembly.readiness(s).executable, refusals.explain(s, assembly))
               for s in assembly.calls]
    return Diagnosis(fmt, assembly.finish_reason, reports, list(diag),
                     assembly.refused if assembly.finish_reason is None else None, assembly.text)


def _noting_server_errors(events: Iterator[StreamEvent], diag: Diagnostics
                          ) -> Iterator[StreamEvent]:
    try:
        yield from events
    except ConnectionError as exc:
        diag.note(None, None, "server_error", f"the stream stopped with an error: {exc}",
                  "refused")
        raise


class _Refusals:
    """The refusing diagnostics, gathered once: each call's first one, and the first that can
    stand for a refused turn (one of the whole stream, or of a call not refused on its own)."""

    def __init__(self, diag: Diagnostics, states: dict[int, CallState]) -> None:
        refused = [d for d in diag if d.action == "refused"]
        self.own: dict[int | None, Diagnostic] = {}
        for d in refused:
            self.own.setdefault(d.index, d)
        self.cause = next((d for d in refused if d.index is None or d.index not in states
                           or not states[d.index].refused), None)

    def explain(self, state: CallState, assembly: Assembly) -> str | None:
        """Why the assembler's verdict forbids this call, in the diagnostics' words: its own
        refusal first, then what refused the whole turn, then the call's own reason."""
        verdict = assembly.readiness(state)
        if verdict.executable:
            return None
        own = self.own.get(state.index)
        if own:
            return own.message + ("; the turn is refused" if assembly.refused else "")
        cause = self.cause
        if assembly.refused and cause:
            where = f" because of call {cause.index}" if cause.index is not None else ""
            return f"not run: the turn is refused{where} ({cause.quirk}: {cause.message})"
        return verdict.reason


def read_stream(path: str | Path, fmt: str = "auto") -> tuple[str, list[dict[str, Any]]]:
    """The format and payloads of a recorded stream file (SSE text or JSON lines)."""
    text = read_file(path)
    records = parse_records(text, str(path))
    if not records:
        raise no_events(text, str(path))
    return (detect_stream(records, str(path)) if fmt == "auto" else fmt), records


def diagnose_file(path: str | Path, fmt: str = "auto") -> Diagnosis:
    """`diagnose` on a recorded stream file, read one payload at a time (memory stays a small
    multiple of the file's size)."""
    text = read_file(path)
    records = iter_records(text, str(path))
    seen: list[tuple[str, dict[str, Any]]] = []  # up to the first recognisable payload
    for where, record in records:
        seen.append((where, record))
        if fmt != "auto" or (record is not DONE and record_format(record)):
            break
    if not seen:
        raise no_events(text, str(path))
    fmt = detect_stream([r for _, r in seen], str(path)) if fmt == "auto" else fmt
    return _diagnose(chain(seen, records), fmt, str(path))
