"""Partial success: what each error code does to a run, and how often runs end each way."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from keel_lab._core.events import Event
from keel_lab._core.partial_success import Code, Status, is_business_error, run_status
from keel_lab._core.runner import Runner
from keel_lab._core.tools import ToolError, Toolset
from keel_lab._i18n import _
from keel_lab.course._experiments.mine import Mine
from keel_lab.course._experiments.report import Progress, Report
from keel_lab.course._incident_tools import incident_tools, lookup_incident
from keel_lab.course._offline_model import OfflineAdapter
from keel_lab.course._scenarios import SCENARIOS

StatusHistory = Callable[[list[Event]], Sequence[str]]


def partial_success(seed: int = 0, mine: StatusHistory | None = None) -> Report:
    """Run each scenario with the offline model and report what the user would see. `mine`, a
    learner's `status_history`, reads each run's events: its statuses in the column "yours"."""
    runs = [(scenario, Runner(OfflineAdapter(seed), seed=seed).run(_(question)))
            for scenario, question in SCENARIOS.items()]
    findings = [_("a business error completes (marked partial); approval pauses; "
                  "a broken tool fails the run")]
    learner = Mine(mine) if mine is not None else None
    theirs = learner.run(lambda fn: [{"yours": ", ".join(map(str, fn(list(r.events))))}
                                     for _scenario, r in runs]) if learner else None
    rows = []
    for (scenario, r), yours in zip(runs, theirs or [{}] * len(runs), strict=True):
        codes = [e.code for e in r.events if e.code]
        rows.append({"scenario": _(scenario), "status": r.status, "partial": r.partial, **yours,
                     "codes": ",".join(codes), "shown": r.answer or r.error})
    if learner is not None and learner.line:
        findings.append(learner.line)
    return Report("partial", {"seed": seed}, {}, rows, findings)


def _drawn(u: float, failure_rate: float, internal_share: float) -> str | None:
    """One lookup's code from one uniform draw: a crash, a business error, or success."""
    if u < failure_rate * internal_share:
        return Code.TOOL_INTERNAL_ERROR
    return "incident_locked" if u < failure_rate else None


def flaky_tools(seed: str, failure_rate: float, internal_share: float) -> Toolset:
    """The incident tools, but each lookup fails with `failure_rate`: mostly with a business
    error the model can explain, `internal_share` of the time with a crash. `outcome_mix`
    draws the same codes without running the agent; a test checks both agree run by run."""
    rng = random.Random(seed)
    tools = incident_tools()
    base = tools.tools["lookup_incident"]

    def lookup(incident_id: str) -> dict[str, Any]:
        code = _drawn(rng.random(), failure_rate, internal_share)
        if code == Code.TOOL_INTERNAL_ERROR:
            raise RuntimeError("incident store connection reset")
        if code:
            raise ToolError(code, f"{incident_id} is being edited; try later")
        return lookup_incident(incident_id)

    return Toolset({**tools.tools, "lookup_incident": replace(base, function=lookup)})


def run_outcome(key: str, rate: float, calls: int, internal_share: float
                ) -> tuple[str, bool]:
    """How one run of `calls` lookups ends, by the lab's own rule on its seeded codes
    (`run_status`, then partial if a business error was answered), and whether a runner that
    fails on the first error would fail it."""
    rng = random.Random(key)
    codes = [_drawn(rng.random(), rate, internal_share) for _ in range(calls)]
    status = run_status(codes)
    ending = ("failed" if status == Status.FAILED else
              "partial" if any(is_business_error(c) for c in codes) else "completed")
    return ending, any(codes)


def theory(rate: float, calls: int, internal_share: float) -> dict[str, float]:
    """The expected shares: a run fails if any lookup crashed, completes clean if none failed."""
    clean, no_crash = (1 - rate) ** calls, (1 - rate * internal_share) ** calls
    return {"completed": clean, "partial": no_crash - clean, "failed": 1 - no_crash,
            "failed_if_fail_fast": 1 - clean}


def outcome_mix(rates: Sequence[float] = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5), runs: int = 2000,
                calls: int = 3, seed: int = 0, internal_share: float = 0.25,
                progress: Progress | None = None) -> Report:
    """Share of runs that complete, complete partially or fail, as lookups fail more often;
    beside it, the share a fail-on-first-error runner would fail on the same failures. Each
    run's codes are drawn as `flaky_tools` draws them, so thousands of runs take a moment; the
    data holds the theory, around which the plot draws the 95% range of `runs` runs."""
    rows = []
    for rate in rates:
        counts = {"completed": 0, "partial": 0, "failed": 0, "failed_if_fail_fast": 0}
        for k in range(runs):
            ending, fail_fast = run_outcome(f"{seed}:{rate}:{k}", rate, calls, internal_share)
            counts[ending] += 1
            counts["failed_if_fail_fast"] += fail_fast
        if progress:
            progress(runs)
        rows.append({"failure_rate": rate, **{k: v / runs for k, v in counts.items()}})
    return Report("outcomes", {"runs": runs, "calls": calls, "seed": seed,
                               "internal_share": internal_share},
                  {"theory": [theory(rate, calls, internal_share) for rate in rates]}, rows,
                  [_("a crash fails the run; a business error only marks it partial")])
