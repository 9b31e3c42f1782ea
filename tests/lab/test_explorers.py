"""Each chapter's live controls, built as the widget cells build them, moved as a learner
moves them."""

import pytest

from keel_lab.course._experiments.pairing import pairing
from keel_lab.course._explorers import EXPLORERS, pairing_explorer, partial_success_explorer

pytestmark = pytest.mark.lab_wide


@pytest.mark.parametrize("chapter", sorted(EXPLORERS))
def test_every_chapter_explorer_draws_on_creation(chapter, capsys):
    explorer = EXPLORERS[chapter]()
    assert explorer.runs == 1
    assert explorer.figure is not None and explorer.figure.axes
    assert explorer.widget.children[0].children == tuple(explorer.controls.values())


def test_pairing_controls_keep_their_defaults_within_the_budgeted_range(capsys):
    explorer = pairing_explorer()
    assert explorer.values() == {"trials": 500, "calls": 3, "spread_ms": 490}
    trials = explorer.controls["trials"]
    assert (trials.min, trials.max, trials.step) == (10, 2000, 10)
    assert explorer.report.to_dict() == pairing(500, 3, seed=0, spread=0.49).to_dict()


def test_partial_success_runs_are_capped(capsys):
    runs = partial_success_explorer().controls["runs"]
    assert (runs.value, runs.min, runs.max) == (1000, 100, 3000)


def test_set_moves_several_controls_and_redraws_once(capsys):
    explorer = pairing_explorer()
    explorer.set(trials=40, calls=5)
    assert explorer.runs == 2
    assert explorer.values()["trials"] == 40 and explorer.report.params["calls"] == 5
    assert "(40 trials, 5 calls)" in explorer.figure.axes[0].get_title()


def test_a_slider_move_still_redraws_after_set(capsys):
    explorer = pairing_explorer()
    explorer.set(trials=20)
    explorer.controls["calls"].value = 2
    assert explorer.runs == 3 and explorer.report.params == {
        "trials": 20, "calls": 2, "seed": 0, "delay_ms": [10, 500]}
