"""Chapter 8's experiments: the figures the chapter's prose relies on."""

import pytest

from keel_lab.course._experiments.production import (
    crash_and_resume,
    event_store,
    rendering,
    scheduling,
    screen,
)
from keel_lab.course._experiments.registry import EXPERIMENTS, Params
from keel_lab.course._plots import plot

pytestmark = pytest.mark.ch8


def test_scheduling_graph_is_fastest_and_plots():
    report = scheduling(seed=0, limit=4)
    wall = report.data["wall_s"]
    assert wall["graph(limit=4)"] < wall["batches(limit=4)"] < wall["sequential"]
    assert {r["mode"] for r in report.rows} == set(wall)
    assert plot(report) is not None


def test_screen_never_cancelled_and_cancelled():
    done = screen(0, seed=0)
    assert done.findings == [f"{len(done.rows)} screen frames (one per stream event, stop or "
                             "tool event); 2 of 2 calls ran"]
    cancelled = screen(12, seed=0)
    assert cancelled.findings[-1].startswith("13 screen frames")  # 12 stream events, the stop
    assert cancelled.findings[-1].endswith("0 of 2 calls ran")
    assert all(p in ("", "model still writing") for f in cancelled.data["phases"][:-1]
               for p in f)
    assert plot(cancelled) is not None


def test_rendering_by_position_is_wrong_by_call_id_right():
    report = rendering(seed=0, calls=3)
    assert report.data["completion_order"] != ["call-0", "call-1", "call-2"]
    assert report.data["wrong_rows"] > 0
    last = report.rows[-3:]
    assert [r["by call id"].split()[0] for r in last] == ["INC-001", "INC-002", "INC-003"]


def test_event_store_reader_sees_each_event_once(tmp_path):
    report = event_store(tmp_path, seed=0, seen_before_drop=3)
    first, resumed, restarted, crashed = report.rows
    assert first["got"] + resumed["got"] == restarted["got"]
    assert len(restarted["got"]) == report.data["events"]
    assert len(report.data["resumed_runs"]) == 1 and crashed["events"] == "runs only call-1"


def test_resuming_is_at_least_once_unless_the_tool_deduplicates_on_the_call_id():
    after_effect = crash_and_resume("tool.finished")
    assert after_effect.data == {"plain": 2, "apart": 2, "dedupe": 1}  # apart: crash between
    before_effect = crash_and_resume("tool.requested")
    assert before_effect.data == {"plain": 1, "apart": 1, "dedupe": 1}


def test_registered():
    for name in ("scheduling", "screen", "rendering"):
        assert EXPERIMENTS[name].run(Params(seed=1)).rows
