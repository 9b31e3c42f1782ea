"""Chapter 8, resuming a crashed turn: which calls a restarted turn runs at once, and which
it asks a person about.

The logs are the lab's own runs written by `journal` and cut where a crash would cut them; the
expected calls come from the lab's policy, `resume_plan`. The cases set completion order against
request order, put a failure beside a running call, use two calls of one tool, a second model
turn whose call ids end as the first turn's do, a turn restarted once already, eleven calls of
which seven wait for a free slot, a graph that starts a later call first, and a second turn
asking again what the first one got - so a rule that goes by position, tool name, content, id
tail, start order or text order, or trusts a call that only started, fails one of them. The next
three pass different `idempotent` sets: a started note, with a plain and a de-duplicating note
tool, and a started lookup with no tool idempotent - so a rule that reruns every started call,
asks about every one, or knows the idempotent tools by heart fails one of them. The last two are
restarts a person decided (the log keeps no decision, only what followed it: a denial is a
tool.failed outcome, an approval the call's start) - so a rule that takes a pause for an outcome,
reruns a denied call, asks again about an approved one, or asks about a paused one fails.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from keel_checks.delegation import watched
from keel_checks.verdict import Verdict, describe, guard, labelled
from keel_lab import OfflineAdapter, Runner
from keel_lab._i18n import N_, _
from keel_lab.course._experiments.production import crashed_log, graph_log
from keel_lab.course._production.store import (
    CONFIRMED,
    TERMINAL,
    EventStore,
    Record,
    journal,
    resume_plan,
    to_resume,
)
from keel_lab.course._scenarios import COMPARE, NOTE, PARTIAL, compare_question

TWO_TURNS = "Look up INC-001 and INC-003 and the status of their services"
ASKED_AGAIN = "Look up INC-001 and INC-003, the status of auth-api and of their services"
RESTARTS = "Restart checkout, auth-api and billing, they are stuck"
PAUSED = "tool.awaiting_approval"
IDS = N_("a list of call ids in request order")
PAIR = N_("two lists of call ids, each in request order: (the calls to run, the calls to ask a "
          "person about)")
# the lab's tools that only read: running one twice does no harm
READS = frozenset({"lookup_incident", "get_service_status", "search_logs"})


def started_again(log: list[Record], tail: str) -> list[Record]:
    """`log` after a restart that started the call ending in `tail` again and crashed once more:
    two tool.requested records, still no outcome."""
    first = next(r for r in log if r.kind == "tool.requested" and r.ref.endswith(tail))
    return [*log, dataclasses.replace(first, seq=len(log) + 1)]


def decided_log(question: str, decisions: Sequence[bool], kept: int | None = None
                ) -> list[Record]:
    """The records of a run of `question` whose pauses a person decided in turn (True =
    approved), cut after the first `kept`: no record holds a decision, only what followed it."""
    runner = Runner(OfflineAdapter(0))
    result = runner.run(question)
    for approved in decisions:
        result = runner.approve(result, {result.pending[0].call_id: approved})
    with tempfile.TemporaryDirectory() as folder:
        return journal(EventStore(Path(folder) / "events.db"), result)[:kept]


# (label, log, idempotent): the seeded delays decide which call finishes first. The three after
# the first six catch rules those let through (start order, text order, by content, only the
# started calls); the last three, whether a started call may run again. Each comes after the
# ones whose rules it would otherwise catch first, so that every rule fails where its hint is
# clearest; the two after those, the restarts a person decided. The note and restart turns are
# asked in English in every language: the offline model reads "note:" and "restart" (or 备注,
# 重启), which the pseudo-locale scrambles.
CASES: list[tuple[str, Callable[[], list[Record]], frozenset[str]]] = [
    (N_("a crash before any call started"), lambda: crashed_log(_(COMPARE), 0, 3), READS),
    (N_("call-1 finished first, call-0 still running"), lambda: crashed_log(_(COMPARE), 0, 6),
     READS),
    (N_("call-1 failed, call-0 still running"), lambda: crashed_log(_(PARTIAL), 0, 6), READS),
    (N_("every call finished, the model not called again yet"),
     lambda: crashed_log(_(COMPARE), 0, 7), READS),
    (N_("the second model turn: its call-1 finished, its call-0 still running"),
     lambda: crashed_log(TWO_TURNS, 1, 13), READS),
    (N_("restarted once, call-0 started again, then a second crash"),
     lambda: started_again(crashed_log(_(COMPARE), 0, 6), ":call-0"), READS),
    (N_("eleven lookups, four at a time: call-1 finished, three running, seven never started"),
     lambda: crashed_log(compare_question(11), 0, 17), READS),
    (N_("section 1's turn on the graph: call-4 started, call-3 still waits for call-0"),
     lambda: graph_log(0, 11), READS),
    (N_("the second model turn asks again for auth-api's status, which step-0 already got"),
     lambda: crashed_log(ASKED_AGAIN, 0, 15), READS),
    (N_("section 4's note turn: the note started, no outcome record"),
     lambda: crashed_log(NOTE, 0, 3), READS),
    (N_("the same note turn, its note tool de-duplicating on the call id (named in "
        "`idempotent`)"), lambda: crashed_log(NOTE, 0, 3), READS | {"add_incident_note"}),
    (N_("call-1 finished first, call-0 still running, no tool named in `idempotent`"),
     lambda: crashed_log(_(COMPARE), 0, 6), frozenset()),
    (N_("three restarts: call-0 approved and finished, call-1 denied, call-2 waits for approval"),
     lambda: decided_log(RESTARTS, (True, False)), READS),
    (N_("the same restarts: call-0 approved and started, no outcome record"),
     lambda: decided_log(RESTARTS, (True,), 6), READS),
]


def _short(call_id: str) -> str:
    """'step-0:call-1': the run id is the same in every record, so hints leave it out."""
    return call_id.split(":", 1)[-1] if call_id.startswith("run-") else call_id


def _names(log: list[Record]) -> dict[str, str | None]:
    return {r.ref: r.name for r in log if r.kind == CONFIRMED}


def _started(call_id: str, log: list[Record]) -> bool:
    return any(r.ref == call_id and r.kind == "tool.requested" for r in log)


def _paused(call_id: str, log: list[Record]) -> bool:
    """Whether the call waited for a person's decision at some point."""
    return any(r.ref == call_id and r.kind == PAUSED for r in log)


