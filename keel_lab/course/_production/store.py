"""A persistent, append-only event store: what replaces the run's in-memory event list.

Every event is one JSON line with the next sequence number, written and flushed before
`append` returns, so a crash loses nothing that was acknowledged. A reader (a UI, a log
shipper) remembers the last number it saw and asks for what came after it: a dropped
connection resumes without a gap or a duplicate. A turn's confirmed calls are written before any
of them runs, and call ids run through every record, so a restarted turn can tell from the store
alone which calls it still has to run (`to_resume`), and which of them may run again without a
person's word (`resume_plan`, the lab's policy).
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from keel_lab._core.events import Event, EventKind
from keel_lab._core.messages import AssistantMessage
from keel_lab._core.protocol import ToolRequest
from keel_lab._core.runner import RunResult

TERMINAL: tuple[EventKind, ...] = ("tool.finished", "tool.failed")
CONFIRMED: Literal["tool.confirmed"] = "tool.confirmed"  # the finish confirmed it: it will run
Kind = EventKind | Literal["tool.confirmed"]


@dataclass(frozen=True, slots=True)
class Record:
    seq: int  # its place in the store
    run_id: str
    kind: Kind
    ref: str  # the call id; for model.called, "step-<n>"
    time: float
    code: str | None = None
    name: str | None = None  # tool.confirmed: the call itself, enough to run it after a restart
    arguments: str | None = None


class EventStore:
    """Events of any number of runs in one JSON-lines file; a new instance on the same file (a
    restarted process) reads everything the old one appended."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.touch()

    def append(self, run_id: str, event: Event) -> Record:
        return self._write(run_id, event.kind, event.ref, event.time, event.code)

    def confirm(self, run_id: str, request: ToolRequest, time: float) -> Record:
        """Write down a confirmed call before it runs: the store, not the process, holds the
        turn's list of calls."""
        return self._write(run_id, CONFIRMED, request.call_id, time, name=request.name,
                           arguments=request.raw_arguments)

    def _write(self, run_id: str, kind: Kind, ref: str, time: float, code: str | None = None,
               name: str | None = None, arguments: str | None = None) -> Record:
        records = self.read()
        record = Record(records[-1].seq + 1 if records else 1, run_id, kind, ref, time, code,
                        name, arguments)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(asdict(record)) + "\n")
            f.flush()
            os.fsync(f.fileno())
        return record

    def read(self, after: int = 0, run_id: str | None = None) -> list[Record]:
        """Every record with a sequence number above `after` (of one run, if given)."""
        lines = self.path.read_text(encoding="utf-8").splitlines()
        records = [Record(**json.loads(line)) for line in lines if line.strip()]
        return [r for r in records if r.seq > after and run_id in (None, r.run_id)]


def journal(store: EventStore, result: RunResult) -> list[Record]:
    """A run's events as a production runner writes them: after each model turn, the calls the
    turn confirmed, before any of them runs (the lab's runner keeps them in its messages)."""
    turns = [m.tool_calls for m in result.messages if isinstance(m, AssistantMessage)]
    out = []
    for event in result.events:
        out.append(store.append(result.run_id, event))
        step = int(event.ref.removeprefix("step-")) if event.kind == "model.called" else -1
        for call in turns[step] if 0 <= step < len(turns) else ():
            out.append(store.confirm(result.run_id, ToolRequest.from_call(call), event.time))
    return out


def to_resume(records: Iterable[Record]) -> list[str]:
    """The call ids a restarted turn must still run, in request order: every confirmed call
    without an outcome record. One that only started runs again - its effect may have happened
    just before the crash - so resuming is at-least-once, never exactly-once."""
    records = list(records)
    done = {r.ref for r in records if r.kind in TERMINAL}
    return list(dict.fromkeys(r.ref for r in records if r.kind == CONFIRMED and r.ref not in done))


def resume_plan(records: Iterable[Record],
                idempotent: Collection[str]) -> tuple[list[str], list[str]]:
    """The lab's policy for a restarted turn: `to_resume`'s calls split into those it runs at
    once and those a person must confirm first, each in request order. A call that never
    started runs; one that started may have had its effect already, so it runs again only if
    its tool is named in `idempotent` (a read, or a tool that de-duplicates on the call id)."""
    records = list(records)
    started = {r.ref for r in records if r.kind == "tool.requested"}
    names = {r.ref: r.name for r in records if r.kind == CONFIRMED}
    run: list[str] = []
    ask: list[str] = []
    for ref in to_resume(records):
        (ask if ref in started and names[ref] not in idempotent else run).append(ref)
    return run, ask
