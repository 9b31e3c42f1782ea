"""Chapter 9, the capstone: the whole turn loop, written by the learner from their own answers.

The exercise is `async def agent_loop(model, tools, question)`, returning `(messages, status)`:

- `model(messages)`: the next model turn for the history so far, an async iterator of the lab's
  stream events (`ToolCallDelta`, `TextDelta`, `Finish`; a real provider's stream adds `Notice`
  and `ProviderCall`, which hold no call to run). A user's cancel raises `StreamCancelled` from it;
  a stream may also end without its `Finish`, or break with another error (a dropped connection).
- `tools`: a `Toolset`; `await invoke(tools.get(request.name), request)` runs one call and returns
  its one `ToolOutcome`, a failure's too.
- `messages`: `UserMessage(question)`, then each turn's `AssistantMessage` (its text and calls) and
  one `ToolMessage` per call, in request order; `status`: "completed", "partial" (completed with a
  business error), "failed" or "cancelled".

Every case runs the learner's loop and the lab's `Runner` on the same model, tools and random
tool delays (virtual clock); the Runner's run is the expected one, so the lab's rules decide,
never a typed table. The check watches what the loop cannot hide: each tool execution with its
start and end, and each model call (was a call still running, or unanswered? was the last
stream read to its finish?); a tool or model call made from the lab's own `Runner` or `Executor`
code, or with `asyncio.sleep` replaced, is delegation, however it was reached. Real recordings,
one per format that has one, are served by the replay server and fetched through the client
`keel-lab record` uses (the official SDK; httpx for Gemini); the next turn's history must pass
that provider's rules. `provider_model` is the same model on a live provider, for the notebook.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import json
import random
import sys
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from keel_checks.delegation import _hint, watched
from keel_checks.partial_success import (
    BAD_ARGS,
    BAD_OUTPUT,
    CRASH,
    MISSING,
    OK,
    SLOW,
    UNKNOWN,
    case_tools,
    shown,
)
from keel_checks.verdict import (
    Delegated,
    Verdict,
    awaitable,
    describe,
    driven,
    guard,
    in_a_loop,
    labelled,
    misuse_marked,
    raised_by,
    returned_none,
    seeded,
)
from keel_cli._record import plan, turn_events
from keel_lab._core.clock import VirtualClockLoop, now, run_coroutine
from keel_lab._core.errors import LabError
from keel_lab._core.executor import Executor, gather_by_call_id
from keel_lab._core.history import validate_history
from keel_lab._core.ids import RunIds
from keel_lab._core.messages import (
    MESSAGE_TYPES,
    AssistantMessage,
    Message,
    ToolMessage,
)
from keel_lab._core.model import Model, Turn
from keel_lab._core.partial_success import (
    FATAL_CODES,
    failure_cause,
    is_business_error,
    run_status,
)
from keel_lab._core.runner import Runner
from keel_lab._core.streaming import (
    Finish,
    ProviderCall,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    cancel_after,
)
from keel_lab._core.tools import Tool, Toolset
from keel_lab._i18n import N_, _, ngettext
from keel_lab.course import _data as data
from keel_lab.course._experiments.mine import YOURS, Mine
from keel_lab.course._experiments.pairing import theory
from keel_lab.course._experiments.report import Report
from keel_lab.course._incident_tools import incident_tools
from keel_lab.course._offline_model import OfflineAdapter
from keel_lab.course._scenarios import COMPARE, NOTE, PARTIAL, SCENARIOS, TURN, compare_question
from keel_lab.providers._anthropic_messages import to_anthropic, validate_anthropic
from keel_lab.providers._diagnosis import diagnose_file
from keel_lab.providers._formats import StreamFormat
from keel_lab.providers._gemini_messages import to_gemini, validate_gemini
from keel_lab.providers._replay import ReplayServer
from keel_lab.providers._responses_messages import to_responses, validate_responses

AgentLoop = Callable[..., Awaitable[Any]]
Call = tuple[str, dict[str, Any] | str]  # a tool's name and arguments (text: as streamed)
NOT_JSON: Call = ("lookup_incident", '{"incident_id": "INC-002"')
LAB = (Runner, Executor, gather_by_call_id, run_status, is_business_error, failure_cause)
SWEEP = 20  # seeds of random delays
# The lab's own loop and executor: a tool or model call they make during the learner's run is
# delegation, however they were reached (a built name, a subclass).
LOOPS = {inspect.getfile(Executor): Executor, inspect.getfile(Runner): Runner}
# One real recording per format that has one (data/recordings), and chat's answer turn.
RECORDINGS: dict[StreamFormat, str] = {"openai-chat": "openai/chat_one_call.sse",
                                       "openai-responses": "openai/responses_one_call.sse",
                                       "anthropic": "anthropic/call_beside_tool_search.jsonl",
                                       "gemini": "vertex/partial_args_parallel.jsonl"}
ANSWER = ("streams", "openai-chat", "answer.sse")
# Each format's rules for a history (the replay server applies chat's itself).
RULES: dict[str, Callable[[list[Message]], list[Any]]] = {
    "openai-chat": validate_history,
    "openai-responses": lambda m: validate_responses(to_responses(m)),
    "anthropic": lambda m: validate_anthropic(to_anthropic(m)["messages"]),
    "gemini": lambda m: validate_gemini(to_gemini(m)["contents"])}


@dataclass(frozen=True)
class Case:
    """One run, as plain data (a grader sends it to the learner's process)."""

    label: str  # N_
    seed: int
    question: str = ""  # N_; asked of the offline model, unless `script` or `replay`
    incidents: int = 0  # else: which of INC-001... is the most severe (`compare_question`)
    script: tuple[tuple[Call, ...], ...] = ()  # turns of calls, then a text answer
    cancel: int | None = None  # turn 0 ends after this many events (-1: all but its finish),
    end: str = "cancel"  # how: "cancel" (StreamCancelled), "cut" (no finish), "raise" (an error)
    faulty: bool = False  # chapter 5's tools, broken ones included
    replay: StreamFormat | None = None
    n: int = 0  # its number in its label

    @property
    def said(self) -> str:
        return _(self.label).format(n=self.n)


@dataclass
class Ran:
    """What a loop did: its return value, each tool execution, each model call's problem."""

    returned: Any = None
    runs: list[tuple[str, str, float, float, bool]] = field(default_factory=list)  # as ended
    started: list[tuple[str, str]] = field(default_factory=list)
    early: str = ""  # the first model call made too soon, said
    refused: str = ""  # the provider's rule the history broke, said
    running: int = 0
    streaming: bool = False  # a turn's stream is being read, its finish not yet sent
    unread: int | None = None  # a turn whose stream the loop stopped reading before its finish
    provided: list[str] = field(default_factory=list)  # the streams' ProviderCalls, id or name
    watch: bool = False  # the learner's run: the lab's loop may not run it, nor its clock change
    delegated: str = ""  # how it was not the learner's loop, said


class _Scripted:
    """A model that streams fixed turns of calls, fragments interleaved, then answers."""

    def __init__(self, turns: Sequence[Sequence[Call]], seed: int) -> None:
        self.turns, self.seed = turns, seed

    def stream(self, messages: Sequence[Message], tools: Toolset, turn: Turn
               ) -> Iterator[StreamEvent]:
        if turn.step >= len(self.turns):
            yield from (TextDelta("Done"), TextDelta("."), Finish("stop"))
            return
        last = len(self.turns[turn.step]) - 1  # ids count down: sorted, not in request order
        calls = [(turn.call_id(last - i), name, a if isinstance(a, str) else json.dumps(a))
                 for i, (name, a) in enumerate(self.turns[turn.step])]
        parts = [[ToolCallDelta(i, id=c, name=n), ToolCallDelta(i, arguments_delta=a[:5]),
                  ToolCallDelta(i, arguments_delta=a[5:])] for i, (c, n, a) in enumerate(calls)]
        rng = random.Random(self.seed)
        while parts := [p for p in parts if p]:
            yield rng.choice(parts).pop(0)
        yield Finish("tool_calls")


class _Replayed:
    """A recording served by the replay server, fetched as `keel-lab record` fetches a turn;
    from turn 1 on, the history must pass the format's rules, and the answer is text."""

    def __init__(self, fmt: StreamFormat, base: str, ran: Ran) -> None:
        self.fmt, self.ran = fmt, ran
        self.request = plan(fmt, Toolset(), "", base_url=base, model="replay")

    def stream(self, messages: Sequence[Message], tools: Toolset, turn: Turn
               ) -> Iterator[StreamEvent]:
        if turn.step:
            why = _refusal(self.fmt, list(messages))
            self.ran.refused = self.ran.refused or why
            if why or self.fmt != "openai-chat":
                yield from (TextDelta("Answered."), Finish("stop"))
                return
        yield from turn_events(dataclasses.replace(self.request, tools=tools), messages)


def _tools(case: Case, ran: Ran) -> Toolset:
    """The case's tools, each execution noted and delayed 10-500 ms (drawn from its call)."""
    base = case_tools() if case.faulty else incident_tools()
    if case.replay:
        names = {c.name for c in diagnose_file(data.path("recordings", RECORDINGS[case.replay]))
                 .calls}
        base = Toolset.of(Tool(n, "a recorded call's tool", {"type": "object"},
                               lambda **_: {"ok": True}, True, blocking=False) for n in names)

    def timed(tool: Tool) -> Tool:
        async def function(**arguments: Any) -> Any:
            said = json.dumps(arguments, sort_keys=True)
            _watch(ran)
            start, ran.running = now(), ran.running + 1
            ran.started.append((tool.name, said))
            if ran.streaming and not ran.early:
                ran.early = _("{name}({args}) started before its turn's finish: until then the "
                              "turn may still be cancelled, cut off or made invalid - run a "
                              "turn's calls only after its finish").format(name=tool.name,
                                                                          args=said)
            try:
                await asyncio.sleep(random.Random(f"{case.seed}:{tool.name}:{said}")
                                    .uniform(0.01, 0.5))
                result = tool.function(**arguments)
                return await result if asyncio.iscoroutine(result) else result
            finally:
                ran.running -= 1
                ran.runs.append((tool.name, said, start, now(), tool.may_run_together))
        return dataclasses.replace(tool, function=function)

    return Toolset.of(timed(t) for t in base.tools.values())


@contextlib.contextmanager
def _model(case: Case, ran: Ran) -> Iterator[Model]:
    if case.replay:  # chat's server serves the answer turn too; the others answer themselves
        turn = data.path("recordings", RECORDINGS[case.replay])
        with (ReplayServer([turn, data.path(*ANSWER)]) if case.replay == "openai-chat"
              else ReplayServer(streams={case.replay: turn})) as server:
            base = server.url if case.replay.startswith("openai") else server.root
            yield _Replayed(case.replay, base, ran)  # type: ignore[misc]
        return
    source: Any = _Scripted(case.script, case.seed) if case.script else OfflineAdapter(
        case.seed, chunk_size=4)
    if case.cancel is None:
        yield source
        return

    class Cancelled:
        def stream(self, messages: Sequence[Message], tools: Toolset, turn: Turn
                   ) -> Iterator[StreamEvent]:
            events = list(source.stream(messages, tools, turn))
            cut = case.cancel % len(events) if case.cancel is not None else 0
            return iter(events) if turn.step else ENDS[case.end](events, cut)
    yield Cancelled()  # type: ignore[misc]


def _broken(events: list[StreamEvent], n: int) -> Iterator[StreamEvent]:
    """The first `n` events, then the connection drops: a stream error that is not a cancel."""
    yield from events[:n]
    raise ConnectionError(_("the connection dropped mid-stream"))


ENDS: dict[str, Callable[[list[StreamEvent], int], Iterator[StreamEvent]]] = {
    "cancel": cancel_after, "cut": lambda events, n: iter(events[:n]), "raise": _broken}
UNFINISHED = {"cancel": N_("its turn was cancelled before its finish: run nothing of a turn "
                           "that never finished"),
              "cut": N_("its turn's stream ended without a Finish: run nothing of a turn that "
                        "never finished"),
              "raise": N_("its turn's stream broke before its finish: run nothing of a turn "
                          "that never finished")}


def _clock() -> dict[str, Any]:
    return {"asyncio.sleep": asyncio.sleep, "asyncio.tasks.sleep": asyncio.tasks.sleep,
            "VirtualClockLoop.time": VirtualClockLoop.time}


CLOCK = _clock()  # what the check's delays rest on, as it was before any answer ran


def _frames() -> Iterator[Any]:
    """Every frame the learner's run is in now: this stack, and each task's chain of awaits (a
    tool runs in a task of its own, awaited by whatever ran it)."""
    frame: Any = sys._getframe(2)
    while frame is not None:
        yield frame
        frame = frame.f_back
    with contextlib.suppress(RuntimeError):  # after the run, no loop runs
        for task in asyncio.all_tasks():
            awaited: Any = task.get_coro()
            while awaited is not None:
                yield getattr(awaited, "cr_frame", None) or getattr(awaited, "ag_frame", None)
                awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "ag_await", None)


