"""Streamed fragments are transport, not calls: assemble them by `index`, run them only when closed.

The assembler can be asked after every delta what each call looks like so far. Whether a call
may run is decided in one place, `readiness`: it needs an id and a name, arguments that are a
JSON object (empty text means "no arguments"), no converter's refusal, and the end of the turn.
A converter that knows better than the fragments what a call's arguments are (a server that
resends everything so far in each fragment) says so with `Arguments`; the fragments stay
transport, the converter's reading is the call's text. What it noticed is said in the stream
too, once (`Notice`, or the `Refuse` of a call), and explains the verdicts of the assembly.
Waiting for the end of the turn is the lab's policy: until then the turn may still be
cancelled, cut off, or made invalid by a later chunk (a duplicate or changed id).
A call the provider runs itself (`ProviderCall`: a web search, code execution, an MCP tool) is
collected apart: the user should see what the model asked for, but the client neither runs nor
answers it, so it is never among the calls and never decides whether the turn may run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Literal

from keel_lab._core.errors import LabError, Said
from keel_lab._core.messages import AssistantMessage
from keel_lab._core.protocol import (
    CallProblem,
    ToolCall,
    ToolRequest,
    call_problems,
    parse_arguments,
)
from keel_lab._i18n import N_


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """One fragment of one call; `index` says which call of the turn it belongs to."""

    index: int
    id: str | None = None
    name: str | None = None  # a fragment of the name (usually all of it, in the first delta)
    arguments_delta: str | None = None  # the next piece of the JSON argument text


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class Finish:
    reason: str  # "tool_calls", "stop", "length", ...


@dataclass(frozen=True, slots=True)
class Arguments:
    """A converter's final reading of one call's arguments, replacing what its fragments gave:
    for wire shapes whose fragments are not plain deltas (cumulative snapshots, a repeat)."""

    index: int
    text: str


# tolerated | refused (never run) | reported (nothing to run; the user should see it)
Action = Literal["tolerated", "refused", "reported"]


@dataclass(frozen=True, slots=True)
class Notice:
    """What a wire converter noticed that the deltas do not say, once per quirk and call: the
    quirk is its code, `said` what it says (coded; `message` renders it when read)."""

    index: int | None  # the call's index in the assembly (None: the whole stream)
    id: str | None
    quirk: str
    said: Said
    action: Action = "tolerated"

    @property
    def message(self) -> str:
        return str(self.said)


@dataclass(frozen=True, slots=True)
class Refuse:
    """A wire converter's verdict that one call's content cannot be trusted (e.g. corrupted
    arguments): the call stays in the history but is answered with an error, never run."""

    index: int
    said: Said  # why
    quirk: str | None = None  # the refusal is a notice too; None: a notice of the stream says why
    id: str | None = None  # the call's id, as that notice names it


@dataclass(frozen=True, slots=True)
class ProviderCall:
    """A call the provider ran (or runs) itself, read whole by the converter: shown, never run."""

    index: int  # its place in the turn (the block's or the item's index)
    id: str | None
    name: str
    input: str  # what it was asked, as the stream gave it ("" when nothing)
    kind: str  # the wire's word for it: "server_tool_use", "web_search_call", ...
    result: str | None = None  # what came of it in this turn (a result block's type, a status)


StreamEvent = ToolCallDelta | TextDelta | Finish | Refuse | Arguments | Notice | ProviderCall


@dataclass(frozen=True, slots=True)
class Readiness:
    """Whether a call may run, and the one reason that decides it: `said`, coded (`code`; its
    words, `reason`, rendered when read). In a refused turn the reason may join two coded parts,
    kept apart for whoever decides by them (`parts`): the call's own, then the turn's refusal."""

    executable: bool
    said: Said
    parts: tuple[Said, ...] = ()  # what `said` joins, when it joins them

    @property
    def code(self) -> str:
        return self.said.code

    @property
    def reason(self) -> str:
        return str(self.said)


def readiness(id: str | None, name: str, arguments: str, closed: bool,
              refused: Said | None = None, conflict: Said | None = None) -> Readiness:
    """The one rule for "may this call run": the first reason that forbids it, or that it may
    (`""` and `"{}"` both mean no arguments, so a parameterless tool can run)."""
    if refused:
        return Readiness(False, refused)
    if conflict:
        return Readiness(False, conflict)
    if not id:
        return Readiness(False, Said("no_id", N_("the call has no id")))
    if not name:
        return Readiness(False, Said("no_name", N_("the call has no name")))
    if not closed:
        return Readiness(False, Said("not_closed", N_(
            "the stream has not closed this call yet: the turn may still be cancelled, cut off "
            "or made invalid")))
    error = parse_arguments(arguments)[1]
    if error:
        return Readiness(False, error)
    return Readiness(True, Said("may_run", N_("complete and closed: it may run")))


@dataclass(slots=True)
class CallState:
    """What has arrived so far for one index."""

    index: int
    id: str | None = None
    name: str = ""
    parts: list[str] = field(default_factory=list)
    closed: bool = False
    conflict: Said | None = None  # a second, different id for the same index
    refused: Said | None = None  # why a converter refused this call's content

    @property
    def arguments(self) -> str:
        return "".join(self.parts)

    @property
    def parses(self) -> bool:
        if self.refused or (not self.parts and not self.closed):  # "no arguments" once closed
            return False
        return parse_arguments(self.arguments)[1] is None

    @property
    def readiness(self) -> Readiness:
        return readiness(self.id, self.name, self.arguments, self.closed, self.refused,
                         self.conflict)

    @property
    def executable(self) -> bool:
        return self.readiness.executable


@dataclass(frozen=True)
class Assembly:
    """The outcome of one streamed turn. Nothing of it may run when `refusal` says why (coded;
    `refused` renders it when read)."""

    calls: tuple[CallState, ...]
    text: str
    finish_reason: str | None
    problems: tuple[CallProblem, ...] = ()
    refusal: Said | None = None  # cut off, cancelled, or a turn problem: no call may run
    cancelled: bool = False  # stopped on purpose (StreamCancelled), not by a fault
    notices: tuple[Notice, ...] = ()  # the converter's, then the turn's problems
    provider_calls: tuple[ProviderCall, ...] = ()  # run by the provider: shown, never run here

    @property
    def refused(self) -> str | None:
        return None if self.refusal is None else str(self.refusal)

    @property
    def message(self) -> AssistantMessage | None:
        """The assistant message in protocol form, for the history; None when refused."""
        if self.refusal is not None:
            return None
        return AssistantMessage(self.text, tuple(ToolCall(s.id or "", s.name, s.arguments)
                                                 for s in self.calls))

    @property
    def requests(self) -> tuple[ToolRequest, ...]:
        """The calls in execution form: a refused call carries its refusal as parse error."""
        if self.message is None:
            return ()
        return tuple(ToolRequest(c.id, c.name, c.arguments, None, str(s.refused)) if s.refused
                     else ToolRequest.from_call(c)
                     for c, s in zip(self.message.tool_calls, self.calls, strict=True))

    def readiness(self, state: CallState) -> Readiness:
        """A call's verdict within its turn (a refused turn runs none of its calls), in the
        words of its own refusing notice, else of its own problem once the stream closed it,
        else of the first notice that refused the turn: a call's own problem is never hidden
        behind another's, and each part keeps its code."""
        if state.readiness.executable and self.refusal is None:
            return state.readiness
        own, cause = self._refusals
        if state.index in own:
            said = own[state.index].said
            if self.refusal is None:
                return Readiness(False, said)
            return Readiness(False, Said(said.code, N_("{reason}; the turn is refused"),
                                         {"reason": said}), (said,))
        if self.refusal is None:
            return state.readiness
        turn = Said("turn_refused", N_("the turn is refused ({why})"), {"why": self.refusal})
        if cause and cause.index is not None:  # coded by the cause, as the table shows it
            turn = Said(cause.quirk, N_(
                "the turn is refused because of call {index} ({quirk}: {message})"),
                {"index": cause.index, "quirk": cause.quirk, "message": cause.said})
        elif cause:
            turn = Said(cause.quirk, N_("the turn is refused ({quirk}: {message})"),
                        {"quirk": cause.quirk, "message": cause.said})
        if state.readiness.executable or not state.closed:  # an open call: the turn says why
            return Readiness(False, Said(turn.code, N_("not run: {turn}"), {"turn": turn}), (turn,))
        reason = state.readiness.said
        return Readiness(False, Said(reason.code, N_("{reason}; {turn}"),
                                     {"reason": reason, "turn": turn}), (reason, turn))

    @cached_property
    def _refusals(self) -> tuple[dict[int | None, Notice], Notice | None]:
        refusing = [n for n in self.notices if n.action == "refused"]
        refused = {s.index for s in self.calls if s.refused}
        own = {n.index: n for n in reversed(refusing)}  # each call's first
        return own, next((n for n in refusing if n.index not in refused), None)


