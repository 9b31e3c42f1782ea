"""10,000 pairing trials of 3 calls (delays 10-500 ms) on the virtual clock.

Measures: the lab's VirtualClockLoop and looptime's loop on the same as_completed trials; the
whole `pairing` experiment (four strategies); and how long the real clock would have taken.
Run: .venv/bin/python bench/virtual_clock.py
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable

import looptime

from keel_lab import ToolCall
from keel_lab._core.clock import VirtualClockLoop
from keel_lab._core.pairing import Result, position_over_completion
from keel_lab.course._experiments.pairing import pairing

TRIALS, CALLS = 10_000, 3


async def trials(n: int) -> int:
    rng, mismatched = random.Random(0), 0
    for t in range(n):
        calls = [ToolCall(f"t{t}-c{i}", "lookup_incident", "{}") for i in range(CALLS)]
        delays = {c.id: rng.uniform(0.010, 0.500) for c in calls}

        async def execute(call: ToolCall, delays: dict[str, float] = delays) -> Result:
            await asyncio.sleep(delays[call.id])
            return Result(call.id, "")

        pairs = await position_over_completion(calls, execute)
        mismatched += any(r is None or r.call_id != c.id for c, r in pairs)
    return mismatched


def timed(make_loop: Callable[[], asyncio.AbstractEventLoop]) -> tuple[float, float, int]:
    loop = make_loop()
    try:
        start = time.perf_counter()
        mismatched = loop.run_until_complete(trials(TRIALS))
        return time.perf_counter() - start, loop.time(), mismatched
    finally:
        loop.close()


def main() -> dict[str, str]:
    ours, virtual_s, m1 = timed(VirtualClockLoop)
    theirs, _, m2 = timed(lambda: looptime.new_event_loop())
    assert m1 == m2, "both loops must see the same trials"
    start = time.perf_counter()
    pairing(TRIALS, CALLS, seed=0)
    whole = time.perf_counter() - start
    return {
        "10,000 as_completed trials, VirtualClockLoop": f"{ours:.2f} s",
        "same trials, looptime 0.9": f"{theirs:.2f} s ({theirs / ours:.0f}x slower)",
        "same trials on the real clock (sum of maxima)":
            f"{virtual_s:.0f} s ({virtual_s / ours:,.0f}x the virtual run)",
        "`pairing` experiment, 10,000 trials x 4 strategies": f"{whole:.2f} s",
    }


if __name__ == "__main__":
    for k, v in main().items():
        print(f"{k}: {v}")
