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