def missing(call_id: str, log: list[Record], idempotent: frozenset[str]) -> str:
    """Why `call_id`, which has no outcome and is in neither list, must be in one: it only
    started, it never started, or it repeats a finished call word for word - and is still a call
    of its own."""
    calls = {r.ref: (r.name, r.arguments) for r in log if r.kind == CONFIRMED}
    done = {r.ref for r in log if r.kind in TERMINAL}
    twin = next((ref for ref in calls if ref in done and calls[ref] == calls[call_id]), None)
    if twin:
        return _("{id} asks for what {twin} got (same tool, same arguments), but it is a call of "
                 "its own: only an outcome record with its own id means it ran").format(
                     id=_short(call_id), twin=_short(twin))
    name = calls[call_id][0]
    if not _started(call_id, log) and _paused(call_id, log):
        return _("{id} waits for a person's decision (tool.awaiting_approval): a pause is no "
                 "outcome, and the call never started, so it must still run").format(
                     id=_short(call_id))
    if not _started(call_id, log):
        return _("{id} was confirmed but never started: it must still run").format(
            id=_short(call_id))
    if name in idempotent:
        return _("{id} started (tool.requested) but has no outcome record: nothing says it ran "
                 "to the end, so it must run again").format(id=_short(call_id))
    return _("{id} started (tool.requested) but has no outcome record: nothing says it ran to "
             "the end, and a person must decide whether {name}, which is not in `idempotent`, "
             "runs again").format(id=_short(call_id), name=name)


def misplaced(call_id: str, ran: bool, log: list[Record], idempotent: frozenset[str]) -> str:
    """Why `call_id`, which has no outcome, is in the wrong list (`ran`: the calls to run)."""
    name = _names(log)[call_id]
    if ran and _paused(call_id, log):
        return _("{id} started (tool.requested) after a person approved it, but has no outcome "
                 "record, and {name} is not in `idempotent`: the approval was for one run, and "
                 "its effect may have happened just before the crash").format(
                     id=_short(call_id), name=name)
    if ran:
        return _("{id} started (tool.requested) but has no outcome record, and {name} is not in "
                 "`idempotent`: its effect may have happened just before the crash, and running "
                 "it again would repeat it").format(id=_short(call_id), name=name)
    if _started(call_id, log):
        return _("{id} started but has no outcome record, and {name} is in `idempotent`: "
                 "running it twice does no harm, so no one needs to be asked").format(
                     id=_short(call_id), name=name)
    if _paused(call_id, log):
        return _("{id} paused for approval and never started: it goes with the calls to run, "
                 "and the executor asks the person again when it comes to it; `ask` is for "
                 "calls that may have run").format(id=_short(call_id))
    return _("{id} was confirmed but never started: nothing of it can have happened yet, so no "
             "one needs to be asked").format(id=_short(call_id))


def done_already(call_id: str, log: list[Record]) -> str:
    """Why `call_id`, which has its outcome record, is in neither list: above all when a person
    denied it, or approved it and it ran."""
    outcome = next((r for r in log if r.ref == call_id and r.kind in TERMINAL), None)
    if outcome is None:
        return _("{id} is no confirmed call of this log").format(id=_short(call_id))
    if outcome.code == "approval_denied":
        return _("{id} already has its tool.failed record (approval_denied): a person refused "
                 "it, the refusal is its outcome, and running it would do what they "
                 "refused").format(id=_short(call_id))
    if _paused(call_id, log):
        return _("{id} already has its {kind} record: a person approved it and it ran; its "
                 "tool.awaiting_approval record is the pause before, not a question still "
                 "open").format(id=_short(call_id), kind=outcome.kind)
    return _("{id} already has its {kind} record: that is its outcome, and running it again "
             "could repeat its effect").format(id=_short(call_id), kind=outcome.kind)


