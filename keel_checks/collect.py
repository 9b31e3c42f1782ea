"""Chapter 6, the fault-free collector: a batch run concurrently, every call answered once with
the very outcome `run` gave it, stored in request order.

The learner's `collect_batch(batch, run)` is the executor's `collect` hook. The check runs it on
batches with random delays and realistic random ids (sorting them never gives request order),
some of whose calls fail (a failed call's error outcome is its answer, to be kept like a result),
one of them fatally, and one call slower than any "safety" timeout. It counts every execution,
every cancelled one, and what still ran when the collector returned; it hands the collector a
copy of the batch, to see it changed. Then come batches where `run` itself raises for a call (a
remote worker lost, as a run reaching outside the lab's `invoke` can): one raising call must not
take its siblings' outcomes with it, and it gets a `tool_internal_error` outcome of its own, as
`invoke` answers a tool that raises. Last, it runs the collector inside real runs (chapter 2's
incident, and a tool that breaks: dropping an error code would let that run go on). It asks for
the list of pairs the exercise names: the executor also takes a mapping, the exercise does not.
A collector still waiting a virtual minute after its calls ended is stopped and told so.
"""

from __future__ import annotations

import asyncio
import json
import random
import traceback
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
LOST = "INC-503"  # the remote worker running it is lost: `run` raises ConnectionError
# Per batch: how long its first call takes (made first, it ends last; the last one outlasts a
# 1 s "safety" timeout), and the incident each call looks up.
BATCHES = ((0.5, (OK,)), (0.5, (OK, MISSING)), (0.5, (OK, MISSING, OK)),
           (0.5, (MISSING, OK, BROKEN, OK)), (0.5, (OK, MISSING, OK, MISSING, MISSING)),
           (1.5, (MISSING, MISSING, MISSING)))
RAISING = ((0.5, (OK, LOST, MISSING, OK)), (0.5, (LOST, OK, LOST)))  # the first raises last
HANG = 60.0  # virtual seconds a collector may take: every call has ended long before
ONCE = N_("{n} batches with random delays: every call ran once")
OWN = N_("each call answered with its own result or error, in request order")
CONCURRENT = N_("each batch took as long as its slowest call: the calls ran concurrently")
RAISED = N_("a call whose run raised: answered with an error outcome of its own, the other "
            "calls with theirs")
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
    escaped: str = ""  # the call whose run's exception left the collector
    stuck: bool = False  # still waiting `HANG` seconds on


Done = tuple[str, Collected, list[tuple[str, ToolOutcome]]]  # a batch's label, record, pairs


def _batch(rng: random.Random, first: float, incidents: Sequence[str]) -> Collected:
    """Calls with ids like `call_9f3Kx...`; the first takes `first` seconds, the others
    10-490 ms, so completion order never is request order."""
    alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
    ids = ["call_" + "".join(rng.choice(alphabet) for _ in range(10)) for _ in incidents]
    batch = [ToolRequest(i, "lookup_incident", json.dumps({"incident_id": inc}),
                         {"incident_id": inc}) for i, inc in zip(ids, incidents, strict=True)]
    delays = [first] + [rng.uniform(0.010, 0.490) for _ in ids[1:]]
    return Collected(batch, dict(zip(ids, delays, strict=True)))


def _lost(request: ToolRequest) -> bool:
    """Whether `run` raises for this call instead of returning its outcome."""
    return (request.input or {}).get("incident_id") == LOST


def _outcome(request: ToolRequest) -> ToolOutcome:
    """The one outcome `run` gives a call: its result, or its error (it answers the call too)."""
    incident = (request.input or {}).get("incident_id")
    if incident == MISSING:
        return failure(request, "incident_not_found", f"no incident for {request.call_id}")
    if incident == BROKEN:
        return failure(request, str(Code.TOOL_INTERNAL_ERROR),
                       f"store down for {request.call_id}")
    return ToolOutcome(request.call_id, request.name, f"result of {request.call_id}")


