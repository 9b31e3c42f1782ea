import pytest
from matplotlib.figure import Figure

from keel_lab.course._experiments.registry import EXPERIMENTS, Params
from keel_lab.course._plots import PLOTS, plot

pytestmark = pytest.mark.lab_wide


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


def test_stream_plot_marks_every_fragment_so_interleaving_shows():
    from keel_lab.course._experiments.streaming import chunk_table
    from keel_lab.course._plots import stream_plot

    report = chunk_table("Which is more severe, INC-001, INC-002 or INC-003?", seed=2,
                         chunk_size=5)
    ax = stream_plot(report).axes[0]
    lines = [line for line in ax.get_lines() if line.get_label().startswith("call ")]
    assert [line.get_marker() for line in lines] == ["."] * 3
    chunks = {i: list(line.get_xdata()) for i, line in enumerate(lines)}
    assert chunks == {i: [r["chunk"] for r in report.rows if r["index"] == i] for i in range(3)}
    # the chapter calls these calls interleaved: each starts its arguments before another ends
    first_arg = {i: next(r["chunk"] for r in report.rows if r["index"] == i and r["arguments"])
                 for i in range(3)}
    parsed = {i: next(r["chunk"] for r in report.rows if r["index"] == i and r["parses"])
              for i in range(3)}
    assert max(first_arg.values()) < min(parsed.values())


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
