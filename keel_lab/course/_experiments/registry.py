"""The experiments by name: each declares which parameters it takes from one `Params` object.

An experiment's function is named, not imported: its module loads when it runs, so a command
that runs none (`keel-lab assemble`, a check) loads none of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from keel_lab._i18n import N_, _
from keel_lab.course._experiments.report import Progress, Report
from keel_lab.course._named import load
from keel_lab.course._scenarios import compare_question


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
    summary: str  # English, marked N_; `shown_summary` is it in the learner's language
    target: str  # "module:function" under keel_lab.course._experiments
    uses: tuple[str, ...] = ()  # names of `Params` passed as keyword arguments
    progress: tuple[str, int] | None = None  # (parameter, units per unit of it), if it reports

    @property
    def shown_summary(self) -> str:
        return _(self.summary)

    @property
    def function(self) -> Callable[..., Report]:
        found: Callable[..., Report] = load(self.target, "keel_lab.course._experiments")
        return found

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
    Experiment("pairing", N_("mismatched results per pairing strategy under random delays"),
               "pairing:pairing", ("trials", "calls", "seed"), ("trials", 1)),
    Experiment("spread", N_("mismatch rate as the delay spread grows"),
               "pairing:spread_sweep", ("trials", "calls", "seed"), ("trials", 8)),
    Experiment("calls", N_("mismatch rate against the number of calls, with 1 - 1/n!"),
               "pairing:calls_sweep", ("trials", "seed"), ("trials", 6)),
    Experiment("order", N_("completion order vs request order: as_completed and gather"),
               "pairing:order", ("trials", "calls", "seed"), ("trials", 1)),
    Experiment("exceptions", N_("a raising call under gather, return_exceptions and call ids"),
               "pairing:exceptions", ("trials", "calls", "seed"), ("trials", 1)),
    Experiment("gather", N_("a raising call under gather: its siblings run on, their results "
                            "are lost"), "pairing:gather_siblings"),
    Experiment("streaming", N_("the chunk table: when a streamed call becomes executable"),
               "streaming:chunk_table", ("question", "seed")),
    Experiment("cancellation", N_("a stream cancelled before its finish runs nothing"),
               "streaming:cancellation", ("question", "seed")),
    Experiment("bad_json", N_("one call's bad JSON does not harm its siblings"),
               "streaming:bad_sibling", ("question", "seed")),
    Experiment("block_close", N_("run each call at its block's close or at the end of the turn"),
               "block_close:block_close", ("trials", "calls", "seed")),
    Experiment("partial", N_("business error, approval and internal error: three statuses"),
               "partial_success:partial_success", ("seed",)),
    Experiment("outcomes", N_("run statuses as tool failures grow, lesson rule vs fail-fast"),
               "partial_success:outcome_mix", ("runs", "calls", "seed"), ("runs", 6)),
    Experiment("quirks", N_("recorded real-world stream quirks and what the policies decide"),
               "providers:quirks_report"),
    Experiment("naive_clients", N_("published client code's readings over the recorded streams: "
                                   "calls lost or wrong"), "naive_clients:naive_clients"),
    Experiment("faults", N_("four injected faults beside the correct code"), "faults:faults",
               ("seed",)),
    Experiment("timeline", N_("sequential vs concurrent batches on the virtual clock"),
               "batching:timeline", ("seed",)),
    Experiment("scheduling", N_("one turn sequentially, in batches and by dependency graph"),
               "production:scheduling", ("seed",)),
    Experiment("screen", N_("what a UI shows per call id, event by event"), "production:screen",
               ("seed",)),
    Experiment("rendering", N_("results rendered by arrival position vs by call id"),
               "production:rendering", ("seed", "calls")),
]}