def _source(exc: BaseException, raised: Mapping[str, BaseException]) -> str:
    """The call whose run raised `exc`, or an exception it carries (in a group, as its cause);
    "" for any other exception."""
    todo, seen = [exc], set()
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        found = next((i for i, r in raised.items() if r is e), "")
        if found:
            return found
        todo += [*(e.exceptions if isinstance(e, BaseExceptionGroup) else ()),
                 *([e.__cause__] if e.__cause__ else [])]
    return ""


async def _collect(fn: CollectBatch, c: Collected) -> Collected:
    """Run the collector on a copy of the batch, noting every start, cancel and finish, and a
    run's exception that left it; calls it left running are then cancelled, so no task
    outlives the check's loop."""
    finished: set[str] = set()
    tasks: dict[str, asyncio.Task[Any] | None] = {}
    raised: dict[str, BaseException] = {}

    async def run(request: ToolRequest) -> ToolOutcome:
        c.ran.append(request.call_id)
        tasks[request.call_id] = asyncio.current_task()
        await asyncio.sleep(c.delays[request.call_id])
        finished.add(request.call_id)
        if _lost(request):
            raise raised.setdefault(request.call_id, ConnectionError(
                _("the remote worker running {id} was lost").format(id=request.call_id)))
        return _outcome(request)

    c.given = list(c.batch)
    limit = asyncio.timeout(HANG)
    try:
        try:
            async with limit:
                c.stored = await awaitable(fn(c.given, run))
        except TimeoutError:
            if not limit.expired():
                raise
            c.stuck = True
        except Exception as exc:
            c.escaped = _source(exc, raised)
            if not c.escaped:
                raise
            traceback.clear_frames(exc.__traceback__)  # the calls it held go now, quietly
        c.took = now()
        c.cancelled = {i for i, t in tasks.items()  # cancelled, or asked to be and not yet run
                       if i not in finished and t and (t.cancelled() or t.cancelling())}
        c.running = set(c.ran) - finished - c.cancelled
    finally:
        left = asyncio.all_tasks() - {asyncio.current_task()}
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)
        for own in tasks.values():  # a run's exception the collector left in its task: judged
            if own is not None and own.done() and not own.cancelled():  # here, not logged
                own.exception()
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


def _mismatch(c: Collected, pairs: list[tuple[str, ToolOutcome]],
              own: dict[str, ToolOutcome]) -> str:
    """The first call answered with something other than its own outcome (`own`)."""
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


def _answered(c: Collected, pairs: list[tuple[str, ToolOutcome]],
              own: dict[str, ToolOutcome] | None = None) -> str:
    """Every call answered once, with its own outcome (`own`: by default the one `run` gives
    it), in request order; or what is wrong."""
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
    if problem := _mismatch(c, pairs, {r.call_id: _outcome(r) for r in c.batch}
                            if own is None else own):
        return problem
    if [k for k, _ in pairs] != ids:
        return _("results stored in another order than the calls (completion order?): store "
                 "them in request order, so logs and replays follow the calls")
    return ""


def _escaped(c: Collected) -> str:
    """What a run's exception that left the collector cost: every call of the batch."""
    cancelled = [r.call_id for r in c.batch if r.call_id in c.cancelled]
    return _("{id}'s run raised ConnectionError, and it left your function: the other calls' "
             "outcomes were lost with it, and none of the batch's {n} calls was answered").format(
        id=c.escaped, n=len(c.batch)) + (_("; {ids} cancelled before finishing").format(
            ids=", ".join(cancelled)) if cancelled else "")


