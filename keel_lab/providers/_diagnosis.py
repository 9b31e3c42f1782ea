"""A recorded turn of a real provider, judged by the core assembler and explained call by call.

The converter of the stream's format turns payloads into the lab's deltas and says every quirk
it meets in the same stream (`Notice`, `Refuse`); the core assembler decides, as it does for the
runner, which calls may run, each verdict in the words of the notice behind it. The diagnosis
reads that assembly: there is no second set of rules here. It also reads the turn's text for
calls written into it (`leaks.py`): reported, never run. The calls the provider ran itself (a
server tool's) are listed apart, `provider_calls`: never executable, never what makes a turn
not ok, since nothing of them is the client's to run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from pathlib import Path
from typing import Any

from keel_lab._core.errors import LabError, Said
from keel_lab._core.protocol import parse_arguments
from keel_lab._core.streaming import Joined, Notice, ProviderCall, Readiness, StreamEvent, assemble
from keel_lab._core.tables import cell, cut, format_table, printable, width_of
from keel_lab._i18n import N_, _
from keel_lab.providers._formats import (
    CUT_FINISHES,
    DONE,
    STREAM_FORMATS,
    article,
    detect_stream,
    record_format,
)
from keel_lab.providers._leaks import describe, leaked_calls
from keel_lab.providers._sniff import history_format
from keel_lab.providers._streams import anthropic, gemini, ollama, openai_chat, openai_responses
from keel_lab.providers._streams.common import Labelled
from keel_lab.providers._streams.diagnostics import Diagnostics
from keel_lab.providers._streams.records import (
    is_sse,
    iter_records,
    no_events,
    open_event,
    parse_records,
    read_file,
    source,
)

Converter = Callable[[Labelled, Diagnostics], Iterator[StreamEvent]]
# the table's columns and a notice's action, each shown in the learner's language
COLUMNS = (N_("index"), N_("id"), N_("name"), N_("arguments"), N_("executable"), N_("error"))
ACTIONS = {"tolerated": N_("tolerated"), "refused": N_("refused"), "reported": N_("reported")}
ARGUMENTS_FLOOR = 32  # arguments this short are never cut: the other columns wrap instead
ARGUMENTS_ROOM = 16  # the fewest cells longer arguments are cut to, however narrow the width
NAME_CAP = 64  # the most cells an id or a name takes in a table cut to a width

CONVERTERS: dict[str, Converter] = dict(zip(STREAM_FORMATS, (
    openai_chat.convert, openai_responses.convert, anthropic.convert, ollama.convert,
    gemini.convert),
    strict=True))


@dataclass
class WireCallReport:
    """One call of a recorded turn, and the assembler's verdict on it (`verdict`, coded; its
    `error` is the verdict's words when the call may not run)."""

    index: int
    id: str | None
    name: str
    arguments: str
    input: dict[str, Any] | None
    verdict: Readiness

    @property
    def executable(self) -> bool:
        return self.verdict.executable

    @property
    def error(self) -> str | None:
        return None if self.verdict.executable else self.verdict.reason


