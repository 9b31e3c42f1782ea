"""A persistent, append-only event store: what replaces the run's in-memory event list.

The store is a SQLite database (the standard library's `sqlite3`). Every event is one row with
the next sequence number, committed in its own transaction before `append` returns, so a crash
loses nothing that was acknowledged; two writers (two processes of one service) take turns
through SQLite's lock and never share a number. A reader (a UI, a log shipper) remembers the
last number it saw and asks for what came after it: a dropped connection resumes without a gap
or a duplicate. A turn's confirmed calls are written before any of them runs, and call ids run
through every record, so a restarted turn can tell from the store alone which calls it still
has to run (`to_resume`), and which of them may run again without a person's word
(`resume_plan`, the lab's policy).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from keel_lab._core.events import Event, EventKind
from keel_lab._core.messages import AssistantMessage
from keel_lab._core.protocol import ToolRequest
from keel_lab._core.runner import RunResult

TERMINAL: tuple[EventKind, ...] = ("tool.finished", "tool.failed")
CONFIRMED: Literal["tool.confirmed"] = "tool.confirmed"  # the finish confirmed it: it will run
Kind = EventKind | Literal["tool.confirmed"]
WAIT = 30.0  # seconds a writer waits for another's transaction before it gives up


@contextmanager
def connected(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection that commits what the block did, or rolls it all back, and closes."""
    with closing(sqlite3.connect(path, timeout=WAIT)) as db, db:
        yield db


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
    """Events of any number of runs in one SQLite file; a new instance on the same file (a
    restarted process, or a second writer) reads everything the others committed."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        with connected(self.path) as db:
            db.execute("CREATE TABLE IF NOT EXISTS records (seq INTEGER PRIMARY KEY "
                       "AUTOINCREMENT, run_id TEXT NOT NULL, kind TEXT NOT NULL, ref TEXT NOT "
                       "NULL, time REAL NOT NULL, code TEXT, name TEXT, arguments TEXT)")

    def append(self, run_id: str, event: Event) -> Record:
        return self._write(run_id, event.kind, event.ref, event.time, event.code)

    def confirm(self, run_id: str, request: ToolRequest, time: float) -> Record:
        """Write down a confirmed call before it runs: the store, not the process, holds the
        turn's list of calls."""
        return self._write(run_id, CONFIRMED, request.call_id, time, name=request.name,
                           arguments=request.raw_arguments)

    def _write(self, run_id: str, kind: Kind, ref: str, time: float, code: str | None = None,
               name: str | None = None, arguments: str | None = None) -> Record:
        """One row, one transaction: SQLite numbers it, however many writers there are."""
        with connected(self.path) as db:
            seq = db.execute("INSERT INTO records (run_id, kind, ref, time, code, name, "
                             "arguments) VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (run_id, kind, ref, time, code, name, arguments)).lastrowid
        assert seq is not None  # an INSERT always has one
        return Record(seq, run_id, kind, ref, time, code, name, arguments)

    def read(self, after: int = 0, run_id: str | None = None) -> list[Record]:
        """Every record with a sequence number above `after` (of one run, if given)."""
        with connected(self.path) as db:
            rows = db.execute("SELECT seq, run_id, kind, ref, time, code, name, arguments FROM "
                              "records WHERE seq > ? AND (? IS NULL OR run_id = ?) ORDER BY seq",
                              (after, run_id, run_id)).fetchall()
        return [Record(*row) for row in rows]


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
