"""Run each call when its block closes, or wait for the end of the turn: latency against side
effects.

Anthropic (`content_block_stop`) and the Responses API (`response.output_item.done`) close each
call on the wire; the lab's deltas carry no per-call close, so this experiment simulates such a
stream itself: it knows where each block ends and feeds only the deltas to the core assembler.
Both policies ask `readiness` whether a call may run - at its block's close, or at the finish.
Some turns never complete: the user cancels or the connection drops, or a later block reuses an
id and the turn is refused. Whatever an early start ran by then has already happened.
"""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from keel_lab._core import clock
from keel_lab._core.errors import LabError
from keel_lab._core.ids import RunIds
from keel_lab._core.streaming import Finish, StreamAssembler, ToolCallDelta, readiness
from keel_lab._i18n import N_, _
from keel_lab.course import _data as data
from keel_lab.course._experiments.report import Report
from keel_lab.providers._diagnosis import read_stream

POLICIES = (N_("end of turn (lab)"), N_("at block close"))  # translated where shown
Fate = Literal["completed", "cancelled", "refused"]  # what became of a turn
FATES: tuple[Fate, ...] = get_args(Fate)
PIECE = 8  # characters of arguments per delta


@dataclass(frozen=True)
class Close:
    """The wire's end of one call's block; the experiment's own marker, not a lab delta."""

    index: int


Item = ToolCallDelta | Close | Finish


@dataclass(frozen=True)
class TurnPlan:
    items: tuple[tuple[float, Item], ...]  # (seconds from the stream's start, what arrives)
    durations: tuple[float, ...]  # each call's tool
    fate: Fate
    cancel_at: float | None = None


@dataclass
class Tally:
    ran: dict[Fate, int] = field(default_factory=lambda: dict.fromkeys(FATES, 0))
    to_all_results: list[float] = field(default_factory=list)  # completed turns only
    close_to_result: list[float] = field(default_factory=list)  # per call, completed turns


def plan_turn(rng: random.Random, ids: RunIds, step: int, calls: int,
              cancel_rate: float, refuse_rate: float) -> TurnPlan:
    """Blocks stream one after another; the finish follows the last close."""
    draw = rng.random()
    fate: Fate = ("cancelled" if draw < cancel_rate else
            "refused" if draw < cancel_rate + refuse_rate and calls > 1 else "completed")
    items: list[tuple[float, Item]] = []
    t = 0.1 + rng.random() * 0.2  # the model's first tokens
    for i in range(calls):
        call_id = ids.call_id(step, 0 if fate == "refused" and i == calls - 1 else i)
        text = json.dumps({"incident_id": f"INC-{i + 1:03d}", "note": "checked"})
        pieces = [text[k:k + PIECE] for k in range(0, len(text), PIECE)]
        gap = (0.15 + rng.random() * 0.45) / (len(pieces) + 1)  # this block's generation time
        items.append((t, ToolCallDelta(i, id=call_id, name="add_incident_note")))
        for piece in pieces:
            t += gap
            items.append((t, ToolCallDelta(i, arguments_delta=piece)))
        t += gap
        items.append((t, Close(i)))
    items.append((t + 0.02, Finish("tool_calls")))
    durations = tuple(0.05 + rng.random() * 0.45 for _ in range(calls))
    cancel_at = rng.random() * items[-1][0] if fate == "cancelled" else None
    return TurnPlan(tuple(items), durations, fate, cancel_at)


async def play(plan: TurnPlan, early: bool) -> tuple[bool, dict[int, float], dict[int, float]]:
    """Stream `plan` on the clock under one policy: whether the turn completed, and per call
    that ran the time its block closed and the time its result came back."""
    start, assembler = clock.now(), StreamAssembler()
    closed: dict[int, float] = {}
    tasks: dict[int, asyncio.Task[float]] = {}
    seen: set[str] = set()

    async def run(index: int) -> float:
        await asyncio.sleep(plan.durations[index])
        return clock.now() - start

    def launch(index: int, call_id: str) -> None:
        seen.add(call_id)
        tasks[index] = asyncio.create_task(run(index))

    for at, item in plan.items:
        if plan.cancel_at is not None and at > plan.cancel_at:
            await asyncio.sleep(max(0.0, plan.cancel_at - (clock.now() - start)))
            break
        # Nothing reads a block before it closes, so the stream waits on the clock only for
        # the closes and the finish; the deltas in between are fed without a timer each.
        if isinstance(item, ToolCallDelta):
            assembler.feed(item)
            continue
        await asyncio.sleep(max(0.0, at - (clock.now() - start)))
        if isinstance(item, Finish):
            assembler.feed(item)
            continue
        closed[item.index] = at
        state = next(s for s in assembler.calls() if s.index == item.index)
        # A careful early start: the block is complete and its id has not run yet.
        if early and state.id not in seen and readiness(
                state.id, state.name, state.arguments, closed=True).executable:
            launch(item.index, state.id or "")
    completed = assembler.finish_reason is not None
    if completed and not early:
        assembly = assembler.result()
        for state in assembly.calls:
            if assembly.readiness(state).executable:
                launch(state.index, state.id or "")
        completed = assembly.refused is None
    elif completed:
        completed = assembler.result().refused is None
    done = {i: await task for i, task in tasks.items()}
    return completed, closed, done


