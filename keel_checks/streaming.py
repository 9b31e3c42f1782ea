"""Chapter 4, streaming: when a streamed call may run.

The expected answer and its reason come from `keel_lab.readiness`, the lab's one rule; the
streams include text that merely looks like an object (`{...}` that is not JSON), so a check of
the first and last character cannot pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from keel_checks.delegation import watched
from keel_checks.verdict import Verdict, guard
from keel_lab._core.protocol import parse_arguments
from keel_lab._core.streaming import (
    CallState,
    Finish,
    StreamAssembler,
    StreamEvent,
    ToolCallDelta,
    assemble,
    cancel_after,
    readiness,
    snapshots,
)
from keel_lab._i18n import N_, _
from keel_lab.course._scenarios import offline_stream


@dataclass(frozen=True)
class CallView:
    """What a learner's `is_executable` sees of a streamed call so far."""

    index: int
    id: str | None
    name: str
    arguments: str
    closed: bool  # the stream has sent its finish reason


def _views(events: Iterable[StreamEvent]) -> list[tuple[int, CallView, bool]]:
    """(chunk, view, reference verdict) after every event, for every call so far."""
    return [(n, CallView(s.index, s.id, s.name, s.arguments, s.closed), s.executable)
            for n, _, calls in snapshots(events) for s in calls]


def _shown(view: CallView) -> str:
    """What the learner's function was given, as its fields read."""
    return _("id {id}, name {name}, arguments {arguments}, closed {closed}").format(
        id=repr(view.id), name=repr(view.name), arguments=repr(view.arguments),
        closed=view.closed)


def verify_is_executable(is_executable: Callable[[CallView], bool]) -> Verdict:
    is_executable = watched(is_executable, (readiness, CallState, StreamAssembler, assemble,
                                            snapshots, parse_arguments))
    one = offline_stream("Look up INC-001", seed=0, chunk_size=4)
    three = offline_stream("Which is more severe, INC-001, INC-002 or INC-003?", seed=1,
                           chunk_size=3)
    bad = [e for e in three if not (isinstance(e, ToolCallDelta) and e.index == 1
                                    and e.arguments_delta and e.arguments_delta.endswith("}"))]
    odd: list[StreamEvent] = [
        ToolCallDelta(0, id="a", name="lookup_incident", arguments_delta='["INC-001"]'),
        ToolCallDelta(1, name="lookup_incident", arguments_delta="{}"),
        ToolCallDelta(2, id="c", arguments_delta="{}"), Finish("tool_calls")]
    parameterless: list[StreamEvent] = [
        ToolCallDelta(0, id="p", name="list_services"),
        ToolCallDelta(1, id="q", name="list_services", arguments_delta="{}"),
        ToolCallDelta(2, id="r", name="list_services", arguments_delta=" \n"),
        ToolCallDelta(3, id="s", name="list_services", arguments_delta="null"),
        Finish("tool_calls")]
    braces: list[StreamEvent] = [
        ToolCallDelta(0, id="b0", name="lookup_incident", arguments_delta='{"incident_id": '),
        ToolCallDelta(1, id="b1", name="lookup_incident",
                      arguments_delta="{'incident_id': 'INC-002'}"),
        ToolCallDelta(2, id="b2", name="lookup_incident", arguments_delta='{"incident_id": "'),
        ToolCallDelta(0, arguments_delta='"INC-001"}{"incident_id": "INC-003"}'),
        ToolCallDelta(2, arguments_delta='INC-004}'),
        ToolCallDelta(3, id="b3", name="lookup_incident", arguments_delta="{incident_id: 5}"),
        Finish("tool_calls")]
    cases: list[tuple[str, Iterable[StreamEvent]]] = [
        (N_("one call, fragment by fragment"), one),
        (N_("three interleaved calls"), three),
        (N_("a stream cancelled before its finish"), cancel_after(three, len(three) - 1)),
        (N_("one call's JSON broken beside good siblings"), bad),
        (N_("arguments that are not an object, a missing id, a missing name"), odd),
        (N_("a parameterless tool: arguments \"\", {} or blank (null is no object)"),
         parameterless),
        (N_("text in braces that is not JSON"), braces),
    ]
    v = Verdict("is_executable", [label for label, _ in cases])
    for label, events in cases:
        for chunk, view, want in _views(events):
            where = _("{label}, chunk {chunk}, call {index} ({shown})").format(
                label=_(label), chunk=chunk, index=view.index, shown=_shown(view))
            got = guard(v, where, is_executable, view)
            if got is None:
                return v
            if bool(got) != want:
                why = readiness(view.id, view.name, view.arguments, view.closed).reason
                said = repr(got) if isinstance(got, bool) else _("{got} (taken as {bool})").format(
                    got=repr(got), bool=bool(got))
                v.add(False, "", _("{where}: you returned {said}, expected {want} - {why}").format(
                    where=where, said=said, want=want, why=why))
                break
        else:
            v.add(True, _("{label}: right after every chunk").format(label=_(label)), "")
    return v
