import json
import time

import pytest

from keel_lab import Executor, Tool, ToolRequest, Toolset, run_coroutine
from keel_lab._core.executor import seeded_latency

pytestmark = pytest.mark.ch3


def req(i, name, **args):
    return ToolRequest(f"c{i}", name, json.dumps(args), args)


READS = [req(0, "lookup_incident", incident_id="INC-001"),
         req(1, "lookup_incident", incident_id="INC-002"),
         req(2, "get_service_status", service="auth-api")]
NOTE = req(3, "add_incident_note", incident_id="INC-001", note="n")
RESTART = req(4, "restart_service", service="auth-api")
UNKNOWN = req(5, "drop_tables")


def ids(batches):
    return [[r.call_id for r in b] for b in batches]


def test_concurrent_batch_costs_its_slowest_call(tools):
    latency = {"c0": 0.3, "c1": 0.1, "c2": 0.2, "c3": 0.05}
    def lat(r):
        return latency[r.call_id]
    seq = run_coroutine(Executor(1, lat).execute([*READS, NOTE], tools))
    con = run_coroutine(Executor(4, lat).execute([*READS, NOTE], tools))
    assert max(s.end for s in seq.spans) == sum(latency.values())
    assert max(s.end for s in con.spans) == 0.3 + 0.05
    note = next(s for s in con.spans if s.call_id == "c3")
    assert note.start == 0.3  # the write waits for the reads before it


def test_limit_caps_how_many_run_at_once(tools):
    many = [req(i, "lookup_incident", incident_id="INC-001") for i in range(6)]
    step = run_coroutine(Executor(2, lambda r: 1.0).execute(many, tools))
    assert sorted(s.start for s in step.spans) == [0, 0, 1, 1, 2, 2]


def test_results_are_kept_by_call_id_whatever_the_finish_order(tools):
    latency = {"c0": 0.3, "c1": 0.1, "c2": 0.2}
    step = run_coroutine(Executor(3, lambda r: latency[r.call_id]).execute(READS, tools))
    assert [s.call_id for s in step.spans] == ["c1", "c2", "c0"]  # finish order
    assert [m.tool_call_id for m in step.messages(READS)] == ["c0", "c1", "c2"]
    for r in READS[:2]:
        assert json.loads(step.outcomes[r.call_id].content)["id"] == r.input["incident_id"]


def test_approval_stops_the_step_and_nothing_after_it_runs(tools):
    requests = [READS[0], RESTART, READS[1]]
    events = []
    step = run_coroutine(Executor(4).execute(requests, tools, emit=events.append))
    assert list(step.outcomes) == ["c0"]
    assert [r.call_id for r in step.pending] == ["c4", "c1"]
    assert [(e.kind, e.ref) for e in events][-1] == ("tool.awaiting_approval", "c4")


def test_decisions_run_or_deny_the_gated_call(tools):
    yes = run_coroutine(Executor().execute([RESTART], tools, {"c4": True}))
    no = run_coroutine(Executor().execute([RESTART], tools, {"c4": False}))
    assert yes.outcomes["c4"].ok and no.outcomes["c4"].code == "approval_denied"


def test_every_request_gets_exactly_one_outcome_even_when_things_fail(tools):
    requests = [*READS, UNKNOWN, req(6, "search_logs", service="billing"),
                ToolRequest("c7", "lookup_incident", "{oops", None, "not valid JSON")]
    step = run_coroutine(Executor(4).execute(requests, tools))
    assert sorted(step.outcomes) == sorted(r.call_id for r in requests)
    assert [step.outcomes[c].code for c in ("c5", "c6", "c7")] == [
        "unknown_tool", "tool_internal_error", "invalid_arguments"]


def test_events_carry_call_ids(tools):
    events = []
    run_coroutine(Executor(4).execute(READS[:2], tools, emit=events.append))
    assert [(e.kind, e.ref) for e in events] == [
        ("tool.requested", "c0"), ("tool.requested", "c1"),
        ("tool.finished", "c0"), ("tool.finished", "c1")]


def test_seeded_latency_is_stable_per_call():
    lat = seeded_latency(3)
    assert lat(READS[0]) == seeded_latency(3)(READS[0]) != seeded_latency(4)(READS[0])
    assert 0.01 <= lat(READS[1]) <= 0.5


