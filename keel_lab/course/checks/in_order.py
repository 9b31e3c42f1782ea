"""Chapter 2, the lesson's own experiment: how often do results come back in request order?

The learner's `count_in_order(trials, calls, seed)` runs `trials` turns of `calls` calls with
random delays and counts the turns whose completion order equals the request order. The check
runs it for several call counts and seeds and compares the count with trials / n! (within 4.5
standard deviations of the binomial count) and with the lab's own `order` experiment on the
same seeds; the pass lines are the same for every right answer.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from keel_lab.core.clock import VirtualClockLoop
from keel_lab.core.pairing import position_over_completion
from keel_lab.course.checks.delegation import watched
from keel_lab.course.checks.verdict import Verdict, describe, guard
from keel_lab.course.experiments.pairing import order
from keel_lab.course.experiments.trials import run_trials

CountInOrder = Callable[[int, int, int], int]
TRIALS, SEEDS, CALLS = 200, (1, 2, 3), (2, 3, 4)
SIGMAS = 4.5


@contextmanager
def _clock_watch() -> Iterator[list[float]]:
    """The seconds every virtual clock moved while the block ran: an experiment that really
    sleeps its delays moves it, one that only does arithmetic on them does not."""
    moved: list[float] = []
    advance = VirtualClockLoop.advance

    def watched_advance(loop: VirtualClockLoop, seconds: float) -> None:
        moved.append(seconds)
        advance(loop, seconds)

    VirtualClockLoop.advance = watched_advance  # type: ignore[method-assign,assignment]
    try:
        yield moved
    finally:
        VirtualClockLoop.advance = advance  # type: ignore[method-assign]


def _count(v: Verdict, fn: CountInOrder, trials: int, calls: int, seed: int) -> int | None:
    """The learner's count, or None after a hint (an exception, not a count, or no clock)."""
    label = f"count_in_order({trials}, {calls}, {seed})"
    before = len(v.results)
    with _clock_watch() as moved:
        got = guard(v, label, fn, trials, calls, seed)
    if len(v.results) > before:
        return None
    if sum(moved) < trials * 0.010:  # every turn waits at least its shortest delay, 10 ms
        v.add(False, "", f"{label}: the virtual clock moved {sum(moved) * 1000:.0f} ms for "
                         f"{trials} turns - your calls never slept their delays on it. Run "
                         "each turn with run_coroutine(...), its calls awaiting "
                         "asyncio.sleep(delay), and watch the order they finish in")
        return None
    if isinstance(got, bool) or not isinstance(got, int) or not 0 <= got <= trials:
        v.add(False, "", f"{label} returned {describe(got)}: return how many of the {trials} "
                         "trials came back in request order, an int from 0 to trials")
        return None
    return got


def _lab_count(trials: int, calls: int, seed: int) -> int:
    return int(order(trials, calls, seed).data["in_request_order"]["as_completed"])


def _about(calls: int) -> str:
    return f"{calls} calls: in request order in about 1/{calls}! of the trials"


CLOCK, ONE_CALL, SAME_SEED = ("a count from 0 to trials, on the virtual clock",
                              "one call: every trial is in request order",
                              "the same seed gives the same count")
CHECKS = [CLOCK, ONE_CALL, SAME_SEED, *(_about(calls) for calls in CALLS)]


def verify_count_in_order(count_in_order: CountInOrder) -> Verdict:
    v = Verdict("count_in_order", CHECKS)
    fn = watched(count_in_order, (order, run_trials, position_over_completion))
    start = time.perf_counter()
    if _count(v, fn, 5, 3, 0) is None:
        return v
    took = time.perf_counter() - start
    v.add(took < 1.0, CLOCK,
          f"5 trials took {took:.1f} s of real time: run them on the virtual clock "
          "(`run_coroutine(...)`), or thousands of trials take minutes")
    one = _count(v, fn, 50, 1, 0)
    if one is None:
        return v
    v.add(one == 50, ONE_CALL,
          f"count_in_order(50, 1, 0): with 1 call every trial is in request order: expected 50 "
          f"of 50, you counted {one}"
          + (" - are you counting the trials whose order differed?" if one == 0 else
             " - does your loop run every one of the `trials` turns?"))
    first = _count(v, fn, 200, 3, 1)
    again = None if first is None else _count(v, fn, 200, 3, 1)
    if first is None or again is None:
        return v
    v.add(first == again, SAME_SEED,
          f"count_in_order(200, 3, 1) gave {first} and then {again}: draw the delays from "
          "random.Random(seed), so a seed repeats its trials")
    for calls in CALLS:
        counts: list[int] = []
        for seed in SEEDS:
            got = _count(v, fn, TRIALS, calls, seed)
            if got is None:
                return v
            counts.append(got)
        v.add(*_judge(counts, calls))
    return v


def _judge(counts: list[int], calls: int) -> tuple[bool, str, str]:
    """(ok, pass line, hint) for one call count, from the counts of every seed."""
    total, yours = TRIALS * len(counts), sum(counts)
    p = 1 / math.factorial(calls)
    expected = total * p
    tol = SIGMAS * math.sqrt(total * p * (1 - p))
    lab = sum(_lab_count(TRIALS, calls, s) for s in SEEDS)
    passed = f"{_about(calls)} (expected {expected:.0f} of {total}; the lab counted {lab})"
    ok = abs(yours - expected) <= tol and abs(yours - lab) <= tol * math.sqrt(2)
    where = (f"count_in_order({TRIALS}, {calls}, seed) for seeds {list(SEEDS)} "
             f"({len(counts)} x {TRIALS} trials)")
    if set(counts) == {TRIALS}:
        hint = (f"{where}: every trial came back in request order. `gather` returns results in "
                "argument order, sorting the results restores it, and fixed or equal delays "
                "keep it: draw a random delay for every call, collect with "
                "`asyncio.as_completed`, and compare the order as it finished")
    elif set(counts) <= {0, TRIALS}:
        hint = (f"{where}: each seed gave all or none of its trials ({counts}): either every "
                "turn reuses the same delays (make one random.Random(seed) per run and draw "
                "new delays for every turn) or your comparison never succeeds (compare the "
                "order the calls finished in with the order they were made)")
    elif len(set(counts)) == 1:
        hint = (f"{where}: every seed gave {counts[0]}: the seed must change the delays "
                "(random.Random(seed))")
    elif abs(yours - (total - expected)) <= tol:
        hint = (f"{where}: you counted {yours}, about 1 - 1/{calls}! of them: those are the "
                "trials whose order differed; count the ones in request order")
    else:
        hint = (f"{where}: you counted {yours} in request order, expected about "
                f"{expected:.0f} (trials/{calls}! +- {tol:.0f}); the lab counted {lab}")
    return ok and len(set(counts)) > 1, passed, hint
