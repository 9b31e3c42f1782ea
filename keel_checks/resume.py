"""Chapter 8, resuming a crashed turn: which calls a restarted turn must still run.

The logs are the lab's own runs written by `journal` and cut where a crash would cut them; the
expected calls come from `to_resume`. The cases set completion order against request order, put
a failure beside a running call, use two calls of one tool, a second model turn whose call ids
end as the first turn's do, a turn restarted once already, eleven calls of which seven wait for
a free slot, a graph that starts a later call first, and a second turn asking again what the
first one got - so a rule that goes by position, tool name, content, id tail, start order or
text order, or trusts a call that only started, fails one of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from keel_checks.delegation import watched
from keel_checks.verdict import Verdict, describe, labelled, listed
from keel_lab._i18n import N_, _
from keel_lab.course._experiments.production import crashed_log, graph_log
from keel_lab.course._production.store import CONFIRMED, TERMINAL, Record, to_resume
from keel_lab.course._scenarios import COMPARE, PARTIAL, compare_question

TWO_TURNS = "Look up INC-001 and INC-003 and the status of their services"
ASKED_AGAIN = "Look up INC-001 and INC-003, the status of auth-api and of their services"
IDS = N_("a list of call ids in request order")


def started_again(log: list[Record], tail: str) -> list[Record]:
    """`log` after a restart that started the call ending in `tail` again and crashed once more:
    two tool.requested records, still no outcome."""
    first = next(r for r in log if r.kind == "tool.requested" and r.ref.endswith(tail))
    return [*log, dataclasses.replace(first, seq=len(log) + 1)]


# (label, log): the seeded delays decide which call finishes first. The last three catch rules
# the first six let through (start order, text order, by content, only the started calls); they
# come last so that every other rule still fails first where its hint is clearest.
CASES: list[tuple[str, Callable[[], list[Record]]]] = [
    (N_("a crash before any call started"), lambda: crashed_log(_(COMPARE), 0, 3)),
    (N_("call-1 finished first, call-0 still running"), lambda: crashed_log(_(COMPARE), 0, 6)),
    (N_("call-1 failed, call-0 still running"), lambda: crashed_log(_(PARTIAL), 0, 6)),
    (N_("every call finished, the model not called again yet"),
     lambda: crashed_log(_(COMPARE), 0, 7)),
    (N_("the second model turn: its call-1 finished, its call-0 still running"),
     lambda: crashed_log(TWO_TURNS, 1, 13)),
    (N_("restarted once, call-0 started again, then a second crash"),
     lambda: started_again(crashed_log(_(COMPARE), 0, 6), ":call-0")),
    (N_("eleven lookups, four at a time: call-1 finished, three running, seven never started"),
     lambda: crashed_log(compare_question(11), 0, 17)),
    (N_("section 1's turn on the graph: call-4 started, call-3 still waits for call-0"),
     lambda: graph_log(0, 11)),
    (N_("the second model turn asks again for auth-api's status, which step-0 already got"),
     lambda: crashed_log(ASKED_AGAIN, 0, 15)),
]


def _short(call_id: str) -> str:
    """'step-0:call-1': the run id is the same in every record, so hints leave it out."""
    return call_id.split(":", 1)[-1] if call_id.startswith("run-") else call_id


def missing(call_id: str, log: list[Record]) -> str:
    """Why `call_id`, which has no outcome, must run: it only started, it never started, or it
    repeats a finished call word for word - and is still a call of its own."""
    calls = {r.ref: (r.name, r.arguments) for r in log if r.kind == CONFIRMED}
    done = {r.ref for r in log if r.kind in TERMINAL}
    twin = next((ref for ref in calls if ref in done and calls[ref] == calls[call_id]), None)
    if twin:
        return _("{id} asks for what {twin} got (same tool, same arguments), but it is a call of "
                 "its own: only an outcome record with its own id means it ran").format(
                     id=_short(call_id), twin=_short(twin))
    started = any(r.ref == call_id and r.kind == "tool.requested" for r in log)
    return (_("{id} started (tool.requested) but has no outcome record: nothing says it ran to "
              "the end, so it must run again") if started else
            _("{id} was confirmed but never started: it must still run")).format(
                id=_short(call_id))


def problem(got: list[Any], want: list[str], log: list[Record]) -> str:
    """What is wrong with `got`, the first thing found; "" when it is right."""
    last = {r.ref: r.kind for r in log}
    for call_id in got:
        if not isinstance(call_id, str):
            return _("return call ids (each record's `ref`), not {what}").format(
                what=describe(call_id))
        if got.count(call_id) > 1:
            return _("{id} is listed twice: a restarted turn runs each call once").format(
                id=_short(call_id))
        if any(ref.endswith(":" + call_id) for ref in last):
            return _("{id} is only the end of a call id: return the full call id (the record's "
                     "`ref`)").format(id=call_id)
        if call_id not in want:
            kind = last.get(call_id)
            return (_("{id} already has its {kind} record: that is its outcome, and running "
                      "it again could repeat its effect") if kind in TERMINAL else
                    _("{id} is no confirmed call of this log")).format(id=_short(call_id),
                                                                       kind=kind)
    lost = [c for c in want if c not in got]
    if lost:
        return missing(lost[0], log)
    return "" if got == want else _("the right calls in another order: return them in request "
                                    "order (the order of their tool.confirmed records)")


def by_position(got: list[Any], log: list[Record]) -> bool:
    """Whether `got` skips one confirmed call per outcome record, from the front."""
    calls = list(dict.fromkeys(r.ref for r in log if r.kind == CONFIRMED))
    return got == calls[sum(r.kind in TERMINAL for r in log):]


def verify_calls_to_resume(calls_to_resume: Callable[[list[Record]], Any]) -> Verdict:
    """Every case's log against `to_resume`; a case that fails says why, and all nine checks are
    reported whatever the answer."""
    calls_to_resume = watched(calls_to_resume, (to_resume,))
    v = Verdict("calls_to_resume", [label for label, _log in CASES])
    for label, make in CASES:
        log = make()
        want = to_resume(log)
        shown = [_short(c) for c in want]
        what = _(label) if want else _("{label} (return an empty list when no call is left)"
                                        ).format(label=_(label))
        got = listed(v, what, IDS, calls_to_resume, list(log), unordered=True, said=_(label))
        if got is None:
            return v
        why = problem(got, want, log)
        if why and by_position(got, log):
            why += _(" - an outcome record belongs to the call its `ref` names: match outcomes "
                     "to calls by call id, not by position")
        v.add(not why, _("{label}: runs {want}").format(label=_(label), want=shown),
              labelled(_(label), _("you returned {got}, expected {want} - {why}").format(
                  got=[_short(c) if isinstance(c, str) else describe(c) for c in got],
                  want=shown, why=why)))
    return v
