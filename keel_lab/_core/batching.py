"""Which calls run together: the executor's decision, never the model's.

Consecutive calls whose tools may run together (concurrency-safe and not approval-gated) share
a batch; every other call - a write, an approval, an unknown tool - is a batch of its own. Batches
run in request order: no provider gives meaning to the order of parallel calls in one turn, so
keeping it is the executor's safe convention.
"""

from __future__ import annotations

from collections.abc import Sequence

from keel_lab._core.protocol import ToolRequest
from keel_lab._core.tools import Toolset


def make_batches(requests: Sequence[ToolRequest], tools: Toolset) -> list[list[ToolRequest]]:
    """Group consecutive calls that may run together; every other call is a batch of its own."""
    batches: list[list[ToolRequest]] = []
    together = False
    for r in requests:
        tool = tools.get(r.name)
        safe = tool is not None and tool.may_run_together
        if safe and together:
            batches[-1].append(r)
        else:
            batches.append([r])
        together = safe
    return batches
