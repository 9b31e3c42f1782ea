"""Chapter 8: the production replacements of the lab's shortcuts (`keel_lab.course._production`),
each measured on the lab."""

from __future__ import annotations

import tempfile
import textwrap
from pathlib import Path

from keel_lab._core.clock import run_coroutine
from keel_lab._core.events import Event
from keel_lab._core.executor import Executor, TurnResult, seeded_latency
from keel_lab._core.ids import RunIds, short_call_id
from keel_lab._core.messages import AssistantMessage
from keel_lab._core.model import ScriptedAdapter
from keel_lab._core.protocol import ToolCall
from keel_lab._core.runner import Runner, RunResult
from keel_lab._core.streaming import assemble, cancel_after
from keel_lab._i18n import N_, _
from keel_lab.course._experiments.report import Report
from keel_lab.course._incident_tools import incident_tools
from keel_lab.course._offline_model import OfflineAdapter
from keel_lab.course._production.graph import GraphExecutor, dependencies
from keel_lab.course._production.notes import Crashed, IncidentNotes
from keel_lab.course._production.screen import Phase, arrivals, screen_frames
from keel_lab.course._production.store import TERMINAL, EventStore, Record, journal, to_resume
from keel_lab.course._scenarios import (
    COMPARE,
    NOTE,
    compare_question,
    offline_stream,
    turn_requests,
)


def scheduling(seed: int = 0, limit: int = 4, low: float = 0.05, high: float = 0.4) -> Report:
    """The chapter 3 turn under three executors: one by one, batches, dependency graph."""
    requests, tools = turn_requests(seed), incident_tools()
    latency = seeded_latency(seed, low, high)
    executors = ((_("sequential"), Executor(1, latency)),
                 (_("batches(limit={limit})").format(limit=limit), Executor(limit, latency)),
                 (_("graph(limit={limit})").format(limit=limit), GraphExecutor(limit, latency)))
    runs: dict[str, TurnResult] = {mode: run_coroutine(executor.execute(requests, tools))
                                   for mode, executor in executors}
    colour = {mode: _("depth") if isinstance(executor, GraphExecutor) else _("batch")
              for mode, executor in executors}
    deps = dependencies(requests, tools)
    rows = [{"mode": mode, "call": short_call_id(s.call_id), "name": s.name, "batch": s.batch,
             "after": ",".join(short_call_id(d) for d in deps[s.call_id]) or "-",
             "start_ms": round(s.start * 1000), "end_ms": round(s.end * 1000)}
            for mode, turn in runs.items() for s in sorted(turn.spans, key=lambda s: s.call_id)]
    wall = {mode: max(s.end for s in turn.spans) for mode, turn in runs.items()}
    return Report("scheduling", {"seed": seed, "limit": limit},
                  {"wall_s": wall, "colour": colour}, rows,
                  [_("wall time {mode}: {ms} ms").format(mode=m, ms=f"{w * 1000:.0f}")
                   for m, w in wall.items()]
                  + [_("graph: a call waits only for earlier calls it conflicts with ('after')")])


def screen(cancel_after_events: int = 0, seed: int = 0) -> Report:
    """The comparison turn on screen, one frame per event; 0 = the stream is never cancelled."""
    events = offline_stream(_(COMPARE), seed)
    stream = cancel_after(events, cancel_after_events) if cancel_after_events else events
    frames = screen_frames(stream, incident_tools(), Executor(4, seeded_latency(seed)))
    keys = list(dict.fromkeys(k for f in frames for k in f.calls if not k.startswith("index")))
    rows = []
    for f in frames:
        row: dict[str, object] = {"step": f.step, "event": f.event}
        for k in keys:
            phase, text = f.calls.get(k, (None, ""))
            row[short_call_id(k)] = (textwrap.shorten(_("{phase}: {text}").format(phase=_(phase),
                                                                           text=text), 58)
                              if phase else "-")
        rows.append(row)
    last = frames[-1].calls
    ran = sum(p in (Phase.DONE, Phase.FAILED) for p, _ in last.values())
    return Report("screen", {"cancel_after": cancel_after_events or "never", "seed": seed},
                  {"calls": [short_call_id(k) for k in keys],
                   "phases": [[str(f.calls[k][0]) if k in f.calls else "" for k in keys]
                              for f in frames]},
                  rows, [_("{frames} screen frames (one per stream event, stop or tool "
                           "event); {ran} of {calls} calls ran").format(
                      frames=len(frames), ran=ran, calls=len(last))])


