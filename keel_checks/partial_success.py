"""Chapter 5, partial success: the statuses a run went through, read from its event trace.

Each case is a real run of the lab's `Runner` (a scripted model, the incident tools), paused at
every approval and resumed with the case's decisions; the expected statuses are the ones the
runner returned each time it stopped, so the lab's rules decide them, never a typed table. The
cases hold every fatal code and a `tool_timeout` that is not one, the chapter's crash with a
sibling finishing after it, a crash beside a pause in one turn (fatal outranks a pause), a
denial, and business errors in an earlier turn or before a pause that the run's end remembers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any

from keel_checks.delegation import watched
from keel_checks.verdict import Verdict, labelled, listed
from keel_lab._core.events import Event
from keel_lab._core.ids import RunIds
from keel_lab._core.messages import AssistantMessage
from keel_lab._core.model import ScriptedAdapter
from keel_lab._core.partial_success import failure_cause, is_business_error, run_status
from keel_lab._core.protocol import ToolCall
from keel_lab._core.runner import Runner, RunResult
from keel_lab._core.tools import Tool, Toolset
from keel_lab._i18n import N_, _
from keel_lab.course import _data as data
from keel_lab.course._incident_tools import incident_tools

Call = tuple[str, dict[str, Any]]
OK: Call = ("lookup_incident", {"incident_id": "INC-001"})
MISSING: Call = ("lookup_incident", {"incident_id": "INC-999"})
BAD_ARGS: Call = ("lookup_incident", {"incident_id": "incident one"})
CRASH: Call = ("search_logs", {"service": "billing", "query": "timeout"})
LOGS: Call = ("search_logs", {"service": "auth-api", "query": "timeout"})
UNKNOWN: Call = ("delete_incident", {"incident_id": "INC-001"})
BAD_OUTPUT: Call = ("get_service_owner", {"service": "checkout"})
SLOW: Call = ("get_service_metrics", {"service": "checkout"})
RESTART: Call = ("restart_service", {"service": "checkout"})
RESTART_AUTH: Call = ("restart_service", {"service": "auth-api"})

# (what happens, why it ends so, the model's turns of calls, a person's decisions in order)
CASES: list[tuple[str, str, list[list[Call]], list[bool]]] = [
    (N_("one lookup, answered"), N_("no error: the run completes"), [[OK]], []),
    (N_("a lookup of a missing incident"),
     N_("a business error goes back to the model, which answers with what it has: partial"),
     [[OK, MISSING]], []),
    (N_("a missing incident, then a clean lookup in the next turn"),
     N_("an error in an earlier turn still makes the end partial: clean later turns do not "
        "undo it"), [[MISSING], [OK]], []),
    (N_("a log search that crashes"), N_("a crashed tool fails the run"), [[OK, CRASH]], []),
    (N_("two log searches, call-0 crashes"),
     N_("the crash is not the last event: the calls after it in its turn still run and are "
        "recorded (the lab's policy); the run still fails"), [[CRASH, LOGS]], []),
    (N_("a tool that does not exist"), N_("an unknown tool fails the run"), [[UNKNOWN]], []),
    (N_("a tool that returns no JSON object"),
     N_("invalid_tool_output is fatal, like a crash: the model cannot repair a broken tool's "
        "output"), [[BAD_OUTPUT]], []),
    (N_("arguments the model got wrong"),
     N_("invalid_arguments goes back to the model like a business error: partial"),
     [[BAD_ARGS]], []),
    (N_("a metrics query that times out"),
     N_("tool_timeout is not fatal: it goes back to the model, which can retry or say the data "
        "is unavailable; the end is partial"), [[SLOW]], []),
    (N_("a restart nobody has decided yet"),
     N_("the trace ends at the pause: the run still waits, no status after it"),
     [[RESTART]], []),
    (N_("a restart, approved"),
     N_("the pause, then the approved run completes: approval_required is a pause, not an "
        "error, so it does not make the end partial"), [[RESTART]], [True]),
    (N_("a restart, denied"),
     N_("a person's no (approval_denied) is a fact the model can explain: partial"),
     [[RESTART]], [False]),
    (N_("a restart approved, then a crash in the same turn"),
     N_("the pause, then the crash after it fails the run"), [[RESTART, CRASH]], [True]),
    (N_("a restart approved, then a crash in the next turn"),
     N_("the pause, then the crash fails the run"), [[RESTART], [CRASH]], [True]),
    (N_("a crash, then a restart in the same turn"),
     N_("a crash outranks a pause in its turn: nothing waits on a run that cannot go on"),
     [[CRASH, RESTART]], []),
    (N_("a missing incident, then a restart approved"),
     N_("the business error before the pause still makes the end partial"),
     [[MISSING], [RESTART]], [True]),
    (N_("two restarts, the second denied"),
     N_("each pause is a stop; the denial makes the end partial"),
     [[RESTART, RESTART_AUTH]], [True, False]),
]


def case_tools() -> Toolset:
    """The incident tools and two broken ones, since the lab's own never return bad output nor
    time out: an owner lookup that returns a bare string (`invalid_tool_output`) and a metrics
    query slower than its timeout (`tool_timeout`; the runner's clock is virtual, no one
    waits)."""
    service = {"type": "object", "properties": {"service": {"type": "string"}},
               "required": ["service"]}

    def get_service_owner(service: str) -> Any:
        return data.services()[service]["owner"]

    async def get_service_metrics(service: str) -> dict[str, Any]:
        await asyncio.sleep(60)
        return {"service": service}

    return Toolset.of([
        *incident_tools().tools.values(),
        Tool("get_service_owner", "The team that owns a service.", service, get_service_owner,
             blocking=False),
        Tool("get_service_metrics", "A service's latency and error rate.", service,
             get_service_metrics, timeout=5.0)])


def shown(result: RunResult) -> str:
    """A result's status as the exercise spells it: a completed run marked partial is
    'partial'."""
    return "partial" if result.partial else str(result.status)


def story(turns: Sequence[Sequence[Call]], decisions: Sequence[bool]
          ) -> tuple[list[Event], list[str]]:
    """Run the turns, deciding each pause in order: the final trace, and every status the
    runner returned (first `run`, then each `approve`)."""
    ids = RunIds.seeded(0)
    script = [AssistantMessage("", tuple(ToolCall(ids.call_id(step, i), name, json.dumps(args))
                                         for i, (name, args) in enumerate(calls)))
              for step, calls in enumerate(turns)] + [AssistantMessage("done")]
    runner = Runner(ScriptedAdapter(script), case_tools())
    result = runner.run("the case's question")
    statuses = [shown(result)]
    for decision in decisions:
        result = runner.approve(result, {result.pending[0].call_id: decision})
        statuses.append(shown(result))
    return list(result.events), statuses


def _trace(events: Sequence[Event]) -> str:
    return ", ".join(e.kind + (f"({e.code})" if e.code else "") for e in events)


def _note(want: list[str], got: list[Any]) -> str:
    """What the mismatch itself shows, before the case's rule: one status too many or too few,
    or the runner's word 'completed' where the exercise asks for 'partial'."""
    if len(got) != len(want):
        return _(" (one status each time the runner stopped: at every pause, and at the end "
                 "unless the trace ends paused)")
    if want[-1] == "partial" and got[-1] == "completed":
        return _(" (return 'partial', not 'completed': a run that completes with an error in it "
                 "is 'partial')")
    return ""


def verify_status_history(history_fn: Callable[[list[Event]], Any]) -> Verdict:
    """Every case's trace against the statuses its run returned; the first wrong one is the
    hint, with the case's rule, and the check count is `len(CASES)` whatever the answer."""
    v = Verdict("status_history", [label for label, *_rest in CASES])
    history_fn = watched(history_fn, (run_status, is_business_error, failure_cause))
    for label, why, turns, decisions in CASES:
        events, want = story(turns, decisions)
        what = _("{label} [{trace}]").format(label=_(label), trace=_trace(events))
        got = listed(v, what, N_("a list of statuses"), history_fn, given := list(events))
        if got is None:
            return v
        v.add(got == want and given == events, labelled(_(label), str(want)),
              labelled(what, _("expected {want}, got {got}{note}").format(
                  want=want, got=got, note=_note(want, got)), _(why))
              if got != want else _(
                  "{what}: your function changed the events list it was given: read the "
                  "trace, do not change it - it is the run's record, read again after "
                  "you").format(what=what))
    return v