def _watch(ran: Ran) -> None:
    """In the learner's run (at each tool and model call, and after it): note delegation - a
    frame of the lab's own loop or executor, or the check's clock replaced."""
    if not ran.watch or ran.delegated:
        return
    code = next((f.f_code.co_filename for f in _frames() if f is not None
                 and f.f_code.co_filename in LOOPS), None)
    changed = next((k for k, v in _clock().items() if v is not CLOCK[k]), None)
    if code is not None:
        ran.delegated = _hint(LOOPS[code])
    elif changed:
        ran.delegated = _("your function replaced {name} while the check ran: the check times "
                          "each call with it - leave asyncio and the lab's clock as they are, "
                          "and the points come from your loop alone").format(name=changed)


def _question(case: Case) -> str:
    if case.incidents:
        return compare_question(case.incidents)
    return _(case.question) if case.question else _("the case's question")


def expected(case: Case) -> Ran:
    """The lab's Runner on the case: its history and status, its tools' executions."""
    ran = Ran()
    with _model(case, ran) as model:
        tools = _tools(case, ran)
        result = Runner(model, tools, Executor(8), seed=case.seed, stream=True).run(
            _question(case))
    ran.returned = (list(result.messages), shown(result))
    return ran


async def _learner(fn: AgentLoop, case: Case, ran: Ran) -> None:
    with _model(case, ran) as source:
        tools, ids, steps = _tools(case, ran), RunIds.seeded(case.seed), [0]

        async def model(messages: list[Message]) -> AsyncIterator[StreamEvent]:
            _too_soon(ran, list(messages))
            _watch(ran)
            step, steps[0] = steps[0], steps[0] + 1
            if step > 8:
                raise RuntimeError(_("the model was asked {n} times: stop once a turn has no "
                                     "calls").format(n=step))
            ran.streaming, ran.unread = True, step
            try:
                for event in source.stream(list(messages), tools, Turn(ids, step)):
                    await asyncio.sleep(1e-6)  # a stream takes time: what started, runs
                    ran.streaming = not isinstance(event, Finish)
                    ran.unread = step if ran.streaming else None
                    if isinstance(event, ProviderCall):
                        ran.provided.append(event.id or event.name)
                    yield event
                ran.unread = None  # read to its end, finish or not
            except Exception:  # the stream's own end: a cancel, an error
                ran.unread = None
                raise
            finally:
                ran.streaming = False

        try:
            ran.returned = await awaitable(fn(model, tools, _question(case)))
        finally:
            left = asyncio.all_tasks() - {asyncio.current_task()}
            for task in left:
                task.cancel()
            await asyncio.gather(*left, return_exceptions=True)