class StreamAssembler:
    """Accumulates deltas into calls keyed by `index`; linear in the size of the stream."""

    def __init__(self) -> None:
        self._calls: dict[int, CallState] = {}
        self._text: list[str] = []
        self.notices: list[Notice] = []  # what the converter said, in the order it said it
        self.provider_calls: list[ProviderCall] = []
        self.finish_reason: str | None = None
        self.events = 0

    def feed(self, event: StreamEvent) -> None:
        if self.finish_reason is not None:
            raise LabError("event_after_finish", N_("event {number}: {event} arrived after the "
                                                    "finish reason"),
                           number=self.events, event=repr(event))
        if isinstance(event, ToolCallDelta):
            self._feed_call(event)
        elif isinstance(event, TextDelta):
            self._text.append(event.text)
        elif isinstance(event, Notice):
            self.notices.append(event)
        elif isinstance(event, ProviderCall):
            self.provider_calls.append(event)
        elif isinstance(event, Refuse):
            self._state(event.index).refused = event.said
            if event.quirk:
                self.notices.append(Notice(event.index, event.id, event.quirk, event.said,
                                           "refused"))
        elif isinstance(event, Arguments):
            self._state(event.index).parts = [event.text]
        else:
            self.finish_reason = event.reason
            for state in self._calls.values():
                state.closed = True
        self.events += 1  # events are numbered from 0 in messages

    def _feed_call(self, d: ToolCallDelta) -> None:
        if type(d.index) is not int or d.index < 0:
            raise LabError("bad_index", N_("event {number}: tool call index must be an integer "
                                           ">= 0, got {index}"),
                           number=self.events, index=repr(d.index))
        state = self._state(d.index)
        if d.id:
            if state.id is None:
                state.id = d.id
            elif d.id != state.id and state.conflict is None:
                state.conflict = Said("id_changed", N_("id changed from {old} to {new} "
                                                       "mid-call"), {"old": state.id, "new": d.id})
        if d.name:
            state.name += d.name
        if d.arguments_delta:
            state.parts.append(d.arguments_delta)

    def _state(self, index: int) -> CallState:
        if index not in self._calls:
            self._calls[index] = CallState(index)
        return self._calls[index]

    @property
    def text(self) -> str:
        return "".join(self._text)

    def calls(self) -> list[CallState]:
        return [self._calls[i] for i in sorted(self._calls)]

    def result(self) -> Assembly:
        """The finished turn: a call without an id or a name, an id used twice or changed refuse
        every call of it; bad JSON in one call is that call's own reason alone."""
        if self.finish_reason is None:
            raise LabError("not_finished", N_("the stream has not finished: no call may run yet"))
        states = tuple(self.calls())
        calls = [ToolCall(s.id or "", s.name, s.arguments) for s in states]
        problems = [replace(p, index=states[p.index].index) for p in call_problems(
            calls, [Said("call_at", N_("call at index {index}"), {"index": s.index})
                    for s in states])]
        problems += [CallProblem(s.index, "id_changed", Said(
                         "id_changed", N_("call at index {index}: {problem}"),
                         {"index": s.index, "problem": s.conflict}))
                     for s in states if s.conflict]
        refused = _joined([p.said for p in problems])
        ids = {s.index: s.id for s in states}
        said: dict[tuple[str, int | None], Notice] = {}  # once per quirk and call
        for n in [*self.notices, *(Notice(p.index, ids[p.index], p.kind, p.said, "refused")
                                   for p in problems)]:
            said.setdefault((n.quirk, n.index), n)  # the converter's words come first
        return Assembly(states, self.text, self.finish_reason, tuple(problems), refused,
                        notices=tuple(said.values()), provider_calls=tuple(self.provider_calls))

    def interrupted(self, why: Said | str, cancelled: bool = False) -> Assembly:
        """What arrived before the stream stopped early: kept for inspection, nothing to run.
        `why` in the caller's own words is kept as they are (an empty one refuses nothing)."""
        said = why if isinstance(why, Said) else Said("interrupted", N_("{why}"), {"why": why})
        return Assembly(tuple(self.calls()), self.text, None, (), said if why else None,
                        cancelled, tuple(self.notices), tuple(self.provider_calls))