def problem(got: tuple[list[Any], list[Any]], want: tuple[list[str], list[str]],
            log: list[Record], idempotent: frozenset[str]) -> str:
    """What is wrong with `got` (run, ask), the first thing found; "" when it is right."""
    last = {r.ref: r.kind for r in log}
    both = [*got[0], *got[1]]
    for ran, part, own, other in ((True, got[0], want[0], want[1]),
                                  (False, got[1], want[1], want[0])):
        for call_id in part:
            if not isinstance(call_id, str):
                return _("return call ids (each record's `ref`), not {what}").format(
                    what=describe(call_id))
            if call_id in got[0] and call_id in got[1]:
                return _("{id} is in both lists: a call either runs now or waits for a "
                         "person").format(id=_short(call_id))
            if both.count(call_id) > 1:
                return _("{id} is listed twice: a restarted turn runs each call once").format(
                    id=_short(call_id))
            if any(ref.endswith(":" + call_id) for ref in last):
                return _("{id} is only the end of a call id: return the full call id (the "
                         "record's `ref`)").format(id=call_id)
            if call_id in other:
                return misplaced(call_id, ran, log, idempotent)
            if call_id not in own:
                return done_already(call_id, log)
    lost = [c for c in to_resume(log) if c not in both]
    if lost:
        return missing(lost[0], log, idempotent)
    return "" if got == want else _("the right calls in another order: return them in request "
                                    "order (the order of their tool.confirmed records)")


def by_position(got: tuple[list[Any], list[Any]], log: list[Record]) -> bool:
    """Whether `got` holds, instead of the right calls, the confirmed calls left after skipping
    one per outcome record from the front."""
    calls = list(dict.fromkeys(r.ref for r in log if r.kind == CONFIRMED))
    rest = sorted(calls[sum(r.kind in TERMINAL for r in log):])
    ids = [*got[0], *got[1]]
    return (all(isinstance(c, str) for c in ids) and sorted(ids) == rest
            and rest != sorted(to_resume(log)))


def two_lists(v: Verdict, label: str, value: Any) -> tuple[list[Any], list[Any]] | None:
    """What the learner's function returned as (run, ask); None after a hint saying what it
    returned instead."""
    if not isinstance(value, tuple | list) or len(value) != 2 or all(
            isinstance(part, str) for part in value):
        ids = isinstance(value, list | tuple) and bool(value) and all(
            isinstance(c, str) for c in value)
        v.add(False, "", _("{what}: your function returned {value}, expected {expected}").format(
            what=label, value=_("one list of call ids") if ids else describe(value),
            expected=_(PAIR)))
        return None
    out = []
    for part, which in zip(value, (N_("the calls to run"), N_("the calls to ask a person about")),
                           strict=True):
        if isinstance(part, str | bytes | dict | set | frozenset) or not hasattr(part,
                                                                                "__iter__"):
            v.add(False, "", _("{what}: {which} are {value}, expected {expected}").format(
                what=label, which=_(which), value=describe(part), expected=_(IDS)))
            return None
        listed = guard(v, label, list, part)  # a generator runs here
        if listed is None:
            return None
        out.append(listed)
    return out[0], out[1]


def verify_calls_to_resume(calls_to_resume: Callable[[list[Record], set[str]], Any]) -> Verdict:
    """Every case's log against the lab's policy; a case that fails says why, and all fourteen
    checks are reported whatever the answer."""
    calls_to_resume = watched(calls_to_resume, (to_resume, resume_plan))
    v = Verdict("calls_to_resume", [label for label, _log, _idempotent in CASES])
    for label, make, idempotent in CASES:
        log = make()
        want = resume_plan(log, idempotent)
        shown = tuple([_short(c) for c in part] for part in want)
        what = _(label) if want != ([], []) else _(
            "{label} (return two empty lists when no call is left)").format(label=_(label))
        value = guard(v, what, calls_to_resume, list(log), set(idempotent))
        got = None if value is None else two_lists(v, _(label), value)
        if got is None:
            return v
        why = problem(got, want, log, idempotent)
        if why and by_position(got, log):
            why += _(" - an outcome record belongs to the call its `ref` names: match outcomes "
                     "to calls by call id, not by position")
        v.add(not why, _("{label}: runs {run}, asks about {ask}").format(
            label=_(label), run=shown[0], ask=shown[1]),
              labelled(_(label), _("you returned {got}, expected {want} - {why}").format(
                  got=tuple([_short(c) if isinstance(c, str) else describe(c) for c in part]
                            for part in got), want=shown, why=why)))
    return v