def _too_soon(ran: Ran, messages: list[Message]) -> None:
    """Note a model call made while a call still runs, or before each call has its answer."""
    if ran.early:
        return
    turns = [m for m in messages if isinstance(m, AssistantMessage)]
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    open_ = [c for c in turns[-1].tool_calls if c.id not in answered] if turns else []
    if ran.running:
        ran.early = ngettext(
            "the model was called again while {n} call still ran: wait for every result of "
            "the turn first", "the model was called again while {n} calls still ran: wait for "
            "every result of the turn first", ran.running).format(n=ran.running)
    elif open_:
        ran.early = _("the model was called again before {id} ({name}) had its tool message: "
                      "answer every call of the turn, then ask the model").format(
                          id=open_[0].id, name=open_[0].name)


def _drive(fn: AgentLoop, case: Case) -> Ran:
    ran = Ran(watch=True)
    with misuse_marked():
        run_coroutine(_learner(fn, case, ran))
    _watch(ran)
    if ran.delegated:
        raise Delegated(ran.delegated)
    return ran


def _history(returned: Any) -> tuple[list[Message], Any] | str:
    two = isinstance(returned, tuple | list) and len(returned) == 2
    if not two or not isinstance(returned[0], list):
        return _("your function returned {value}: return (messages, status), the history as a "
                 "list and the run's status").format(value=describe(returned))
    wrong = next((m for m in returned[0] if not isinstance(m, MESSAGE_TYPES)), None)
    if wrong is not None:
        return _("your history holds {value}: every item is a message (UserMessage, "
                 "AssistantMessage, ToolMessage)").format(value=describe(wrong))
    return list(returned[0]), returned[1]


