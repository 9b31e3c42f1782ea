"""Streaming experiments: fragments are not calls until the turn that carries them has ended.

A top-level JSON object that parses is complete - no longer valid object starts with it. A call
waits anyway, by the lab's policy, because its turn may still be cancelled, cut off or refused.
"""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import Any

from keel_lab._core.clock import run_coroutine
from keel_lab._core.executor import Executor
from keel_lab._core.history import validate_history
from keel_lab._core.messages import Message, UserMessage
from keel_lab._core.streaming import (
    Assembly,
    Finish,
    StreamEvent,
    ToolCallDelta,
    assemble,
    cancel_after,
    snapshots,
)
from keel_lab._i18n import _
from keel_lab.course._experiments.mine import YOURS, Mine
from keel_lab.course._experiments.report import Report
from keel_lab.course._incident_tools import incident_tools
from keel_lab.course._scenarios import COMPARE, corrupt, offline_stream


def chunk_rows(events: Iterable[StreamEvent]) -> list[dict[str, object]]:
    """After every event: the touched call's name and arguments so far, parses?, executable?
    At the finish the verdict is the turn's: a refused turn (a reused or changed id) runs none."""
    rows, seen = [], []
    for n, event, calls in snapshots(events):
        seen.append(event)
        touched = ([s for s in calls if s.index == event.index]
                   if isinstance(event, ToolCallDelta) else
                   calls if isinstance(event, Finish) else [])
        turn = assemble(seen) if isinstance(event, Finish) else None
        for s in touched:
            rows.append({"chunk": n, "index": s.index, "name": s.name,
                         "arguments": s.arguments, "parses": s.parses,
                         "executable": (turn.readiness(s) if turn else s.readiness).executable})
    return rows


def chunk_table(question: str = "Look up INC-001", seed: int = 0, chunk_size: int = 6,
                interleave: bool = True) -> Report:
    """The lesson's chunk table, for one call or several interleaved ones (a course question
    is asked in the learner's language)."""
    question = _(question)
    events = offline_stream(question, seed, chunk_size, interleave)
    rows = chunk_rows(events)
    early = [r for r in rows if r["parses"] and not r["executable"]]
    first_exec = next((r["chunk"] for r in rows if r["executable"]), None)
    findings = [_("{events} events; first executable at chunk {chunk} (the finish); before it, "
                  "nothing may run").format(events=len(events), chunk=first_exec)]
    if early:
        findings.append(_("{rows} row(s) parse before the finish: those arguments are complete, "
                          "and the lab still waits for the end of the turn (its policy)")
                        .format(rows=len(early)))
    return Report("streaming", {"question": question, "seed": seed, "chunk_size": chunk_size,
                                "interleave": interleave},
                  {"events": len(events), "first_executable_chunk": first_exec}, rows, findings)


def executed_calls(events: Iterable[StreamEvent]) -> tuple[int, str]:
    """How many calls the correct pipeline runs for this stream, and the run's final word."""
    return executed(assemble(events))


def executed(assembly: Assembly) -> tuple[int, str]:
    """How many of an assembly's calls the executor runs, and the run's final word."""
    if assembly.message is None:
        return 0, assembly.refused or ""
    turn = run_coroutine(Executor().execute(assembly.requests, incident_tools()))
    return len(turn.outcomes), f"finish_reason={assembly.finish_reason}"


