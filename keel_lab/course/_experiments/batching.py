"""Batching: the same turn run sequentially and in concurrent batches, on one clock."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from keel_lab._core.batching import make_batches
from keel_lab._core.clock import run_coroutine
from keel_lab._core.executor import Executor, TurnResult, seeded_latency
from keel_lab._core.ids import short_call_id
from keel_lab._core.protocol import ToolRequest
from keel_lab._core.tools import Toolset
from keel_lab._i18n import _
from keel_lab.course._experiments.mine import YOURS, Mine
from keel_lab.course._experiments.report import Report
from keel_lab.course._incident_tools import incident_tools
from keel_lab.course._scenarios import turn_requests

MakeBatches = Callable[[list[ToolRequest], Toolset], Iterable[Iterable[ToolRequest]]]


def timeline(seed: int = 0, limit: int = 4, low: float = 0.05, high: float = 0.4,
             mine: MakeBatches | None = None) -> Report:
    """Start and end of every call under both executors, and the wall time of each. `mine`, a
    learner's `make_batches`, batches the same turn for a third run, labelled "yours"."""
    requests, tools = turn_requests(seed), incident_tools()
    latency = seeded_latency(seed, low, high)
    runs: dict[str, TurnResult] = {
        mode: run_coroutine(Executor(n, latency).execute(requests, tools))
        for mode, n in ((_("sequential"), 1),
                        (_("concurrent(limit={limit})").format(limit=limit), limit))}

    def yours(fn: MakeBatches) -> tuple[list[list[str]], TurnResult]:
        batches = [list(b) for b in fn(list(requests), tools)]
        return _ids(batches), run_coroutine(_run_batches(Executor(limit, latency), batches,
                                                         tools))

    learner = Mine(mine) if mine is not None else None
    theirs = learner.run(yours) if learner else None
    if theirs is not None:
        runs[_(YOURS)] = theirs[1]
    rows = [{"mode": mode, "call": short_call_id(s.call_id), "name": s.name,
             "batch": s.batch, "start_ms": round(s.start * 1000), "end_ms": round(s.end * 1000)}
            for mode, turn in runs.items()
            for s in sorted(turn.spans, key=lambda s: s.call_id)]
    wall = {mode: max((s.end for s in turn.spans), default=0.0) for mode, turn in runs.items()}
    total = sum(latency(r) for r in requests)
    batches = _ids(make_batches(requests, tools))
    findings = [_("batches: {batches}").format(batches=batches),
                *(_("wall time {mode}: {ms} ms").format(mode=m, ms=f"{w * 1000:.0f}")
                  for m, w in wall.items()),
                _("sum of latencies: {ms} ms (a batch costs its slowest call)").format(
                    ms=f"{total * 1000:.0f}")]
    if theirs is not None:
        findings.insert(1, _("your batches: {batches}").format(batches=theirs[0]))
    if learner is not None and learner.line:
        findings.append(learner.line)
    return Report("timeline", {"seed": seed, "limit": limit},
                  {"wall_s": wall, "sum_of_latencies_s": total, "batches": batches}, rows,
                  findings)


async def _run_batches(executor: Executor, batches: Iterable[Iterable[ToolRequest]],
                       tools: Toolset) -> TurnResult:
    """The learner's batches, each run as the executor runs one of its own, in their order
    (the chapter's turn holds no approval, so no batch waits for one)."""
    result = TurnResult()
    for n, batch in enumerate(batches):
        await executor.run_batch(list(batch), tools, result, n, lambda _event: None)
    return result



def _ids(batches: list[list[ToolRequest]]) -> list[list[str]]:
    """Batches as the findings show them: each call by its number (`call-3`)."""
    return [[short_call_id(r.call_id) for r in b] for b in batches]
