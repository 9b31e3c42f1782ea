"""Chapter 2, the lesson's own experiment: how often do results come back in request order?

The learner's `count_in_order(trials, calls, seed)` runs `trials` turns of `calls` calls with
random delays and counts the turns whose completion order equals the request order. The check
runs it for several call counts and seeds and compares the count with trials / n! (within 4.5
standard deviations of the binomial count) and with the lab's own `order` experiment on the
same seeds; the pass lines are the same for every right answer. The notebook's check always
uses the same inputs (nbval compares its output); a grader passes `drawn_from`, a seed the
inputs are drawn from (`Inputs.drawn`), so a table of the counts the notebook asks for fails.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from keel_checks.delegation import watched
from keel_checks.verdict import Verdict, describe, guard
from keel_lab._core.clock import clock_moves
from keel_lab._core.pairing import position_over_completion
from keel_lab._i18n import N_, _
from keel_lab.course._experiments.pairing import order
from keel_lab.course._experiments.trials import run_trials

CountInOrder = Callable[[int, int, int], int]
TRIALS, SEEDS, CALLS = 200, (1, 2, 3), (2, 3, 4)
SIGMAS = 4.5


@dataclass(frozen=True)
class Inputs:
    """The check's inputs: (trials, seed) of the first and the one-call run, the seed run
    twice, and the seeds of the statistical runs."""

    first: tuple[int, int] = (5, 0)
    one_call: tuple[int, int] = (50, 0)
    repeated: int = 1
    seeds: tuple[int, ...] = SEEDS

    @classmethod
    def drawn(cls, seed: int) -> Inputs:
        rng = random.Random(seed)
        first, one_call, repeated, *seeds = (rng.randrange(10**6) for _ in range(3 + len(SEEDS)))
        return cls((rng.randint(4, 8), first), (rng.randint(30, 60), one_call), repeated,
                   tuple(seeds))


def _count(v: Verdict, fn: CountInOrder, trials: int, calls: int, seed: int) -> int | None:
    """The learner's count, or None after a hint (an exception, not a count, or no clock)."""
    label = f"count_in_order({trials}, {calls}, {seed})"
    before = len(v.results)
    if hasattr(fn, "clock_moved"):  # run in another process (the grader's): watched there
        got = guard(v, label, fn, trials, calls, seed)
        moved = [fn.clock_moved or 0.0]
    else:
        with clock_moves() as moved:
            got = guard(v, label, fn, trials, calls, seed)
    if len(v.results) > before:
        return None
    total = sum(moved)
    if total < trials * 0.010:  # every turn waits at least its shortest delay, 10 ms
        v.add(False, "", _("{label}: the virtual clock moved {ms} ms for {trials} turns - your "
                           "calls never slept their delays on it. Run each turn with "
                           "run_coroutine(...), its calls awaiting asyncio.sleep(delay), and "
                           "watch the order they finish in").format(
                               label=label, ms=f"{total * 1000:.0f}", trials=trials))
        return None
    if isinstance(got, bool) or not isinstance(got, int) or not 0 <= got <= trials:
        v.add(False, "", _("{label} returned {value}: return how many of the {trials} trials "
                           "came back in request order, an int from 0 to trials").format(
                               label=label, value=describe(got), trials=trials))
        return None
    return got


def _about(calls: int) -> str:
    return _("{calls} calls: in request order in about 1/{calls}! of the trials").format(
        calls=calls)


CLOCK, ONE_CALL, SAME_SEED = (N_("a count from 0 to trials, on the virtual clock"),
                              N_("one call: every trial is in request order"),
                              N_("the same seed gives the same count"))


@cache
def _lab_counts(seeds: tuple[int, ...]) -> dict[int, int]:
    """The lab's own counts over the seeds, per number of calls: taken once for a grader that
    judges a class on the same inputs."""
    return {calls: sum(int(order(TRIALS, calls, s).data["in_request_order"]["as_completed"])
                       for s in seeds) for calls in CALLS}