def rendering(seed: int = 0, calls: int = 3) -> Report:
    """The comparison turn's results rendered into rows by arrival position, and by call id,
    after each arrival (random delays: completion order is not request order)."""
    requests = assemble(offline_stream(compare_question(calls), seed)).requests
    finished: list[str] = []

    def emit(e: Event) -> None:
        if e.kind in TERMINAL:
            finished.append(e.ref)

    turn = run_coroutine(Executor(calls, seeded_latency(seed, 0.05, 0.5)).execute(
        requests, incident_tools(), emit=emit))
    frames = arrivals([r.call_id for r in requests], [turn.outcomes[c] for c in finished])
    rows = [{"after": n, "row": r.raw_arguments, "by position": a.by_position[i],
             "by call id": a.by_call_id[i]}
            for n, a in enumerate(frames, 1) for i, r in enumerate(requests)]
    wrong = sum(r["by position"] != r["by call id"] for r in rows[-calls:])
    order = [short_call_id(c) for c in finished]
    return Report("rendering", {"seed": seed, "calls": calls},
                  {"completion_order": order, "wrong_rows": wrong}, rows,
                  [_("completion order {order}; rows wrong by position at the end: {wrong} of "
                     "{calls}; by call id: 0").format(order=order, wrong=wrong, calls=calls)])


def event_store(folder: Path, seed: int = 0, seen_before_drop: int = 3) -> Report:
    """A run's events stored on disk while a reader follows, drops after `seen_before_drop`
    events and resumes; a restart reads them all; a resumed turn skips the finished calls."""
    result = Runner(OfflineAdapter(seed), executor=Executor(4)).run(_(COMPARE))
    store = EventStore(folder / "events.db")
    rows: list[dict[str, object]] = []
    cursor = 0

    def read(who: str) -> None:
        nonlocal cursor
        got = store.read(after=cursor, run_id=result.run_id)
        rows.append({"reader": who, "after": cursor, "got": [r.seq for r in got],
                     "events": ", ".join(f"{r.kind} {r.ref.rsplit(':', 1)[-1]}" for r in got)})
        cursor = got[-1].seq if got else cursor

    for n, event in enumerate(result.events, 1):
        store.append(result.run_id, event)
        if n == seen_before_drop:
            read(_("UI (then the connection drops)"))
    read(_("UI reconnects with its cursor"))
    restarted = EventStore(folder / "events.db").read(run_id=result.run_id)
    rows.append({"reader": _("new process, same file"), "after": 0,
                 "got": [r.seq for r in restarted],
                 "events": _("{n} events").format(n=len(restarted))})
    requests = assemble(offline_stream(_(COMPARE), seed)).requests
    crashed = RunIds.seeded(seed + 1).run_id
    for request in requests:
        store.confirm(crashed, request, 0.0)
    store.append(crashed, Event("tool.requested", requests[0].call_id, 0.0))
    store.append(crashed, Event("tool.finished", requests[0].call_id, 0.1))
    todo = to_resume(store.read(run_id=crashed))
    rows.append({"reader": _("turn resumed after a crash"), "after": 0,
                 "got": [r.seq for r in store.read(run_id=crashed)],
                 "events": _("runs only {calls}").format(calls=", ".join(short_call_id(c)
                                                                          for c in todo))})
    return Report("event_store", {"seed": seed, "seen_before_drop": seen_before_drop},
                  {"events": len(result.events), "resumed_runs": todo},
                  rows, [_("the reader saw every event exactly once; finished calls are not "
                           "run again")])


