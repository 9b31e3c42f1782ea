"""Randomised trials of one turn of N calls on the virtual clock, shared by the experiments.

Call i is dispatched `gap * i` seconds after the first and then takes `low + U(0, spread)`
seconds, so a spread near zero keeps completion order equal to request order and a wide spread
makes it random. Every draw comes from one seeded generator, in a fixed order, so a trial is the
same whichever strategies look at it.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

from keel_lab._core import clock
from keel_lab._core.errors import LabError
from keel_lab._core.ids import RunIds
from keel_lab._core.pairing import Result, Strategy, mismatches
from keel_lab._core.protocol import ToolCall
from keel_lab._i18n import N_
from keel_lab.course._experiments.report import Progress


@dataclass(frozen=True)
class TrialSpec:
    calls: int = 3
    low: float = 0.010
    spread: float = 0.490
    gap: float = 0.001
    failure_rate: float = 0.0


@dataclass
class Tally:
    trials_with_mismatch: int = 0
    mismatched_pairs: int = 0  # calls that did not get their own result (wrong or none)
    unanswered: int = 0  # calls that got no result at all

    def rate(self, trials: int) -> float:
        return self.trials_with_mismatch / trials if trials else 0.0


class ToolFailure(Exception):
    """An injected failure of one call."""


# What a tally is filed under: a strategy's name (`StrategyName`), or a collector's.
Name = TypeVar("Name", bound=str)


def run_trials(strategies: Mapping[Name, Strategy], trials: int, spec: TrialSpec, seed: int,
               deny_for: frozenset[Name] = frozenset(),
               progress: Progress | None = None) -> dict[Name, Tally]:
    """Run every strategy on the same `trials` turns; one policy denial per turn for `deny_for`."""
    if trials < 1 or spec.calls < 1:
        raise LabError("no_trials", N_("trials and calls must be at least 1, got {trials} and "
                                       "{calls}"), trials=trials, calls=spec.calls)
    return clock.run_coroutine(_run(strategies, trials, spec, seed, deny_for, progress))


async def _run(strategies: Mapping[Name, Strategy], trials: int, spec: TrialSpec, seed: int,
               deny_for: frozenset[Name], progress: Progress | None) -> dict[Name, Tally]:
    rng, ids = random.Random(seed), RunIds.seeded(seed)
    loop = asyncio.get_running_loop()
    tallies = {name: Tally() for name in strategies}
    # What does not depend on the trial is computed once: the same strings and the same floats
    # (`gap * i + low` is the left operand the delay's sum always started with).
    arguments = [json.dumps({"incident_id": f"INC-{i + 1:03d}"}) for i in range(spec.calls)]
    offsets = [spec.gap * i + spec.low for i in range(spec.calls)]
    for t in range(trials):
        calls = [ToolCall(ids.call_id(t, i), "lookup_incident", arguments[i])
                 for i in range(spec.calls)]
        delays = {c.id: offsets[i] + rng.random() * spec.spread for i, c in enumerate(calls)}
        failing = {c.id for c in calls if rng.random() < spec.failure_rate}
        denied = frozenset({calls[rng.randrange(spec.calls)].id})

        # A call starts when `execute` is called, its result a future the loop settles when its
        # delay is over. The lab's strategies await each call as they make it or hand them all
        # to gather or as_completed, so this is what a coroutine sleeping its delay would do -
        # the same timers, the same tallies - without a task and a loop turn more per call.
        def execute(call: ToolCall, delays: dict[str, float] = delays,
                    failing: set[str] = failing) -> asyncio.Future[Result]:
            result = loop.create_future()
            loop.call_later(delays[call.id], _settle, result, call, call.id in failing)
            return result

        for name, strategy in strategies.items():
            try:
                pairs = await strategy(calls, execute, denied if name in deny_for else frozenset())
            except ToolFailure:  # the strategy lost every result of the turn
                pairs = [(c, None) for c in calls]
            wrong, missing = mismatches(pairs, calls)
            tally = tallies[name]
            tally.trials_with_mismatch += bool(wrong or missing)
            tally.mismatched_pairs += wrong + missing
            tally.unanswered += missing
        if progress:
            progress(1)
    return tallies


def _settle(result: asyncio.Future[Result], call: ToolCall, fails: bool) -> None:
    if result.cancelled():  # as `asyncio.sleep` does: a cancelled call stays cancelled
        return
    if fails:
        result.set_exception(ToolFailure(f"{call.id} failed"))
    else:
        result.set_result(Result(call.id, call.arguments))
