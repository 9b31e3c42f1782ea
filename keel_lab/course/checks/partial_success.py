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
from keel_lab.course.i18n import N_, _
from keel_lab.course.offline_model import OfflineAdapter
from keel_lab.course.scenarios import PARTIAL

STATUS_CASES: list[tuple[list[str | None], str]] = [
    ([None, None, None], N_("every call succeeded")),
    ([None, "incident_not_found"], N_("a business error beside a success")),
    (["incident_not_found", "service_not_found"], N_("only business errors")),
    (["tool_timeout", None], N_("a timeout, which the model can explain")),
    (["invalid_arguments"], N_("arguments the model got wrong")),
    ([None, "approval_required"], N_("a call waiting for approval")),
    (["unknown_tool", None], N_("a tool that does not exist")),
    ([None, "tool_internal_error"], N_("a tool that crashed")),
    (["invalid_tool_output"], N_("a tool that returned garbage")),
    (["incident_not_found", "tool_internal_error"], N_("a business error and a crash")),
    (["approval_required", "tool_internal_error"],
     N_("a pause and a crash: fatal outranks a pause")),
    (["unknown_tool", "approval_required"], N_("an unknown tool, then a pause")),
    (["approval_denied", None], N_("a person said no: a fact the model can explain")),
]
REAL_RUN = N_("in a real run, INC-999 missing still completes (marked partial)")


def verify_run_status(status_fn: Callable[[list[str | None]], str]) -> Verdict:
    v = Verdict("run_status", [label for _, label in STATUS_CASES] + [REAL_RUN])
    status_fn = watched(status_fn, (run_status, is_business_error))
    for codes, label in STATUS_CASES:
        got = guard(v, f"{_(label)} {codes}", status_fn, list(codes))
        if got is None:
            return v
        want = run_status(codes)
        v.add(isinstance(got, str) and got == want, f"{_(label)}: {want}",
              _("{label} {codes}: expected '{want}', got {got}").format(
                  label=_(label), codes=codes, want=want, got=repr(got)))
    rule = strict(status_fn, lambda codes: _("given {codes}").format(codes=codes))
    r = guard(v, _("a real run"), Runner(OfflineAdapter(), status_rule=rule).run, PARTIAL)
    if r is not None:
        v.add(r.status == Status.COMPLETED and r.partial, REAL_RUN,
              _("in a real run the status was {status}: the model can explain a missing "
                "incident, so the run should complete").format(status=r.status))
    return v
