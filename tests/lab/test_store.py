"""The event store: sequence numbers, resuming readers, restarts, and what a restarted turn runs."""

import subprocess
import sys

import pytest

from keel_lab._core.events import Event
from keel_lab._core.protocol import ToolRequest
from keel_lab.course._production.notes import Crashed, IncidentNotes
from keel_lab.course._production.store import EventStore, Record, resume_plan, to_resume

pytestmark = pytest.mark.ch8


def test_append_numbers_and_persists(tmp_path):
    store = EventStore(tmp_path / "e.db")
    first = store.append("run-a", Event("model.called", "step-0", 0.0))
    second = store.append("run-b", Event("tool.failed", "c1", 0.5, "unknown_tool"))
    assert (first.seq, second.seq) == (1, 2)
    again = EventStore(tmp_path / "e.db")
    assert again.read() == [first, second]
    assert again.read(run_id="run-b") == [second]
    assert (second.kind, second.ref, second.code) == ("tool.failed", "c1", "unknown_tool")
    assert again.append("run-a", Event("model.called", "step-1", 1.0)).seq == 3


def test_a_reader_resumes_from_its_cursor(tmp_path):
    store = EventStore(tmp_path / "e.db")
    for n in range(5):
        store.append("r", Event("tool.requested", f"c{n}", float(n)))
    seen = store.read(after=0)[:2]
    rest = store.read(after=seen[-1].seq)
    assert [r.ref for r in seen + rest] == [f"c{n}" for n in range(5)]
    assert store.read(after=5) == []


def test_to_resume_runs_every_confirmed_call_without_an_outcome(tmp_path):
    store = EventStore(tmp_path / "e.db")
    for n in range(4):
        store.confirm("r", ToolRequest(f"c{n}", "lookup_incident", "{}", {}), 0.0)
    store.append("r", Event("tool.requested", "c0", 0.0))
    store.append("r", Event("tool.finished", "c0", 0.1))
    store.append("r", Event("tool.requested", "c1", 0.0))  # started, never finished: runs again
    store.append("r", Event("tool.failed", "c2", 0.1, "incident_not_found"))
    store.append("r", Event("tool.requested", "c1", 1.0))  # a first restart, crashed again
    store.append("other", Event("tool.finished", "c3", 0.1))  # another run's call
    assert to_resume(store.read(run_id="r")) == ["c1", "c3"]
    assert store.read()[0].name == "lookup_incident" and isinstance(store.read()[0], Record)


def test_resume_plan_reruns_a_started_call_only_for_an_idempotent_tool(tmp_path):
    store = EventStore(tmp_path / "e.db")
    for n, name in enumerate(["lookup_incident", "add_incident_note", "add_incident_note"]):
        store.confirm("r", ToolRequest(f"c{n}", name, "{}", {}), 0.0)
    store.append("r", Event("tool.requested", "c0", 0.0))
    store.append("r", Event("tool.requested", "c1", 0.0))  # c2 never started
    records = store.read()
    assert resume_plan(records, {"lookup_incident"}) == (["c0", "c2"], ["c1"])
    assert resume_plan(records, set()) == (["c2"], ["c0", "c1"])
    assert resume_plan(records, {"lookup_incident", "add_incident_note"}) == (
        ["c0", "c1", "c2"], [])


def test_two_writers_share_one_numbering_and_lose_nothing(tmp_path):
    """Two processes of a service append to one store at once: SQLite numbers each row once,
    in commit order, and each writer sees the other's rows."""
    path = tmp_path / "events.db"
    code = ("import sys\nfrom pathlib import Path\nfrom keel_lab._core.events import Event\n"
            "from keel_lab.course._production.store import EventStore\n"
            "s = EventStore(Path(sys.argv[1]))\n"
            "for n in range(200):\n"
            "    s.append(sys.argv[2], Event('tool.requested', f'c{n}', float(n)))\n")
    writers = [subprocess.Popen([sys.executable, "-c", code, str(path), who])
               for who in ("a", "b")]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    records = EventStore(path).read()
    assert [r.seq for r in records] == list(range(1, 401))
    for who in ("a", "b"):
        assert [r.ref for r in records if r.run_id == who] == [f"c{n}" for n in range(200)]


def test_a_crash_between_a_note_and_its_record_doubles_the_note_unless_they_commit_together(
        tmp_path):
    for together, expected in ((False, 2), (True, 1)):
        notes = IncidentNotes(tmp_path / f"incidents-{together}.db")
        with pytest.raises(Crashed):
            notes.add("INC-001", "restarted checkout", "run-1:call-0", together=together,
                      crash=True)
        again = IncidentNotes(notes.path)  # the restarted process
        assert again.add("INC-001", "restarted checkout", "run-1:call-0",
                         together=together) == expected
        assert again.count("INC-001") == expected
    plain = IncidentNotes(tmp_path / "plain.db")
    assert [plain.add("INC-001", "x") for _ in range(2)] == [1, 2]  # no key: every call writes
    keyed = IncidentNotes(tmp_path / "keyed.db")
    assert [keyed.add("INC-001", "x", "run-1:call-0"), keyed.add("INC-001", "x", "run-2:call-0"),
            keyed.add("INC-001", "x", "run-1:call-0")] == [1, 2, 1]  # another run's call-0 writes
