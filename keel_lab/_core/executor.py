"""Executing one turn's calls: batch by batch, each result kept under its call's id.

The batches come from `batching.make_batches`; a batch runs up to `limit` calls at a time. An
approval-gated call without a decision stops the turn there. Results go into a table keyed by
call id, so the order in which they finish cannot matter; how they are gathered is the one
replaceable decision (`Executor`'s `collect` hook, which chapter 6 injects its faults through).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from keel_lab._core.batching import make_batches
from keel_lab._core.clock import now
from keel_lab._core.events import Event
from keel_lab._core.messages import ToolMessage
from keel_lab._core.partial_success import Code
from keel_lab._core.protocol import ToolRequest
from keel_lab._core.tools import ToolOutcome, Toolset, failure, invoke
from keel_lab._i18n import _

Latency = Callable[[ToolRequest], float]
Emit = Callable[[Event], None]
RunCall = Callable[[ToolRequest], Awaitable[ToolOutcome]]
Stored = Iterable[tuple[str, ToolOutcome]] | Mapping[str, ToolOutcome]
Collect = Callable[[Sequence[ToolRequest], RunCall], Awaitable[Stored]]


@dataclass(frozen=True, slots=True)
class Span:
    call_id: str
    name: str
    start: float  # on the loop's clock
    end: float
    batch: int


@dataclass
class TurnResult:
    outcomes: dict[str, ToolOutcome] = field(default_factory=dict)  # by call id
    pending: tuple[ToolRequest, ...] = ()  # waiting for approval, not run
    spans: list[Span] = field(default_factory=list)

    def messages(self, requests: Sequence[ToolRequest]) -> list[ToolMessage]:
        """One tool message per finished call of `requests`, in the order the results were
        stored: request order with the lab's collector, so logs and replays stay aligned."""
        wanted = {r.call_id for r in requests}
        return [o.to_message() for call_id, o in self.outcomes.items() if call_id in wanted]


def seeded_latency(seed: int, low: float = 0.01, high: float = 0.5) -> Latency:
    """A delay per call, drawn from the call id and the seed: the same call waits the same."""
    return lambda r: random.Random(f"{seed}:{r.call_id}").uniform(low, high)


async def gather_by_call_id(batch: Sequence[ToolRequest], run: RunCall
                            ) -> list[tuple[str, ToolOutcome]]:
    """The lab's collector: the whole batch at once, each outcome under its own call id, stored
    in request order (`gather` returns in argument order). A `run` that raises (one reaching
    outside `invoke`) answers its own call with `tool_internal_error`, never its siblings'."""
    async def outcome_of(request: ToolRequest) -> ToolOutcome:
        try:
            return await run(request)
        except Exception as exc:
            return failure(request, Code.TOOL_INTERNAL_ERROR, repr(exc))

    outcomes = await asyncio.gather(*(outcome_of(r) for r in batch))
    return [(o.call_id, o) for o in outcomes]


class Executor:
    """Runs a turn's requests in batches; `limit=1` is the plain sequential executor.

    `collect` decides how one batch's results are gathered and stored (default
    `gather_by_call_id`). It receives the batch and `run`, which runs one call (at most `limit`
    at a time) and returns its outcome, and returns (call id, outcome) pairs or a mapping of
    them. The executor trusts them as given: the outcome's content answers that call id, in
    that order - so a collector can inject a pairing or ordering fault, and the tool messages
    show it.
    """

    def __init__(self, limit: int = 1, latency: Latency | None = None, *,
                 collect: Collect = gather_by_call_id) -> None:
        if limit < 1:
            raise ValueError(_("limit must be at least 1, got {limit}").format(limit=limit))
        self.limit = limit
        self.latency = latency or (lambda _: 0.0)
        self.collect = collect

    async def execute(self, requests: Sequence[ToolRequest], tools: Toolset,
                      approvals: Mapping[str, bool] | None = None,
                      emit: Emit | None = None) -> TurnResult:
        """Run every request once. An approval-gated call without a decision stops the turn:
        it and every call after it are returned as `pending`, none of them run."""
        result = TurnResult()
        emit = emit or (lambda _: None)
        approvals = approvals or {}
        for n, batch in enumerate(make_batches(requests, tools)):
            head = batch[0]
            tool = tools.get(head.name)
            if tool is not None and tool.requires_approval:
                decision = approvals.get(head.call_id)
                if decision is None:
                    result.pending = tuple(requests[requests.index(head):])
                    emit(Event("tool.awaiting_approval", head.call_id, now(),
                               Code.APPROVAL_REQUIRED))
                    break
                if not decision:
                    outcome = failure(head, Code.APPROVAL_DENIED, _("a person denied this call"))
                    result.outcomes[head.call_id] = outcome
                    emit(Event("tool.failed", head.call_id, now(), outcome.code))
                    continue
            await self.run_batch(batch, tools, result, n, emit)
        return result

    async def run_batch(self, batch: list[ToolRequest], tools: Toolset, result: TurnResult,
                        n: int, emit: Emit) -> None:
        """Run one batch, `limit` at a time, and store what the collector pairs with each id."""
        slots = asyncio.Semaphore(self.limit)

        async def run(request: ToolRequest) -> ToolOutcome:
            async with slots:
                return await self.run_one(request, tools, result, n, emit)

        stored = await self.collect(batch, run)
        for call_id, outcome in stored.items() if isinstance(stored, Mapping) else stored:
            result.outcomes[call_id] = replace(outcome, call_id=call_id)

    async def run_one(self, request: ToolRequest, tools: Toolset, result: TurnResult, n: int,
                      emit: Emit) -> ToolOutcome:
        start = now()
        emit(Event("tool.requested", request.call_id, start))
        outcome = await invoke(tools.get(request.name), request, self.latency(request))
        end = now()
        result.spans.append(Span(request.call_id, request.name, start, end, n))
        emit(Event("tool.finished" if outcome.ok else "tool.failed", request.call_id, end,
                   outcome.code))
        return outcome
