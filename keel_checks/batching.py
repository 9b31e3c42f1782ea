"""Chapter 3, batching: which calls may share a concurrent batch.

The exercise does not state the rule: the learner derives it from the chapter's table and the
tools' declarations. So the check adds declarations the chapter's tools do not have, each under
a name drawn from a pool by the (grader's) seed: a concurrency-safe tool with an unfamiliar name,
one that is concurrency-safe *and* needs approval (a person decides first: it runs alone), one
that writes under a reader's name, and a read-like name no tool has (nothing declares it safe).
A rule written from the chapter's five names, or from what names look like, fails on them.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from typing import Any

from keel_checks.delegation import watched
from keel_checks.exercises import BATCHES_SHARED as SHARED
from keel_checks.exercises import BATCHES_UNKNOWN as UNDECLARED
from keel_checks.verdict import Verdict, describe, labelled, listed, seeded
from keel_lab._core.batching import make_batches
from keel_lab._core.executor import Executor, seeded_latency
from keel_lab._core.protocol import ToolRequest
from keel_lab._core.tools import Tool, Toolset
from keel_lab._i18n import N_, _
from keel_lab.course._incident_tools import incident_tools
from keel_lab.course._scenarios import turn_requests

MakeBatches = Callable[[Sequence[ToolRequest], Any], Sequence[Sequence[ToolRequest]]]
ALONE = N_("no call shares a batch that its tool's declarations do not allow")
WALL = N_("chapter turn: wall time with your batches and one by one")
# (names to draw from, concurrency_safe, requires_approval): declarations the chapter lacks
EXTRA = ((("fetch_metrics", "list_deploys", "count_errors"), True, False),
         (("read_audit_log", "export_report", "read_payroll"), True, True),
         (("get_or_create_ticket", "fetch_and_ack_alert", "search_and_tag_logs"), False, False))
UNKNOWN = ("lookup_runbook", "search_tickets", "get_owner")  # read-like names no tool has


def _request(i: int, name: str) -> ToolRequest:
    return ToolRequest(f"call-{i}", name, "{}", {})


def _listed(*names: str) -> list[ToolRequest]:
    return [_request(i, name) for i, name in enumerate(names)]


def _cases() -> tuple[list[list[ToolRequest]], Toolset]:
    """The chapter's turn, 30 random request lists, then one list per trap: the toolset has
    the incident tools and the drawn declarations."""
    rng = random.Random(seeded(3))
    safe, both, writes = (Tool(rng.choice(pool), "A tool the chapter does not have.",
                               {"type": "object"}, lambda: [], concurrency_safe=concurrent,
                               requires_approval=approval)
                          for pool, concurrent, approval in EXTRA)
    unknown = rng.choice(UNKNOWN)
    tools = Toolset.of([*incident_tools().tools.values(), safe, both, writes])
    names = [*tools.tools, "no_such_tool", unknown]
    cases = [turn_requests(0)] + [
        [_request(i, rng.choice(names)) for i in range(rng.randint(1, 8))] for _ in range(30)]
    cases += [_listed("lookup_incident", safe.name),
              _listed("search_logs", writes.name, "get_service_status"),
              _listed("lookup_incident", both.name, both.name, "search_logs"),
              _listed("get_service_status", unknown),
              _listed("add_incident_note", "add_incident_note")]
    return cases, tools


def _shown(n: int, requests: Sequence[ToolRequest]) -> str:
    return _("case {n}, requests [{requests}]").format(
        n=n, requests=", ".join(f"{r.call_id}={r.name}" for r in requests))


def verify_make_batches(make_batches_fn: MakeBatches) -> Verdict:
    cases, tools = _cases()
    every = _("{n} request lists: every call once, in order").format(n=len(cases))
    v = Verdict("make_batches", [every, ALONE, SHARED, UNDECLARED, WALL])
    make_batches_fn = watched(make_batches_fn, (make_batches, Executor))
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
    if not v.first(SHARED, (labelled(label, _split_problem(r, b, tools))
                            for label, r, b in answers)):
        return v
    if not v.first(UNDECLARED, (labelled(label, _unknown_problem(b, tools))
                                for label, _, b in answers)):
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
    ids, asked = [r.call_id for r in flat], [r.call_id for r in requests]
    if sorted(ids) == sorted(asked) and ids != asked:  # every call once, another order
        moved, first = next((m, r) for m, r in zip(flat, requests, strict=True)
                            if m.call_id != r.call_id)
        return _("{moved} ({moved_name}) runs before {first} ({first_name}), which the model "
                 "asked for earlier: the lab's executor moves no call past another (\"Whose "
                 "order is it?\")").format(moved=moved.call_id, moved_name=moved.name,
                                          first=first.call_id, first_name=first.name)
    if ids != asked:
        return _("batches hold {ids}: every call exactly once, in request order").format(ids=ids)
    return _("an empty batch") if any(not b for b in batches) else ""


def _alone_problem(batches: list[list[ToolRequest]], tools: Toolset) -> str:
    """The first call of a declared tool that shares a batch its declarations forbid (a name no
    tool has is `_unknown_problem`'s)."""
    for b in batches:
        for r in b if len(b) > 1 else ():
            others = [x.call_id for x in b if x is not r]
            tool = tools.get(r.name)
            if tool is not None and tool.requires_approval:
                return _("{id} ({name}) requires approval and shares a batch with {others}: "
                         "a person decides before it runs (the table's approval row)").format(
                             id=r.call_id, name=r.name, others=others)
            if tool is not None and not tool.concurrency_safe:
                return _("{id} ({name}) is not concurrency_safe and shares a batch with "
                         "{others}: it may change what they read (the table's rows on a "
                         "shared resource and an irreversible action)").format(
                             id=r.call_id, name=r.name, others=others)
    return ""


def _unknown_problem(batches: list[list[ToolRequest]], tools: Toolset) -> str:
    """The first call to a name no tool has that shares a batch."""
    for b in batches:
        for r in b if len(b) > 1 else ():
            if tools.get(r.name) is None:
                return _("{id} ({name}) shares a batch with {others}, but no tool has that "
                         "name: no declaration says it is safe beside others").format(
                             id=r.call_id, name=r.name,
                             others=[x.call_id for x in b if x is not r])
    return ""


def _split_problem(requests: Sequence[ToolRequest], batches: list[list[ToolRequest]],
                   tools: Toolset) -> str:
    """The first two neighbours that may run together but were put in different batches."""
    batch_of = {r.call_id: n for n, b in enumerate(batches) for r in b}
    for before, r in itertools.pairwise(requests):
        split = batch_of[before.call_id] != batch_of[r.call_id]
        if split and _together(before, tools) and _together(r, tools):
            return _("{before} ({before_name}) and {id} ({name}) are neighbours, both "
                     "concurrency_safe without approval, yet in different batches: independent "
                     "read-only lookups run together (the table's first row)").format(
                         id=r.call_id, name=r.name, before=before.call_id,
                         before_name=before.name)
    return ""


def _together(r: ToolRequest, tools: Toolset) -> bool:
    tool = tools.get(r.name)
    return tool is not None and tool.may_run_together
