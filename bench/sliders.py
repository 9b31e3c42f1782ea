"""Every chapter's live controls: how long one slider move blocks the kernel.

A move is `Explorer.set(...)`: the experiment, the figure and its PNG, in one redraw. Measured
for each explorer at its defaults, with each control alone at its minimum and its maximum, and
at every corner of the controls' ranges (a dropdown: every option), each case once and in
turn, as a learner moves (a setting seen before is remembered, so a repeat would time the
memo), after the explorer's own first draw (which loads matplotlib's fonts and jsonschema).
The budget (issue 33, in the browser, so the kernel's share is less): a median move of
0.10 s, none over 0.25 s. Wall time is what blocks the kernel; the CPU
time beside it shows how much of a slow figure is other processes on the 2 cores.
Run: .venv/bin/python bench/sliders.py [--all]   (--all prints every case)
"""

from __future__ import annotations

import contextlib
import io
import itertools
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

from keel_lab.course._explorers import EXPLORERS
from keel_lab.course._notebook import Explorer

DEFAULT_BUDGET_S, WORST_BUDGET_S = 0.10, 0.25  # issue 33: the median, and the worst move


@dataclass(frozen=True)
class Case:
    label: str
    values: dict[str, Any]
    seconds: float  # wall time: how long the kernel is blocked
    cpu: float  # this process's CPU time: what a quiet machine approaches


def extremes(control: Any) -> list[Any]:
    """The values at the ends of a control: a slider's min and max, a dropdown's options."""
    if hasattr(control, "options"):
        return list(control.options)
    return [control.min, control.max]


def cases(explorer: Explorer) -> list[tuple[str, dict[str, Any]]]:
    defaults = explorer.values()
    out: list[tuple[str, dict[str, Any]]] = [("defaults", defaults)]
    for name, control in explorer.controls.items():
        out += [(f"{name}={v}", {**defaults, name: v}) for v in extremes(control)]
    ends = [extremes(c) for c in explorer.controls.values()]
    if len(ends) > 1:
        out += [("corner", dict(zip(explorer.controls, combo, strict=True)))
                for combo in itertools.product(*ends)]
    return out


def timed_move(explorer: Explorer, label: str, values: dict[str, Any]) -> Case:
    wall, cpu = time.perf_counter(), time.process_time()
    explorer.set(**values)
    return Case(label, values, time.perf_counter() - wall, time.process_time() - cpu)


def measure(name: str) -> list[Case]:
    """Every case of one chapter's explorer but its defaults (where it starts, so remembered),
    its display kept off the terminal."""
    with contextlib.redirect_stdout(io.StringIO()):
        explorer = EXPLORERS[name]()
        return [timed_move(explorer, label, values) for label, values in cases(explorer)[1:]]


def describe(case: Case) -> str:
    return ", ".join(f"{k}={v}" for k, v in case.values.items())


def main(verbose: bool = False) -> dict[str, str]:
    out = {}
    for name in EXPLORERS:
        measured = measure(name)
        if verbose:
            for case in measured:
                print(f"  {name} {case.seconds:6.3f} s (cpu {case.cpu:6.3f} s)  {describe(case)}",
                      file=sys.stderr)
        worst = max(measured, key=lambda c: c.seconds)
        median = statistics.median(c.seconds for c in measured)
        over = median > DEFAULT_BUDGET_S or worst.seconds > WORST_BUDGET_S
        out[f"slider move, {name} explorer"] = (
            f"median {median:.3f} s; worst {worst.seconds:.3f} s "
            f"({describe(worst)}){' OVER BUDGET' if over else ''}; CPU median "
            f"{statistics.median(c.cpu for c in measured):.3f} s, worst {worst.cpu:.3f} s")
    return out


if __name__ == "__main__":
    for k, v in main(verbose="--all" in sys.argv).items():
        print(f"{k}: {v}")
