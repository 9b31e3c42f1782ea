"""The UI per call id: writing, confirmed, running, done - or cancelled, and nothing ran."""

import pytest

from keel_lab import incident_tools
from keel_lab._core.streaming import cancel_after
from keel_lab._core.tools import ToolOutcome
from keel_lab.course._production.screen import Phase, arrivals, screen_frames, summary
from keel_lab.course._scenarios import COMPARE, offline_stream

pytestmark = pytest.mark.ch8


def test_a_finished_stream_goes_writing_confirmed_running_done():
    events = offline_stream(COMPARE)
    frames = screen_frames(events, incident_tools())
    finish = len(events)
    before = [f for f in frames if f.step < finish]
    assert before and all(p == Phase.WRITING for f in before for p, _ in f.calls.values())
    confirmed = next(f for f in frames if f.step == finish)
    assert {p for p, _ in confirmed.calls.values()} == {Phase.CONFIRMED}
    assert len(confirmed.calls) == 2
    last = frames[-1].calls
    assert {p for p, _ in last.values()} == {Phase.DONE}
    assert sorted(t.split(":")[0] for _, t in last.values()) == ["INC-001 critical",
                                                               "INC-002 low"]
    running = [f for f in frames if any(p == Phase.RUNNING for p, _ in f.calls.values())]
    assert running and running[0].event.startswith("tool.requested")


def test_a_cancelled_stream_says_that_nothing_ran():
    frames = screen_frames(cancel_after(offline_stream(COMPARE), 12), incident_tools())
    assert frames[-1].event.startswith("stream stopped: cancelled after 12")
    assert {p for p, _ in frames[-1].calls.values()} == {Phase.CANCELLED}
    assert not any(p in (Phase.RUNNING, Phase.DONE) for f in frames for p, _ in f.calls.values())


def test_a_refused_call_never_runs():
    events = offline_stream(COMPARE)
    bad = events[:-2] + events[-1:]  # drop the closing brace of call 1
    frames = screen_frames(bad, incident_tools())
    phases = {k.rsplit(":", 1)[1]: p for k, (p, _) in frames[-1].calls.items()}
    assert phases == {"call-0": Phase.DONE, "call-1": Phase.REFUSED}


def test_summary_and_arrivals():
    ok = ToolOutcome("b", "lookup_incident", '{"id": "INC-2", "severity": "low", "title": "T"}')
    err = ToolOutcome("a", "lookup_incident", '{"error": {"code": "x", "message": "m"}}', "x")
    assert summary(ok.content) == "INC-2 low: T" and summary(err.content) == "error x"
    assert summary('{"service": "s"}') == '{"service": "s"}'
    frames = arrivals(["a", "b"], [ok, err])
    assert frames[0].by_position == ("INC-2 low: T", "...")
    assert frames[0].by_call_id == ("...", "INC-2 low: T")
    assert frames[1].by_call_id == ("error x", "INC-2 low: T")
