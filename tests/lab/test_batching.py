"""Which calls run together: consecutive calls that may run together share a batch."""

import pytest

from keel_lab import Tool, ToolRequest, Toolset, make_batches

pytestmark = pytest.mark.ch3


def req(i, name):
    return ToolRequest(f"c{i}", name, "{}", {})


def ids(batches):
    return [[r.call_id for r in b] for b in batches]


READS = [req(0, "lookup_incident"), req(1, "lookup_incident"), req(2, "get_service_status")]
NOTE, RESTART, UNKNOWN = req(3, "add_incident_note"), req(4, "restart_service"), req(5, "drop")


def test_only_consecutive_safe_calls_share_a_batch(tools):
    requests = [*READS[:2], NOTE, READS[2], UNKNOWN, RESTART, READS[0]]
    assert ids(make_batches(requests, tools)) == [
        ["c0", "c1"], ["c3"], ["c2"], ["c5"], ["c4"], ["c0"]]




def test_a_safe_but_approval_gated_tool_runs_alone(tools):
    gated = Tool("page_oncall", "", {"type": "object"}, dict, concurrency_safe=True,
                 requires_approval=True)
    mixed = Toolset({**tools.tools, "page_oncall": gated})
    requests = [READS[0], req(9, "page_oncall"), READS[1]]
    assert ids(make_batches(requests, mixed)) == [["c0"], ["c9"], ["c1"]]
