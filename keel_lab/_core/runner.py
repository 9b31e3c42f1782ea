"""The run loop: a model turn, every requested call answered, and only then the next turn.

Every call gets exactly one tool message, success or failure, matched by `tool_call_id`; the
model is called again only when all of a turn's results are in. What a turn's outcome codes do
to the run is the status rule's decision (`partial_success.run_status` by default); when a
streamed call may start is the `may_start` hook's (by default: once its turn is complete).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from keel_lab._core import clock
from keel_lab._core.errors import LabError
from keel_lab._core.events import Event
from keel_lab._core.executor import Executor, Span, TurnResult
from keel_lab._core.ids import RunIds
from keel_lab._core.messages import AssistantMessage, Message, UserMessage
from keel_lab._core.model import Model, Turn
from keel_lab._core.partial_success import (
    PAUSE_CODE,
    Code,
    Status,
    StatusRule,
    failure_cause,
    is_business_error,
    run_status,
)
from keel_lab._core.protocol import ToolCall, ToolRequest, call_problems
from keel_lab._core.streaming import Assembly, CallState, StreamAssembler, StreamEvent, assemble
from keel_lab._core.tools import ToolOutcome, Toolset, failure
from keel_lab._i18n import N_, _, ngettext


@dataclass(eq=False)
class Pause:
    """One pause of a run. It is resumed at most once, so an approved side effect runs once
    however often the same paused `RunResult` (or a copy of it) is handed to `approve`."""

    resumed: bool = False


@dataclass(frozen=True)
class RunResult:
    run_id: str
    status: str  # a `Status`; a custom status rule may return its own words
    answer: str
    messages: tuple[Message, ...]
    events: tuple[Event, ...]
    outcomes: tuple[ToolOutcome, ...] = ()
    pending: tuple[ToolRequest, ...] = ()  # calls waiting for a person's decision
    error: str | None = None
    turns: int = 0  # model turns taken
    spans: tuple[Span, ...] = ()
    pause: Pause | None = field(default=None, compare=False, repr=False)  # when waiting

    @property
    def partial(self) -> bool:
        """Completed, but some calls answered with a business error: say so to the user."""
        return self.status == Status.COMPLETED and any(is_business_error(o.code)
                                                       for o in self.outcomes)

    def for_user(self) -> str:
        """What a product would show: a partial answer says so, a pause says what waits."""
        if self.status == Status.WAITING:
            waiting = ", ".join(f"{r.name}({r.raw_arguments})" for r in self.pending[:1])
            return _("Waiting for your approval: {call}").format(call=waiting)
        if self.status == Status.FAILED:
            return _("The run failed: {error}").format(error=self.error)
        if self.status == Status.CANCELLED:
            return _("The run cancelled: {error}").format(error=self.error)
        if self.status != Status.COMPLETED:  # a custom status rule's own word
            return _("The run {status}: {error}").format(status=self.status, error=self.error)
        failed = [o for o in self.outcomes if is_business_error(o.code)]
        denied = [o for o in failed if o.code == Code.APPROVAL_DENIED]
        if not failed:
            return self.answer
        if len(denied) == len(failed):  # a person's decision, not a failure: say whose
            return ngettext("Answer without the call you denied: {answer}",
                            "Answer without the {n} calls you denied: {answer}",
                            len(denied)).format(n=len(denied), answer=self.answer)
        return _("Partial answer ({answered} of {total} calls answered): {answer}").format(
            answered=len(self.outcomes) - len(failed), total=len(self.outcomes), answer=self.answer)

    def trace(self) -> str:
        head = f"status = {self.status}" + (_("  (partial)") if self.partial else "")
        lines = [head, f"answer = {self.answer}" if not self.error else f"error  = {self.error}"]
        return "\n".join(lines + [f"  {e}" for e in self.events])


@dataclass
class _State:
    """A run in progress: everything a `RunResult` holds, growing turn by turn."""

    ids: RunIds
    messages: list[Message]
    events: list[Event] = field(default_factory=list)
    outcomes: list[ToolOutcome] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    turns: int = 0
    early: dict[str, ToolOutcome] = field(default_factory=dict)  # started before the turn closed

    def result(self, status: str, *, error: str | None = None, answer: str = "",
               pending: tuple[ToolRequest, ...] = ()) -> RunResult:
        return RunResult(run_id=self.ids.run_id, status=status, answer=answer,
                         messages=tuple(self.messages), events=tuple(self.events),
                         outcomes=tuple(self.outcomes), pending=pending, error=error,
                         turns=self.turns, spans=tuple(self.spans),
                         pause=Pause() if status == Status.WAITING else None)


@dataclass(frozen=True, slots=True)
class Reply:
    message: AssistantMessage
    requests: tuple[ToolRequest, ...]


class Runner:
    """Drives one conversation with a model, a toolset and an executor.

    `tools` defaults to the model's own `tools` (the offline model brings the incident tools);
    `status_rule` maps a turn's outcome codes to the run's status.

    `may_start` is the streaming hook (with `stream=True`): asked after every streamed event
    about every call so far, it starts a call, alone, the first time it answers True - even
    mid-stream. None is the lab's policy: no call starts before its turn finished and was
    accepted. A call started early is not run again; if its turn is then cancelled, cut off or
    refused, what it did stays done and its outcome stays in the run's result.
    """

    def __init__(self, model: Model, tools: Toolset | None = None,
                 executor: Executor | None = None, *, seed: int = 0, stream: bool = False,
                 max_turns: int = 6, status_rule: StatusRule = run_status,
                 may_start: Callable[[CallState], bool] | None = None) -> None:
        tools = tools if tools is not None else getattr(model, "tools", None)
        if not isinstance(tools, Toolset):
            raise LabError("no_tools", N_("{model} brings no tools: pass tools=Toolset.of(...)"),
                           model=type(model).__name__)
        self.model, self.tools = model, tools
        self.executor = executor or Executor()
        self.seed, self.stream, self.max_turns = seed, stream, max_turns
        self.status_rule = status_rule
        self.may_start = may_start

    def run(self, question: str, *, virtual: bool = True) -> RunResult:
        return clock.run_coroutine(self.start(question), virtual=virtual)

    def approve(self, result: RunResult, approvals: Mapping[str, bool], *,
                virtual: bool = True) -> RunResult:
        return clock.run_coroutine(self.resume(result, approvals), virtual=virtual)

    async def start(self, question: str) -> RunResult:
        state = _State(RunIds.seeded(self.seed), [UserMessage(question)])
        return await self._loop(state, (), {})

    async def resume(self, result: RunResult, approvals: Mapping[str, bool]) -> RunResult:
        """Continue a paused run with a decision (True = approve) for each pending call; a paused
        result is resumed once, so an approved side effect never runs twice."""
        if result.status != Status.WAITING:
            raise LabError("not_waiting", N_("run {run} is {status}, not waiting for approval"),
                           run=result.run_id, status=result.status)
        if not result.pending:
            raise LabError("nothing_pending", N_("run {run} waits for approval but has no pending "
                                                 "call (its status rule paused it): there is "
                                                 "nothing to decide"), run=result.run_id)
        if result.pause is not None and result.pause.resumed:
            raise LabError("already_resumed", N_("run {run} was already resumed from this pause: "
                                                 "its decisions are taken; continue from the "
                                                 "result approve returned"), run=result.run_id)
        head = result.pending[0].call_id
        if head not in approvals:
            raise LabError("no_decision", N_("no decision for {id}: pass approvals={{{key}: True "
                                             "or False}}"), id=head, key=repr(head))
        if result.pause is not None:
            result.pause.resumed = True
        state = _State(RunIds(result.run_id), list(result.messages), list(result.events),
                       list(result.outcomes), list(result.spans), result.turns)
        return await self._loop(state, result.pending, approvals)

    async def _loop(self, state: _State, requests: Sequence[ToolRequest],
                    approvals: Mapping[str, bool]) -> RunResult:
        while True:
            if requests:
                stopped = await self._execute(state, requests, approvals)
                if stopped:
                    return stopped
            if state.turns >= self.max_turns:
                return state.result(Status.FAILED, error=_(
                    "no answer after {turns} model turns").format(turns=self.max_turns))
            reply = await self._ask(state)
            if isinstance(reply, RunResult):
                return reply
            state.messages.append(reply.message)
            if not reply.requests:
                return state.result(Status.COMPLETED, answer=reply.message.content)
            requests = reply.requests

    async def _execute(self, state: _State, requests: Sequence[ToolRequest],
                       approvals: Mapping[str, bool]) -> RunResult | None:
        """Run a turn's calls and add their tool messages; a result if the run stops here."""
        turn = await self.executor.execute([r for r in requests if r.call_id not in state.early],
                                           self.tools, approvals, state.events.append)
        if state.early:  # calls started while streaming join the turn, in request order
            merged = {**state.early, **turn.outcomes}
            turn = TurnResult({r.call_id: merged[r.call_id] for r in requests
                               if r.call_id in merged}, turn.pending, turn.spans)
            state.early = {}
        state.spans += turn.spans
        done = [turn.outcomes[r.call_id] for r in requests if r.call_id in turn.outcomes]
        status = self.status_rule([o.code for o in done] + ([PAUSE_CODE] if turn.pending else []))
        if status != Status.WAITING:
            for r in turn.pending:  # nobody will decide them: each still gets its one answer
                turn.outcomes[r.call_id] = failure(r, PAUSE_CODE, _(
                    "not run: no person decided, the run is {status}").format(status=status))
        state.messages += turn.messages(requests)
        state.outcomes += [turn.outcomes[r.call_id] for r in requests if r.call_id in turn.outcomes]
        if status == Status.WAITING:
            return state.result(Status.WAITING, pending=turn.pending)
        if status != Status.COMPLETED:
            cause = failure_cause(done)
            return state.result(status, error=f"{cause.call_id}: {cause.code}: {cause.detail}"
                                if cause else _("the status rule answered {status}").format(
                                    status=repr(status)))
        return None

    async def _ask(self, state: _State) -> Reply | RunResult:
        """One model turn: its message and requests, or the run's end if nothing of it may run."""
        turn = Turn(state.ids, state.turns)
        state.turns += 1
        state.events.append(Event("model.called", f"step-{turn.step}", clock.now()))

        def stop(status: Status, why: str) -> RunResult:
            said = (_("model turn {step}: {why}; already started: {ran}") if state.early
                    else _("model turn {step}: {why}; nothing was run"))
            state.outcomes += state.early.values()
            return state.result(status, error=said.format(step=turn.step, why=why,
                                                          ran=", ".join(state.early)))

        try:
            if self.stream:
                assembly = await self._assemble(state, turn)
                if assembly.message is None:
                    return stop(Status.CANCELLED if assembly.cancelled else Status.FAILED,
                                assembly.refused or "")
                return Reply(assembly.message, assembly.requests)
            message = self.model.complete(state.messages, self.tools, turn)
            problems = call_problems(message.tool_calls)
            if problems:
                return stop(Status.FAILED, "; ".join(p.message for p in problems))
            return Reply(message, tuple(ToolRequest.from_call(c) for c in message.tool_calls))
        except LabError as exc:
            return stop(Status.FAILED, str(exc))
        except Exception as exc:  # the model's server failed, or sent what is not a turn
            return stop(Status.FAILED, f"{type(exc).__name__}: {exc}")

    async def _assemble(self, state: _State, turn: Turn) -> Assembly:
        """The streamed turn; with `may_start`, calls it accepts start while it streams."""
        events = self.model.stream(state.messages, self.tools, turn)
        if self.may_start is None:
            return assemble(events)
        started: list[asyncio.Task[TurnResult]] = []
        try:
            return assemble(self._start_early(events, state, started))
        finally:
            for early in await asyncio.gather(*started):
                state.early.update(early.outcomes)
                state.spans += early.spans

    def _start_early(self, events: Iterable[StreamEvent], state: _State,
                     started: list[asyncio.Task[TurnResult]]) -> Iterator[StreamEvent]:
        """Pass the stream on; start a call as a task the first time `may_start` accepts it."""
        assert self.may_start is not None
        seen, asked = StreamAssembler(), set()
        for event in events:
            seen.feed(event)
            for call in seen.calls():
                if call.index not in asked and self.may_start(call):
                    asked.add(call.index)
                    request = ToolRequest.from_call(ToolCall(call.id or "", call.name,
                                                             call.arguments))
                    started.append(asyncio.ensure_future(self.executor.execute(
                        [request], self.tools, {}, state.events.append)))
            yield event