def test_the_default_collector_keeps_request_order_and_own_results(tools):
    from keel_lab._core.executor import gather_by_call_id
    latency = {"c0": 0.3, "c1": 0.1, "c2": 0.2}
    lab = run_coroutine(Executor(3, lambda r: latency[r.call_id]).execute(READS, tools))
    explicit = run_coroutine(Executor(3, lambda r: latency[r.call_id],
                                      collect=gather_by_call_id).execute(READS, tools))
    assert list(lab.outcomes) == ["c0", "c1", "c2"] == list(explicit.outcomes)
    assert lab.messages(READS) == explicit.messages(READS)


def test_a_collector_decides_which_call_each_outcome_answers_and_in_what_order(tools):
    import asyncio

    async def swapped(batch, run):  # a pairing fault: c0 gets c2's outcome and back
        outcomes = await asyncio.gather(*(run(r) for r in batch))
        return list(zip([r.call_id for r in batch], outcomes[::-1], strict=True))

    async def reversed_order(batch, run):  # an ordering fault: right pairs, stored backwards
        outcomes = await asyncio.gather(*(run(r) for r in batch))
        return [(o.call_id, o) for o in outcomes[::-1]]

    step = run_coroutine(Executor(3, collect=swapped).execute(READS, tools))
    assert [m.tool_call_id for m in step.messages(READS)] == ["c0", "c1", "c2"]
    assert step.outcomes["c0"].call_id == "c0" and "auth-api" in step.outcomes["c0"].content
    assert sorted(s.call_id for s in step.spans) == ["c0", "c1", "c2"]  # each ran once
    step = run_coroutine(Executor(3, collect=reversed_order).execute(READS, tools))
    assert [m.tool_call_id for m in step.messages(READS)] == ["c2", "c1", "c0"]


def test_a_collector_may_return_a_mapping(tools):
    async def as_dict(batch, run):
        return {r.call_id: await run(r) for r in batch}

    step = run_coroutine(Executor(collect=as_dict).execute(READS, tools))
    assert [m.tool_call_id for m in step.messages(READS)] == ["c0", "c1", "c2"]


def _gated_reader(ran):
    """Concurrency-safe and approval-gated: the approval must win."""
    def page_oncall():
        ran.append("page_oncall")
        return {"paged": True}
    return Tool("page_oncall", "", {"type": "object"}, page_oncall, concurrency_safe=True,
                requires_approval=True)


@pytest.mark.parametrize("order", [["c0", "c9", "c1"], ["c9", "c0", "c1"], ["c0", "c1", "c9"]])
def test_a_safe_gated_call_never_runs_without_a_decision(tools, order):
    ran = []
    mixed = Toolset({**tools.tools, "page_oncall": _gated_reader(ran)})
    by_id = {"c0": READS[0], "c1": READS[1], "c9": ToolRequest("c9", "page_oncall", "{}", {})}
    requests = [by_id[c] for c in order]
    step = run_coroutine(Executor(4).execute(requests, mixed))
    assert ran == [] and "c9" not in step.outcomes
    assert [r.call_id for r in step.pending] == order[order.index("c9"):]
    approved = run_coroutine(Executor(4).execute(requests, mixed, {"c9": True}))
    assert ran == ["page_oncall"] and sorted(approved.outcomes) == sorted(order)


@pytest.mark.parametrize("virtual", [True, False])
def test_blocking_sync_tools_do_not_serialise_a_concurrent_batch(virtual):
    def slow(n):
        time.sleep(0.3)
        return {"n": n}
    toolset = Toolset.of([Tool("slow", "", {"type": "object"}, slow, concurrency_safe=True)])
    requests = [req(i, "slow", n=i) for i in range(4)]
    started = time.monotonic()
    step = run_coroutine(Executor(4).execute(requests, toolset), virtual=virtual)
    assert time.monotonic() - started < 0.9  # 4 x 0.3 s one after the other would be 1.2 s
    assert [json.loads(m.content)["n"] for m in step.messages(requests)] == [0, 1, 2, 3]


@pytest.mark.parametrize("latency", [None, seeded_latency(3)])
def test_threads_keep_the_virtual_timeline_deterministic(tools, latency):
    def timeline():
        step = run_coroutine(Executor(3, latency).execute([*READS, NOTE], tools))
        return [(s.call_id, s.start, s.end, s.batch) for s in step.spans]
    first = timeline()
    assert all(timeline() == first for _ in range(10))
    if latency is None:  # started at the same instant: collected in request order
        assert first == [("c0", 0, 0, 0), ("c1", 0, 0, 0), ("c2", 0, 0, 0), ("c3", 0, 0, 1)]
