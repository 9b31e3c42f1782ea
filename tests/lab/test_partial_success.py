import pytest

from keel_lab import run_status
from keel_lab.core.partial_success import is_business_error


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
