"""Failure injection: five plausible shortcuts, each run beside the correct code.

Each fault goes in through one documented hook and changes exactly one decision: how a batch's
results are collected (`Executor(collect=...)`, faults 1, 2 and 5), when a streamed call may
start (`Runner(may_start=...)`, fault 3), what the outcome codes do to the run
(`Runner(status_rule=...)`, fault 4). The functions here are the lab's own version of each fault;
chapter 6 has the learner write theirs and pass them through the same hooks. What a fault did is
classified into one of `SYMPTOMS`, computed from the two runs, so a prediction can be compared
with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from keel_checks.predictions import note
from keel_lab._core.executor import Collect, Executor, Latency, RunCall
from keel_lab._core.history import validate_history
from keel_lab._core.ids import short_call_id
from keel_lab._core.messages import Message, ToolMessage
from keel_lab._core.model import Turn
from keel_lab._core.partial_success import Status, failure_cause, run_status
from keel_lab._core.protocol import ToolRequest
from keel_lab._core.runner import Runner, RunResult
from keel_lab._core.streaming import CallState, StreamEvent, cancel_after, snapshots
from keel_lab._core.tools import ToolOutcome, Toolset
from keel_lab._i18n import N_, _, listing, ngettext
from keel_lab.course._experiments.mine import Mine
from keel_lab.course._experiments.report import Report
from keel_lab.course._offline_model import OfflineAdapter
from keel_lab.course._scenarios import COMPARE, NOTE, PARTIAL, first_hangs, slow_first

DEADLINE = 2.0  # fault 5: the shortcut's time for a whole batch, in seconds


async def zip_over_completion(batch: Sequence[ToolRequest], run: RunCall
                              ) -> list[tuple[str, ToolOutcome]]:
    """Fault 1, a collector: results taken as they finish, paired with the calls by position."""
    finished = [await f for f in asyncio.as_completed([run(r) for r in batch])]
    return [(r.call_id, o) for r, o in zip(batch, finished, strict=True)]


async def append_as_completed(batch: Sequence[ToolRequest], run: RunCall
                              ) -> list[tuple[str, ToolOutcome]]:
    """Fault 2, a collector: each result under its own id, but stored in completion order."""
    finished = [await f for f in asyncio.as_completed([run(r) for r in batch])]
    return [(o.call_id, o) for o in finished]


async def cancel_the_slow(batch: Sequence[ToolRequest], run: RunCall
                          ) -> list[tuple[str, ToolOutcome]]:
    """Fault 5, a collector: at the deadline, the calls still running are cancelled and dropped."""
    tasks = [asyncio.ensure_future(run(r)) for r in batch]
    done, running = await asyncio.wait(tasks, timeout=DEADLINE)
    for task in running:
        task.cancel()
    return [(t.result().call_id, t.result()) for t in tasks if t in done]


def at_first_parse(call: CallState) -> bool:
    """Fault 3, a `may_start` hook: a call starts as soon as its arguments parse."""
    return bool(call.id and call.name and call.parses)


def fail_fast(codes: list[str | None]) -> str:
    """Fault 4, a status rule: any error code fails the whole run."""
    return Status.FAILED if any(codes) else run_status(codes)


def eager_executions(events: Iterable[StreamEvent]) -> list[int]:
    """Fault 3 on a bare stream: the chunk at which each call would start at its first parse."""
    ran: set[int] = set()
    chunks = []
    for n, _event, calls in snapshots(events):  # if the stream dies, what already ran, ran
        for s in calls:
            if s.index not in ran and at_first_parse(s):
                ran.add(s.index)
                chunks.append(n)
    return chunks


class CancelledBeforeFinish(OfflineAdapter):
    """The offline model whose every stream is cancelled just before its finish event: each
    call's text has arrived, none was closed."""

    def stream(self, messages: Sequence[Message], tools: Toolset, turn: Turn
               ) -> Iterator[StreamEvent]:
        events = list(super().stream(messages, tools, turn))
        return cancel_after(events, len(events) - 1)


