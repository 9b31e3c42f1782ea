"""Chapter 4, a stalled stream: stop waiting after an idle timeout and run nothing.

The learner's `read_turn(stream, timeout)` feeds an async stream of the lab's events to a
`StreamAssembler` and returns `result()` once the finish arrived, `interrupted(why)` after
`timeout` s of silence (an idle timeout, not a deadline for the turn) or an end without a finish.
On the virtual clock an answer is held to the moment it should return; a stall outlasts a timeout
taken for milliseconds (2000 s), then ends, so one that never times out still returns, late. Its
assembly is compared with the lab's of the same events, each call's verdict included: recorded
turns carry text, notices and refusals, and a dropped `Refuse` leaves a call looking runnable. A
task left pending would go on reading the stream: reported, then cancelled with the stream closed.
Real time is measured too: `time.sleep` blocks the loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from textwrap import shorten
from typing import Any, SupportsIndex

from keel_checks.verdict import (
    Verdict,
    awaitable,
    describe,
    driven,
    guard,
    in_a_loop,
    misuse_marked,
    raised_by,
)
from keel_lab._core.clock import now, run_coroutine
from keel_lab._core.streaming import Assembly, Finish, StreamAssembler, StreamEvent, assemble
from keel_lab._i18n import N_, _
from keel_lab.course import _data as data
from keel_lab.course._scenarios import COMPARE, offline_stream
from keel_lab.providers._diagnosis import read_stream, to_events

ReadTurn = Callable[[AsyncIterator[StreamEvent], float], Awaitable[Any]]
TIMEOUT = 2.0  # seconds of silence the learner's reader is given
STALL = 2100.0  # a stall's silence: longer than the timeout taken for milliseconds
EPS = 1e-6
SLOW = 5.0  # real seconds one replay may take before a blocking wait is suspected (a loaded
# machine takes one or two; a time.sleep the check did not see, as `from time import sleep`)


class Ended(Enum):
    CANCELLED = "cancelled"  # the learner's task ended cancelled, as it must when cancelled


CANCELLED = Ended.CANCELLED


@dataclass(frozen=True)
class Case:
    """One check: the offline turn's first `cut` events (None: all, -1: all but the finish) or
    recorded streams, sent `gap` s apart, then `silent` s of silence before the stream ends."""

    label: str
    gap: float = 0.01
    cut: int | None = None
    silent: float = 0.0
    recorded: tuple[str, ...] = ()
    cancel: bool = False  # the caller cancels the answer halfway through its timeout


CASES = (
    Case(N_("a turn that finishes in time: its calls as the lab assembles them")),
    Case(N_("recorded turns with text, notices and refused calls, finishing with 'refusal', "
            "'length' and 'stop': the lab's text and each call's verdict"),
         recorded=("anthropic/stop_refusal.sse", "token_limit/finish_length.sse",
                   "openai-chat/answer.sse", "quirks/cumulative_snapshots.sse")),
    Case(N_("slow but steady, an event every 1.5 s: read to its finish"), gap=1.5),
    Case(N_("a stall before any event: stopped after 2 s of silence, nothing to run"),
         cut=0, silent=STALL),
    Case(N_("a stall in the middle of a call's arguments: stopped, nothing to run"),
         cut=9, silent=STALL),
    Case(N_("a stall after complete calls, before the finish: stopped, not even they run"),
         cut=-1, silent=STALL),
    Case(N_("a recorded stream that ends without its finish: interrupted, nothing to run"),
         recorded=("quirks/truncated.sse",)),
    Case(N_("the finish, then the connection stays open: the turn returned at its finish"),
         silent=STALL),
    Case(N_("the user cancels while your function waits: the cancellation goes through"),
         cut=9, silent=STALL, cancel=True),
)


@dataclass(frozen=True)
class Run:
    """How an answer read one stream: a record the check judges (made where the answer ran)."""

    got: Any  # what the answer returned, CANCELLED when its task ended cancelled
    took: float  # when it returned, in s from the start
    last: float  # when the last event it read arrived
    read: int  # events it asked for; one more than sent: it waited past the last
    leaked: bool  # a task it started was left pending, cancelled by no one
    blocked: float = 0.0  # seconds it spent in time.sleep, which blocks the loop and its clock


async def _stream(events: Sequence[StreamEvent], gap: float, silent: float,
                  asked: list[float]) -> AsyncGenerator[StreamEvent, None]:
    """`asked` gets the time each event is handed out, and once more when one past the last
    is asked for."""
    for event in events:
        await asyncio.sleep(gap)
        asked.append(now())
        yield event
    asked.append(now())
    await asyncio.sleep(silent)


async def _read(fn: ReadTurn, events: Sequence[StreamEvent], case: Case) -> Run | None:
    """How the answer read the stream; None when it returned None, for `guard` to report."""
    start, before = now(), asyncio.all_tasks()
    asked = [start]
    stream = _stream(events, case.gap, case.silent, asked)
    task = asyncio.ensure_future(awaitable(fn(stream, TIMEOUT)))
    try:
        if case.cancel:
            await asyncio.sleep(case.gap * len(events) + TIMEOUT / 2)
            task.cancel()
        try:
            got = await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise
            got = CANCELLED
    finally:
        left = [t for t in asyncio.all_tasks() - before if t is not task and not t.done()]
        leaked = any(not t.cancelling() for t in left)  # one it cancelled may not be done yet
        for t in left:
            t.cancel()
        await asyncio.gather(*left, return_exceptions=True)
        await stream.aclose()
    last = asked[min(len(asked) - 1, len(events))] - start
    return None if got is None else Run(got, now() - start, last, len(asked) - 1, leaked)


def _drive(fn: ReadTurn, events: Sequence[StreamEvent], case: Case) -> Run | None:
    """The answer's read of one stream, where it runs; `time.sleep` in the loop's thread is
    counted meanwhile (it blocks the loop: no virtual time passes, and the wall's does). Other
    threads' sleeps block nothing and are not counted: a Jupyter kernel's parent poller sleeps
    1 s at a time, all along."""
    blocked = [0.0]
    sleep = time.sleep
    loop_thread = threading.get_ident()

    def counted(seconds: float | SupportsIndex) -> None:
        if threading.get_ident() == loop_thread:
            blocked[0] += float(seconds)
        sleep(seconds)

    time.sleep = counted
    try:
        with misuse_marked():
            run = run_coroutine(_read(fn, events, case))
    finally:
        time.sleep = sleep
    return run if run is None or not blocked[0] else dataclasses.replace(run, blocked=blocked[0])


def _pieces(a: Assembly) -> tuple[str, list[tuple[int, str | None, str, str]]]:
    return a.text, [(s.index, s.id, s.name, s.arguments) for s in a.calls]


def _differs(got: Assembly, want: Assembly) -> str:
    """How a finished assembly differs from the lab's: its calls, then a call's verdict (a
    wrong "may run" first; Refuse, Arguments and Notice decide them too), then its text."""
    if _pieces(got)[1] != _pieces(want)[1]:
        return _("your assembly's calls are not the stream's: feed every event to the assembler")
    odd = sorted(((s.index, got.readiness(s), want.readiness(w))
                  for s, w in zip(got.calls, want.calls, strict=True)
                  if got.readiness(s) != want.readiness(w)),
                 key=lambda v: v[1].executable == v[2].executable)
    if odd:
        mine, lab = (shorten(r.reason, 60, placeholder=" ...") for r in odd[0][1:])
        return _("the call at index {index}: your assembly says \"{mine}\", the lab's \"{lab}\""
                 " - feed every event to the assembler, Refuse, Arguments and Notice too").format(
                     index=odd[0][0], mine=mine, lab=lab)
    return "" if got.text == want.text else _(
        "your assembly's text is {got}, the stream's {want}: feed the text deltas to the "
        "assembler too").format(got=repr(got.text)[:40], want=repr(want.text)[:40])


def _timing(run: Run, sent: int, finished: bool, case: Case) -> str:
    """What is wrong with the moment the answer returned: the finish, the end of the stream, or
    the timeout after the last event it read; "" when it is that moment."""
    due = run.last + (0.0 if finished else min(TIMEOUT, case.silent))
    silence, took, timeout = f"{run.took - run.last:g}", f"{run.took:g}", f"{TIMEOUT:g}"
    if finished and run.read > sent and run.took > due + EPS:
        return _("the finish arrived after {at} s, but you waited {more} s more for another "
                 "event: return assembler.result() at the finish - the stream may stay open "
                 "after it").format(at=f"{due:g}", more=f"{run.took - due:g}")
    if not finished and run.took > due + EPS:
        return _("your timeout fired after {silence} s without an event, not {timeout} s: the "
                 "timeout is in seconds, as asyncio's are").format(
                     silence=silence, timeout=timeout) \
            if run.took < run.last + case.silent - EPS else _(
            "you waited {took} s, {extra} s after the last event: no timeout fired. The "
            "timeout must wrap the wait for the next event (asyncio.wait_for(anext(events), "
            "timeout), or asyncio.timeout around that await) - asyncio runs on the loop's "
            "clock, time.monotonic() on the wall's").format(took=took, extra=silence)
    if run.took >= due - EPS and run.read >= sent:
        return ""
    return _("you stopped reading after {took} s ({why}), but no {timeout} s passed without an "
             "event: the timeout is the silence between two events, not a deadline for the "
             "whole turn").format(took=took, why=run.got.refused, timeout=timeout) \
        if run.took >= TIMEOUT - EPS else _(
        "you stopped after {silence} s without an event, less than the {timeout} s timeout: "
        "wait up to the whole timeout for each event").format(silence=silence, timeout=timeout)


def _problem(run: Run, events: Sequence[StreamEvent], case: Case) -> str:
    """What is wrong with one answer on one stream; "" when it is right."""
    got, finished = run.got, bool(events) and isinstance(events[-1], Finish)
    if run.leaked:
        return _("a task you started is still pending after you returned, waiting on the "
                 "stream: cancel it (task.cancel()) before you return")
    if case.cancel:
        return "" if got is CANCELLED else _(
            "you caught the cancellation and returned {value}: let asyncio.CancelledError "
            "propagate (catch only the timeout), so the code that cancelled you stops "
            "too").format(value=describe(got))
    if got is CANCELLED:
        return _("your function ended cancelled: cancel only what you wait for, not yourself")
    if not isinstance(got, Assembly):
        return _("your function returned {value}: return the assembler's Assembly - "
                 "assembler.result() after the finish, assembler.interrupted(why) after a "
                 "stall").format(value=describe(got))
    want, timing = assemble(events), _timing(run, len(events), finished, case)
    if timing or finished:
        return timing or (_differs(got, want) if got.finish_reason else _(
            "the finish arrived: return assembler.result() - whatever its reason (here "
            "{reason}); interrupted(why) is for a turn that never finished").format(
                reason=repr(want.finish_reason)))
    if not got.refused:
        runnable = [s.index for s in got.calls if got.readiness(s).executable]
        return (_("why must be a non-empty reason: with an empty one the assembly is not "
                  "refused, and the cut turn would pass for a whole one") if
                got.finish_reason is None else
                _("the call at index {index} would run: a turn whose stream never finished "
                  "runs nothing, not even its complete calls - return "
                  "assembler.interrupted(why)").format(index=runnable[0]) if runnable else
                _("your assembly treats the stalled turn as finished (finish reason {reason}):"
                  " its calls would be answered and the model called again - return "
                  "assembler.interrupted(why)").format(reason=repr(got.finish_reason)))
    return "" if _pieces(got) == _pieces(want) else _(
        "the pieces that arrived are not in your assembly: report them (the assembler that "
        "read them keeps them), they are what the user sees")


def _explain(exc: Exception) -> str:
    """What the check knows of an exception: a timeout that escaped, `result()` called
    although no finish was fed to the assembler, or code written as if no loop ran it."""
    if loop := in_a_loop(exc):
        return loop
    hint = (_("(a stall is an answer, not an error: catch the timeout and return "
              "assembler.interrupted(why))") if isinstance(exc, TimeoutError) else
            _("(result() needs a finish: feed the Finish to the assembler too, or return "
              "assembler.interrupted(why) when none arrived)")
            if raised_by(exc, StreamAssembler.result) else "")
    return (" " if hint and str(exc) else "") + hint


def _try(v: Verdict, read_turn: ReadTurn, case: Case, name: str,
         events: Sequence[StreamEvent]) -> str | None:
    """The hint on one stream of a case ("" when right); None when an exception or a None
    settled the check."""
    what = f"{_(case.label)}: {name}" if name else _(case.label)
    started = time.perf_counter()
    run = guard(v, what, driven(_drive, read_turn), events, case, explain=_explain)
    if run is None:
        return None
    wall = max(time.perf_counter() - started, run.blocked)
    problem = _problem(run, events, case) or (_(
        "it took {wall} s of real time: time.sleep blocks the loop and its clock - wait with "
        "asyncio").format(wall=f"{wall:.1f}") if run.blocked or wall > SLOW else "")
    return f"{what}: {problem}" if problem else ""


def verify_read_turn(read_turn: ReadTurn) -> Verdict:
    v = Verdict("read_turn", [case.label for case in CASES])
    offline = offline_stream(COMPARE, seed=0, chunk_size=6)
    for case in CASES:
        hint: str | None = ""
        for name in case.recorded or ("",):
            fmt, records = read_stream(data.path("streams", name)) if name else ("", [])
            hint = _try(v, read_turn, case, name,
                        list(to_events(records, fmt)) if name else offline[:case.cut])
            if hint != "":
                break
        if hint is None or not v.first(_(case.label), [hint]):
            return v
    return v
