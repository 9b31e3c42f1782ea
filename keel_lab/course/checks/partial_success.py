"""Chapter 5, partial success: the run's status from its outcome codes."""

from __future__ import annotations

from collections.abc import Callable

from keel_lab.core.partial_success import Status, run_status
from keel_lab.core.runner import Runner
from keel_lab.course.checks.verdict import Verdict, guard
from keel_lab.course.offline_model import OfflineAdapter
from keel_lab.course.scenarios import PARTIAL

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
              f"{label} {codes}: expected '{want}', got {got!r}")
    r = guard(v, "a run", Runner(OfflineAdapter(), status_rule=status_fn).run, PARTIAL)
    if r is not None:
        v.add(r.status == Status.COMPLETED and r.partial,
              "in a real run, INC-999 missing still completes (marked partial)",
              f"in a real run the status was {r.status}: the model can explain a missing "
              "incident, so the run should complete")
    return v