WIDTH = 120  # the widest line of the faults' table, whose cells hold whole answers (an id or a
# code such as incident_not_found fits a column of five)
SYMPTOMS = {  # translated where shown
    "A": N_("the run fails with an error"),
    "B": N_("the history breaks: the provider would reject the next request"),
    "C": N_("a wrong answer, and no error anywhere"),
    "D": N_("the same answer; only the order of the tool messages changes"),
    "E": N_("a tool runs although its turn was cancelled"),
    "F": N_("nothing observable changes"),
}


def symptom(correct: RunResult, faulty: RunResult) -> str:
    """The first of `SYMPTOMS` that tells the faulty run from the correct one."""
    if faulty.status == Status.CANCELLED and len(faulty.outcomes) > len(correct.outcomes):
        return "E"
    if faulty.status == Status.FAILED != correct.status:
        return "A"
    if validate_history(faulty.messages):
        return "B"
    if faulty.answer != correct.answer:
        return "C"
    if _tool_ids(faulty) != _tool_ids(correct):
        return "D"
    return "F"


@dataclass(frozen=True)
class Fault:
    number: int
    title: str  # translated where shown
    question: str
    runner: Callable[[Any, int], Runner]  # (hook, or None for the lab's code; seed) -> Runner
    shows: Callable[[RunResult], str]  # what to look at in a run to see the fault

    def runs(self, hook: Any, seed: int = 0) -> tuple[RunResult, RunResult]:
        """The lab's correct run and the run with `hook` injected, on the same question."""
        question = _(self.question)  # asked in the learner's language
        return (self.runner(None, seed).run(question), self.runner(hook, seed).run(question))


def _answer(r: RunResult) -> str:
    """The run's status and answer; a failed one by the call that failed it and its code (its
    short id: the table holds whole answers beside it)."""
    cause = failure_cause(r.outcomes) if r.status == Status.FAILED else None
    if cause is None:
        return _("{status}: {answer}").format(status=r.status, answer=r.answer or r.error)
    return _("{status}: {call} answered {code}").format(
        status=r.status, call=short_call_id(cause.call_id), code=cause.code)


def _tool_ids(r: RunResult) -> list[str]:
    return [m.tool_call_id for m in r.messages if isinstance(m, ToolMessage)]


def _order(r: RunResult) -> str:
    ids = listing(short_call_id(i) for i in _tool_ids(r))
    if validate_history(r.messages):
        return _("history invalid; tool messages {ids}").format(ids=ids)
    return _("history valid; tool messages {ids}").format(ids=ids)


def _executed(r: RunResult) -> str:
    n, names = len(r.outcomes), listing(o.name for o in r.outcomes)
    if names:
        return ngettext("{n} call executed ({names}); run {status}",
                        "{n} calls executed ({names}); run {status}", n).format(
            n=n, names=names, status=r.status)
    return ngettext("{n} call executed", "{n} calls executed", n).format(n=n)


def _collecting(hook: Any, seed: int, latency: Latency = slow_first) -> Runner:
    executor = Executor(4, latency, collect=hook) if hook else Executor(4, latency)
    return Runner(OfflineAdapter(seed), executor=executor, seed=seed)


def _hanging(hook: Any, seed: int) -> Runner:
    return _collecting(hook, seed, first_hangs)


FAULTS = [
    Fault(1, N_("zip(calls, results) over as_completed"), COMPARE, _collecting, _answer),
    Fault(2, N_("as_completed results appended straight to the messages"), COMPARE,
          _collecting, _order),
    Fault(3, N_("a streamed call executed at its first parse"), NOTE,
          lambda hook, seed: Runner(CancelledBeforeFinish(seed), stream=True, seed=seed,
                                    may_start=hook), _executed),
    Fault(4, N_("the run failed on its first error"), PARTIAL,
          lambda hook, seed: Runner(OfflineAdapter(seed), seed=seed,
                                    status_rule=hook or run_status), _answer),
    Fault(5, N_("a deadline for the batch: the calls still running cancelled and dropped"),
          COMPARE, _hanging, _order),
]
LAB_FAULTS = [zip_over_completion, append_as_completed, at_first_parse, fail_fast,
              cancel_the_slow]


