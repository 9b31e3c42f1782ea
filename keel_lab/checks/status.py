"""Chapter 5: the run's status from its outcome codes."""

from __future__ import annotations

from collections.abc import Callable

from ..models import OfflineAdapter
from ..policy import run_status
from ..runner import Runner
from .verdict import Verdict, guard

STATUS_CASES: list[tuple[list[str | None], str]] = [
    ([None, None, None], "every call succeeded"),
    ([None, "incident_not_found"], "a business error beside a success"),
    (["incident_not_found", "service_not_found"], "only business errors"),
    (["tool_timeout", None], "a timeout, which the model can explain"),
    (["invalid_arguments"], "arguments the model got wrong"),
    ([None, "approval_required"], "a call waiting for approval"),
    (["unknown_tool", None], "a tool that does not exist"),
    ([None, "tool_internal_error"], "a tool that crashed"),
    (["invalid_tool_output"], "a tool that returned garbage"),
    (["incident_not_found", "tool_internal_error"], "a business error and a crash"),
]


def verify_run_status(status_fn: Callable[[list[str | None]], str]) -> Verdict:
    v = Verdict("run_status")
    for codes, label in STATUS_CASES:
        got = guard(v, label, status_fn, list(codes))
        if got is None:
            return v
        want = run_status(codes)
        v.add(got == want, f"{label}: {want}",
              f"{label} {codes}: expected {want!r}, got {got!r}")

    class LearnersRunner(Runner):
        status_rule = staticmethod(status_fn)

    question = "Which is more severe, INC-001 or INC-999?"
    r = guard(v, "a run", LearnersRunner(OfflineAdapter()).run, question)
    if r is not None:
        v.add(r.status == "completed" and r.partial,
              "in a real run, INC-999 missing still completes (marked partial)",
              f"in a real run the status was {r.status}: the model can explain a missing "
              "incident, so the run should complete")
    return v
