"""Every experiment of the lab by name, with the parameters the CLI passes to it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .faults import faults
from .order import order
from .pairing import calls_sweep, exceptions, pairing, spread_sweep
from .partial import compare_question, outcome_mix, partial_success
from .real_streams import quirks_report
from .report import Progress, Report
from .streaming import bad_sibling, cancellation, chunk_table
from .timeline import timeline

Run = Callable[[int, int, int, Progress | None], Report]  # trials, calls, seed, progress


@dataclass(frozen=True)
class Experiment:
    name: str
    summary: str
    run: Run
    progress_total: Callable[[int], int] = lambda trials: 0  # progress units for `trials`


EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in [
    Experiment("pairing", "mismatched results per pairing strategy under random delays",
               lambda t, c, s, p: pairing(t, c, s, progress=p), lambda t: t),
    Experiment("spread", "mismatch rate as the delay spread grows",
               lambda t, c, s, p: spread_sweep(trials=t, calls=c, seed=s, progress=p),
               lambda t: 8 * t),
    Experiment("calls", "mismatch rate against the number of calls, with 1 - 1/n!",
               lambda t, c, s, p: calls_sweep(trials=t, seed=s, progress=p), lambda t: 6 * t),
    Experiment("order", "completion order vs request order: as_completed and gather",
               lambda t, c, s, p: order(t, c, s, progress=p), lambda t: t),
    Experiment("exceptions", "a raising call under gather, return_exceptions and call ids",
               lambda t, c, s, p: exceptions(t, c, s, progress=p), lambda t: t),
    Experiment("streaming", "the chunk table: when a streamed call becomes executable",
               lambda t, c, s, p: chunk_table(compare_question(c), s)),
    Experiment("cancellation", "a stream cancelled before its finish runs nothing",
               lambda t, c, s, p: cancellation(compare_question(max(c, 2)), s)),
    Experiment("bad_json", "one call's bad JSON does not harm its siblings",
               lambda t, c, s, p: bad_sibling(compare_question(max(c, 2)), s)),
    Experiment("partial", "business error, approval and internal error: three statuses",
               lambda t, c, s, p: partial_success(s)),
    Experiment("outcomes", "run statuses as tool failures grow, lesson rule vs fail-fast",
               lambda t, c, s, p: outcome_mix(runs=max(1, t // 10), calls=c, seed=s,
                                              progress=p), lambda t: 6 * max(1, t // 10)),
    Experiment("quirks", "recorded real-world stream quirks and what the policies decide",
               lambda t, c, s, p: quirks_report()),
    Experiment("faults", "four injected faults beside the correct code",
               lambda t, c, s, p: faults(s)),
    Experiment("timeline", "sequential vs concurrent batches on the virtual clock",
               lambda t, c, s, p: timeline(s)),
]}

__all__ = ["EXPERIMENTS", "Experiment", "Report", "compare_question"]
