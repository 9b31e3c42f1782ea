"""Each chapter's live controls, built as the widget cells build them, moved as a learner
moves them: a move refills the kept figure, and shows what a fresh figure would."""

import pytest

from keel_lab.course._alt import alt_text
from keel_lab.course._experiments.pairing import pairing
from keel_lab.course._explorers import EXPLORERS, pairing_explorer, partial_success_explorer
from keel_lab.course._notebook import Explorer, png, slider
from keel_lab.course._plots import plot

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


def artists(fig):
    """What a figure shows, artist by artist: data, limits, texts, colours, and its alt text."""
    out = [alt_text(fig), fig.get_suptitle(), tuple(fig.get_size_inches())]
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_xlim(), ax.get_ylim(),
                [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()],
                [t.get_text() for t in (ax.get_legend().get_texts() if ax.get_legend() else [])]]
        out += [(line.get_xydata().tolist(), line.get_label()) for line in ax.get_lines()]
        out += [(p.get_bbox().bounds, p.get_facecolor(), p.get_hatch()) for p in ax.patches]
        out += [(t.get_text(), t.get_position()) for t in ax.texts]
        out += [[path.vertices.tolist() for path in c.get_paths()] for c in ax.collections]
    return out


def moves(explorer):
    """Each control alone at its ends (a dropdown: its last option), from the defaults."""
    defaults = explorer.values()
    for name, control in explorer.controls.items():
        ends = control.options[-1:] if hasattr(control, "options") else [control.min,
                                                                           control.max]
        yield from ({**defaults, name: end} for end in ends)


@pytest.mark.parametrize("chapter", sorted(EXPLORERS))
def test_a_move_draws_what_a_fresh_figure_shows(chapter, capsys):
    """At settings S, reached from the defaults or from another setting and back, the kept
    figure shows what one built fresh for S shows: alt text and artists. Pixels match where no
    legend sits beside the axes (constrained layout starts from the last draw's place)."""
    explorer = EXPLORERS[chapter]()
    for there in moves(explorer):
        explorer.set(**there)
        fresh = plot(explorer.report)
        png(fresh), png(explorer.figure)  # ticks are labelled at a draw
        assert artists(explorer.figure) == artists(fresh), there
    first = explorer.figure
    back = next(iter(moves(explorer)))
    for there in [*moves(explorer), back]:
        explorer.set(**there)
    fresh = plot(explorer.run_fn(**back))
    beside = any(ax.get_legend() and ax.get_legend().get_bbox_to_anchor() != ax.bbox
                 for ax in fresh.axes)
    assert (png(fresh) == explorer.image) or beside
    png(explorer.figure)
    assert artists(explorer.figure) == artists(fresh)
    assert alt_text(explorer.figure) == alt_text(fresh) and "." in alt_text(fresh)
    if chapter in {"01_history", "02_pairing", "05_partial_success"}:  # one shape throughout
        assert explorer.figure is first


def test_a_setting_runs_its_experiment_once(capsys):
    calls = []
    explorer = Explorer(lambda trials: calls.append(trials) or pairing(trials, 3),
                        {"trials": slider("trials", 20, 10, 40, 10)})
    for trials in (30, 20, 30, 40, 20):
        explorer.set(trials=trials)
    assert calls == [20, 30, 40] and explorer.runs == 6
    assert explorer.report.params["trials"] == 20
