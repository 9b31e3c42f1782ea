"""Batching: the same turn run sequentially and in concurrent batches, on one clock."""

from __future__ import annotations

from keel_lab._core.batching import make_batches
from keel_lab._core.clock import run_coroutine
from keel_lab._core.executor import Executor, TurnResult, seeded_latency
from keel_lab._i18n import _
from keel_lab.course._experiments.report import Report
from keel_lab.course._incident_tools import incident_tools
from keel_lab.course._scenarios import turn_requests


def timeline(seed: int = 0, limit: int = 4, low: float = 0.05, high: float = 0.4) -> Report:
    """Start and end of every call under both executors, and the wall time of each."""
    requests, tools = turn_requests(seed), incident_tools()
    latency = seeded_latency(seed, low, high)
    runs: dict[str, TurnResult] = {
        mode: run_coroutine(Executor(n, latency).execute(requests, tools))
        for mode, n in ((_("sequential"), 1),
                        (_("concurrent(limit={limit})").format(limit=limit), limit))}
    rows = [{"mode": mode, "call": s.call_id.rsplit(":", 1)[1], "name": s.name,
             "batch": s.batch, "start_ms": round(s.start * 1000), "end_ms": round(s.end * 1000)}
            for mode, turn in runs.items()
            for s in sorted(turn.spans, key=lambda s: s.call_id)]
    wall = {mode: max(s.end for s in turn.spans) for mode, turn in runs.items()}
    total = sum(latency(r) for r in requests)
    batches = [[r.call_id.rsplit(":", 1)[1] for r in b] for b in make_batches(requests, tools)]
    return Report("timeline", {"seed": seed, "limit": limit},
                  {"wall_s": wall, "sum_of_latencies_s": total, "batches": batches}, rows,
                  [_("batches: {batches}").format(batches=batches),
                   *(_("wall time {mode}: {ms} ms").format(mode=m, ms=f"{w * 1000:.0f}")
                     for m, w in wall.items()),
                   _("sum of latencies: {ms} ms (a batch costs its slowest call)").format(
                       ms=f"{total * 1000:.0f}")])
