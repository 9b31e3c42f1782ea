"""The experiments by name: each declares which parameters it takes from one `Params` object."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from keel_lab.course.experiments.batching import timeline
from keel_lab.course.experiments.block_close import block_close
from keel_lab.course.experiments.faults import faults
from keel_lab.course.experiments.naive_clients import naive_clients
from keel_lab.course.experiments.pairing import (
    calls_sweep,
    exceptions,
    gather_siblings,
    order,
    pairing,
    spread_sweep,
)
from keel_lab.course.experiments.partial_success import outcome_mix, partial_success
from keel_lab.course.experiments.production import rendering, scheduling, screen
from keel_lab.course.experiments.providers import quirks_report
from keel_lab.course.experiments.report import Progress, Report
from keel_lab.course.experiments.streaming import bad_sibling, cancellation, chunk_table
from keel_lab.course.scenarios import compare_question


@dataclass(frozen=True)
class Params:
    """What a caller sets; an experiment receives, by keyword, only the names it uses."""

    trials: int = 1000
    calls: int = 3
    seed: int = 0

    @property
    def question(self) -> str:
        """The comparison question over `calls` incidents (one call each)."""
        return compare_question(self.calls)

    @property
    def runs(self) -> int:
        """Whole agent runs cost about ten trials each."""
        return max(1, self.trials // 10)


@dataclass(frozen=True)
class Experiment:
    name: str
    summary: str
    function: Callable[..., Report]
    uses: tuple[str, ...] = ()  # names of `Params` passed as keyword arguments
    progress: tuple[str, int] | None = None  # (parameter, units per unit of it), if it reports

    def run(self, params: Params, progress: Progress | None = None) -> Report:
        kwargs: dict[str, object] = {name: getattr(params, name) for name in self.uses}
        if self.progress:
            kwargs["progress"] = progress
        return self.function(**kwargs)

    def progress_total(self, params: Params) -> int:
        """Progress units a run with `params` reports (0: it does not report progress)."""
        if self.progress is None:
            return 0
        name, units = self.progress
        return units * int(getattr(params, name))


EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in [
    Experiment("pairing", "mismatched results per pairing strategy under random delays",
               pairing, ("trials", "calls", "seed"), ("trials", 1)),
    Experiment("spread", "mismatch rate as the delay spread grows",
               spread_sweep, ("trials", "calls", "seed"), ("trials", 8)),
    Experiment("calls", "mismatch rate against the number of calls, with 1 - 1/n!",
               calls_sweep, ("trials", "seed"), ("trials", 6)),
    Experiment("order", "completion order vs request order: as_completed and gather",
               order, ("trials", "calls", "seed"), ("trials", 1)),
    Experiment("exceptions", "a raising call under gather, return_exceptions and call ids",
               exceptions, ("trials", "calls", "seed"), ("trials", 1)),
    Experiment("gather", "a raising call under gather: its siblings run on, their results are lost",
               gather_siblings),
    Experiment("streaming", "the chunk table: when a streamed call becomes executable",
               chunk_table, ("question", "seed")),
    Experiment("cancellation", "a stream cancelled before its finish runs nothing",
               cancellation, ("question", "seed")),
    Experiment("bad_json", "one call's bad JSON does not harm its siblings",
               bad_sibling, ("question", "seed")),
    Experiment("block_close", "run each call at its block's close or at the end of the turn",
               block_close, ("trials", "calls", "seed")),
    Experiment("partial", "business error, approval and internal error: three statuses",
               partial_success, ("seed",)),
    Experiment("outcomes", "run statuses as tool failures grow, lesson rule vs fail-fast",
               outcome_mix, ("runs", "calls", "seed"), ("runs", 6)),
    Experiment("quirks", "recorded real-world stream quirks and what the policies decide",
               quirks_report),
    Experiment("naive_clients", "published client code's readings over the recorded streams: "
               "calls lost or wrong", naive_clients),
    Experiment("faults", "four injected faults beside the correct code", faults, ("seed",)),
    Experiment("timeline", "sequential vs concurrent batches on the virtual clock",
               timeline, ("seed",)),
    Experiment("scheduling", "one turn sequentially, in batches and by dependency graph",
               scheduling, ("seed",)),
    Experiment("screen", "what a UI shows per call id, event by event", screen, ("seed",)),
    Experiment("rendering", "results rendered by arrival position vs by call id",
               rendering, ("seed", "calls")),
]}
