"""Which calls may run together: the same turn, sequential and concurrent, on one clock."""

from __future__ import annotations

import json

from .. import vclock
from ..executor import Executor, StepResult, make_batches, seeded_latency
from ..ids import RunIds
from ..incident_tools import incident_tools
from ..protocol import ToolRequest
from .report import Report

# A turn that mixes independent reads with a write in the middle: the write must run alone.
TURN = [
    ("lookup_incident", {"incident_id": "INC-001"}),
    ("lookup_incident", {"incident_id": "INC-003"}),
    ("get_service_status", {"service": "auth-api"}),
    ("add_incident_note", {"incident_id": "INC-001", "note": "pool exhausted"}),
    ("search_logs", {"service": "checkout", "query": "timeout"}),
    ("get_service_status", {"service": "checkout"}),
]


def turn_requests(seed: int = 0) -> list[ToolRequest]:
    ids = RunIds.seeded(seed)
    return [ToolRequest(ids.call_id(0, i), name, json.dumps(args), args)
            for i, (name, args) in enumerate(TURN)]


def timeline(seed: int = 0, limit: int = 4, low: float = 0.05, high: float = 0.4) -> Report:
    """Start and end of every call under both executors, and the wall time of each."""
    requests, tools = turn_requests(seed), incident_tools()
    latency = seeded_latency(seed, low, high)
    runs: dict[str, StepResult] = {
        mode: vclock.run(Executor(n, latency).execute(requests, tools))
        for mode, n in (("sequential", 1), (f"concurrent(limit={limit})", limit))}
    rows = [{"mode": mode, "call": s.call_id.rsplit(":", 1)[1], "name": s.name,
             "batch": s.batch, "start_ms": round(s.start * 1000), "end_ms": round(s.end * 1000)}
            for mode, step in runs.items()
            for s in sorted(step.spans, key=lambda s: s.call_id)]
    wall = {mode: max(s.end for s in step.spans) for mode, step in runs.items()}
    total = sum(latency(r) for r in requests)
    batches = [[r.call_id.rsplit(":", 1)[1] for r in b] for b in make_batches(requests, tools)]
    return Report("timeline", {"seed": seed, "limit": limit},
                  {"wall_s": wall, "sum_of_latencies_s": total, "batches": batches,
                   "spans": rows}, rows,
                  [f"batches: {batches}", *(f"wall time {m}: {w * 1000:.0f} ms"
                                            for m, w in wall.items()),
                   f"sum of latencies: {total * 1000:.0f} ms (a batch costs its slowest call)"])
