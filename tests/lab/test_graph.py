"""Dependency-graph scheduling: conflicts decide the waiting, outcomes stay the lab's own."""

import json

import pytest

from keel_lab import Executor, ToolRequest, incident_tools, run_coroutine
from keel_lab._core.executor import seeded_latency
from keel_lab.course._production.graph import (
    Access,
    GraphExecutor,
    argument_access,
    dependencies,
    depths,
)
from keel_lab.course._scenarios import turn_requests

pytestmark = pytest.mark.ch8


def _req(call_id, name, **args):
    return ToolRequest(call_id, name, json.dumps(args), args)


def test_conflicts_need_a_shared_resource_and_a_write():
    read = Access(frozenset({"incident_id=INC-001"}), writes=False)
    write = Access(frozenset({"incident_id=INC-001"}), writes=True)
    other = Access(frozenset({"service=checkout"}), writes=True)
    assert not read.conflicts(read)
    assert read.conflicts(write) and write.conflicts(read)
    assert not write.conflicts(other)
    assert Access(frozenset(), False, barrier=True).conflicts(read)


def test_footprints_of_the_incident_tools():
    tools = incident_tools()
    note = argument_access(_req("a", "add_incident_note", incident_id="INC-001", note="x"),
                           tools)
    assert note == Access(frozenset({"incident_id=INC-001"}), writes=True)
    assert argument_access(_req("b", "no_such_tool"), tools).barrier
    assert argument_access(ToolRequest("c", "lookup_incident", "{", None, "bad"), tools).barrier


def test_the_chapter_turn_only_the_write_waits_for_its_read():
    requests, tools = turn_requests(0), incident_tools()
    deps = dependencies(requests, tools)
    ids = [r.call_id for r in requests]
    assert deps[ids[3]] == (ids[0],)
    assert all(deps[i] == () for i in ids if i != ids[3])
    assert depths(deps) == {i: (1 if i == ids[3] else 0) for i in ids}


def test_graph_runs_every_call_once_and_no_later_than_batches():
    requests = turn_requests(0)
    latency = seeded_latency(0, 0.05, 0.4)
    graph = run_coroutine(GraphExecutor(4, latency).execute(requests, incident_tools()))
    batches = run_coroutine(Executor(4, latency).execute(requests, incident_tools()))
    assert set(graph.outcomes) == {r.call_id for r in requests}
    assert {k: o.content for k, o in graph.outcomes.items()} == \
        {k: o.content for k, o in batches.outcomes.items()}
    spans = {s.call_id: s for s in graph.spans}
    write, read = requests[3].call_id, requests[0].call_id
    assert spans[write].start >= spans[read].end
    assert max(s.end for s in graph.spans) < max(s.end for s in batches.spans)


def test_limit_bounds_concurrency():
    requests = [_req(f"c{i}", "lookup_incident", incident_id="INC-001") for i in range(4)]
    turn = run_coroutine(GraphExecutor(2, lambda r: 0.1).execute(requests, incident_tools()))
    assert sorted(round(s.start, 3) for s in turn.spans) == [0.0, 0.0, 0.1, 0.1]


def test_stops_before_an_approval_gated_call():
    requests = [_req("c0", "lookup_incident", incident_id="INC-001"),
                _req("c1", "restart_service", service="checkout"),
                _req("c2", "get_service_status", service="checkout")]
    events = []
    turn = run_coroutine(GraphExecutor(4).execute(requests, incident_tools(),
                                                  emit=events.append))
    assert list(turn.outcomes) == ["c0"]
    assert [r.call_id for r in turn.pending] == ["c1", "c2"]
    assert (events[-1].kind, events[-1].ref) == ("tool.awaiting_approval", "c1")
