import pytest

from keel_lab import OfflineAdapter, Runner, run_status
from keel_lab._core.partial_success import Status, is_business_error

pytestmark = pytest.mark.ch5


@pytest.mark.parametrize(("codes", "status"), [
    ([None, None], "completed"),
    ([None, "incident_not_found"], "completed"),
    (["tool_timeout", "invalid_arguments"], "completed"),
    ([None, "approval_required"], "waiting_for_approval"),
    (["unknown_tool"], "failed"),
    ([None, "tool_internal_error"], "failed"),
    (["invalid_tool_output", "approval_required"], "failed"),
    ([], "completed"),
])
def test_run_status(codes, status):
    assert run_status(codes) == status


def test_business_errors():
    assert is_business_error("incident_not_found")
    assert not is_business_error(None)
    assert not is_business_error("approval_required")
    assert not is_business_error("unknown_tool")


def test_outcome_mix_draws_end_runs_as_the_runner_ends_them():
    from keel_lab.course._experiments.faults import fail_fast
    from keel_lab.course._experiments.partial_success import flaky_tools, run_outcome
    from keel_lab.course._scenarios import compare_question
    question = compare_question(3)
    for k in range(60):
        key = f"0:0.4:{k}"
        r = Runner(OfflineAdapter(), flaky_tools(key, 0.4, 0.25), seed=k).run(question)
        strict = Runner(OfflineAdapter(), flaky_tools(key, 0.4, 0.25), seed=k,
                        status_rule=fail_fast).run(question)
        ending = "failed" if r.status == Status.FAILED else "partial" if r.partial else "completed"
        assert run_outcome(key, 0.4, 3, 0.25) == (ending, strict.status == Status.FAILED)
