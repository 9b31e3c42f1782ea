"""Four ways to pair results with calls; only one survives reordering.

Each strategy takes the turn's calls, a coroutine function that executes one call, and the ids
a policy denied, and returns (call, result) pairs. A result carries the id of the call that
produced it, so a wrong pairing can be counted instead of guessed at.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from keel_lab._core.protocol import ToolCall


@dataclass(frozen=True, slots=True)
class Result:
    call_id: str  # the call that produced this result
    value: str
    error: str | None = None


Execute = Callable[[ToolCall], Awaitable[Result]]
Pairs = list[tuple[ToolCall, Result | None]]
Strategy = Callable[[Sequence[ToolCall], Execute, frozenset[str]], Awaitable[Pairs]]
# A strategy's one name, in experiments, tables, plots and prose alike: its function's name.
StrategyName = Literal["position_over_gather", "position_over_completion", "position_with_skip",
                       "position_over_gather_filtered", "by_call_id"]


async def position_over_gather(calls: Sequence[ToolCall], execute: Execute,
                               denied: frozenset[str] = frozenset()) -> Pairs:
    """`gather` returns in argument order, so `zip` looks right - until one call is not run."""
    results = await asyncio.gather(*(execute(c) for c in calls if c.id not in denied))
    return list(zip(calls, results, strict=False))


async def position_over_completion(calls: Sequence[ToolCall], execute: Execute,
                                   denied: frozenset[str] = frozenset()) -> Pairs:
    """Results in the order they finish (`as_completed`), paired by position: the classic bug."""
    results = [await f for f in asyncio.as_completed(
        [execute(c) for c in calls if c.id not in denied])]
    return list(zip(calls, results, strict=False))


async def position_with_skip(calls: Sequence[ToolCall], execute: Execute,
                             denied: frozenset[str] = frozenset()) -> Pairs:
    """No concurrency at all: run in order, skip denied calls, pair by position."""
    results = [await execute(c) for c in calls if c.id not in denied]
    return list(zip(calls, results, strict=False))


async def position_over_gather_filtered(calls: Sequence[ToolCall], execute: Execute,
                                        denied: frozenset[str] = frozenset()) -> Pairs:
    """`return_exceptions=True`, exceptions dropped, the rest zipped: every later pair shifts."""
    results = await asyncio.gather(*(execute(c) for c in calls if c.id not in denied),
                                   return_exceptions=True)
    kept = [r for r in results if isinstance(r, Result)]
    return list(zip(calls, kept, strict=False))


async def by_call_id(calls: Sequence[ToolCall], execute: Execute,
                     denied: frozenset[str] = frozenset()) -> Pairs:
    """Each result goes into a table under its call's id; every call gets exactly one entry."""
    table: dict[str, Result] = {c.id: Result(c.id, "", "denied_by_policy")
                                for c in calls if c.id in denied}

    async def one(call: ToolCall) -> None:
        try:
            table[call.id] = await execute(call)
        except Exception as exc:
            table[call.id] = Result(call.id, "", f"{type(exc).__name__}: {exc}")

    for f in asyncio.as_completed([one(c) for c in calls if c.id not in denied]):
        await f
    return [(c, table.get(c.id)) for c in calls]


# The pairing experiment's four, each under its function's name (the filtered one is the
# exceptions experiment's).
STRATEGIES: dict[StrategyName, Strategy] = {
    "position_over_gather": position_over_gather,
    "position_over_completion": position_over_completion,
    "position_with_skip": position_with_skip,
    "by_call_id": by_call_id,
}


def mismatches(pairs: Pairs, calls: Sequence[ToolCall]) -> tuple[int, int]:
    """(wrong results, unanswered calls) of one turn; (0, 0) means every pair is right."""
    paired = dict((c.id, r) for c, r in pairs)
    missing = sum(1 for c in calls if paired.get(c.id) is None)
    wrong = sum(1 for c, r in pairs if r is not None and r.call_id != c.id)
    return wrong, missing
