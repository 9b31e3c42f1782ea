"""The incident system's notes, in a SQLite database of their own: the side effect a resumed
turn may repeat, and the de-duplication that stops it - or does not, when its record and the
effect are written apart.

A tool that de-duplicates is given a key (the run's id with the call id: a provider's call id
alone can repeat across runs) and stores, with each note it adds, the key and its answer.
`together`: the note and that record commit in one transaction, so a crash leaves both or
neither, and a repeat of the key is answered from the record. Apart, a crash can fall after
the note and before its record: the restarted call finds no record and adds the note again.
"""

from __future__ import annotations

from pathlib import Path

from keel_lab.course._production.store import connected


class Crashed(Exception):
    """The process died here (the experiment's crash: nothing after it ran)."""


class IncidentNotes:
    """Notes per incident, kept in `path` beyond the agent's process."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        with connected(self.path) as db:
            db.execute("CREATE TABLE IF NOT EXISTS notes (incident TEXT NOT NULL, "
                       "text TEXT NOT NULL)")
            db.execute("CREATE TABLE IF NOT EXISTS done (key TEXT PRIMARY KEY, notes INTEGER "
                       "NOT NULL)")

    def count(self, incident: str) -> int:
        with connected(self.path) as db:
            (n,) = db.execute("SELECT count(*) FROM notes WHERE incident = ?",
                              (incident,)).fetchone()
        return int(n)

    def add(self, incident: str, text: str, key: str | None = None, *, together: bool = True,
            crash: bool = False) -> int:
        """Add a note and answer how many the incident has; with `key`, a repeat adds nothing
        and answers what the first call did. `crash`: the process dies right after the note
        is written (`Crashed`) - apart, before its record is."""
        with connected(self.path) as db:
            if key is not None:
                seen = db.execute("SELECT notes FROM done WHERE key = ?", (key,)).fetchone()
                if seen:
                    return int(seen[0])
            db.execute("INSERT INTO notes VALUES (?, ?)", (incident, text))
            (notes,) = db.execute("SELECT count(*) FROM notes WHERE incident = ?",
                                  (incident,)).fetchone()
            if key is not None and together:
                db.execute("INSERT INTO done VALUES (?, ?)", (key, notes))
        if crash:
            raise Crashed(key or incident)
        if key is not None and not together:  # a second transaction: a crash before it counts
            with connected(self.path) as db:
                db.execute("INSERT INTO done VALUES (?, ?)", (key, notes))
        return int(notes)
