"""Chapter 5, partial success: the run's status from its outcome codes.

The expected statuses come from `keel_lab.run_status`; the cases include a pause beside a fatal
code, in both orders (a fatal code outranks a pause), and a person's "no" (`approval_denied`).
"""

from __future__ import annotations

from collections.abc import Callable

from keel_lab.core.partial_success import Status, is_business_error, run_status
from keel_lab.core.runner import Runner
from keel_lab.course.checks.delegation import watched
from keel_lab.course.checks.verdict import Verdict, guard, strict
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
    (["approval_required", "tool_internal_error"], "a pause and a crash: fatal outranks a pause"),
    (["unknown_tool", "approval_required"], "an unknown tool, then a pause"),
    (["approval_denied", None], "a person said no: a fact the model can explain"),
]


REAL_RUN = "in a real run, INC-999 missing still completes (marked partial)"


def verify_run_status(status_fn: Callable[[list[str | None]], str]) -> Verdict:
    v = Verdict("run_status", [label for _, label in STATUS_CASES] + [REAL_RUN])
    status_fn = watched(status_fn, (run_status, is_business_error))
    for codes, label in STATUS_CASES:
        got = guard(v, f"{label} {codes}", status_fn, list(codes))
        if got is None:
            return v
        want = run_status(codes)
        v.add(isinstance(got, str) and got == want, f"{label}: {want}",
              f"{label} {codes}: expected '{want}', got {got!r}")
    rule = strict(status_fn, lambda codes: f"given {codes}")
    r = guard(v, "a real run", Runner(OfflineAdapter(), status_rule=rule).run, PARTIAL)
    if r is not None:
        v.add(r.status == Status.COMPLETED and r.partial, REAL_RUN,
              f"in a real run the status was {r.status}: the model can explain a missing "
              "incident, so the run should complete")
    return v