def _raised(c: Collected, pairs: list[tuple[str, ToolOutcome]]) -> str:
    """A batch where some runs raised: each such call answered with a `tool_internal_error`
    outcome of its own, every other call with the outcome its run gave it; or what is wrong."""
    got = dict(pairs)
    lost = [r for r in c.batch if _lost(r)]
    if any(key not in c.delays for key in got):
        return _answered(c, pairs)  # answers under names no call has
    first = min(lost, key=lambda r: c.delays[r.call_id]).call_id  # the first to raise
    for r in c.batch:
        if r.call_id in c.cancelled:
            return _("{id} was cancelled when {lost}'s run raised, and lost its own outcome, "
                     "though its own run did not fail").format(id=r.call_id, lost=first)
    for r in lost:
        o = got.get(r.call_id)
        if o is None:
            return _("{id}'s run raised ConnectionError, and the call got no answer: a call "
                     "without its tool message breaks the history").format(id=r.call_id)
        if o.ok:
            return _("{id}'s run raised ConnectionError, and you answered it with a success: "
                     "the model would take its content for the tool's result").format(
                         id=r.call_id)
        if (o.call_id, o.name) != (r.call_id, r.name):
            return _("{id}'s run raised ConnectionError, and you answered it with an outcome "
                     "made for {other}: make its error from its own request").format(
                id=r.call_id, other=o.call_id if o.call_id != r.call_id else repr(o.name))
        if o.code != Code.TOOL_INTERNAL_ERROR:
            return _("{id}'s run raised ConnectionError, and you answered it with the code "
                     "{code}: its code decides the run's status - answer a broken tool as "
                     "`invoke` answers a tool that raises").format(
                         id=r.call_id, code=repr(str(o.code)))
    own = {r.call_id: got[r.call_id] if _lost(r) else _outcome(r) for r in c.batch}
    for r in c.batch:
        o = got.get(r.call_id)
        if o is not None and not _lost(r) and not o.ok and o not in own.values():
            return _("{id} was answered with an error you built ({code}), though its run did "
                     "not raise: its own outcome was lost").format(id=r.call_id,
                                                                    code=repr(str(o.code)))
    return _answered(c, pairs, own)


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
                      + (_(" raises") if _lost(r) else "" if _outcome(r).ok else _(" fails"))
                      for r in c.batch)
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


def _collected(v: Verdict, fn: CollectBatch, n: int, c: Collected) -> Done | None:
    """Batch `n` through the collector, with its label and pairs; None after a hint when it
    raised, returned None or no pairs, ran a call twice or never, or let a run's exception out."""
    label = _shown(n, c)
    got = guard(v, label, driven(_drive, fn), c, explain=in_a_loop)
    if got is None:
        return None
    pairs: list[tuple[str, ToolOutcome]] | str = []
    if got.stuck:
        problem = _("your function was still waiting {s:g} s after its last call had ended, "
                    "and never returned").format(s=HANG)
    elif got.escaped:
        problem = _ran_once(got) or _escaped(got)
    elif got.stored is None:
        v.add(False, "", returned_none(label))
        return None
    else:
        pairs = _pairs(got.stored)
        problem = pairs if isinstance(pairs, str) else _ran_once(got)
    if problem or isinstance(pairs, str):
        v.add(False, "", labelled(label, problem))
        return None
    return label, got, pairs


def verify_collect_batch(collect_batch: CollectBatch) -> Verdict:
    once = _(ONCE).format(n=len(BATCHES))
    v = Verdict("collect_batch", [once, OWN, CONCURRENT, RAISED, REAL_RUN])
    fn = watched(collect_batch, (gather_by_call_id,))
    rng = random.Random(seeded(6))
    done: list[Done] = []
    for n, (first, incidents) in enumerate(BATCHES):
        if (case := _collected(v, fn, n, _batch(rng, first, incidents))) is None:
            return v
        done.append(case)
    v.add(True, once, "")
    if not (v.first(OWN, (labelled(label, _answered(c, pairs)) for label, c, pairs in done))
            and v.first(CONCURRENT, (labelled(label, _concurrent(c)) for label, c, _ in done))):
        return v
    for n, (first, incidents) in enumerate(RAISING, start=len(BATCHES)):
        if (case := _collected(v, fn, n, _batch(rng, first, incidents))) is None:
            return v
        label, c, pairs = case
        if problem := _raised(c, pairs):
            v.add(False, "", labelled(label, problem))
            return v
    v.add(True, RAISED, "")
    _real_runs(v, fn)
    return v
