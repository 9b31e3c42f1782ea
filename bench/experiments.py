"""The experiments' inner loop: CPU and wall time of the slow ones, in this process and as a
whole `keel-lab` process.

CPU time is what a quiet machine approaches (the 2 cores are shared); wall time is what the
learner waits. Each figure is the best of `REPEATS` runs, after one run that loads the modules.
Run: .venv/bin/python bench/experiments.py [--profile]   (--profile: cProfile's top 5 of pairing)
"""

from __future__ import annotations

import cProfile
import pstats
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from keel_lab.course._experiments.block_close import block_close
from keel_lab.course._experiments.pairing import pairing
from keel_lab.course._experiments.partial_success import outcome_mix

REPEATS = 3
KEEL_LAB = Path(sys.executable).parent / "keel-lab"
IN_PROCESS: dict[str, Callable[[], object]] = {
    "`pairing(10000, 3, seed=1)`, in process": lambda: pairing(10000, 3, seed=1),
    "chapter 2's slider at its extremes, `pairing(2000, 6, spread=1.0)`":
        lambda: pairing(2000, 6, seed=0, spread=1.0),
    "04a's slider at its extremes, `block_close(300, 6, 0, 0.0, 0.0)`":
        lambda: block_close(300, 6, 0, 0.0, 0.0),
    "chapter 5's slider at its extremes, `outcome_mix(runs=3000, internal_share=0.0)`":
        lambda: outcome_mix(runs=3000, internal_share=0.0),
}


def best(run: Callable[[], object]) -> tuple[float, float]:
    """(CPU, wall) seconds of the fastest of `REPEATS` runs."""
    run()
    times = []
    for _ in range(REPEATS):
        cpu, wall = time.process_time(), time.perf_counter()
        run()
        times.append((time.process_time() - cpu, time.perf_counter() - wall))
    return min(times)


def process() -> tuple[float, float]:
    """(CPU, wall) seconds of the fastest `keel-lab experiments pairing --trials 10000`."""
    times = []
    for _ in range(REPEATS):
        before, wall = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        subprocess.run([str(KEEL_LAB), "experiments", "pairing", "--trials", "10000"],
                       check=True, capture_output=True)
        wall = time.perf_counter() - wall
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall))
    return min(times)


def main() -> dict[str, str]:
    out = {k: "{:.2f} s CPU, {:.2f} s wall".format(*best(run)) for k, run in IN_PROCESS.items()}
    out["`keel-lab experiments pairing --trials 10000`, the whole process"] = (
        "{:.2f} s CPU, {:.2f} s wall".format(*process()))
    return out


def profile() -> None:
    profiler = cProfile.Profile()
    profiler.runcall(pairing, 10000, 3, seed=1)
    pstats.Stats(profiler).sort_stats("tottime").print_stats(5)


if __name__ == "__main__":
    if "--profile" in sys.argv:
        profile()
    for k, v in main().items():
        print(f"{k}: {v}")
