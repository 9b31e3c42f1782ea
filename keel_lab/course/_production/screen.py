"""What a UI shows per call id: "the model is still writing it" is not "it is confirmed".

A screen built from the run's events keeps one row per call, keyed by the call's id (by its
stream index until the id has arrived), never by the position in which results arrive. While
deltas stream, a call is only being written: a cancel button pressed now must be able to say
that nothing ran. Only the finish confirms it; only `tool.requested` says it runs; only its
`tool.finished`/`tool.failed` event says what came back.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from keel_lab._core.clock import run_coroutine
from keel_lab._core.events import Event
from keel_lab._core.executor import Executor
from keel_lab._core.streaming import (
    CallState,
    Finish,
    StreamCancelled,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    assemble,
    snapshots,
)
from keel_lab._core.tools import ToolOutcome, Toolset
from keel_lab._i18n import N_, _


class Phase(StrEnum):
    """What the screen says about one call, in the order a call can pass through them (the
    value is English, data; `_(phase)` is what a screen shows)."""

    WRITING = N_("model still writing")
    CONFIRMED = N_("confirmed, not run yet")
    REFUSED = N_("refused, never runs")
    CANCELLED = N_("cancelled, never ran")
    RUNNING = N_("running")
    DONE = N_("done")
    FAILED = N_("failed")


@dataclass(frozen=True)
class Frame:
    step: int
    event: str
    calls: dict[str, tuple[Phase, str]] = field(default_factory=dict)  # id -> (phase, text)


def summary(content: str, width: int = 44) -> str:
    """A result as one short line: an incident's severity and title, an error's code."""
    value = json.loads(content)
    if "error" in value:
        return _("error {code}").format(code=value["error"]["code"])
    if "title" in value:
        return textwrap.shorten(_("{id} {severity}: {title}").format(
            id=value["id"], severity=value["severity"], title=value["title"]), width)
    return textwrap.shorten(json.dumps(value), width)


def _key(state: CallState) -> str:
    return state.id or f"index {state.index}"


def _describe(event: StreamEvent) -> str:
    if isinstance(event, ToolCallDelta):
        part = event.name if event.name else event.arguments_delta
        return _("delta for index {index}: {part}").format(index=event.index, part=repr(part))
    if isinstance(event, TextDelta):
        return _("text {text}").format(text=repr(event.text))
    if isinstance(event, Finish):
        return _("finish ({reason})").format(reason=event.reason)
    return _("reject index {index}").format(index=event.index)


def screen_frames(events: Iterable[StreamEvent], tools: Toolset,
                  executor: Executor | None = None) -> list[Frame]:
    """Every frame of one streamed turn: its deltas, its finish (or cancellation), then each
    call's execution events, each frame keyed by call id."""
    received: list[StreamEvent] = []
    stopped = ""
    try:
        received.extend(events)
    except StreamCancelled as exc:
        stopped = str(exc)
    frames: list[Frame] = []
    shown: dict[str, tuple[Phase, str]] = {}
    for n, event, calls in snapshots(received):
        shown = {_key(c): (Phase.WRITING, f"{c.name}({c.arguments})") for c in calls}
        if not isinstance(event, Finish):
            frames.append(Frame(n, _describe(event), dict(shown)))
    if stopped or not any(isinstance(e, Finish) for e in received):
        shown = {k: (Phase.CANCELLED, text) for k, (_, text) in shown.items()}
        frames.append(Frame(len(received) + 1, _("stream stopped: {reason}").format(
            reason=stopped or _("no finish")), shown))
        return frames
    assembly = assemble(received)
    for c in assembly.calls:
        verdict = assembly.readiness(c)
        shown[_key(c)] = ((Phase.CONFIRMED, f"{c.name}({c.arguments})") if verdict.executable
                          else (Phase.REFUSED, verdict.reason))
    frames.append(Frame(len(received), _describe(received[-1]), dict(shown)))
    runnable = [r for r, c in zip(assembly.requests, assembly.calls, strict=True)
                if assembly.readiness(c).executable]
    ran: list[Event] = []
    turn = run_coroutine((executor or Executor()).execute(runnable, tools, emit=ran.append))
    for n, e in enumerate(ran, len(received) + 1):
        shown[e.ref] = _phase(e, turn.outcomes.get(e.ref), shown[e.ref][1])
        frames.append(Frame(n, _("{kind} at {ms} ms").format(kind=e.kind,
                                                               ms=f"{e.time * 1000:.0f}"),
                            dict(shown)))
    return frames


def _phase(event: Event, outcome: ToolOutcome | None, text: str) -> tuple[Phase, str]:
    if event.kind == "tool.requested" or outcome is None:
        return Phase.RUNNING, text
    if event.kind == "tool.finished":
        return Phase.DONE, summary(outcome.content)
    return Phase.FAILED, summary(outcome.content)


@dataclass(frozen=True)
class Arrival:
    arrived: str  # call id
    by_position: tuple[str, ...]  # row n shows the n-th result to arrive
    by_call_id: tuple[str, ...]  # row n shows the result of the n-th call


def arrivals(call_ids: Sequence[str], finished: Sequence[ToolOutcome]) -> list[Arrival]:
    """Both screens after each result, in completion order (`finished`); the rows are the
    calls (`call_ids`) in request order."""
    out = []
    by_id: dict[str, str] = {}
    for n, outcome in enumerate(finished, 1):
        by_id[outcome.call_id] = summary(outcome.content)
        position = [summary(o.content) for o in finished[:n]]
        out.append(Arrival(outcome.call_id,
                           tuple(position + ["..."] * (len(call_ids) - n)),
                           tuple(by_id.get(c, "...") for c in call_ids)))
    return out
