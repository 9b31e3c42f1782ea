"""The randomised trials replay exactly: the numbers below were measured before the trial loop
was made faster, and every experiment and saved notebook output depends on them."""

from dataclasses import astuple

import pytest

from keel_lab._core.errors import LabError
from keel_lab._core.pairing import (
    STRATEGIES,
    by_call_id,
    position_over_completion,
    position_over_gather,
    position_over_gather_filtered,
)
from keel_lab.course._experiments.trials import TrialSpec, run_trials

pytestmark = pytest.mark.ch2

SKIP = frozenset({"position_with_skip"})
FAILING = {"position_over_gather": position_over_gather,
           "position_over_gather_filtered": position_over_gather_filtered,
           "by_call_id": by_call_id}
TWO = {"position_over_completion": position_over_completion, "by_call_id": by_call_id}


@pytest.mark.parametrize(("strategies", "trials", "spec", "seed", "deny", "expected"), [
    (STRATEGIES, 300, TrialSpec(3), 0, SKIP,
     {"position_over_gather": (0, 0, 0), "position_over_completion": (258, 624, 0),
      "position_with_skip": (300, 598, 300), "by_call_id": (0, 0, 0)}),
    (STRATEGIES, 300, TrialSpec(6, spread=1.0), 0, SKIP,
     {"position_over_gather": (0, 0, 0), "position_over_completion": (300, 1496, 0),
      "position_with_skip": (300, 1060, 300), "by_call_id": (0, 0, 0)}),
    (FAILING, 300, TrialSpec(4, failure_rate=0.3), 2, frozenset(),
     {"position_over_gather": (227, 908, 908), "position_over_gather_filtered": (227, 696, 355),
      "by_call_id": (0, 0, 0)}),
    (TWO, 200, TrialSpec(3, spread=0.002), 1, frozenset(),
     {"position_over_completion": (42, 84, 0), "by_call_id": (0, 0, 0)}),
])
def test_trials_replay_the_recorded_tallies(strategies, trials, spec, seed, deny, expected):
    tallies = run_trials(strategies, trials, spec, seed, deny_for=deny)
    assert {name: astuple(t) for name, t in tallies.items()} == expected


def test_progress_is_reported_once_per_trial():
    ticks = []
    run_trials(TWO, 25, TrialSpec(2), 0, progress=ticks.append)
    assert ticks == [1] * 25


def test_no_trials_is_an_error():
    with pytest.raises(LabError, match="at least 1"):
        run_trials(TWO, 0, TrialSpec(), 0)