def _executions(got: Ran, want: Ran, ended: str) -> str:
    """Each call run as often as the lab ran it, alone unless its batch may run together
    (`ended`: how turn 0's stream ended early, "" when it finished)."""
    mine, lab = (Counter((n, a) for n, a, *_ in r.runs) for r in (got, want))
    for name, args in mine - lab:
        n = mine[name, args]
        why = (_(UNFINISHED[ended]) if ended and not lab[name, args] else
               _("each call runs exactly once"))
        return ngettext("{name}({args}) ran {n} time, the lab's loop ran it {m}: {why}",
                        "{name}({args}) ran {n} times, the lab's loop ran it {m}: {why}", n).format(
            name=name, args=args, n=n, m=lab[name, args], why=why)
    for name, args in lab - mine:
        return _("{name}({args}) never ran: run every complete call of each turn").format(
            name=name, args=args)
    for name, args, start, end, safe in got.runs:
        other = next((o for o in got.runs if o[:2] != (name, args) and o[2] < end
                      and start < o[3]), None)
        if other and not (safe and other[4]):
            return _("{name}({args}) ran at the same time as {other}: only calls whose tools "
                     "may run together share a batch; every other call runs alone").format(
                         name=name, args=args, other=other[0])
    return ""


def _busy(r: Ran) -> float:
    """How long some tool was running: the union of the executions' spans."""
    total, end = 0.0, float("-inf")
    for _n, _a, s, e, _safe in sorted(r.runs, key=lambda x: x[2]):
        total += max(0.0, e - max(s, end))
        end = max(end, e)
    return total


