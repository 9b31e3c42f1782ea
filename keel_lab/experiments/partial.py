"""Partial success: three runs, three statuses, decided by the error codes."""

from __future__ import annotations

from ..models import OfflineAdapter
from ..runner import Runner
from .report import Report

SCENARIOS = {
    "business error": "Which is more severe, INC-001 or INC-999?",
    "approval": "Restart checkout, it is stuck",
    "internal error": "Search the logs of billing and auth-api for 'timeout'",
}


def partial_success(seed: int = 0) -> Report:
    """Run each scenario with the offline model and report what the user would see."""
    rows = []
    for scenario, question in SCENARIOS.items():
        r = Runner(OfflineAdapter(seed), seed=seed).run(question)
        codes = [e.code for e in r.events if e.code]
        rows.append({"scenario": scenario, "status": r.status, "partial": r.partial,
                     "codes": ",".join(codes), "shown": r.answer or r.error})
    return Report("partial", {"seed": seed}, {"rows": rows}, rows,
                  ["a business error completes (marked partial); approval pauses; "
                   "a broken tool fails the run"])