def cancellation(question: str = COMPARE, seed: int = 0,
                 chunk_size: int = 6, cut_at: int | None = None,
                 mine: ReadTurn | None = None) -> Report:
    """Cut the stream after `cut_at` events (default: just before the finish): nothing runs.
    `mine`, a learner's `read_turn`, reads both streams too, an event every 10 ms; the user's
    Stop cancels it after `cut_at` events. Its rows are labelled "yours"."""
    question = _(question)
    events = offline_stream(question, seed, chunk_size)
    cut = len(events) - 1 if cut_at is None else cut_at
    rows = []
    streams = ((_("whole stream"), None), (_("cancelled after {n} events").format(n=cut), cut))
    for label, stop in streams:
        ran, why = executed_calls(iter(events) if stop is None else cancel_after(events, stop))
        rows.append({"stream": label, "calls_executed": ran, "note": why})
    learner = Mine(mine) if mine is not None else None
    if learner is not None:
        theirs = learner.run(lambda fn: [(label, _read_by(fn, events, stop))
                                         for label, stop in streams])
        for label, (ran, why) in theirs or ():
            rows.append({"stream": _("{yours}: {stream}").format(yours=_(YOURS), stream=label),
                         "calls_executed": ran, "note": why})
    kept = assemble(cancel_after(events, cut)).calls
    findings = [_("kept for inspection: {n} partial calls, none executed").format(n=len(kept))]
    if learner is not None and learner.line:
        findings.append(learner.line)
    return Report("cancellation", {"question": question, "seed": seed, "cut_at": cut},
                  {"executed": {r["stream"]: r["calls_executed"] for r in rows},
                   "kept_for_inspection": [{"index": s.index, "name": s.name,
                                            "arguments": s.arguments} for s in kept]},
                  rows, findings)


ReadTurn = Callable[[AsyncIterator[StreamEvent], float], Awaitable[Any]]
GAP, TIMEOUT = 0.010, 2.0  # seconds between the events a learner's reader gets; its idle timeout
LATE = 60.0  # virtual seconds after which a reader that has not returned is given up on


def _read_by(read_turn: ReadTurn, events: Sequence[StreamEvent], stop: int | None
             ) -> tuple[int, str]:
    """What runs when a learner's `read_turn` reads the stream, an event every `GAP` s, and,
    with `stop`, is cancelled (the user's Stop) between event `stop` and the next: the calls
    of the assembly it returns, or none when the cancellation went through it."""
    name = getattr(read_turn, "__name__", "read_turn")

    async def stream() -> AsyncGenerator[StreamEvent, None]:
        for event in events:
            await asyncio.sleep(GAP)
            yield event

    async def read() -> object:
        source = stream()
        task = asyncio.ensure_future(read_turn(source, TIMEOUT))
        try:
            if stop is not None:
                await asyncio.sleep(GAP * stop + GAP / 2)
                task.cancel()
            await asyncio.wait({task}, timeout=LATE)
            if not task.done():
                task.cancel()
                raise TimeoutError(_("{name} did not return within {seconds} s").format(
                    name=name, seconds=f"{LATE:.0f}"))
            return asyncio.CancelledError if task.cancelled() else task.result()
        finally:
            await source.aclose()

    got = run_coroutine(read())
    if got is asyncio.CancelledError:
        return 0, _("cancelled while {name} read the stream: nothing ran").format(name=name)
    if not isinstance(got, Assembly):
        raise TypeError(_("{name} returned {got}, not the Assembly of a StreamAssembler").format(
            name=name, got=textwrap.shorten(repr(got), 60)))
    return executed(got)


def bad_sibling(question: str = COMPARE, seed: int = 0,
                chunk_size: int = 6, broken: int = 1) -> Report:
    """One call's JSON is broken; its sibling still runs, and every call is answered.
    `broken` is the index of the call to break (the last one, if the turn has fewer)."""
    question = _(question)
    events = offline_stream(question, seed, chunk_size)
    broken = min(broken, max(e.index for e in events if isinstance(e, ToolCallDelta)))
    assembly = assemble(corrupt(events, broken))
    assert assembly.message is not None
    turn = run_coroutine(Executor().execute(assembly.requests, incident_tools()))
    rows = [{"index": i, "call_id": r.call_id, "arguments": r.raw_arguments,
             "parse_error": r.parse_error, "outcome": turn.outcomes[r.call_id].code or "ok"}
            for i, r in enumerate(assembly.requests)]
    history: list[Message] = [UserMessage(question), assembly.message,
                              *turn.messages(assembly.requests)]
    problems = validate_history(history)
    return Report("bad_json", {"question": question, "seed": seed, "broken_index": broken},
                  {"history_valid": not problems}, rows,
                  [_("history valid: {valid}; the broken call is answered with {outcome}, the "
                     "model can retry it").format(valid=not problems,
                                                  outcome=rows[broken]["outcome"])])
