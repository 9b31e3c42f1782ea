"""A persistent, append-only event store: what replaces the run's in-memory event list.

Every event is one JSON line with the next sequence number, written and flushed before
`append` returns, so a crash loses nothing that was acknowledged. A reader (a UI, a log
shipper) remembers the last number it saw and asks for what came after it: a dropped
connection resumes without a gap or a duplicate. Call ids run through every record, so a
resumed turn can tell which calls already finished and must not run again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from keel_lab.core.events import Event, EventKind
from keel_lab.core.protocol import ToolRequest

TERMINAL: tuple[EventKind, ...] = ("tool.finished", "tool.failed")


@dataclass(frozen=True, slots=True)
class Record:
    seq: int  # its place in the store
    run_id: str
    kind: EventKind
    ref: str
    time: float
    code: str | None = None

    @property
    def event(self) -> Event:
        return Event(self.kind, self.ref, self.time, self.code)


class EventStore:
    """Events of any number of runs in one JSON-lines file; a new instance on the same file (a
    restarted process) reads everything the old one appended."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.touch()

    def append(self, run_id: str, event: Event) -> Record:
        records = self.read()
        record = Record(records[-1].seq + 1 if records else 1, run_id, event.kind, event.ref,
                        event.time, event.code)
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

    def finished(self, run_id: str) -> set[str]:
        """Call ids of the run that already have their one outcome."""
        return {r.ref for r in self.read(run_id=run_id) if r.kind in TERMINAL}

    def unfinished(self, run_id: str, requests: Sequence[ToolRequest]) -> list[ToolRequest]:
        """The requests a resumed turn still has to run: the call id is the idempotency key."""
        done = self.finished(run_id)
        return [r for r in requests if r.call_id not in done]
