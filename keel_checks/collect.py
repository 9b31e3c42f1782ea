"""Chapter 6, the fault-free collector: a batch run concurrently, every call answered once with
the very outcome `run` gave it, stored in request order.

The learner's `collect_batch(batch, run)` is the executor's `collect` hook. The check runs it on
batches with random delays and realistic random ids (sorting them never gives request order),
some of whose calls fail (a failed call's error outcome is its answer, to be kept like a result),
one of them fatally, and one call slower than any "safety" timeout. It counts every execution,
every cancelled one, and what still ran when the collector returned; it hands the collector a
copy of the batch, to see it changed. Then it runs the collector inside real runs (chapter 2's
incident, and a tool that breaks: dropping an error code would let that run go on). It asks for
the list of pairs the exercise names: the executor also takes a mapping, the exercise does not.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from keel_checks.delegation import watched
from keel_checks.verdict import (
    Verdict,
    awaitable,
    describe,
    driven,
    guard,
    in_a_loop,
    labelled,
    misuse_marked,
    returned_none,
    seeded,
    strict,
)
from keel_lab._core.clock import now, run_coroutine
from keel_lab._core.executor import Executor, RunCall, gather_by_call_id
from keel_lab._core.partial_success import Code
from keel_lab._core.protocol import ToolRequest
from keel_lab._core.runner import Runner, RunResult
from keel_lab._core.tools import ToolOutcome, failure
from keel_lab._i18n import N_, _, ngettext
from keel_lab.course._offline_model import OfflineAdapter
from keel_lab.course._scenarios import COMPARE, SCENARIOS, slow_first

CollectBatch = Callable[[Sequence[ToolRequest], RunCall], Awaitable[Any]]
OK, MISSING, BROKEN = "INC-001", "INC-999", "INC-500"  # found; not found; its store is down
# Per batch: how long its first call takes (made first, it ends last; the last one outlasts a
# 1 s "safety" timeout), and the incident each call looks up.
BATCHES = ((0.5, (OK,)), (0.5, (OK, MISSING)), (0.5, (OK, MISSING, OK)),
           (0.5, (MISSING, OK, BROKEN, OK)), (0.5, (OK, MISSING, OK, MISSING, MISSING)),
           (1.5, (MISSING, MISSING, MISSING)))
ONCE = N_("{n} batches with random delays: every call ran once")
OWN = N_("each call answered with its own result or error, in request order")
CONCURRENT = N_("each batch took as long as its slowest call: the calls ran concurrently")
REAL_RUN = N_("in real runs through the executor (chapter 2's incident, a broken tool): the "
              "right answer or error")


@dataclass
class Collected:
    """One batch through the learner's collector: what it got and returned, what `run` saw."""

    batch: list[ToolRequest]  # the check's own copy, whatever the collector did to its list
    delays: dict[str, float]
    given: list[ToolRequest] = field(default_factory=list)  # the list the collector received
    stored: Any = None
    ran: list[str] = field(default_factory=list)  # each call `run` started, as often as it did
    cancelled: set[str] = field(default_factory=set)
    running: set[str] = field(default_factory=set)  # started, unfinished when it returned
    took: float = 0.0


def _batch(rng: random.Random, first: float, incidents: Sequence[str]) -> Collected:
    """Calls with ids like `call_9f3Kx...`; the first takes `first` seconds, the others
    10-490 ms, so completion order never is request order."""
    alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
    ids = ["call_" + "".join(rng.choice(alphabet) for _ in range(10)) for _ in incidents]
    batch = [ToolRequest(i, "lookup_incident", json.dumps({"incident_id": inc}),
                         {"incident_id": inc}) for i, inc in zip(ids, incidents, strict=True)]
    delays = [first] + [rng.uniform(0.010, 0.490) for _ in ids[1:]]
    return Collected(batch, dict(zip(ids, delays, strict=True)))