def _cut(run: RunResult, kept: int) -> list[Record]:
    """`run`'s store records as a crash after the first `kept` of them leaves them."""
    with tempfile.TemporaryDirectory() as folder:
        return journal(EventStore(Path(folder) / "events.db"), run)[:kept]


def crashed_log(question: str | None = None, seed: int = 0, kept: int = 6) -> list[Record]:
    """The store's records of a seeded run of `question` as asked (by default `COMPARE`, in the
    learner's language), four calls at a time, as a crash after the first `kept` of them leaves
    them (seeded delays: completion order is not request order; a fifth call waits for a free
    slot)."""
    asked = _(COMPARE) if question is None else question
    return _cut(Runner(OfflineAdapter(seed), executor=Executor(4, seeded_latency(seed)))
                .run(asked), kept)


def graph_log(seed: int = 0, kept: int = 11, limit: int = 4) -> list[Record]:
    """Section 1's turn run by the dependency-graph executor, as a crash after the first `kept`
    records leaves it: calls start when what they wait for is done, so a later call can start
    before an earlier one (the note on INC-001 waits for the lookup of INC-001)."""
    calls = tuple(ToolCall(r.call_id, r.name, r.raw_arguments) for r in turn_requests(seed))
    model = ScriptedAdapter([AssistantMessage("", calls), AssistantMessage("done")])
    executor = GraphExecutor(limit, seeded_latency(seed, 0.05, 0.4))
    return _cut(Runner(model, incident_tools(), executor, seed=seed).run("section 1's turn"),
                kept)


# keyed variants: (label, key given, record together)
TOOLS = ((N_("plain"), False, True), (N_("de-duplicates, record apart"), True, False),
         (N_("de-duplicates, one transaction"), True, True))


def crash_and_resume(crash_before: str = "tool.finished", seed: int = 0) -> Report:
    """The note turn crashes just before its `crash_before` record reaches the store, and a
    restarted process runs what `to_resume` finds: every call without an outcome, the
    at-least-once rule whose cost this shows (the lab's policy, `resume_plan`, reruns a started
    call only for an idempotent tool and asks a person about the rest). The notes live in the
    incident system's own database, which outlives the agent (`IncidentNotes`): a plain note
    tool writes again when the crash fell after its effect; one that de-duplicates on its key
    (the run id with the call id) answers the repeat from its record - when the record was
    committed with the note; written apart, the crash falls between them and the note doubles."""
    request = assemble(offline_stream(_(NOTE), seed)).requests[0]
    incident = str((request.input or {}).get("incident_id", ""))
    text = str((request.input or {}).get("note", ""))
    rows: list[dict[str, object]] = []
    after: dict[str, int] = {}
    for label, keyed, together in TOOLS:
        with tempfile.TemporaryDirectory() as folder:
            store = EventStore(Path(folder) / "events.db")
            notes = IncidentNotes(Path(folder) / "incidents.db")
            store.confirm("run", request, 0.0)
            for process, crash in ((_("first (crashes)"), crash_before), (_("restarted"), "")):
                todo = to_resume(store.read())
                for call_id in todo:
                    if crash == "tool.requested":
                        break
                    store.append("run", Event("tool.requested", call_id, 0.0))
                    try:
                        notes.add(incident, text, f"run:{call_id}" if keyed else None,
                                  together=together, crash=crash == "tool.finished")
                    except Crashed:
                        break
                    store.append("run", Event("tool.finished", call_id, 0.1))
                count = notes.count(incident)
                rows.append({"note tool": _(label), "process": process,
                             "runs": [short_call_id(c) for c in todo], "notes on INC-001": count})
            after[label] = count  # the restarted process's
    plain, apart, keyed_once = (after[label] for label, _k, _t in TOOLS)
    return Report("crash_and_resume", {"crash_before": crash_before, "seed": seed},
                  {"plain": plain, "apart": apart, "dedupe": keyed_once}, rows,
                  [_("notes after the restart: plain tool {plain}, de-duplication record "
                     "apart {apart}, in one transaction {keyed}")
                   .format(plain=plain, apart=apart, keyed=keyed_once)])