def _by_id(history: list[Message]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in history if isinstance(m, ToolMessage)}


def _failed(content: str) -> str | None:
    """A failure outcome's error code (`{"error": {"code": ...}}`), None for any other."""
    with contextlib.suppress(ValueError):
        error = json.loads(content)
        error = error.get("error") if isinstance(error, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        return code if isinstance(code, str) else None
    return None


def _compared(m: Message) -> Message:
    """A message as the check compares it: a failed call's by its error code, never its wording
    (a learner's own parse-error text answers as well as the lab's)."""
    code = _failed(m.content) if isinstance(m, ToolMessage) else None
    return dataclasses.replace(m, content=f"error:{code}") if code else m


def _answers(got: list[Message], want: list[Message]) -> str:
    """Each call's one tool message, its own outcome, right after its turn, in request order."""
    lab = _by_id(want)
    mine = [m for m in got if isinstance(m, ToolMessage)]
    for call_id, expected_ in lab.items():
        answers = [m for m in mine if m.tool_call_id == call_id]
        if len(answers) != 1:
            failed = _failed(expected_.content)
            return (_("{id} ({name}) got {n} tool messages: every call gets exactly one")
                    .format(id=call_id, name=expected_.name, n=len(answers))
                    + (_(", a failed one too ({code}): its error outcome is its answer")
                       .format(code=failed) if failed and not answers else ""))
        if _compared(answers[0]) != _compared(expected_):
            other = next((i for i, m in lab.items() if m.content == answers[0].content), None)
            code = _failed(expected_.content)
            return (_("{id} was answered with the result of {other}: pair each result with its "
                      "call by id, not by position").format(id=call_id, other=other) if other
                    else _("{id}'s tool message has the error code {got}, its outcome {want}: "
                           "answer a failed call with its outcome's code").format(
                               id=call_id, got=_failed(answers[0].content), want=code) if code
                    else _("{id}'s tool message is not its outcome: answer with the outcome's "
                           "content, unchanged").format(id=call_id))
    for n, m in enumerate(got):
        if isinstance(m, AssistantMessage) and m.tool_calls:
            after = [x.tool_call_id for x in got[n + 1:n + 1 + len(m.tool_calls)]
                     if isinstance(x, ToolMessage)]
            if after != [c.id for c in m.tool_calls]:
                return _("the tool messages after message {n} are {got}, its calls {want}: put "
                         "one per call right after its turn, in request order").format(
                             n=n, got=after, want=[c.id for c in m.tool_calls])
    return ""


def _turns(history: list[Message], lab: list[Message], ended: str) -> str:
    """The history's question and turns against the lab's: each turn's calls as streamed, no
    turn the stream never finished, none missing after answered calls."""
    if history[:1] != lab[:1]:
        return _("your history starts with {value}: start it with UserMessage(question)").format(
            value=describe(history[0]) if history else _("nothing"))
    turns, lab_turns = ([m for m in h if isinstance(m, AssistantMessage)] for h in (history, lab))
    for n, (a, b) in enumerate(zip(turns, lab_turns, strict=False)):
        if a.tool_calls != b.tool_calls:
            return _("turn {n}'s calls are {got}, the stream sent {want}: accumulate each "
                     "call's fragments by index").format(
                         n=n, got=[(c.id, c.name, c.arguments) for c in a.tool_calls],
                         want=[(c.id, c.name, c.arguments) for c in b.tool_calls])
    if len(turns) > len(lab_turns) and ended:
        return _("your history keeps a turn the stream never finished: a cancelled turn adds "
                 "nothing to the history") if ended == "cancel" else _(
            "your history keeps a turn whose stream ended without its Finish: that turn adds "
            "nothing to the history, and none of its calls runs")
    if len(turns) > len(lab_turns) and lab and isinstance(lab[-1], ToolMessage):  # lab: failed
        return _("your loop called the model again after turn {n}, where a call failed with a "
                 "fatal code ({codes}): a crashed tool ends the run 'failed' right after that "
                 "turn's tool messages - the model is not called again").format(
                     n=len(lab_turns) - 1, codes=", ".join(sorted(FATAL_CODES)))
    if len(lab_turns) > len(turns) > 0 and turns[-1].tool_calls:
        return _("your loop stopped after turn {n}, whose calls the model never saw answered: "
                 "ask the model again with the results - only a fatal error ({codes}) or a "
                 "cancel ends a run before the model answers").format(
                     n=len(turns) - 1, codes=", ".join(sorted(FATAL_CODES)))
    return next((_("turn {n}'s text is {got}, the stream sent {want}: keep the streamed text "
                   "in its assistant message").format(n=n, got=repr(a.content),
                                                      want=repr(b.content))
                 for n, (a, b) in enumerate(zip(turns, lab_turns, strict=False))
                 if a.content != b.content and a.tool_calls), "")


def _wrong(got: Ran, want: Ran, case: Case, status: bool) -> str:
    """The first way the learner's run differs from the lab's, said; "" when it does not (a
    cancelled run's status always counts)."""
    mine, cancelled = _history(got.returned), case.cancel is not None
    if isinstance(mine, str):
        return mine
    (history, said), (lab, lab_status) = mine, want.returned
    ended = case.end if cancelled else ""
    problem = (_read_through(got, history) or _turns(history, lab, ended)
               or _executions(got, want, ended) or got.early or _answers(history, lab))
    if problem:
        return problem
    if _busy(got) > _busy(want) + 1e-3:
        return _("tools ran {got} ms in all, the lab's loop {want} ms: calls that may run "
                 "together ran one after another - start a batch's calls together, then wait "
                 "for all").format(got=f"{_busy(got) * 1000:.0f}",
                                   want=f"{_busy(want) * 1000:.0f}")
    if (status or cancelled) and said != lab_status:
        why = BROKEN if cancelled and case.end != "cancel" else WHY.get(lab_status, lab_status)
        return _("status {got}, expected {want} - {why}").format(
            got=repr(said), want=repr(lab_status), why=_(why))
    if list(map(_compared, history)) != list(map(_compared, lab)):
        n = next((i for i, (a, b) in enumerate(zip(history, lab, strict=False)) if a != b),
                 min(len(history), len(lab)))
        return _("message {n} of your history is {got}, the lab's is {want}").format(
            n=n, got=f"{history[n]!r:.120}" if n < len(history) else _("missing"),
            want=f"{lab[n]!r:.120}" if n < len(lab) else _("missing"))
    return _("the next request's history breaks {format}'s rules: {why}").format(
        format=case.replay, why=got.refused) if got.refused else ""


def _read_through(got: Ran, history: list[Message]) -> str:
    """A stream the loop stopped reading before its finish, or a ProviderCall it took for a
    call of its own."""
    if got.unread is not None:
        return _("your loop stopped reading turn {n}'s stream before its Finish: read every "
                 "stream to its finish - an event that is neither a fragment nor text (a Notice, "
                 "a ProviderCall) holds no call to run, and more calls may follow it").format(
                     n=got.unread)
    return next((_("{name} ({id}) is a ProviderCall, a call the provider runs itself: it is not "
                   "one of the turn's calls - keep it out of the assistant message, and run and "
                   "answer nothing for it").format(name=c.name, id=c.id)
                 for m in history if isinstance(m, AssistantMessage) for c in m.tool_calls
                 if c.id in got.provided or c.name in got.provided), "")


WHY = {"completed": N_("no call failed: the run completed"),
       "partial": N_("a run that completes with a business error in any turn "
                     "(incident_not_found, tool_timeout, invalid_arguments) is 'partial'"),
       "failed": N_("a crashed tool, an unknown tool or invalid tool output fails the run, "
                    "after that turn's calls are answered"),
       "cancelled": N_("a turn cancelled mid-stream ends the run 'cancelled', nothing run")}
BROKEN = N_("a turn whose stream ends before its finish, cut off or broken by an error that is "
            "not a cancel, ends the run 'failed', nothing run")
OFFLINE = N_("chapter 2's question, streamed by the offline model: the lab's history, answer "
             "and status")
SWEPT = N_("{n} seeds of random delays: positional pairing went wrong in {k}, your loop in none")
BATCHES = N_("reads together, the write alone, batch by batch in request order")
FAULTS = N_("{n} turns with failing calls: one tool message per call, its own outcome, in "
            "request order")
CANCEL = N_("a stream cancelled, cut off or broken mid-turn: nothing ran, status 'cancelled' "
            "or 'failed'")
STATUS = N_("partial success: 'completed', 'partial' or 'failed', as the lab's rule says")
RULED = N_("every history accepted by the rules of OpenAI (Chat, Responses), Anthropic and "
           "Gemini")
REPLAYED = N_("a real recording of each of {n} formats, replayed through the official SDKs "
              "(httpx for Gemini): every call answered")


def cases(base: int) -> dict[str, list[Case]]:
    """The cases of each check, from one seed (a grader's drawn seed changes them all)."""
    rng = random.Random(base)
    s = [rng.randrange(2**31) for _ in range(12)]
    faults: list[tuple[str, list[Call]]] = [
        (N_("a log search that crashes beside a lookup"), [OK, CRASH]),
        (N_("a timeout, a missing incident, bad arguments, a lookup"),
         [SLOW, MISSING, BAD_ARGS, OK]),
        (N_("a tool that does not exist"), [UNKNOWN, OK]),
        (N_("a tool that returns no JSON object"), [OK, BAD_OUTPUT]),
        (N_("two calls with the same arguments"), [OK, OK]),
        (N_("arguments that are not JSON beside a lookup"), [OK, NOT_JSON])]
    return {
        OFFLINE: [Case(N_("chapter 2's question"), s[0], COMPARE)],
        SWEPT: [Case(N_("three lookups, random delays {n}"), base + n, incidents=3, n=n)
                for n in range(SWEEP)],
        BATCHES: [Case(N_("reads, a write, reads"), s[1], script=(tuple(TURN),))],
        FAULTS: [Case(label, s[2] + n, script=(tuple(calls),), faulty=True)
                 for n, (label, calls) in enumerate(faults)],
        CANCEL: [Case(N_("a note, cancelled after its last fragment"), s[3], NOTE, cancel=-1),
                 Case(N_("three lookups, cancelled mid-stream"), s[4], incidents=3,
                      cancel=20),
                 Case(N_("a note, its stream cut off before its finish"), s[3], NOTE, cancel=-1,
                      end="cut"),
                 Case(N_("a note, its connection dropped before its finish"), s[3], NOTE,
                      cancel=-1, end="raise")],
        STATUS: [Case(N_("a lookup of a missing incident"), s[5], PARTIAL),
                 Case(N_("a log search that crashes"), s[6], SCENARIOS[N_("internal error")]),
                 Case(N_("a metrics query that times out"), s[7], script=((SLOW,),),
                      faulty=True),
                 Case(N_("a missing incident, then a clean lookup"), s[8],
                      script=((MISSING,), (OK,)), faulty=True)],
        REPLAYED: [Case(RECORDINGS[f], 0, replay=f) for f in RECORDINGS],
    }


def _judged(v: Verdict, fn: AgentLoop, judged: list[tuple[Case, Ran]],
            runs: list[tuple[Case, Ran, Ran]], passed: str, status: bool = False) -> bool:
    """Run the check's cases beside the lab's runs of them; settle the check by the first
    problem (its case named): a loop that returned None is told so, with that case."""
    for case, want in judged:
        label = case.said
        got = guard(v, label, driven(_drive, fn), case, explain=_explained)
        if got is None:
            return False
        problem = _wrong(got, want, case, status)
        if problem:
            v.add(False, "", returned_none(label) if got.returned is None
                  else labelled(label, problem))
            return False
        runs.append((case, got, want))
    v.add(True, passed, "")
    return True


def _explained(exc: Exception) -> str:
    if raised_by(exc, _broken):
        return _(" - a stream can also break with an error that is not a cancel (a dropped "
                 "connection, a server error): catch it, and end the run 'failed', nothing run")
    return in_a_loop(exc)


def positional(want: Ran) -> bool:
    """Would positional pairing have gone wrong: did the calls finish out of request order?"""
    return want.started != [r[:2] for r in want.runs]


def _refusal(fmt: str, history: list[Message]) -> str:
    """The first of the format's rules the history breaks, said; "" when it breaks none."""
    try:
        problems = [p.message for p in RULES[fmt](history)]
    except LabError as exc:  # a history the format cannot even take
        problems = [str(exc)]
    return problems[0] if problems else ""


def _rules(runs: list[tuple[Case, Ran, Ran]]) -> str:
    """Each history against each format's rules, where the lab's own history passes them (a
    call whose arguments are not JSON cannot go to Anthropic or Gemini as it came)."""
    for case, got, want in runs:
        for fmt in RULES:
            why = _refusal(fmt, got.returned[0])
            if why and not _refusal(fmt, want.returned[0]):
                return labelled(case.said, _("{format}'s rules refuse your history: {why}")
                                .format(format=fmt, why=why))
    return ""


def verify_agent_loop(agent_loop: AgentLoop) -> Verdict:
    every = cases(seeded(9))
    lab = {check: [(c, expected(c)) for c in every[check]] for check in every
           if check != REPLAYED}
    k = sum(positional(want) for _case, want in lab[SWEPT])
    names = [OFFLINE, _(SWEPT).format(n=SWEEP, k=k), BATCHES, _(FAULTS).format(
        n=len(every[FAULTS])), CANCEL, STATUS, RULED, _(REPLAYED).format(n=len(RECORDINGS))]
    v = Verdict("agent_loop", names)
    fn = watched(agent_loop, LAB)
    runs: list[tuple[Case, Ran, Ran]] = []
    for check, name in zip(lab, names, strict=False):
        if not _judged(v, fn, lab[check], runs, name, status=check in (OFFLINE, STATUS)):
            return v
    if v.first(RULED, [_rules(runs)]):  # the replays last: their servers start only now
        _judged(v, fn, [(c, expected(c)) for c in every[REPLAYED]], runs, names[-1], True)
    return v


def capstone_sweep(agent_loop: AgentLoop) -> Report:
    """The check's sweep as chapter 2's pairing experiment reports it: trials in which some
    call lacked its own result, positional pairing (from the lab's runs' completion order)
    beside the learner's loop, for `plot`. A loop still the stub, or one that raises, is one
    line of the report: the lab's bar is drawn alone."""
    sweep = cases(seeded(9))[SWEPT]
    wanted = [expected(case) for case in sweep]
    wrong = {"position_over_completion": sum(map(positional, wanted))}
    learner = Mine(agent_loop)
    histories = learner.run(lambda fn: [_history(_drive(fn, case).returned) for case in sweep])
    if histories is not None:
        wrong["yours"] = sum(isinstance(mine, str) or _by_id(mine[0]) != _by_id(want.returned[0])
                               for mine, want in zip(histories, wanted, strict=True))
    strategies = {k: {"trials_with_mismatch": n, "mismatched_pairs": None}
                  for k, n in wrong.items()}
    return Report("pairing", {"trials": SWEEP, "calls": 3, "seed": seeded(9)},
                  {"strategies": strategies, "theory": theory(3)},
                  [{"strategy": _(YOURS) if k == "yours" else k, "trials_with_mismatch": n}
                   for k, n in wrong.items()],
                  [learner.line] if learner.line else [])