def _outcome(request: ToolRequest) -> ToolOutcome:
    """The one outcome `run` gives a call: its result, or its error (it answers the call too)."""
    incident = (request.input or {}).get("incident_id")
    if incident == MISSING:
        return failure(request, "incident_not_found", f"no incident for {request.call_id}")
    if incident == BROKEN:
        return failure(request, str(Code.TOOL_INTERNAL_ERROR),
                       f"store down for {request.call_id}")
    return ToolOutcome(request.call_id, request.name, f"result of {request.call_id}")


async def _collect(fn: CollectBatch, c: Collected) -> Collected:
    """Run the collector on a copy of the batch, noting every start, cancel and finish; calls
    it left running are then cancelled, so no task outlives the check's loop."""
    finished: set[str] = set()
    tasks: dict[str, asyncio.Task[Any] | None] = {}

    async def run(request: ToolRequest) -> ToolOutcome:
        c.ran.append(request.call_id)
        tasks[request.call_id] = asyncio.current_task()
        await asyncio.sleep(c.delays[request.call_id])
        finished.add(request.call_id)
        return _outcome(request)

    c.given = list(c.batch)
    try:
        c.stored = await awaitable(fn(c.given, run))
        c.took = now()
        c.cancelled = {i for i, t in tasks.items()  # cancelled, or asked to be and not yet run
                       if i not in finished and t and (t.cancelled() or t.cancelling())}
        c.running = set(c.ran) - finished - c.cancelled
    finally:
        left = asyncio.all_tasks() - {asyncio.current_task()}
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)
    return c


def _drive(fn: CollectBatch, c: Collected) -> Collected:
    with misuse_marked():
        return run_coroutine(_collect(fn, c))


def _real_run(fn: CollectBatch, question: str) -> RunResult:
    """A run through the executor with the learner's collector (run where the collector runs)."""
    collect = strict(fn, lambda batch, _run: _("given the batch {ids}").format(
        ids=[r.call_id for r in batch]))
    return Runner(OfflineAdapter(), executor=Executor(4, slow_first, collect=collect)).run(
        question)


def _pairs(stored: Any) -> list[tuple[str, ToolOutcome]] | str:
    """The (call id, outcome) pairs a collector returned, or what is wrong with them."""
    if isinstance(stored, Mapping):
        return _("your function returned {value}: return a list of (call id, outcome) pairs "
                 "in request order, as the exercise asks").format(value=describe(stored))
    if isinstance(stored, str | bytes) or not hasattr(stored, "__iter__"):
        return _("your function returned {value}: return (call id, outcome) pairs").format(
            value=describe(stored))
    pairs = list(stored)
    for pair in pairs:
        if isinstance(pair, ToolOutcome):
            return _("you returned outcomes: return (call id, outcome) pairs, e.g. "
                     "[(outcome.call_id, outcome), ...]")
        two = isinstance(pair, tuple | list) and len(pair) == 2
        if two and isinstance(pair[0], ToolOutcome) and isinstance(pair[1], str):
            return _("your pairs are swapped, (outcome, call id): write (call id, outcome), "
                     "e.g. ({id!r}, outcome)").format(id=pair[1])
        if two and isinstance(pair[0], str) and not isinstance(pair[1], ToolOutcome):
            return _("you answered {id} with {value}: pair each call id with its ToolOutcome, "
                     "a failed call's too").format(id=pair[0], value=describe(pair[1]))
        if two and isinstance(pair[0], ToolRequest):
            return _("your pairs start with the ToolRequest itself: pair its id, "
                     "(request.call_id, outcome)")
        if not (two and isinstance(pair[0], str)):
            return _("an item you returned is {value}: each must be a (call id, outcome) "
                     "pair").format(value=describe(pair))
    return [(str(i), o) for i, o in pairs]


