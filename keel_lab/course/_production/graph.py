"""Dependency-graph scheduling: a call waits only for the earlier calls it conflicts with.

The lab's executor runs consecutive safe calls as one batch and every write alone, so a write
holds back every call after it. Production executors schedule by what each call touches: a call
depends on an earlier call when both touch one resource and at least one of them writes. Anything
whose effect is not known - an unknown tool, a write that names no resource - depends on every
earlier call and every later call depends on it. Approval-gated calls are left to the lab's
`Executor`: this scheduler stops the turn before the first one, as the executor does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from keel_lab._core.clock import now
from keel_lab._core.events import Event
from keel_lab._core.executor import Emit, Executor, Latency, TurnResult
from keel_lab._core.partial_success import Code
from keel_lab._core.protocol import ToolRequest
from keel_lab._core.tools import Toolset


@dataclass(frozen=True)
class Access:
    resources: frozenset[str]  # what one call touches
    writes: bool  # whether it changes them
    barrier: bool = False  # unknown effect: conflicts with every call

    def conflicts(self, other: Access) -> bool:
        if self.barrier or other.barrier:
            return True
        return bool(self.resources & other.resources) and (self.writes or other.writes)


AccessRule = Callable[[ToolRequest, Toolset], Access]

RESOURCE_ARGUMENTS = ("incident_id", "service")  # the incident tools' arguments that name things


def argument_access(request: ToolRequest, tools: Toolset) -> Access:
    """The incident tools' footprint: the incident or service an argument names; a tool that is
    not concurrency-safe writes it."""
    tool = tools.get(request.name)
    names = frozenset(f"{key}={value}" for key, value in (request.input or {}).items()
                      if key in RESOURCE_ARGUMENTS)
    writes = tool is None or not tool.concurrency_safe
    barrier = tool is None or request.input is None or (writes and not names)
    return Access(names, writes, barrier)


def dependencies(requests: Sequence[ToolRequest], tools: Toolset,
                 access: AccessRule = argument_access) -> dict[str, tuple[str, ...]]:
    """For each call id, the earlier calls it must wait for (request order breaks ties)."""
    seen = [access(r, tools) for r in requests]
    return {r.call_id: tuple(requests[i].call_id for i in range(n) if seen[i].conflicts(seen[n]))
            for n, r in enumerate(requests)}


def depths(deps: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """How many calls stand, at most, in a chain before each call (0: it may start at once)."""
    out: dict[str, int] = {}
    for call_id, before in deps.items():  # insertion order is request order
        out[call_id] = 1 + max((out[b] for b in before), default=-1)
    return out


class GraphExecutor(Executor):
    """Starts every call as soon as the calls it depends on have finished, `limit` at a time; a
    span's `batch` is the call's depth in the graph."""

    def __init__(self, limit: int = 1, latency: Latency | None = None,
                 access: AccessRule = argument_access) -> None:
        super().__init__(limit, latency)
        self.access = access

    async def execute(self, requests: Sequence[ToolRequest], tools: Toolset,
                      approvals: Mapping[str, bool] | None = None,
                      emit: Emit | None = None) -> TurnResult:
        """Run every call before the first approval-gated one (decisions are the lab's
        `Executor`'s business); that call and the rest are returned as `pending`."""
        result = TurnResult()
        emit = emit or (lambda _: None)
        gated = next((n for n, r in enumerate(requests)
                      if (t := tools.get(r.name)) is not None and t.requires_approval), None)
        if gated is not None:
            result.pending = tuple(requests[gated:])
            requests = requests[:gated]
        deps = dependencies(requests, tools, self.access)
        depth = depths(deps)
        done = {r.call_id: asyncio.Event() for r in requests}
        slots = asyncio.Semaphore(self.limit)

        async def one(request: ToolRequest) -> None:
            for before in deps[request.call_id]:
                await done[before].wait()
            async with slots:
                outcome = await self.run_one(request, tools, result, depth[request.call_id],
                                             emit)
            result.outcomes[request.call_id] = outcome
            done[request.call_id].set()

        await asyncio.gather(*(one(r) for r in requests))
        if result.pending:
            emit(Event("tool.awaiting_approval", result.pending[0].call_id, now(),
                       Code.APPROVAL_REQUIRED))
        return result
