"""Notebook helpers without a browser: moving a control re-runs the experiment and redraws."""

from keel_lab.course.experiments.batching import timeline
from keel_lab.course.experiments.pairing import pairing
from keel_lab.course.notebook import Explorer, float_slider, png, show, slider
from keel_lab.course.plots import pairing_bars


def test_moving_a_slider_reruns_and_redraws():
    trials, calls = slider("trials", 100, 10, 1000), slider("calls", 3, 1, 6)
    ex = Explorer(lambda trials, calls: pairing(trials, calls), {"trials": trials,
                                                                  "calls": calls})
    assert ex.runs == 1 and ex.report.params["calls"] == 3
    first_figure = ex.figure
    calls.value = 5
    assert ex.runs == 2 and ex.report.params["calls"] == 5
    assert ex.figure is not first_figure
    assert "(100 trials, 5 calls)" in ex.figure.axes[0].get_title()
    trials.value = 200
    assert ex.runs == 3 and ex.report.to_dict()["trials"] == 200


def test_setting_the_same_value_does_not_rerun():
    s = slider("limit", 4, 1, 6)
    ex = Explorer(lambda limit: timeline(limit=limit), {"limit": s})
    s.value = 4
    assert ex.runs == 1


def test_custom_draw_and_float_controls():
    drawn = []
    spread = float_slider("spread", 0.49, 0.0, 0.5, 0.01)

    def draw(report):
        drawn.append(report.params["delay_ms"])
        return pairing_bars(report)

    Explorer(lambda spread: pairing(50, 3, spread=spread), {"spread": spread}, draw)
    spread.value = 0.0
    assert drawn == [[10, 500], [10, 10]]


def test_png_is_deterministic():
    fig = pairing_bars(pairing(50))
    assert png(fig) == png(pairing_bars(pairing(50)))
    assert png(fig)[:4] == b"\x89PNG"


def test_show_prints_the_table_then_the_figure(capsys):
    show(pairing(20))
    out = capsys.readouterr().out
    assert out.startswith("pairing: trials=20") and "Image" in out
