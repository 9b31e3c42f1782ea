import pytest
from matplotlib.figure import Figure

from keel_lab.course.experiments import EXPERIMENTS, Params
from keel_lab.course.plots import PLOTS, plot


@pytest.mark.parametrize("name", list(PLOTS))
def test_each_plot_has_title_labels_and_data(name):
    fig = plot(EXPERIMENTS[name].run(Params(40, 3, 0)))
    assert isinstance(fig, Figure)
    for ax in fig.axes:
        assert ax.get_title()
        assert ax.has_data()
    assert fig.axes[-1].get_xlabel() or name in ("pairing", "order", "exceptions")
    assert any(ax.get_ylabel() for ax in fig.axes) or name == "timeline"


def test_bar_plots_have_legends():
    for name in ("pairing", "order", "exceptions", "spread", "calls", "streaming", "outcomes"):
        fig = plot(EXPERIMENTS[name].run(Params(40, 3, 0)))
        assert fig.axes[0].get_legend() is not None


def test_table_only_experiments_have_no_plot():
    assert plot(EXPERIMENTS["partial"].run(Params(1, 3, 0))) is None


def test_block_close_plot_shows_latency_and_side_effects_per_policy():
    fig = plot(EXPERIMENTS["block_close"].run(Params(200, 3, 0)))
    latency, effects = fig.axes
    assert [t.get_text() for t in latency.get_xticklabels()] == ["end of turn (lab)",
                                                                 "at block close"]
    assert latency.get_legend() is not None and effects.get_legend() is not None
    heights = [p.get_height() for p in effects.patches]
    assert heights[0] == 0 and sum(heights) > 0  # the lab's policy ran nothing for failed turns
