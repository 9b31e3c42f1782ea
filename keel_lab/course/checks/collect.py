"""Chapter 6, the fault-free collector: a batch run concurrently, every call answered once with
its own result, stored in request order.

The learner's `collect_batch(batch, run)` is the executor's `collect` hook. The check runs it on
batches with random delays and realistic random ids (sorting them never gives request order),
counting every execution, then once inside a real run (chapter 2's incident).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from keel_lab.core.clock import now, run_coroutine
from keel_lab.core.executor import Executor, RunCall, gather_by_call_id
from keel_lab.core.protocol import ToolRequest
from keel_lab.core.runner import Runner
from keel_lab.core.tools import ToolOutcome
from keel_lab.course.checks.delegation import watched
from keel_lab.course.checks.verdict import Verdict, describe, guard
from keel_lab.course.offline_model import OfflineAdapter
from keel_lab.course.scenarios import COMPARE, slow_first

CollectBatch = Callable[[Sequence[ToolRequest], RunCall], Awaitable[Any]]
SIZES = (1, 2, 3, 4, 5, 3)


def _batch(rng: random.Random, size: int) -> tuple[list[ToolRequest], dict[str, float]]:
    """Calls with ids like `call_9f3Kx...` and delays of 10-490 ms; the first, made first,
    takes 500 ms, so completion order never is request order."""
    alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
    ids = ["call_" + "".join(rng.choice(alphabet) for _ in range(10)) for _ in range(size)]
    batch = [ToolRequest(i, "lookup_incident", "{}", {}) for i in ids]
    delays = [0.500] + [rng.uniform(0.010, 0.490) for _ in ids[1:]]
    return batch, dict(zip(ids, delays, strict=True))


async def _collect(fn: CollectBatch, batch: list[ToolRequest], delays: dict[str, float]
                   ) -> tuple[Any, list[str], float]:
    """What the collector returned, every call `run` made, and when the collector was done."""
    ran: list[str] = []

    async def run(request: ToolRequest) -> ToolOutcome:
        ran.append(request.call_id)
        await asyncio.sleep(delays[request.call_id])
        return ToolOutcome(request.call_id, request.name, f"result of {request.call_id}")

    stored = await fn(batch, run)
    return stored, ran, now()


def _pairs(stored: Any) -> list[tuple[str, ToolOutcome]] | str:
    """The (call id, outcome) pairs a collector returned, or what is wrong with them."""
    items = list(stored.items()) if isinstance(stored, Mapping) else stored
    if stored is None:
        return "your function returned None (is a `return` missing?)"
    if isinstance(items, str | bytes) or not hasattr(items, "__iter__"):
        return f"your function returned {describe(stored)}: return (call id, outcome) pairs"
    pairs = list(items)
    for pair in pairs:
        if isinstance(pair, ToolOutcome):
            return ("you returned outcomes: return (call id, outcome) pairs, e.g. "
                    "[(outcome.call_id, outcome), ...]")
        if not (isinstance(pair, tuple | list) and len(pair) == 2 and isinstance(pair[0], str)
                and isinstance(pair[1], ToolOutcome)):
            return (f"an item you returned is {describe(pair)}: each must be a (call id, "
                    "outcome) pair")
    return [(str(i), o) for i, o in pairs]


def _problem(batch: list[ToolRequest], delays: dict[str, float], stored: Any,
             ran: list[str], took: float) -> tuple[str, str]:
    """(what failed, hint), or ("", "") when the collector got this batch right."""
    pairs = _pairs(stored)
    if isinstance(pairs, str):
        return "shape", pairs
    ids = [r.call_id for r in batch]
    twice = sorted({i for i in ran if ran.count(i) > 1})
    if twice:
        return "once", (f"{twice[0]} ran {ran.count(twice[0])} times: its side effects "
                        "happened twice - run every call exactly once")
    missing = [i for i in ids if i not in {k for k, _ in pairs}]
    if missing or len(pairs) != len(ids):
        return "answered", (f"{len(pairs)} results for {len(ids)} calls"
                            + (f"; {missing[0]} got none" if missing else "")
                            + ": answer every call exactly once")
    wrong = [(k, o.call_id) for k, o in pairs if o.content != f"result of {k}"]
    if wrong:
        return "own", (f"{wrong[0][0]} was answered with the result of {wrong[0][1]}: pair "
                       "each result with the call id it carries, not by position")
    if [k for k, _ in pairs] != ids:
        return "order", ("results stored in another order than the calls (completion order?): "
                         "store them in request order, so logs and replays follow the calls")
    if took > max(delays.values()) + 1e-9:
        return "concurrent", (f"the batch took {took * 1000:.0f} ms, its slowest call "
                              f"{max(delays.values()) * 1000:.0f} ms: the calls ran one "
                              "after another - start them all, then wait for all")
    return "", ""


def verify_collect_batch(collect_batch: CollectBatch) -> Verdict:
    v = Verdict("collect_batch")
    fn = watched(collect_batch, (gather_by_call_id,))
    rng = random.Random(6)
    for n, size in enumerate(SIZES):
        batch, delays = _batch(rng, size)
        label = f"batch {n} ({size} call{'s' if size > 1 else ''})"
        got = guard(v, label, run_coroutine, _collect(fn, batch, delays))
        if got is None:
            return v
        failed, hint = _problem(batch, delays, *got)
        if failed:
            v.add(False, "", f"{label}: {hint}")
            return v
    v.add(True, f"{len(SIZES)} batches with random delays: every call ran once", "")
    v.add(True, "each call answered with its own result, in request order", "")
    v.add(True, "each batch took as long as its slowest call: the calls ran concurrently", "")
    lab = Runner(OfflineAdapter(), executor=Executor(4, slow_first)).run(COMPARE)
    run = guard(v, "a real run", Runner(OfflineAdapter(), executor=Executor(
        4, slow_first, collect=fn)).run, COMPARE)
    if run is not None:
        v.add(run.answer == lab.answer and run.messages == lab.messages,
              "in chapter 2's incident run through the executor: the right answer",
              f"in chapter 2's incident run through the executor the answer was "
              f"{run.answer or run.error!r}")
    return v
