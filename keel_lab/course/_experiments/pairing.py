"""Pairing experiments: how often each strategy hands a call someone else's result, and how
often results come back in request order at all."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from typing import Any

from keel_lab._core.clock import now, run_coroutine
from keel_lab._core.pairing import (
    STRATEGIES,
    Execute,
    Pairs,
    Result,
    Strategy,
    StrategyName,
    by_call_id,
    position_over_completion,
    position_over_gather,
    position_over_gather_filtered,
)
from keel_lab._core.protocol import ToolCall
from keel_lab._i18n import _
from keel_lab.course._experiments.mine import YOURS, Mine
from keel_lab.course._experiments.report import Progress, Report
from keel_lab.course._experiments.trials import Tally, ToolFailure, TrialSpec, run_trials


def theory(calls: int) -> float:
    """P(completion order != request order) for n i.i.d. continuous delays: 1 - 1/n!."""
    return 1 - 1 / math.factorial(calls)


def pairing(trials: int = 1000, calls: int = 3, seed: int = 0, low: float = 0.010,
            spread: float = 0.490, progress: Progress | None = None,
            mine: PairResults | None = None) -> Report:
    """Every strategy on the same randomised turns; the skip strategy also gets one denied call.
    `mine`, a learner's `pair_results`, pairs the results of the same turns as they finish,
    under the key "yours" (its row labelled so)."""
    skip: frozenset[StrategyName] = frozenset({"position_with_skip"})
    spec = TrialSpec(calls, low, spread)
    lab = run_trials(STRATEGIES, trials, spec, seed, deny_for=skip, progress=progress)
    worst = max(lab, key=lambda n: lab[n].trials_with_mismatch)
    findings = [
        _("theory for position over completion order: 1 - 1/{calls}! = {theory}").format(
            calls=calls, theory=f"{theory(calls):.3f}"),
        _("most mismatches: {worst}; by_call_id mismatches: {mismatches}").format(
            worst=worst, mismatches=lab["by_call_id"].trials_with_mismatch),
    ]
    tallies: dict[str, Tally] = {name: t for name, t in lab.items()}
    learner = Mine(mine) if mine is not None else None
    if learner is not None:
        tallies |= learner.run(lambda fn: run_trials({"yours": _pairing_with(fn)}, trials,
                                                     spec, seed)) or {}
        findings += [learner.line] if learner.line else []
    strategies = {name: {"trials_with_mismatch": t.trials_with_mismatch,
                         "mismatched_pairs": t.mismatched_pairs} for name, t in tallies.items()}
    rows = [{"strategy": _(YOURS) if name == "yours" else name,
             "trials_with_mismatch": t.trials_with_mismatch,
             "mismatch_rate": t.rate(trials), "mismatched_pairs": t.mismatched_pairs}
            for name, t in tallies.items()]
    return Report("pairing", {"trials": trials, "calls": calls, "seed": seed,
                              "delay_ms": [round(low * 1000), round((low + spread) * 1000)]},
                  {"strategies": strategies, "theory": theory(calls)}, rows, findings)


PairResults = Callable[[list[ToolCall], list[Result]], Iterable[Sequence[Any]]]


def _pairing_with(pair_results: PairResults) -> Strategy:
    """A strategy from a learner's `pair_results`: every call run at once, the results taken
    as they finish, and paired by the learner's function."""
    async def strategy(calls: Sequence[ToolCall], execute: Execute,
                       denied: frozenset[str] = frozenset()) -> Pairs:
        results = [await f for f in asyncio.as_completed(
            [execute(c) for c in calls if c.id not in denied])]
        return [(call, result) for call, result in pair_results(list(calls), results)]
    return strategy


# The two strategies the sweeps compare: position over completion order, and by call id.
SWEPT: dict[StrategyName, Strategy] = {"position_over_completion": position_over_completion,
                                       "by_call_id": by_call_id}


def spread_sweep(spreads: Sequence[float] = (0.0, 0.0005, 0.001, 0.002, 0.005, 0.02, 0.1, 0.49),
                 trials: int = 300, calls: int = 3, seed: int = 0,
                 progress: Progress | None = None) -> Report:
    """Mismatch rate as the delays spread out: from never to 1 - 1/n!."""
    rows = []
    for spread in spreads:
        t = run_trials(SWEPT, trials, TrialSpec(calls, spread=spread), seed, progress=progress)
        rows.append({"spread_ms": spread * 1000,
                     "position_over_completion": t["position_over_completion"].rate(trials),
                     "by_call_id": t["by_call_id"].rate(trials), "theory": theory(calls)})
    return Report("spread", {"trials": trials, "calls": calls, "seed": seed}, {}, rows,
                  [_("calls dispatched 1 ms apart: a spread near 0 keeps request order; wide "
                     "spreads approach 1 - 1/n!, and each measured rate scatters around it by "
                     "sampling noise (plot: the 95% range)")])


def calls_sweep(counts: Sequence[int] = (1, 2, 3, 4, 5, 6), trials: int = 300, seed: int = 0,
                progress: Progress | None = None) -> Report:
    """Mismatch rate against the number of calls in the turn, beside 1 - 1/n!."""
    rows = []
    for n in counts:
        t = run_trials(SWEPT, trials, TrialSpec(n), seed, progress=progress)
        rows.append({"calls": n, "position_over_completion":
                     t["position_over_completion"].rate(trials),
                     "by_call_id": t["by_call_id"].rate(trials), "theory": theory(n)})
    return Report("calls", {"trials": trials, "seed": seed}, {}, rows)


