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
from keel_lab.course.checks.verdict import (
    Verdict,
    describe,
    guard,
    labelled,
    returned_none,
    strict,
)
from keel_lab.course.i18n import N_, _
from keel_lab.course.offline_model import OfflineAdapter
from keel_lab.course.scenarios import COMPARE, slow_first

CollectBatch = Callable[[Sequence[ToolRequest], RunCall], Awaitable[Any]]
SIZES = (1, 2, 3, 4, 5, 3)
ONCE = N_("{n} batches with random delays: every call ran once")
OWN = N_("each call answered with its own result, in request order")
CONCURRENT = N_("each batch took as long as its slowest call: the calls ran concurrently")
REAL_RUN = N_("in chapter 2's incident run through the executor: the right answer")


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
    if isinstance(items, str | bytes) or not hasattr(items, "__iter__"):
        return _("your function returned {value}: return (call id, outcome) pairs").format(
            value=describe(stored))
    pairs = list(items)
    for pair in pairs:
        if isinstance(pair, ToolOutcome):
            return _("you returned outcomes: return (call id, outcome) pairs, e.g. "
                     "[(outcome.call_id, outcome), ...]")
        if not (isinstance(pair, tuple | list) and len(pair) == 2 and isinstance(pair[0], str)
                and isinstance(pair[1], ToolOutcome)):
            return _("an item you returned is {value}: each must be a (call id, outcome) "
                     "pair").format(value=describe(pair))
    return [(str(i), o) for i, o in pairs]


def _ran_once(ran: list[str]) -> str:
    twice = sorted({i for i in ran if ran.count(i) > 1})
    if twice:
        return _("{id} ran {n} times: its side effects happened twice - run every call "
                 "exactly once").format(id=twice[0], n=ran.count(twice[0]))
    return ""


def _answered(batch: list[ToolRequest], pairs: list[tuple[str, ToolOutcome]]) -> str:
    """Every call answered once, with its own result, in request order; or what is wrong."""
    ids = [r.call_id for r in batch]
    missing = [i for i in ids if i not in {k for k, _ in pairs}]
    if missing or len(pairs) != len(ids):
        return (_("{n} results for {calls} calls").format(n=len(pairs), calls=len(ids))
                + (_("; {id} got none").format(id=missing[0]) if missing else "")
                + _(": answer every call exactly once"))
    wrong = [(k, o.call_id) for k, o in pairs if o.content != f"result of {k}"]
    if wrong:
        return _("{id} was answered with the result of {other}: pair each result with the "
                 "call id it carries, not by position").format(id=wrong[0][0], other=wrong[0][1])
    if [k for k, _ in pairs] != ids:
        return _("results stored in another order than the calls (completion order?): store "
                 "them in request order, so logs and replays follow the calls")
    return ""


def _concurrent(delays: dict[str, float], took: float) -> str:
    if took > max(delays.values()) + 1e-9:
        return _("the batch took {took} ms, its slowest call {slowest} ms: the calls ran one "
                 "after another - start them all, then wait for all").format(
                     took=f"{took * 1000:.0f}", slowest=f"{max(delays.values()) * 1000:.0f}")
    return ""


def _shown(n: int, batch: list[ToolRequest], delays: dict[str, float]) -> str:
    """A batch as the learner's function got it: ids, and how long each call takes."""
    calls = ", ".join(f"{r.call_id} {delays[r.call_id] * 1000:.0f} ms" for r in batch)
    template = _("batch {n} ({count} calls: {calls})") if len(batch) > 1 else _(
        "batch {n} ({count} call: {calls})")
    return template.format(n=n, count=len(batch), calls=calls)


def verify_collect_batch(collect_batch: CollectBatch) -> Verdict:
    once = _(ONCE).format(n=len(SIZES))
    v = Verdict("collect_batch", [once, OWN, CONCURRENT, REAL_RUN])
    fn = watched(collect_batch, (gather_by_call_id,))
    rng = random.Random(6)
    done: list[tuple[str, list[ToolRequest], dict[str, float], Any, float]] = []
    for n, size in enumerate(SIZES):
        batch, delays = _batch(rng, size)
        label = _shown(n, batch, delays)
        got = guard(v, label, run_coroutine, _collect(fn, batch, delays))
        if got is None:
            return v
        stored, ran, took = got
        if stored is None:
            v.add(False, "", returned_none(label))
            return v
        pairs = _pairs(stored)
        problem = pairs if isinstance(pairs, str) else _ran_once(ran)
        if problem:
            v.add(False, "", labelled(label, problem))
            return v
        done.append((label, batch, delays, pairs, took))
    v.add(True, once, "")
    if not v.first(OWN, (labelled(label, _answered(batch, pairs))
                         for label, batch, _, pairs, _ in done)):
        return v
    if not v.first(CONCURRENT, (labelled(label, _concurrent(delays, took))
                                for label, _, delays, _, took in done)):
        return v
    lab = Runner(OfflineAdapter(), executor=Executor(4, slow_first)).run(COMPARE)
    collect = strict(fn, lambda batch, _run: _("given the batch {ids}").format(
        ids=[r.call_id for r in batch]))
    run = guard(v, _("a real run"), Runner(OfflineAdapter(), executor=Executor(
        4, slow_first, collect=collect)).run, COMPARE)
    if run is not None:
        v.add(run.answer == lab.answer and run.messages == lab.messages, REAL_RUN,
              _("in chapter 2's incident run through the executor the answer was {answer}")
              .format(answer=repr(run.answer or run.error)))
    return v