@dataclass
class Diagnosis:
    """What a recorded turn holds: its calls, whether each may run, and every quirk met."""

    format: str
    finish_reason: str | None
    calls: list[WireCallReport]
    diagnostics: list[Notice] = field(default_factory=list)
    interrupted: Said | None = None  # why the stream stopped before its finish
    text: str = ""  # the turn's text content, assembled alongside the calls
    provider_calls: list[ProviderCall] = field(default_factory=list)  # run by the provider

    @property
    def ok(self) -> bool:
        """The turn finished, every call in it may run (a turn without calls is fine), and
        nothing refused the turn as a whole (a call the provider dropped, say)."""
        return (self.finish_reason is not None and self.interrupted is None
                and all(c.executable for c in self.calls)
                and not any(d.action == "refused" and d.index is None
                            for d in self.diagnostics))

    def table(self, width: int | None = None) -> str:
        """The calls, one a row, each error by a short name; every full text once below. With
        `width`, rows fit in it: arguments (and a very long id or name) are cut, their length
        said, and the error and executable columns stay in sight (`--json` has it all)."""
        notes: list[Said] = []  # the errors no quirk below names, each once, by number
        rows = [[c.index, c.id, c.name, c.arguments, c.executable, self._short_error(c, notes)]
                for c in self.calls]
        if width is not None and rows:
            rows = _fitted(rows, width)
        finish = _("none") if self.finish_reason is None else self.finish_reason
        lines = [_("format: {format}, finish reason: {finish}").format(
                     format=self.format, finish=printable(finish)),
                 format_table([dict(zip(map(_, COLUMNS), row, strict=True)) for row in rows],
                              width=width) if rows else _("(no tool calls)")]
        lines += [printable(f"[{n}] {note}") for n, note in enumerate(notes, 1)]
        lines += [printable(_("run by the provider: {call}").format(call=" ".join(
                      x for x in (p.name, p.id or _("(no id)"), _short(p.input)) if x))
                            + (f" ({p.result})" if p.result else ""))
                  for p in self.provider_calls]
        lines += [printable(_notice_line(d)) for d in self.diagnostics]
        return "\n".join(lines)

    def _short_error(self, call: WireCallReport, notes: list[Said]) -> str | None:
        """A call's error as the table's column shows it: each coded part of its verdict (its
        own problem, then the turn's refusal when another call caused it) named short."""
        if call.executable:
            return None
        parts = call.verdict.parts or (call.verdict.said,)
        return "; ".join(self._named(part, call, notes) for part in parts)

    def _named(self, error: Said, call: WireCallReport, notes: list[Said]) -> str:
        """The quirk whose notice (listed below the table) says `error` or a part of it, with
        the call it is about when that is another; else a number whose text follows the table,
        the same message always the same number."""
        d = self._saying(error, call)
        if d is not None:
            return (_("{quirk} (call {index})").format(quirk=d.quirk, index=d.index)
                    if d.index not in (None, call.index) else d.quirk)
        if error not in notes:
            notes.append(error)
        return f"[{notes.index(error) + 1}]"

    def _saying(self, error: Said, call: WireCallReport) -> Notice | None:
        """The notice that says `error`, or the first part of it a notice says (the call's own
        notice first): found by the messages' codes and parameters, never their words."""
        todo: list[object] = [error]
        while todo:
            said = todo.pop(0)
            if isinstance(said, Said):
                found = [d for d in self.diagnostics if d.said == said]
                if found:
                    return next((d for d in found if d.index == call.index), found[0])
                todo += said.params.values()
            elif isinstance(said, Joined):
                todo += said.parts
        return None


def _fitted(rows: list[list[Any]], width: int) -> list[list[Any]]:
    """The table's cells cut to fit `width`: an id or name to `NAME_CAP` cells, the arguments
    longer than `ARGUMENTS_FLOOR` to what the other columns leave."""
    cells: list[list[Any]] = [[cell(v) for v in row] for row in rows]
    for row, raw in zip(cells, rows, strict=True):
        for n in (1, 2):
            row[n] = _clipped(row[n], NAME_CAP, len(raw[n] or ""))
    others = sum(max(width_of(_(c)), *(width_of(row[n]) for row in cells))
                 for n, c in enumerate(COLUMNS) if n != 3)
    room = max(width - others - 2 * (len(COLUMNS) - 1), ARGUMENTS_ROOM)
    for row, raw in zip(cells, rows, strict=True):
        if width_of(row[3]) > ARGUMENTS_FLOOR:
            row[3] = _clipped(row[3], room, len(raw[3]))
    return cells


