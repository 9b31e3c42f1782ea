"""Chapter 2, the lesson's own experiment: how often do results come back in request order?

The learner's `count_in_order(trials, calls, seed)` runs `trials` turns of `calls` calls with
random delays and counts the turns whose completion order equals the request order. The draws
are fixed in order: one `random.Random(seed)`, and before each turn runs, its calls' delays
`rng.uniform(0.010, 0.500)` in call order, turn after turn. On the virtual clock every call of a
turn starts at 0, so the calls finish in the order of their delays and the count is a function
of the seed (`_drawn_count`): the check wants that very count, on several seeds. A count
merely near trials / n! gets 0: one drawn from the right distribution, or the lab's experiments'
(their trial loop draws each call's failure roll and the turn's denied call after its delays,
and sends the calls 1 ms apart). The notebook's check always uses the
same inputs (nbval compares its output); a grader passes `drawn_from`, a seed the inputs are
drawn from (`Inputs.drawn`), so a table of the counts the notebook asks for fails.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from keel_checks.delegation import watched
from keel_checks.pairing import _completion_order
from keel_checks.verdict import Verdict, describe, guard
from keel_lab._core.clock import clock_moves
from keel_lab._core.pairing import position_over_completion
from keel_lab._i18n import N_, _
from keel_lab.course._experiments.pairing import order
from keel_lab.course._experiments.trials import run_trials

CountInOrder = Callable[[int, int, int], int]
TRIALS, SEEDS, CALLS = 200, (1, 2, 3), (2, 3, 4)
SIGMAS = 4.5
SLOW = 3.0  # real seconds 5 virtual trials may take on a loaded machine (real sleeps take ~2)


@dataclass(frozen=True)
class Inputs:
    """The check's inputs: (trials, seed) of the first and the one-call run, the seed run
    twice, the seeds of the counted runs and their trials."""

    first: tuple[int, int] = (5, 0)
    one_call: tuple[int, int] = (50, 0)
    repeated: int = 1
    seeds: tuple[int, ...] = SEEDS
    trials: int = TRIALS

    @classmethod
    def drawn(cls, seed: int) -> Inputs:
        rng = random.Random(seed)
        first, one_call, repeated, *seeds = (rng.randrange(10**6) for _ in range(3 + len(SEEDS)))
        return cls((rng.randint(4, 8), first), (rng.randint(30, 60), one_call), repeated,
                   tuple(seeds), rng.randint(150, 250))


def _drawn_count(trials: int, calls: int, seed: int) -> int:
    """The count these draws give: the turns whose delays, drawn in call order, increase
    (calls started together on the virtual clock finish in the order of their delays)."""
    rng = random.Random(seed)
    count = 0
    for _turn in range(trials):
        delays = [rng.uniform(0.010, 0.500) for _call in range(calls)]
        count += delays == sorted(delays)
    return count


# What would count for the learner: the lab's experiment and trial loop, the strategy that
# collects as the calls finish, the pairing check's turn (the same draws) and the count itself.
LAB = (order, run_trials, position_over_completion, _completion_order, _drawn_count)


def _count(v: Verdict, fn: CountInOrder, trials: int, calls: int, seed: int,
           unrun: dict[int, list[str]]) -> int | None:
    """The learner's count, or None after a hint (an exception, not a count, or no clock); a
    count got without waking the clock once per call is noted in `unrun`."""
    label = f"count_in_order({trials}, {calls}, {seed})"
    before = len(v.results)
    if hasattr(fn, "clock_moved"):  # run in another process (the grader's): watched there
        got = guard(v, label, fn, trials, calls, seed)
        total, woke = fn.clock_moved or 0.0, getattr(fn, "clock_woke", 0)
    else:
        with clock_moves() as moved:
            got = guard(v, label, fn, trials, calls, seed)
        total, woke = sum(moved), sum(1 for m in moved if m > 0)
    if len(v.results) > before:
        return None
    if total < trials * 0.010:  # every turn waits at least its shortest delay, 10 ms
        v.add(False, "", _("{label}: the virtual clock moved {ms} ms for {trials} turns - your "
                           "calls never slept their delays on it. Run each turn with "
                           "run_coroutine(...), its calls awaiting asyncio.sleep(delay), and "
                           "watch the order they finish in").format(
                               label=label, ms=f"{total * 1000:.0f}", trials=trials))
        return None
    if woke < trials * calls:  # each call wakes at its own delay: turns run, not reckoned
        unrun.setdefault(calls, []).append(_(
            "{label}: the virtual clock moved forward {woke} times for {trials} turns of "
            "{calls} calls - a turn that runs its calls wakes once per call, when its delay is "
            "over. Start every call of a turn, each awaiting asyncio.sleep(its delay), and count "
            "the order they finish in; working it out from the delays runs no turn").format(
                label=label, woke=woke, trials=trials, calls=calls))
    if isinstance(got, bool) or not isinstance(got, int) or not 0 <= got <= trials:
        v.add(False, "", _("{label} returned {value}: return how many of the {trials} trials "
                           "came back in request order, an int from 0 to trials").format(
                               label=label, value=describe(got), trials=trials))
        return None
    return got


def _about(calls: int) -> str:
    return _("{calls} calls: the count these draws give, on every seed").format(calls=calls)


CLOCK, ONE_CALL, SAME_SEED = (N_("a count from 0 to trials, on the virtual clock"),
                              N_("one call: every trial is in request order"),
                              N_("the same seed gives the same count"))


def verify_count_in_order(count_in_order: CountInOrder, drawn_from: int | None = None
                          ) -> Verdict:
    """The verdict on the fixed inputs, or (a grader) on inputs drawn from the seed
    `drawn_from`."""
    given = Inputs() if drawn_from is None else Inputs.drawn(drawn_from)
    v = Verdict("count_in_order", [CLOCK, ONE_CALL, SAME_SEED, *map(_about, CALLS)])
    fn = watched(count_in_order, LAB)
    unrun: dict[int, list[str]] = {}
    start = time.perf_counter()
    if _count(v, fn, given.first[0], 3, given.first[1], unrun) is None:
        return v
    took = time.perf_counter() - start
    v.add(took < SLOW, CLOCK,
          _("{trials} trials took {took} s of real time: run them on the virtual clock "
            "(`run_coroutine(...)`), or thousands of trials take minutes").format(
                trials=given.first[0], took=f"{took:.1f}"))
    trials, one_seed = given.one_call
    one = _count(v, fn, trials, 1, one_seed, unrun)
    if one is None:
        return v
    v.add(one == trials, ONE_CALL,
          _("count_in_order({trials}, 1, {seed}): with 1 call every trial is in request order: "
            "expected {trials} of {trials}, you counted {n}").format(
                trials=trials, seed=one_seed, n=one)
          + (_(" - are you counting the trials whose order differed?") if one == 0 else
             _(" - does your loop run every one of the `trials` turns?")))
    first = _count(v, fn, 200, 3, given.repeated, unrun)
    again = None if first is None else _count(v, fn, 200, 3, given.repeated, unrun)
    if first is None or again is None:
        return v
    v.add(first == again, SAME_SEED,
          _("count_in_order(200, 3, {seed}) gave {first} and then {again}: draw every delay "
            "of a turn from random.Random(seed), in call order, before running that turn, so "
            "a seed repeats its trials, and give every call its own delay - calls that finish "
            "at the same moment come back in no fixed order").format(
                seed=given.repeated, first=first, again=again))
    for calls in CALLS:
        counts: list[int] = []
        for s in given.seeds:
            got = _count(v, fn, given.trials, calls, s, unrun)
            if got is None:
                return v
            counts.append(got)
        ok, passed, hint = _judge(counts, calls, given)
        unwoken = unrun.get(calls)
        v.add(ok and not unwoken, passed, unwoken[0] if ok and unwoken else hint)
    return v


def _judge(counts: list[int], calls: int, given: Inputs) -> tuple[bool, str, str]:
    """(ok, pass line, hint) for one call count, from every seed's count."""
    trials, seeds = given.trials, given.seeds
    drawn = [_drawn_count(trials, calls, s) for s in seeds]
    total, yours = trials * len(counts), sum(counts)
    p = 1 / math.factorial(calls)
    expected = total * p
    tol = SIGMAS * math.sqrt(total * p * (1 - p))
    passed = _("{about} (seeds {seeds}, {trials} trials each: {yours} of {total} in request "
               "order)").format(about=_about(calls), seeds=list(seeds), trials=trials,
                                yours=yours, total=total)
    where = _("count_in_order({trials}, {calls}, seed) for seeds {seeds} ({n} x {trials} "
              "trials)").format(trials=trials, calls=calls, seeds=list(seeds), n=len(counts))
    if set(counts) == {trials}:
        hint = _("{where}: every trial came back in request order. `gather` returns results in "
                 "argument order, sorting the results restores it, and fixed or equal delays "
                 "keep it: draw a random delay for every call, collect with "
                 "`asyncio.as_completed`, and compare the order as it finished").format(
                     where=where)
    elif set(counts) <= {0, trials}:
        hint = _("{where}: each seed gave all or none of its trials ({counts}): either every "
                 "turn reuses the same delays (make one random.Random(seed) per run and draw "
                 "new delays for every turn) or your comparison never succeeds (compare the "
                 "order the calls finished in with the order they were made)").format(
                     where=where, counts=counts)
    elif len(set(counts)) == 1:
        hint = _("{where}: every seed gave {count}: the seed must change the delays "
                 "(random.Random(seed))").format(where=where, count=counts[0])
    elif abs(yours - expected) <= tol:  # before the count of the other turns: 1/2! is both
        seed = next((s for s, c, d in zip(seeds, counts, drawn, strict=True) if c != d), seeds[0])
        hint = _("{where}: you counted {yours} in request order, near the expected rate but not "
                 "the count these draws give (seed {seed} differs). The check replays the same "
                 "draws and wants that very count: draw every delay of a turn from "
                 "random.Random(seed), in call order, before running that turn (`[rng.uniform("
                 "0.010, 0.500) for _ in range(calls)]`), one turn after the other, and draw "
                 "nothing else from it").format(
                     where=where, yours=yours, seed=seed)
    elif abs(yours - (total - expected)) <= tol:
        hint = _("{where}: you counted {yours}, about 1 - 1/{calls}! of them: those are the "
                 "trials whose order differed; count the ones in request order").format(
                     where=where, yours=yours, calls=calls)
    else:
        hint = _("{where}: you counted {yours} in request order, expected about {expected} "
                 "(trials/{calls}! +- {tol})").format(
                     where=where, yours=yours, expected=f"{expected:.0f}", calls=calls,
                     tol=f"{tol:.0f}")
    return counts == drawn, passed, hint