async def _trials(plans: list[TurnPlan]) -> dict[str, Tally]:
    tallies = {p: Tally() for p in POLICIES}
    for plan in plans:
        for policy, tally in tallies.items():
            completed, closed, done = await play(plan, early=policy != POLICIES[0])
            tally.ran[plan.fate] += len(done)
            if completed:
                tally.to_all_results.append(max(done.values()))
                tally.close_to_result += [done[i] - closed[i] for i in done]
    return tallies


def block_close(trials: int = 1000, calls: int = 3, seed: int = 0,
                cancel_rate: float = 0.1, refuse_rate: float = 0.05) -> Report:
    """`trials` seeded turns of `calls` calls each, played under both policies."""
    if trials < 1 or calls < 1:
        raise LabError("no_trials", N_("trials and calls must be at least 1, got {trials} and "
                                       "{calls}"), trials=trials, calls=calls)
    rng, ids = random.Random(seed), RunIds.seeded(seed)
    plans = [plan_turn(rng, ids, t, calls, cancel_rate, refuse_rate) for t in range(trials)]
    tallies = clock.run_coroutine(_trials(plans))
    fates = {f: sum(p.fate == f for p in plans) for f in FATES}
    rows: list[dict[str, Any]] = [{"policy": _(p), "turns_completed": len(t.to_all_results),
             "ms_to_all_results": _mean_ms(t.to_all_results),
             "ms_block_close_to_result": _mean_ms(t.close_to_result),
             "calls_run": sum(t.ran.values()),
             "run_in_cancelled_turns": t.ran["cancelled"],
             "run_in_refused_turns": t.ran["refused"]} for p, t in tallies.items()]
    lab, early = rows
    saved = lab["ms_to_all_results"] - early["ms_to_all_results"]
    lost = early["run_in_cancelled_turns"] + early["run_in_refused_turns"]
    findings = [_("{cancelled} turns cancelled or cut off, {refused} refused (a later block "
                  "reused an id), {completed} completed").format(**fates),
                _("starting at block close saves {ms} ms per completed turn; it also ran {lost} "
                  "calls for turns that never completed - side effects nobody asked for")
                .format(ms=f"{saved:.0f}", lost=lost),
                _("waiting for the end of the turn ran none of them")]
    return Report("block_close", {"trials": trials, "calls": calls, "seed": seed,
                                  "cancel_rate": cancel_rate, "refuse_rate": refuse_rate},
                  {"fates": fates, "ms_saved_per_completed_turn": round(saved, 1),
                   "calls_run_for_failed_turns": {r["policy"]: r["run_in_cancelled_turns"]
                                                  + r["run_in_refused_turns"] for r in rows}},
                  rows, findings)


def _mean_ms(values: list[float]) -> int:
    return round(1000 * sum(values) / len(values)) if values else 0


# What each format says on the wire about a call's end (documented by the providers); the
# messages are translated where shown. A close is a block's or an item's own end, before the
# end of the turn: CLOSING names those that count as one.
CLOSES = {"content_block_stop": N_("closes block {index}"),
          "response.function_call_arguments.done": N_("arguments of item {index} are final"),
          "response.output_item.done": N_("closes item {index}")}
CLOSING = ("content_block_stop", "response.output_item.done")
ENDS = {"message_delta": N_("stop_reason {reason}: ends the turn"),
        "response.completed": N_("ends the turn"), "response.incomplete": N_("ends the turn, cut")}


def call_boundaries(name: str) -> Report:
    """Where a recorded stream opens and closes each call, and where it ends the turn: only
    those events, numbered as on the wire. Chat Completions closes calls only with the finish."""
    fmt, records = read_stream(data.path("streams", name))
    rows: list[dict[str, Any]] = [{"event": n, "type": kind, "says": says}
            for n, record in enumerate(records, 1)
            for kind, says in [_boundary(record)] if says]
    closes = sum(r["type"] in CLOSING for r in rows)
    return Report("boundaries", {"stream": name, "format": fmt}, {"events": len(records)}, rows,
                  [_("{events} wire events; {closes} block or item close(s) before the end of "
                     "the turn").format(events=len(records), closes=closes) if closes else
                   _("{events} wire events; no per-call close: only the finish ends a call")
                   .format(events=len(records))])


def _boundary(record: dict[str, Any]) -> tuple[str, str]:
    """An event's type and what it says about a call's start or end ("" if nothing)."""
    kind = str(record.get("type", ""))
    index = record.get("index", record.get("output_index"))
    if kind in CLOSES:
        return kind, _(CLOSES[kind]).format(index=index)
    if kind in ENDS:
        return kind, _(ENDS[kind]).format(reason=record.get("delta", {}).get("stop_reason"))
    if kind in ("content_block_start", "response.output_item.added"):
        item = record.get("content_block", record.get("item", {}))
        if item.get("name"):
            return kind, _("opens {type} {index}: {name}").format(
                type=item.get("type"), index=index, name=item["name"])
        return kind, _("opens {type} {index}").format(type=item.get("type"), index=index)
    choice = (record.get("choices") or [{}])[0]
    if choice.get("finish_reason"):
        return "chunk", _("finish_reason {reason}: ends the turn and every call").format(
            reason=choice["finish_reason"])
    for call in choice.get("delta", {}).get("tool_calls") or []:
        if call.get("id"):
            return "chunk", _("opens call {index}: {name}").format(
                index=call.get("index"), name=call["function"].get("name"))
    return kind or "chunk", ""
