"""Does the order results come back in equal the order the calls were made?"""

from __future__ import annotations

import math

from ..pairing import position_over_completion, position_over_gather
from .report import Progress, Report
from .trials import TrialSpec, run_trials


def order(trials: int = 1000, calls: int = 3, seed: int = 0,
          progress: Progress | None = None) -> Report:
    """A turn is "in order" when positional pairing got every call right, i.e. the collected
    order equals the request order. `gather` always is; `as_completed` about 1/n! of the time."""
    tallies = run_trials({"gather": position_over_gather,
                          "as_completed": position_over_completion},
                         trials, TrialSpec(calls), seed, progress=progress)
    in_order = {n: trials - t.trials_with_mismatch for n, t in tallies.items()}
    rows = [{"collector": n, "in_request_order": k, "share": k / trials}
            for n, k in in_order.items()]
    return Report("order", {"trials": trials, "calls": calls, "seed": seed},
                  {"in_request_order": in_order, "theory_as_completed": 1 / math.factorial(calls)},
                  rows, [f"theory for as_completed: 1/{calls}! = {1 / math.factorial(calls):.3f};"
                         " gather sorts results back into argument order and hides the problem"])
