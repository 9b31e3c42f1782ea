"""Chapter 3, batching: which calls may share a concurrent batch.

Besides the incident tools the check uses one tool that is concurrency-safe *and* needs
approval (`read_audit_log`): it must still run alone, since a person decides first.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from keel_checks.delegation import watched
from keel_checks.verdict import Verdict, describe, labelled, listed, seeded
from keel_lab._core.batching import make_batches
from keel_lab._core.executor import Executor, seeded_latency
from keel_lab._core.protocol import ToolRequest
from keel_lab._core.tools import Tool, Toolset
from keel_lab._i18n import N_, _
from keel_lab.course._incident_tools import incident_tools
from keel_lab.course._scenarios import turn_requests

MakeBatches = Callable[[Sequence[ToolRequest], Any], Sequence[Sequence[ToolRequest]]]
ALONE = N_("unsafe calls (writes, approvals - even of a concurrency-safe tool - unknown tools) "
           "always run alone")
SHARED = N_("consecutive concurrency-safe calls share one batch")
WALL = N_("chapter turn: wall time with your batches and one by one")
AUDIT = Tool("read_audit_log", "Who changed a service (personal data: a person approves).",
             {"type": "object"}, lambda: [], concurrency_safe=True, requires_approval=True)


def _request(i: int, name: str) -> ToolRequest:
    return ToolRequest(f"call-{i}", name, "{}", {})


def _cases() -> list[list[ToolRequest]]:
    """The chapter's turn, 30 random request lists, two writes, and approval-gated reads."""
    names = ["lookup_incident", "get_service_status", "search_logs", "add_incident_note",
             "restart_service", "read_audit_log", "no_such_tool"]
    rng = random.Random(seeded(3))
    cases = [turn_requests(0)] + [
        [_request(i, rng.choice(names)) for i in range(rng.randint(1, 8))] for _ in range(30)]
    cases.append([_request(0, "add_incident_note"), _request(1, "add_incident_note")])
    cases.append([_request(0, "lookup_incident"), _request(1, "read_audit_log"),
                  _request(2, "read_audit_log"), _request(3, "search_logs")])
    return cases


def _shown(n: int, requests: Sequence[ToolRequest]) -> str:
    return _("case {n}, requests [{requests}]").format(
        n=n, requests=", ".join(f"{r.call_id}={r.name}" for r in requests))


def verify_make_batches(make_batches_fn: MakeBatches) -> Verdict:
    cases = _cases()
    every = _("{n} request lists: every call once, in order").format(n=len(cases))
    v = Verdict("make_batches", [every, ALONE, SHARED, WALL])
    make_batches_fn = watched(make_batches_fn, (make_batches, Executor))
    tools = Toolset.of([*incident_tools().tools.values(), AUDIT])
    answers: list[tuple[str, list[ToolRequest], list[Any]]] = []
    for n, requests in enumerate(cases):
        label = _shown(n, requests)
        given = list(requests)  # the learner's copy: the hint shows the original
        got = listed(v, label, N_("a list of batches"), make_batches_fn, given, tools)
        if got is None:
            return v
        batches = [b if isinstance(b, ToolRequest | str | bytes | dict)
                   or not hasattr(b, "__iter__") else list(b) for b in got]
        problem = _shape_problem(batches) or _order_problem(requests, batches)
        if given != list(requests):
            problem = (_("your function changed the list of requests it was given (it held "
                         "{n} of {total} afterwards): read it, leave it as it is").format(
                             n=len(given), total=len(requests))
                       + (f"; {problem}" if problem else ""))
        if problem:
            v.add(False, "", labelled(label, problem))
            return v
        answers.append((label, requests, batches))
    v.add(True, every, "")
    if not v.first(ALONE, (labelled(label, _alone_problem(b, tools)) for label, _, b in answers)):
        return v
    if not v.first(SHARED, (labelled(label, _count_problem(r, b, tools))
                            for label, r, b in answers)):
        return v
    latency = seeded_latency(0, 0.05, 0.4)
    wall = sum(max(latency(r) for r in b) for b in answers[0][2])
    serial = sum(latency(r) for r in cases[0])
    v.add(True, _("chapter turn: wall time {wall} ms with your batches, {serial} ms one by "
                  "one").format(wall=f"{wall * 1000:.0f}", serial=f"{serial * 1000:.0f}"), "")
    return v


def _shape_problem(batches: list[Any]) -> str:
    """Whether the answer has the shape of batches at all: lists of ToolRequest."""
    for n, batch in enumerate(batches):
        if isinstance(batch, ToolRequest):
            return _("batch {n} is a ToolRequest, not a list of requests: return a list of "
                     "batches, each a list (even a batch of one)").format(n=n)
        if not isinstance(batch, list):
            return _("batch {n} is {value}, not a list of requests").format(
                n=n, value=describe(batch))
        odd = [x for x in batch if not isinstance(x, ToolRequest)]
        if odd and isinstance(odd[0], str):
            return _("batch {n} holds strings ({value}), not the requests: put the "
                     "ToolRequest objects themselves in the batches").format(n=n,
                                                                             value=repr(odd[0]))
        if odd:
            return _("batch {n} holds {value}, not a ToolRequest").format(
                n=n, value=describe(odd[0]))
    return ""


def _order_problem(requests: Sequence[ToolRequest], batches: list[list[ToolRequest]]) -> str:
    flat = [r for b in batches for r in b]
    if [r.call_id for r in flat] != [r.call_id for r in requests]:
        return _("batches hold {ids}: every call exactly once, in request order").format(
            ids=[r.call_id for r in flat])
    return _("an empty batch") if any(not b for b in batches) else ""


def _alone_problem(batches: list[list[ToolRequest]], tools: Toolset) -> str:
    for b in batches:
        unsafe = [(r, why) for r in b if (why := _alone(tools.get(r.name)))]
        if unsafe and len(b) > 1:
            r, why = unsafe[0]
            return _("{id} ({name}) shares a batch with {others}: it must run alone "
                     "({why})").format(id=r.call_id, name=r.name, why=why,
                                       others=[x.call_id for x in b if x is not r])
    return ""


def _count_problem(requests: Sequence[ToolRequest], batches: list[list[ToolRequest]],
                   tools: Toolset) -> str:
    want = len(make_batches(requests, tools))  # the lab's rule, to count batches
    if len(batches) != want:
        return _("{n} batches where {want} will do: consecutive safe calls should share one "
                 "batch").format(n=len(batches), want=want)
    return ""


def _alone(tool: Tool | None) -> str:
    """Why a call must run alone, or "" when it may share a batch."""
    if tool is None:
        return _("an unknown tool")
    if tool.requires_approval:
        return _("it needs approval first, even if it is concurrency-safe")
    return "" if tool.may_run_together else _("it is not concurrency-safe")
