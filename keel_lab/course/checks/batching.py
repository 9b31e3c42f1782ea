"""Chapter 3, batching: which calls may share a concurrent batch."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from keel_lab.core.batching import make_batches
from keel_lab.core.executor import seeded_latency
from keel_lab.core.protocol import ToolRequest
from keel_lab.course.checks.verdict import Verdict, guard
from keel_lab.course.incident_tools import incident_tools
from keel_lab.course.scenarios import turn_requests

MakeBatches = Callable[[Sequence[ToolRequest], Any], Sequence[Sequence[ToolRequest]]]


def _request(i: int, name: str) -> ToolRequest:
    return ToolRequest(f"call-{i}", name, "{}", {})


def verify_make_batches(make_batches_fn: MakeBatches) -> Verdict:
    v = Verdict("make_batches")
    tools = incident_tools()
    names = ["lookup_incident", "get_service_status", "search_logs", "add_incident_note",
             "restart_service", "no_such_tool"]
    rng = random.Random(3)
    cases = [turn_requests(0)] + [
        [_request(i, rng.choice(names)) for i in range(rng.randint(1, 8))] for _ in range(30)]
    cases.append([_request(0, "add_incident_note"), _request(1, "add_incident_note")])
    yours: list[list[ToolRequest]] = []
    for n, requests in enumerate(cases):
        got = guard(v, f"case {n}", make_batches_fn, requests, tools)
        if got is None:
            return v
        batches = [list(b) for b in got]
        yours = yours or batches
        problem = _batch_problem(requests, batches, tools)
        if problem:
            calls = ", ".join(f"{r.call_id}={r.name}" for r in requests)
            v.add(False, "", f"requests [{calls}]: {problem}")
            return v
    v.add(True, f"{len(cases)} request lists: every call once, in order", "")
    v.add(True, "unsafe calls (writes, approvals, unknown tools) always run alone", "")
    v.add(True, "consecutive concurrency-safe calls share one batch", "")
    latency = seeded_latency(0, 0.05, 0.4)
    wall = sum(max(latency(r) for r in b) for b in yours)
    serial = sum(latency(r) for r in cases[0])
    v.add(True, f"chapter turn: wall time {wall * 1000:.0f} ms with your batches, "
                f"{serial * 1000:.0f} ms one by one", "")
    return v


def _batch_problem(requests: Sequence[ToolRequest], batches: list[list[ToolRequest]],
                   tools: Any) -> str:
    flat = [r for b in batches for r in b]
    if [r.call_id for r in flat] != [r.call_id for r in requests]:
        return (f"batches hold {[r.call_id for r in flat]}: every call exactly once, "
                "in request order")
    if any(not b for b in batches):
        return "an empty batch"

    def safe(r: ToolRequest) -> bool:
        t = tools.get(r.name)
        return t is not None and t.may_run_together

    for b in batches:
        unsafe = [r for r in b if not safe(r)]
        if unsafe and len(b) > 1:
            return (f"{unsafe[0].call_id} ({unsafe[0].name}) shares a batch with "
                    f"{[r.call_id for r in b if r is not unsafe[0]]}: it must run alone")
    want = len(make_batches(requests, tools))
    if len(batches) != want:
        return (f"{len(batches)} batches where {want} will do: consecutive safe calls "
                "should share one batch")
    return ""