def verify_count_in_order(count_in_order: CountInOrder, drawn_from: int | None = None
                          ) -> Verdict:
    """The verdict on the fixed inputs, or (a grader) on inputs drawn from the seed
    `drawn_from`; the lab's own counts are taken before the learner's function is called."""
    given = Inputs() if drawn_from is None else Inputs.drawn(drawn_from)
    labs = _lab_counts(given.seeds)
    v = Verdict("count_in_order", [CLOCK, ONE_CALL, SAME_SEED, *map(_about, CALLS)])
    fn = watched(count_in_order, (order, run_trials, position_over_completion))
    start = time.perf_counter()
    if _count(v, fn, given.first[0], 3, given.first[1]) is None:
        return v
    took = time.perf_counter() - start
    v.add(took < 1.0, CLOCK,
          _("{trials} trials took {took} s of real time: run them on the virtual clock "
            "(`run_coroutine(...)`), or thousands of trials take minutes").format(
                trials=given.first[0], took=f"{took:.1f}"))
    trials, one_seed = given.one_call
    one = _count(v, fn, trials, 1, one_seed)
    if one is None:
        return v
    v.add(one == trials, ONE_CALL,
          _("count_in_order({trials}, 1, {seed}): with 1 call every trial is in request order: "
            "expected {trials} of {trials}, you counted {n}").format(
                trials=trials, seed=one_seed, n=one)
          + (_(" - are you counting the trials whose order differed?") if one == 0 else
             _(" - does your loop run every one of the `trials` turns?")))
    first = _count(v, fn, 200, 3, given.repeated)
    again = None if first is None else _count(v, fn, 200, 3, given.repeated)
    if first is None or again is None:
        return v
    v.add(first == again, SAME_SEED,
          _("count_in_order(200, 3, {seed}) gave {first} and then {again}: draw the delays "
            "from random.Random(seed), so a seed repeats its trials, and give every call its "
            "own delay - calls that finish at the same moment come back in no fixed "
            "order").format(
                seed=given.repeated, first=first, again=again))
    for calls in CALLS:
        counts: list[int] = []
        for s in given.seeds:
            got = _count(v, fn, TRIALS, calls, s)
            if got is None:
                return v
            counts.append(got)
        v.add(*_judge(counts, calls, given.seeds, labs[calls]))
    return v


def _judge(counts: list[int], calls: int, seeds: tuple[int, ...], lab: int
           ) -> tuple[bool, str, str]:
    """(ok, pass line, hint) for one call count, from every seed's count and the lab's total."""
    total, yours = TRIALS * len(counts), sum(counts)
    p = 1 / math.factorial(calls)
    expected = total * p
    tol = SIGMAS * math.sqrt(total * p * (1 - p))
    passed = _("{about} (seeds {seeds}, {trials} trials each: expected {expected} of {total}; "
               "the lab counted {lab})").format(about=_about(calls), seeds=list(seeds),
                                                 trials=TRIALS, expected=f"{expected:.0f}",
                                                 total=total, lab=lab)
    ok = abs(yours - expected) <= tol and abs(yours - lab) <= tol * math.sqrt(2)
    where = _("count_in_order({trials}, {calls}, seed) for seeds {seeds} ({n} x {trials} "
              "trials)").format(trials=TRIALS, calls=calls, seeds=list(seeds), n=len(counts))
    if set(counts) == {TRIALS}:
        hint = _("{where}: every trial came back in request order. `gather` returns results in "
                 "argument order, sorting the results restores it, and fixed or equal delays "
                 "keep it: draw a random delay for every call, collect with "
                 "`asyncio.as_completed`, and compare the order as it finished").format(
                     where=where)
    elif set(counts) <= {0, TRIALS}:
        hint = _("{where}: each seed gave all or none of its trials ({counts}): either every "
                 "turn reuses the same delays (make one random.Random(seed) per run and draw "
                 "new delays for every turn) or your comparison never succeeds (compare the "
                 "order the calls finished in with the order they were made)").format(
                     where=where, counts=counts)
    elif len(set(counts)) == 1:
        hint = _("{where}: every seed gave {count}: the seed must change the delays "
                 "(random.Random(seed))").format(where=where, count=counts[0])
    elif abs(yours - (total - expected)) <= tol:
        hint = _("{where}: you counted {yours}, about 1 - 1/{calls}! of them: those are the "
                 "trials whose order differed; count the ones in request order").format(
                     where=where, yours=yours, calls=calls)
    else:
        hint = _("{where}: you counted {yours} in request order, expected about {expected} "
                 "(trials/{calls}! +- {tol}); the lab counted {lab}").format(
                     where=where, yours=yours, expected=f"{expected:.0f}", calls=calls,
                     tol=f"{tol:.0f}", lab=lab)
    return ok and len(set(counts)) > 1, passed, hint
