"""Partial success: what each error code does to a run, and how often runs end each way."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from keel_lab.core.partial_success import Status
from keel_lab.core.runner import Runner
from keel_lab.core.tools import ToolError, Toolset
from keel_lab.course.experiments.faults import fail_fast
from keel_lab.course.experiments.report import Progress, Report
from keel_lab.course.incident_tools import incident_tools, lookup_incident
from keel_lab.course.offline_model import OfflineAdapter
from keel_lab.course.scenarios import SCENARIOS, compare_question


def partial_success(seed: int = 0) -> Report:
    """Run each scenario with the offline model and report what the user would see."""
    rows = []
    for scenario, question in SCENARIOS.items():
        r = Runner(OfflineAdapter(seed), seed=seed).run(question)
        codes = [e.code for e in r.events if e.code]
        rows.append({"scenario": scenario, "status": r.status, "partial": r.partial,
                     "codes": ",".join(codes), "shown": r.answer or r.error})
    return Report("partial", {"seed": seed}, {}, rows,
                  ["a business error completes (marked partial); approval pauses; "
                   "a broken tool fails the run"])


def flaky_tools(seed: str, failure_rate: float, internal_share: float) -> Toolset:
    """The incident tools, but each lookup fails with `failure_rate`: mostly with a business
    error the model can explain, `internal_share` of the time with a crash."""
    rng = random.Random(seed)
    tools = incident_tools()
    base = tools.tools["lookup_incident"]

    def lookup(incident_id: str) -> dict[str, Any]:
        u = rng.random()
        if u < failure_rate * internal_share:
            raise RuntimeError("incident store connection reset")
        if u < failure_rate:
            raise ToolError("incident_locked", f"{incident_id} is being edited; try later")
        return lookup_incident(incident_id)

    return Toolset({**tools.tools, "lookup_incident": replace(base, function=lookup)})


def outcome_mix(rates: Sequence[float] = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5), runs: int = 200,
                calls: int = 3, seed: int = 0, internal_share: float = 0.25,
                progress: Progress | None = None) -> Report:
    """Share of runs that complete, complete partially or fail, as lookups fail more often;
    beside it, the share a fail-on-first-error runner would fail on the same failures."""
    rows = []
    question = compare_question(calls)
    for rate in rates:
        counts = {"completed": 0, "partial": 0, "failed": 0, "failed_if_fail_fast": 0}
        for k in range(runs):
            key = f"{seed}:{rate}:{k}"
            r = Runner(OfflineAdapter(seed), flaky_tools(key, rate, internal_share),
                       seed=k).run(question)
            counts["failed" if r.status == Status.FAILED else
                   "partial" if r.partial else "completed"] += 1
            strict = Runner(OfflineAdapter(seed), flaky_tools(key, rate, internal_share),
                            seed=k, status_rule=fail_fast).run(question)
            counts["failed_if_fail_fast"] += strict.status == Status.FAILED
        if progress:
            progress(runs)
        rows.append({"failure_rate": rate, **{k: v / runs for k, v in counts.items()}})
    return Report("outcomes", {"runs": runs, "calls": calls, "seed": seed,
                               "internal_share": internal_share}, {}, rows,
                  ["a crash fails the run; a business error only marks it partial"])