@dataclass(frozen=True, slots=True)
class Joined:
    """Words said one after another, joined where shown by `separator` (a coded one is in the
    learner's language): a message's parameter, "a; b", "2 and 3"."""

    parts: tuple[object, ...]
    separator: str | Said

    def __str__(self) -> str:
        return str(self.separator).join(map(str, self.parts))


def _joined(reasons: list[Said]) -> Said | None:
    """Reasons one after another, as one ("a; b; c"), coded as the first; None for none."""
    if len(reasons) < 2:
        return reasons[0] if reasons else None
    return Said(reasons[0].code, N_("{why}"),
                {"why": Joined(tuple(reasons), Said("separator", N_("; ")))})


def _words(exc: BaseException) -> Said | str:
    """An exception's message as a parameter: the coded one it carries, else its text."""
    return exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], Said) else str(exc)


def assemble(events: Iterable[StreamEvent]) -> Assembly:
    """Assemble a whole stream. A stream that raises or ends without a finish runs nothing."""
    assembler = StreamAssembler()
    try:
        for event in events:
            assembler.feed(event)
    except LabError:
        raise
    except StreamCancelled as exc:
        return assembler.interrupted(Said("cancelled", N_("stream cancelled ({why})"),
                                          {"why": _words(exc)}), cancelled=True)
    except Exception as exc:
        return assembler.interrupted(Said("stream_raised", N_(
            "stream raised {error_type}: {error}"), {"error_type": type(exc).__name__,
                                                     "error": _words(exc)}))
    if assembler.finish_reason is None:
        return assembler.interrupted(Said("no_finish", N_("stream ended before a finish reason")))
    return assembler.result()


def snapshots(events: Iterable[StreamEvent]) -> Iterator[tuple[int, StreamEvent, list[CallState]]]:
    """After every event: its number (from 1), the event, and every call so far. A stream that
    dies (cancelled, connection lost) ends the snapshots; a malformed event still raises."""
    assembler = StreamAssembler()
    try:
        for n, event in enumerate(events, 1):
            assembler.feed(event)
            yield n, event, assembler.calls()
    except LabError:
        raise
    except Exception:
        return


class StreamCancelled(Exception):
    """Raised into a stream to stand for a user pressing cancel or a dropped connection."""


def cancel_after(events: Iterable[StreamEvent], n: int) -> Iterator[StreamEvent]:
    """Pass on the first `n` events, then cancel the stream."""
    for i, event in enumerate(events):
        if i == n:
            raise StreamCancelled(Said("cancelled_after", N_("cancelled after {n} events"),
                                       {"n": n}))
        yield event
