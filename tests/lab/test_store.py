"""The event store: sequence numbers, resuming readers, restarts, and what a restarted turn runs."""

import pytest

from keel_lab._core.events import Event
from keel_lab._core.protocol import ToolRequest
from keel_lab.course._production.store import EventStore, Record, resume_plan, to_resume

pytestmark = pytest.mark.ch8


def test_append_numbers_and_persists(tmp_path):
    store = EventStore(tmp_path / "e.jsonl")
    first = store.append("run-a", Event("model.called", "step-0", 0.0))
    second = store.append("run-b", Event("tool.failed", "c1", 0.5, "unknown_tool"))
    assert (first.seq, second.seq) == (1, 2)
    again = EventStore(tmp_path / "e.jsonl")
    assert again.read() == [first, second]
    assert again.read(run_id="run-b") == [second]
    assert (second.kind, second.ref, second.code) == ("tool.failed", "c1", "unknown_tool")
    assert again.append("run-a", Event("model.called", "step-1", 1.0)).seq == 3


def test_a_reader_resumes_from_its_cursor(tmp_path):
    store = EventStore(tmp_path / "e.jsonl")
    for n in range(5):
        store.append("r", Event("tool.requested", f"c{n}", float(n)))
    seen = store.read(after=0)[:2]
    rest = store.read(after=seen[-1].seq)
    assert [r.ref for r in seen + rest] == [f"c{n}" for n in range(5)]
    assert store.read(after=5) == []


def test_to_resume_runs_every_confirmed_call_without_an_outcome(tmp_path):
    store = EventStore(tmp_path / "e.jsonl")
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
    store = EventStore(tmp_path / "e.jsonl")
    for n, name in enumerate(["lookup_incident", "add_incident_note", "add_incident_note"]):
        store.confirm("r", ToolRequest(f"c{n}", name, "{}", {}), 0.0)
    store.append("r", Event("tool.requested", "c0", 0.0))
    store.append("r", Event("tool.requested", "c1", 0.0))  # c2 never started
    records = store.read()
    assert resume_plan(records, {"lookup_incident"}) == (["c0", "c2"], ["c1"])
    assert resume_plan(records, set()) == (["c2"], ["c0", "c1"])
    assert resume_plan(records, {"lookup_incident", "add_incident_note"}) == (
        ["c0", "c1", "c2"], [])