def _clipped(shown: str, limit: int, length: int) -> str:
    """`shown` whole when it fits in `limit` cells, else its start and the `length` of what it
    shows, in them."""
    if width_of(shown) <= limit:
        return shown
    told = _("{text} ({count} chars)")
    count = _("{count:,}").format(count=length)
    return told.format(text=cut(shown, max(limit - width_of(told.format(text="", count=count)),
                                          8)), count=count)


def _notice_line(d: Notice) -> str:
    """One notice below the table: its action, quirk, call and message."""
    action = _(ACTIONS.get(d.action, d.action))
    if d.index is None:
        return _("- {action} {quirk}: {message}").format(
            action=action, quirk=d.quirk, message=d.message)
    if d.id:
        return _("- {action} {quirk} (call {index}, id {id}): {message}").format(
            action=action, quirk=d.quirk, index=d.index, id=d.id, message=d.message)
    return _("- {action} {quirk} (call {index}): {message}").format(
        action=action, quirk=d.quirk, index=d.index, message=d.message)


def _short(text: str, limit: int = 120) -> str:
    """A provider call's input on one line of the table (the whole of it is in --json)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit] + "..."


def to_events(records: Iterable[dict[str, Any]], fmt: str) -> Iterator[StreamEvent]:
    """The lab's events of a stream's payloads, notices included; messages name payloads as
    "event N" (from 0)."""
    event = _("event {n}")
    return _convert(((event.format(n=n), r) for n, r in enumerate(records)), fmt,
                    _("stream"))


def _convert(records: Labelled, fmt: str, source: str) -> Iterator[StreamEvent]:
    """The converter's events, each after what it noticed before it, a server's error too."""
    if fmt not in CONVERTERS:
        raise LabError("unknown_format", N_("unknown format {format}; formats: {formats}"),
                       format=repr(fmt), formats=", ".join(CONVERTERS))
    diag = Diagnostics()
    try:
        for event in CONVERTERS[fmt](_of_format(records, fmt, diag, source), diag):
            yield from diag.said()
            yield event
    except ConnectionError as exc:
        said = exc.args[0] if len(exc.args) == 1 else str(exc)
        if isinstance(said, Said):  # the converter's own words: "the server sent an error: ..."
            diag.note(None, None, "server_error", said, "refused")
        else:
            diag.note(None, None, "server_error", N_("the stream stopped with an error: {error}"),
                      "refused", error=said)
        yield from diag.said()
        raise
    yield from diag.said()


def _of_format(records: Labelled, fmt: str, diag: Diagnostics, source: str) -> Labelled:
    """The payloads, checked to be of `fmt`: another format's payload is an error (a wrong
    --format, or two streams mixed up); one of no known shape is noted and passed on."""
    own = errors = unknown = False
    for where, record in records:
        error = record is not DONE and ("error" in record
                                        or record.get("type") in ("error", "response.failed"))
        found = None if record is DONE or error else record_format(record)
        if found is not None and found != fmt:
            if own:
                raise LabError("mixed_formats", N_("{where}: {found} event in {format} stream"),
                               where=where, found=article(found), format=article(fmt))
            raise LabError("wrong_format", N_("{where}: this is not {format}: it is {found} "
                                              "event; `keel-lab assemble --format {name}` "
                                              "reads it"),
                           where=where, format=fmt, found=article(found), name=found)
        if found is None and record is not DONE and not error:
            unknown = True
            diag.note(None, None, "unknown_event", N_(
                "{where} is no {format} event (the first such payload); payloads of no known "
                "shape add nothing"), where=where, format=fmt)
        own, errors = own or found == fmt, errors or error
        yield where, record
    if unknown and not own and not errors:
        raise LabError("wrong_format", N_("{source}: this is not {format}: none of its events "
                                          "is one"), source=source, format=fmt)


def diagnose(records: Sequence[dict[str, Any]], fmt: str = "auto", *,
             refuse_cut_turns: bool = False) -> Diagnosis:
    """Assemble a recorded turn with the core assembler and explain every call; with
    `refuse_cut_turns`, a turn the output limit cut (`CUT_FINISHES`) runs nothing at all."""
    fmt = detect_stream(records) if fmt == "auto" else fmt
    return _diagnose(to_events(records, fmt), fmt, refuse_cut_turns)


def _diagnose(events: Iterable[StreamEvent], fmt: str, refuse_cut_turns: bool) -> Diagnosis:
    assembly = assemble(events)
    leaks = leaked_calls(assembly.text)
    said = [Notice(None, None, "call_in_text", describe(leaks), "reported")] if leaks else []
    reports = [WireCallReport(s.index, s.id, s.name, s.arguments,
                              None if s.refused else parse_arguments(s.arguments)[0],
                              assembly.readiness(s)) for s in assembly.calls]
    if refuse_cut_turns and assembly.finish_reason in CUT_FINISHES:
        cut_turn = Said("cut_turn", N_(
            "the turn was cut (the finish reason {finish}) and cut turns are refused whole: "
            "none of its calls runs, not even a complete one"),
            {"finish": repr(assembly.finish_reason)})
        said.append(Notice(None, None, "cut_turn", cut_turn, "refused"))
        reports = [replace(r, verdict=Readiness(False, cut_turn)) if r.executable else r
                   for r in reports]
    elif assembly.finish_reason in CUT_FINISHES:
        said.append(Notice(None, None, "cut_turn_kept", Said("cut_turn_kept", N_(
            "the output limit cut the turn (the finish reason {finish}): calls the model meant "
            "to send after these may be missing. Its complete calls stay runnable (the lab's "
            "policy); --refuse-cut-turns refuses such a turn whole"),
            {"finish": repr(assembly.finish_reason)}), "reported"))
    return Diagnosis(fmt, assembly.finish_reason, reports, [*assembly.notices, *said],
                     assembly.refusal if assembly.finish_reason is None else None, assembly.text,
                     list(assembly.provider_calls))


def read_stream(path: str | Path, fmt: str = "auto") -> tuple[str, list[dict[str, Any]]]:
    """The format and payloads of a recorded stream file (SSE text or JSON lines)."""
    text = read_file(path)
    records = parse_records(text, source(path))
    if not records:
        raise no_events(text, source(path))
    return (detect_stream(records, source(path)) if fmt == "auto" else fmt), records


def diagnose_file(path: str | Path, fmt: str = "auto", *,
                  refuse_cut_turns: bool = False) -> Diagnosis:
    """`diagnose` on a recorded stream file (`-`: standard input), read one payload at a time
    (memory stays a small multiple of the file's size). A conversation is no stream: the error
    then says so, and which command reads it."""
    text = read_file(path)
    name = source(path)
    try:
        records = iter_records(text, name)
        seen: list[tuple[str, dict[str, Any]]] = []  # up to the first recognisable payload
        for where, record in records:
            seen.append((where, record))
            if fmt != "auto" or (record is not DONE and record_format(record)):
                break
        if not seen:
            raise no_events(text, name)
        fmt = detect_stream([r for _where, r in seen], name) if fmt == "auto" else fmt
        diagnosis = _diagnose(_convert(chain(seen, records), fmt, name), fmt, refuse_cut_turns)
    except LabError as exc:
        history = history_format(text)
        if history is None:
            raise
        raise LabError("history_not_stream", N_(
            "{path}: this is {format} conversation, not a stream: `keel-lab validate` reads "
            "conversations"), path=name, format=article(history)) from exc
    line = open_event(text) if is_sse(text) else None
    if line is not None:  # what SSE discards must still be said: a call may have been in it
        diagnosis.diagnostics.append(Notice(None, None, "event_cut", Said("event_cut", N_(
            "{where}, line {line}: the file ends inside an event (no blank line after its "
            "data), which SSE discards: whatever it held - text or a call - is not read"),
            {"where": name, "line": line}), "reported"))
    return diagnosis