def _ran_once(c: Collected) -> str:
    """The batch left as given, each of its calls run exactly once; or what is wrong."""
    if c.given != c.batch:
        return _("you changed the batch list: read the batch, do not change it - the executor "
                 "still uses it after your function returns")
    twice = next((i for i in c.ran if c.ran.count(i) > 1), None)
    if twice:
        return _("{id} ran {n} times: its side effects happened twice - run every call "
                 "exactly once").format(id=twice, n=c.ran.count(twice))
    never = next((r for r in c.batch if r.call_id not in c.ran), None)
    if never is None:
        return ""
    twin = next((r for r in c.batch if r.call_id in c.ran
                 and r.raw_arguments == never.raw_arguments), None)
    if twin:
        return _("{id} never ran: it has the same arguments as {other}, but two calls with the "
                 "same arguments are still two calls - run each once, answer each with its own "
                 "outcome").format(id=never.call_id, other=twin.call_id)
    return _("{id} never ran: run every call of the batch exactly once").format(
        id=never.call_id)


def _unanswered(c: Collected, missing: list[ToolRequest]) -> str:
    """Why calls got no answer: cancelled, still running, failed; or "" when none of these."""
    ms = {i: f"{d * 1000:.0f}" for i, d in c.delays.items()}
    if cancelled := [r.call_id for r in missing if r.call_id in c.cancelled]:
        return _("{id} ({ms} ms) was cancelled before it finished and never answered: wait for "
                 "every call however long it takes - a timeout of your own drops slow calls "
                 "without a word").format(id=cancelled[0], ms=ms[cancelled[0]])
    if running := [r.call_id for r in missing if r.call_id in c.running]:
        return _("{id} ({ms} ms) was still running when your function returned, and never "
                 "answered: wait for all the calls, not the first ones").format(
                     id=running[0], ms=ms[running[0]])
    if failed := [r for r in missing if not _outcome(r).ok]:
        return _("{id} failed ({code}) and got no answer: its error outcome is its answer - "
                 "return it like a result").format(id=failed[0].call_id,
                                                   code=_outcome(failed[0]).code)
    return ""


def _mismatch(c: Collected, pairs: list[tuple[str, ToolOutcome]]) -> str:
    """The first call answered with something other than the very outcome `run` gave it."""
    own = {r.call_id: _outcome(r) for r in c.batch}
    for key, got in pairs:
        if got == own[key]:
            continue
        other = next((i for i, o in own.items() if o == got), None)
        if other is None:
            field_ = next((f for f in ("code", "content", "detail", "name")
                           if getattr(got, f) != getattr(own[key], f)), "call_id")
            change = (_("its code {code} was lost").format(code=repr(own[key].code))
                      if field_ == "code" and got.code is None else
                      _("its {field} {old} became {new}").format(
                          field=field_, old=f"{getattr(own[key], field_)!r:.40}",
                          new=f"{getattr(got, field_)!r:.40}"))
            return _("{id}'s outcome was replaced by one you built ({change}): answer each call "
                     "with the ToolOutcome `run` returned, unchanged").format(id=key,
                                                                            change=change)
        if any(o == got for k, o in pairs if k != key):
            request = next(r for r in c.batch if r.call_id == key)
            return _("{id} was answered with the outcome of {other}, which answers {other} "
                     "too: {name!r} is a tool name, not a call id - several calls can use one "
                     "tool, so keep each outcome under its own call's id").format(
                         id=key, other=other, name=request.name)
        return _("{id} was answered with the result of {other}: pair each result with the "
                 "call id it carries, not by position").format(id=key, other=other)
    return ""


def _answered(c: Collected, pairs: list[tuple[str, ToolOutcome]]) -> str:
    """Every call answered once, with its own outcome, in request order; or what is wrong."""
    ids = [r.call_id for r in c.batch]
    strangers = [k for k, _ in pairs if k not in ids]
    if strangers:
        if strangers[0] in {r.name for r in c.batch}:
            return _("you answered {key!r}: that is a tool name, not a call id - pair each "
                     "outcome with the id of the call it answers").format(key=strangers[0])
        return _("you answered {key!r}, which is no call id of this batch: pair each outcome "
                 "with the id of the call it answers").format(key=strangers[0])
    missing = [r for r in c.batch if r.call_id not in {k for k, _ in pairs}]
    if missing or len(pairs) != len(ids):
        return _unanswered(c, missing) or (
            _("{n} results for {calls} calls").format(n=len(pairs), calls=len(ids))
            + (_("; {id} got none").format(id=missing[0].call_id) if missing else "")
            + _(": answer every call exactly once"))
    if problem := _mismatch(c, pairs):
        return problem
    if [k for k, _ in pairs] != ids:
        return _("results stored in another order than the calls (completion order?): store "
                 "them in request order, so logs and replays follow the calls")
    return ""


