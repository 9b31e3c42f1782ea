"""Failure injection: four plausible shortcuts, each run beside the correct code.

Each fault is a small executor subclass or function that changes exactly one decision; the
experiment reports what the lesson predicts and what actually happened, computed from both runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from keel_lab.core.executor import Emit, Executor, TurnResult
from keel_lab.core.history import validate_history
from keel_lab.core.messages import ToolMessage
from keel_lab.core.partial_success import Status, run_status
from keel_lab.core.protocol import ToolRequest
from keel_lab.core.runner import Runner, RunResult
from keel_lab.core.streaming import StreamEvent, cancel_after, snapshots
from keel_lab.core.tools import Toolset
from keel_lab.course.experiments.report import Report
from keel_lab.course.experiments.streaming import executed_calls
from keel_lab.course.offline_model import OfflineAdapter
from keel_lab.course.scenarios import COMPARE, NOTE, PARTIAL, offline_stream, slow_first


class ZipExecutor(Executor):
    """Fault 1: collect a batch with `as_completed` and pair the results by position."""

    async def run_batch(self, batch: list[ToolRequest], tools: Toolset, step: TurnResult,
                        n: int, emit: Emit) -> None:
        tasks = [self.run_one(r, tools, step, n, emit) for r in batch]
        finished = [await f for f in asyncio.as_completed(tasks)]
        for request, outcome in zip(batch, finished, strict=True):
            step.outcomes[request.call_id] = replace(outcome, call_id=request.call_id)


class CompletionOrderTurn(TurnResult):
    def messages(self, requests: Sequence[ToolRequest]) -> list[ToolMessage]:
        return [self.outcomes[s.call_id].to_message() for s in self.spans]


class AppendingExecutor(Executor):
    """Fault 2: tool messages appended in completion order instead of request order."""

    async def execute(self, requests: Sequence[ToolRequest], tools: Toolset,
                      approvals: Mapping[str, bool] | None = None,
                      emit: Emit | None = None) -> TurnResult:
        step = await super().execute(requests, tools, approvals, emit)
        return CompletionOrderTurn(step.outcomes, step.pending, step.spans)


def fail_fast(codes: list[str | None]) -> str:
    """Fault 4, a status rule: any error code fails the whole run."""
    return Status.FAILED if any(codes) else run_status(codes)


def eager_executions(events: Iterable[StreamEvent]) -> list[int]:
    """Fault 3: run a call as soon as its arguments parse. Returns the chunk of each run."""
    ran: set[int] = set()
    chunks = []
    for n, _, calls in snapshots(events):  # if the stream dies, what already ran, ran
        for s in calls:
            if s.index not in ran and s.id and s.name and s.parses:
                ran.add(s.index)
                chunks.append(n)
    return chunks


def _answer(r: RunResult) -> str:
    return f"{r.status}: {r.answer or r.error}"


def faults(seed: int = 0) -> Report:
    """Each fault beside the correct code, on the same question and the same delays."""
    rows = []
    good = Runner(OfflineAdapter(seed), executor=Executor(4, slow_first), seed=seed).run(COMPARE)
    bad = Runner(OfflineAdapter(seed), executor=ZipExecutor(4, slow_first), seed=seed
                 ).run(COMPARE)
    rows.append(_row("zip(calls, results) over as_completed",
                     "facts of INC-001 and INC-002 swap once completion order differs",
                     _answer(good), _answer(bad)))
    bad = Runner(OfflineAdapter(seed), executor=AppendingExecutor(4, slow_first), seed=seed
                 ).run(COMPARE)
    rows.append(_row("append as_completed results straight to messages",
                     "providers accept it; log and replay order no longer follow the calls",
                     _order(good), _order(bad)))
    # 3. executing at the first parse, on a stream cancelled before its finish.
    events = offline_stream(NOTE, seed)
    cut = len(events) - 1
    correct, _ = executed_calls(cancel_after(events, cut))
    eager = eager_executions(cancel_after(events, cut))
    rows.append(_row("execute a call at its first parse",
                     "a write runs although the stream was cancelled before it closed",
                     f"{correct} calls executed", f"{len(eager)} executed (at chunk "
                     f"{', '.join(map(str, eager))} of {len(events)})"))
    # 4. failing the whole run on the first error.
    good = Runner(OfflineAdapter(seed), seed=seed).run(PARTIAL)
    bad = Runner(OfflineAdapter(seed), seed=seed, status_rule=fail_fast).run(PARTIAL)
    rows.append(_row("return failed on the first error",
                     "a business error turns completed into failed",
                     _answer(good), _answer(bad)))
    return Report("faults", {"seed": seed}, {}, rows,
                  [f"{sum(1 for r in rows if r['differs'])} of {len(rows)} faults changed the "
                   "observed result"])


def _order(r: RunResult) -> str:
    tail = [m.tool_call_id.rsplit(":", 1)[1] for m in r.messages if isinstance(m, ToolMessage)]
    valid = "valid" if not validate_history(r.messages) else "invalid"
    return f"history {valid}; tool messages {', '.join(tail)}"


def _row(fault: str, predicted: str, correct: str, faulty: str) -> dict[str, object]:
    return {"fault": fault, "predicted": predicted, "correct": correct, "faulty": faulty,
            "differs": correct != faulty}