def observe(number: int, prediction: str, hook: Any, seed: int = 0) -> str:
    """Fault `number` injected through `hook`, beside the lab's code - only once a prediction
    (one letter of `SYMPTOMS`) is written, so the outcome cannot be seen before it."""
    letters = ", ".join(SYMPTOMS)
    guess = (prediction or "").strip().upper()
    if guess not in SYMPTOMS:
        return _("Predict first: set your prediction in the cell above to one of {letters} (you "
                 "wrote {wrote}), then run this cell again.").format(letters=letters,
                                                                     wrote=repr(prediction))
    fault = FAULTS[number - 1]
    learner = Mine(hook)
    try:
        correct, faulty = fault.runs(learner.watched(), seed)
    except NotImplementedError as exc:
        learner.error = exc
    if learner.unwritten:  # the runner may have turned the stub's exception into a failed run
        return _("Write the fault first: replace the `raise NotImplementedError` in {name} "
                 "above, then run this cell again.").format(
                     name=getattr(hook, "__name__", _("the function")))
    seen = symptom(correct, faulty)
    note(f"prediction_{number}", seen == guess)
    verdict = (_("as you predicted") if seen == guess
               else _("not what you predicted: see why below"))
    return "\n".join([
        _("fault {number}: {title}").format(number=number, title=_(fault.title)),
        _("you predicted {letter}: {symptom}").format(letter=guess, symptom=_(SYMPTOMS[guess])),
        _("observed      {letter}: {symptom} - {verdict}").format(
            letter=seen, symptom=_(SYMPTOMS[seen]), verdict=verdict),
        _("  the lab's code: {shown}").format(shown=fault.shows(correct)),
        _("  your fault:     {shown}").format(shown=fault.shows(faulty)),
    ])


def faults(seed: int = 0, mine: Collect | None = None) -> Report:
    """Each of the lab's faults beside the correct code, on the same question and delays;
    `changed` (in the data) says, per fault, whether it changed what is observed. `mine`, a
    learner's `collect_batch`, collects every batch of the correct code's run in its place:
    what that run shows is the column "yours". The table holds whole answers: it wraps to
    `WIDTH`."""
    learner = Mine(mine) if mine is not None else None
    theirs = learner.run(lambda fn: [fault.shows(_collected_by(fn, fault, seed))
                                     for fault in FAULTS]) if learner else None
    rows, changed = [], []
    shown: list[str | None] = list(theirs) if theirs else [None] * len(FAULTS)
    for fault, hook, yours in zip(FAULTS, LAB_FAULTS, shown, strict=True):
        correct, faulty = fault.runs(hook, seed)
        seen = symptom(correct, faulty)
        rows.append({"fault": _(fault.title),
                     "symptom": _("{letter}: {symptom}").format(letter=seen,
                                                                symptom=_(SYMPTOMS[seen])),
                     "correct": fault.shows(correct), "faulty": fault.shows(faulty),
                     **({} if yours is None else {"yours": yours})})
        changed.append(seen != "F")
    findings = [_("{n} of {total} faults changed the observed result").format(
        n=sum(changed), total=len(rows))]
    if learner is not None and learner.line:
        findings.append(learner.line)
    return Report("faults", {"seed": seed}, {"changed": changed}, rows, findings, width=WIDTH)


def _collected_by(collect: Collect, fault: Fault, seed: int) -> RunResult:
    """The fault's correct run, its batches collected by `collect` instead of the lab's."""
    runner = fault.runner(None, seed)
    lab = runner.executor
    runner.executor = Executor(lab.limit, lab.latency, collect=collect)
    return runner.run(_(fault.question))
