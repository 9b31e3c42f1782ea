"""The run loop: a model turn, every requested call answered, and only then the next turn.

Every call gets exactly one tool message, success or failure, matched by `tool_call_id`; the
model is called again only when all of a turn's results are in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from . import vclock
from .errors import LabError
from .events import Event
from .executor import Executor, Span
from .ids import RunIds
from .incident_tools import incident_tools
from .models import Model, Turn
from .policy import (
    CANCELLED,
    COMPLETED,
    FAILED,
    FATAL_CODES,
    PAUSE_CODE,
    WAITING,
    is_business_error,
    run_status,
)
from .protocol import AssistantMessage, Message, ToolRequest, UserMessage, call_problems
from .streaming import assemble
from .tools import ToolOutcome, Toolset


@dataclass(frozen=True)
class RunResult:
    run_id: str
    status: str  # completed | waiting_for_approval | failed | cancelled
    answer: str
    messages: tuple[Message, ...]
    events: tuple[Event, ...]
    outcomes: tuple[ToolOutcome, ...] = ()
    pending: tuple[ToolRequest, ...] = ()  # calls waiting for a person's decision
    error: str | None = None
    steps: int = 0
    spans: tuple[Span, ...] = ()

    @property
    def partial(self) -> bool:
        """Completed, but some calls answered with a business error: say so to the user."""
        return self.status == COMPLETED and any(is_business_error(o.code) for o in self.outcomes)

    def for_user(self) -> str:
        """What a product would show: a partial answer says so, a pause says what waits."""
        if self.status == WAITING:
            waiting = ", ".join(f"{r.name}({r.raw_arguments})" for r in self.pending[:1])
            return f"Waiting for your approval: {waiting}"
        if self.status != COMPLETED:
            return f"The run {self.status}: {self.error}"
        failed = [o for o in self.outcomes if is_business_error(o.code)]
        if not failed:
            return self.answer
        return (f"Partial answer ({len(self.outcomes) - len(failed)} of {len(self.outcomes)} "
                f"calls answered): {self.answer}")

    def trace(self) -> str:
        head = f"status = {self.status}" + ("  (partial)" if self.partial else "")
        lines = [head, f"answer = {self.answer}" if not self.error else f"error  = {self.error}"]
        return "\n".join(lines + [f"  {e}" for e in self.events])


@dataclass
class _State:
    ids: RunIds
    messages: list[Message]
    events: list[Event] = field(default_factory=list)
    outcomes: list[ToolOutcome] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    steps: int = 0


@dataclass(frozen=True, slots=True)
class _Stop:
    status: str
    reason: str


class Runner:
    """Drives one conversation with a model, a toolset and an executor."""

    status_rule: Callable[[list[str | None]], str] = staticmethod(run_status)

    def __init__(self, model: Model, tools: Toolset | None = None,
                 executor: Executor | None = None, *, seed: int = 0, stream: bool = False,
                 max_steps: int = 6) -> None:
        self.model, self.tools = model, tools or incident_tools()
        self.executor = executor or Executor()
        self.seed, self.stream, self.max_steps = seed, stream, max_steps

    def run(self, question: str, *, virtual: bool = True) -> RunResult:
        return vclock.run(self.start(question), virtual=virtual)

    def approve(self, result: RunResult, approvals: Mapping[str, bool], *,
                virtual: bool = True) -> RunResult:
        return vclock.run(self.resume(result, approvals), virtual=virtual)

    async def start(self, question: str) -> RunResult:
        state = _State(RunIds.seeded(self.seed), [UserMessage(question)])
        return await self._loop(state, (), {})

    async def resume(self, result: RunResult, approvals: Mapping[str, bool]) -> RunResult:
        """Continue a paused run with a decision (True = approve) for each pending call."""
        if result.status != WAITING:
            raise LabError(f"run {result.run_id} is {result.status}, not waiting for approval")
        head = result.pending[0].call_id
        if head not in approvals:
            raise LabError(f"no decision for {head}: pass approvals={{{head!r}: True or False}}")
        state = _State(RunIds(result.run_id), list(result.messages), list(result.events),
                       list(result.outcomes), list(result.spans), result.steps)
        return await self._loop(state, result.pending, approvals)

    async def _loop(self, state: _State, requests: Sequence[ToolRequest],
                    approvals: Mapping[str, bool]) -> RunResult:
        while True:
            if requests:
                step = await self.executor.execute(requests, self.tools, approvals,
                                                   state.events.append)
                state.messages += step.messages(requests)
                state.spans += step.spans
                done = [step.outcomes[r.call_id] for r in requests if r.call_id in step.outcomes]
                state.outcomes += done
                status = self.status_rule([o.code for o in done]
                                          + ([PAUSE_CODE] if step.pending else []))
                if status == FAILED:
                    bad = min((o for o in done if o.code), key=lambda o: o.code not in FATAL_CODES)
                    return _result(state, FAILED, f"{bad.call_id}: {bad.code}: {bad.detail}")
                if status == WAITING:
                    return replace(_result(state, WAITING), pending=step.pending)
            if state.steps >= self.max_steps:
                return _result(state, FAILED, f"no answer after {self.max_steps} model turns")
            message, requests, stopped = self._turn(state)
            if stopped:
                return _result(state, stopped.status, stopped.reason)
            assert message is not None
            state.messages.append(message)
            if not requests:
                return _result(state, COMPLETED, answer=message.content)

    def _turn(self, state: _State
              ) -> tuple[AssistantMessage | None, tuple[ToolRequest, ...], _Stop | None]:
        """One model turn: the message, its requests, or why nothing may run."""
        turn = Turn(state.ids, state.steps)
        state.steps += 1
        state.events.append(Event("model.called", f"step-{turn.step}", vclock.now()))
        try:
            if self.stream:
                assembly = assemble(self.model.stream(state.messages, self.tools, turn))
                if assembly.message is None:
                    status = CANCELLED if assembly.cancelled else FAILED
                    return None, (), _Stop(status, f"model turn {turn.step}: "
                                                    f"{assembly.interrupted}; nothing was run")
                return assembly.message, assembly.requests, None
            message = self.model.complete(state.messages, self.tools, turn)
        except LabError as exc:
            return None, (), _Stop(FAILED, f"model turn {turn.step}: {exc}; nothing was run")
        except Exception as exc:  # the model's server failed (connection, HTTP error, ...)
            return None, (), _Stop(FAILED, f"model turn {turn.step}: {type(exc).__name__}: "
                                           f"{exc}; nothing was run")
        problems = call_problems(message.tool_calls)
        if problems:
            return None, (), _Stop(FAILED, f"model turn {turn.step}: {'; '.join(problems)}; "
                                           "nothing was run")
        return message, tuple(ToolRequest.from_call(c) for c in message.tool_calls), None


def _result(state: _State, status: str, error: str | None = None, answer: str = "") -> RunResult:
    return RunResult(state.ids.run_id, status, answer, tuple(state.messages),
                     tuple(state.events), tuple(state.outcomes), (), error, state.steps,
                     tuple(state.spans))