def exceptions(trials: int = 1000, calls: int = 3, seed: int = 0, failure_rate: float = 0.2,
               progress: Progress | None = None) -> Report:
    """When a call raises: plain `gather` loses the whole turn, `return_exceptions=True` plus
    filtering shifts every later pair, and the call-id table answers every call."""
    strategies: dict[StrategyName, Strategy] = {
        "position_over_gather": position_over_gather,
        "position_over_gather_filtered": position_over_gather_filtered,
        "by_call_id": by_call_id}
    tallies = run_trials(strategies, trials, TrialSpec(calls, failure_rate=failure_rate), seed,
                         progress=progress)
    rows = [{"strategy": n, "trials_with_mismatch": t.trials_with_mismatch,
             "mismatched_pairs": t.mismatched_pairs, "unanswered_calls": t.unanswered}
            for n, t in tallies.items()]
    return Report("exceptions", {"trials": trials, "calls": calls, "seed": seed,
                                 "failure_rate": failure_rate},
                  {"strategies": {r["strategy"]: {k: v for k, v in r.items() if k != "strategy"}
                                  for r in rows}}, rows,
                  [_("unanswered calls make the next request fail: {n} with "
                     "position_over_gather (plain gather), 0 with by_call_id").format(
                         n=tallies["position_over_gather"].unanswered)
                   if tallies["by_call_id"].unanswered == 0
                   else _("by_call_id left calls unanswered: a bug")])


def order(trials: int = 1000, calls: int = 3, seed: int = 0,
          progress: Progress | None = None) -> Report:
    """How often the collected order is the request order: with `gather` always, with
    `as_completed` about 1/n! of the time. The rows name asyncio's collectors, not the
    strategies built on them."""
    tallies = run_trials({"gather": position_over_gather,
                          "as_completed": position_over_completion},
                         trials, TrialSpec(calls), seed, progress=progress)
    in_order = {n: trials - t.trials_with_mismatch for n, t in tallies.items()}
    rows = [{"collector": n, "in_request_order": k, "share": k / trials}
            for n, k in in_order.items()]
    return Report("order", {"trials": trials, "calls": calls, "seed": seed},
                  {"in_request_order": in_order, "theory_as_completed": 1 / math.factorial(calls)},
                  rows, [_("theory for as_completed: 1/{calls}! = {theory}; gather sorts results "
                           "back into argument order and hides the problem").format(
                               calls=calls, theory=f"{1 / math.factorial(calls):.3f}")])


# call -> (what it stands for, delay in seconds); call-b raises when its delay is over.
SIBLINGS = {"call-a": ("add_incident_note", 0.300), "call-b": ("lookup_incident", 0.100),
            "call-c": ("lookup_incident", 0.200)}
Calls = list[Coroutine[Any, Any, str]]
Collector = Callable[[Calls], Awaitable[list[object]]]


async def _task_group(calls: Calls) -> list[object]:
    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(c) for c in calls]
    return [t.result() for t in tasks]


async def _gather(calls: Calls) -> list[object]:
    return list(await asyncio.gather(*calls))


async def _gather_return_exceptions(calls: Calls) -> list[object]:
    return list(await asyncio.gather(*calls, return_exceptions=True))


COLLECTORS: dict[str, Collector] = {
    "gather": _gather, "gather(return_exceptions=True)": _gather_return_exceptions,
    "TaskGroup": _task_group}


async def _siblings(collect: Collector) -> dict[str, object]:
    """One turn through `collect`; the caller catches the failure and carries on for a second,
    as an agent loop does, while we watch what each call does."""
    fate: dict[str, str] = {}
    ran: set[str] = set()  # the calls that ran to their end

    def ms() -> str:
        return f"{now() * 1000:.0f}"

    async def call(call_id: str) -> str:
        try:
            await asyncio.sleep(SIBLINGS[call_id][1])
        except asyncio.CancelledError:
            fate[call_id] = _("cancelled at {ms} ms").format(ms=ms())
            raise
        if call_id == "call-b":
            fate[call_id] = _("raised at {ms} ms").format(ms=ms())
            raise ToolFailure(f"{call_id} failed")
        fate[call_id] = _("ran to the end at {ms} ms").format(ms=ms())
        ran.add(call_id)
        return call_id

    try:
        results = await collect([call(c) for c in SIBLINGS])
        got = _("{n} results at {ms} ms").format(n=len(results), ms=ms())
        returned = {r for r in results if isinstance(r, str)}
    except (ToolFailure, ExceptionGroup) as exc:
        got = _("{error} at {ms} ms, no results").format(error=type(exc).__name__, ms=ms())
        returned = set()
    await asyncio.sleep(1.0)
    lost = [c for c in SIBLINGS if c in ran and c not in returned]
    return {"caller_gets": got, **{c: fate[c] for c in SIBLINGS}, "results_lost": len(lost)}


def gather_siblings() -> Report:
    """When one call raises: does `gather` cancel its siblings? It does not (TaskGroup does)."""
    rows = [{"collector": name, **run_coroutine(_siblings(collect))}
            for name, collect in COLLECTORS.items()]
    plain = rows[0]
    return Report("gather", {"calls": {c: f"{n}, {d * 1000:.0f} ms" for c, (n, d)
                                       in SIBLINGS.items()}, "raises": "call-b"},
                  {"results_lost": {r["collector"]: r["results_lost"] for r in rows}}, rows,
                  [_("plain gather: {caller_gets}; yet call-a {call_a} and call-c {call_c}: "
                     "siblings are not cancelled, their side effects happen, {lost} results are "
                     "lost").format(caller_gets=plain["caller_gets"], call_a=plain["call-a"],
                                    call_c=plain["call-c"], lost=plain["results_lost"]),
                   _("only the TaskGroup cancels the siblings when one call raises")])
