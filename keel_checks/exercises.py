"""The course's exercises, one row each, in course order. Everything that lists them derives
from this table: a learner's progress (`progress.CHAPTERS`), `check` and the grader
(`checks.check.TARGETS`, `VERIFIERS`, `POINTS`, `misnamed`; partial credit, `Verdict.points`,
from `parts`), nbgrader's points and the handout
(through `POINTS`), the instructor's guide (`keel_course.guide`) and the tests' chapter markers
(the root conftest.py). Adding an exercise is one row here, its check (a verifier in
`keel_checks`, whose test module declares its table of wrong answers) and its stub
in its chapter's solution notebook.

The rows are frozen, but `object.__setattr__` still changes a frozen instance, and the grader's
snapshot of the lab watches module attributes and the items of module-level dicts, not the
fields of an instance: so the views the grader reads are plain dicts, derived once at import,
before any submitted code runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from keel_lab._i18n import N_


@dataclass(frozen=True)
class Exercise:
    """One exercise: the function a learner writes in a chapter's notebook and how it is judged."""

    name: str  # the function's name, which is how `check(fn)` finds its exercise
    chapter: str  # its notebook, without `.ipynb`: NN_name
    points: int  # what it is worth when a class is graded (`keel-course grade`, nbgrader)
    # its check's verifier, "module:function" under keel_checks: named, not
    # imported, so a check loads its own chapter's verifier only, on first use
    verifier: str
    # partial credit: check line's label -> its points, summing to `points` (none: all or
    # nothing). A line earns its points only when it and every line before it passed, so an
    # answer earns no more than its passing lines; only lines that each prove an idea of the
    # exercise, and that no trivial answer reaches, carry points.
    parts: Mapping[str, int] = field(default_factory=dict, hash=False)

    @property
    def marker(self) -> str:
        """The pytest marker of its chapter's tests: `ch4` for 04_streaming."""
        return f"ch{int(self.chapter[:2])}"


# make_batches' lines that carry its points (its check, keel_checks.batching, shows them): the
# declarations' rule, neighbours sharing a batch once no declaration is broken, is one idea; the
# call to a name no tool has, which nothing declares safe, is another.
BATCHES_SHARED = N_("neighbours whose declarations allow it share a batch")
BATCHES_UNKNOWN = N_("a call to a name no tool has runs alone: nothing declares it safe")

# The course's choice of points: by the number of ideas an exercise combines.
EXERCISES: tuple[Exercise, ...] = (
    Exercise("accumulate", "01_history", 2, "accumulate:verify_accumulate"),
    Exercise("answer_all", "01_history", 2, "history:verify_answer_all"),
    Exercise("count_in_order", "02_pairing", 1, "in_order:verify_count_in_order"),
    Exercise("pair_results", "02_pairing", 2, "pairing:verify_pair_results"),
    Exercise("make_batches", "03_batching", 2, "batching:verify_make_batches",
             {BATCHES_SHARED: 1, BATCHES_UNKNOWN: 1}),
    Exercise("read_turn", "04_streaming", 2, "stall:verify_read_turn"),
    Exercise("is_executable", "04_streaming", 2, "streaming:verify_is_executable"),
    Exercise("status_history", "05_partial_success", 3, "partial_success:verify_status_history"),
    Exercise("collect_batch", "06_faults", 3, "collect:verify_collect_batch"),
    Exercise("answer_responses", "07_providers", 2, "providers:verify_answer_responses"),
    Exercise("calls_to_resume", "08_production", 2, "resume:verify_calls_to_resume"),
    Exercise("agent_loop", "09_capstone", 6, "capstone:verify_agent_loop"),
)

# Every prediction of the course: its variable in the notebook -> its chapter; what the
# learner's progress counts (`keel_checks.predictions` notes each one made and answered back).
# tests/course/test_predictions.py keeps it equal to the notebooks' prediction cells.
PREDICTIONS: dict[str, str] = {
    "predicted_mismatches": "02_pairing",
    "predicted_batches": "03_batching", "predicted_ran": "03_batching",
    "calls_run_when_cancelled": "04_streaming",
    "sibling_still_runs": "05_partial_success", "failed_at_20_percent": "05_partial_success",
    "prediction_1": "06_faults", "prediction_2": "06_faults", "prediction_3": "06_faults",
    "prediction_4": "06_faults", "prediction_5": "06_faults",
    "client_runs": "07_providers", "sdk_returns_the_call": "07_providers",
    "notes_after_restart": "08_production",
}