def _concurrent(c: Collected) -> str:
    """"" when the batch took as long as its slowest call; else whether its calls ran one after
    another (it took their sum) or only some of them at once (a limit of its own)."""
    slowest = max(c.delays.values())
    if c.took > slowest + 1e-9:
        serial = c.took >= sum(c.delays.values()) - 1e-9
        return (_("the batch took {took} ms, its slowest call {slowest} ms: the calls ran one "
                  "after another - start them all, then wait for all") if serial else _(
            "the batch took {took} ms, its slowest call {slowest} ms: some calls waited for "
            "others to finish (a limit on how many run at once?) - start them all, then wait "
            "for all")).format(took=f"{c.took * 1000:.0f}", slowest=f"{slowest * 1000:.0f}")
    return ""


def _shown(n: int, c: Collected) -> str:
    """A batch as the learner's function got it: ids, how long each call takes, which fail."""
    calls = ", ".join(f"{r.call_id} {c.delays[r.call_id] * 1000:.0f} ms"
                      + ("" if _outcome(r).ok else _(" fails")) for r in c.batch)
    return ngettext("batch {n} ({count} call: {calls})", "batch {n} ({count} calls: {calls})",
                    len(c.batch)).format(n=n, count=len(c.batch), calls=calls)


def _ending(run: RunResult) -> str:
    """How a run ended, for a hint: its status, then its answer or error."""
    return f"{run.status} ({run.answer or run.error!r:.100})"


def _real_runs(v: Verdict, fn: CollectBatch) -> None:
    """Each question run with the lab's collector and with the learner's; the same answer or
    error, tool messages and outcomes (their codes decide a broken tool's run fails)."""
    for question in (COMPARE, SCENARIOS["internal error"]):
        lab = Runner(OfflineAdapter(), executor=Executor(4, slow_first)).run(question)
        run = guard(v, _("a real run"), driven(_real_run, fn), question)
        if run is None:
            return
        same = (run.status, run.answer, run.error, run.messages, run.outcomes) == (
            lab.status, lab.answer, lab.error, lab.messages, lab.outcomes)
        if not same:
            v.add(False, "", _("asked {question!r} through the executor, the run ended "
                               "{ending}; with the lab's collector it ends {expected}").format(
                question=question, ending=_ending(run), expected=_ending(lab)))
            return
    v.add(True, REAL_RUN, "")


def verify_collect_batch(collect_batch: CollectBatch) -> Verdict:
    once = _(ONCE).format(n=len(BATCHES))
    v = Verdict("collect_batch", [once, OWN, CONCURRENT, REAL_RUN])
    fn = watched(collect_batch, (gather_by_call_id,))
    rng = random.Random(seeded(6))
    done: list[tuple[str, Collected, list[tuple[str, ToolOutcome]]]] = []
    for n, (first, incidents) in enumerate(BATCHES):
        label = _shown(n, c := _batch(rng, first, incidents))
        c = guard(v, label, driven(_drive, fn), c, explain=in_a_loop)
        if c is None:
            return v
        if c.stored is None:
            v.add(False, "", returned_none(label))
            return v
        pairs = _pairs(c.stored)
        problem = pairs if isinstance(pairs, str) else _ran_once(c)
        if problem or isinstance(pairs, str):
            v.add(False, "", labelled(label, problem))
            return v
        done.append((label, c, pairs))
    v.add(True, once, "")
    if v.first(OWN, (labelled(label, _answered(c, pairs)) for label, c, pairs in done)) and (
            v.first(CONCURRENT, (labelled(label, _concurrent(c)) for label, c, _ in done))):
        _real_runs(v, fn)
    return v
