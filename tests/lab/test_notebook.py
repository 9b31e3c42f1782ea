"""Notebook helpers without a browser: moving a control re-runs the experiment and redraws."""

import pytest

from keel_course.editions import WIDGET_VIEW, static_outputs
from keel_lab.course._experiments.batching import timeline
from keel_lab.course._experiments.pairing import pairing
from keel_lab.course._notebook import (
    SNAPSHOT_NOTE,
    Explorer,
    float_slider,
    png,
    show,
    slider,
)
from keel_lab.course._plots import pairing_bars

pytestmark = pytest.mark.lab_wide


def test_moving_a_slider_reruns_and_redraws():
    trials, calls = slider("trials", 100, 10, 1000), slider("calls", 3, 1, 6)
    ex = Explorer(lambda trials, calls: pairing(trials, calls), {"trials": trials,
                                                                  "calls": calls})
    assert ex.runs == 1 and ex.report.params["calls"] == 3
    first_figure = ex.figure
    calls.value = 5
    assert ex.runs == 2 and ex.report.params["calls"] == 5
    assert ex.figure is first_figure  # kept, its artists refilled
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
    assert out.startswith("pairing: trials=20") and "<img alt=" in out


def test_the_snapshot_freezes_controls_table_and_plot():
    import base64

    calls = slider("calls", 3, 1, 6)
    ex = Explorer(lambda calls, rate: pairing(20, calls),
                  {"calls": calls, "rate": float_slider("rate", 0.25, 0.0, 1.0, 0.05)})
    html = ex.snapshot()
    assert SNAPSHOT_NOTE in html
    assert '<input type="range" min="1" max="6" step="1" value="3" disabled>' in html
    assert "<output>3</output>" in html and "<output>0.250</output>" in html
    assert "<pre>pairing: trials=20" in html  # the table, escaped into <pre>
    data = html.split('src="data:image/png;base64,')[1].split('"')[0]
    assert base64.b64decode(data) == png(ex.figure)
    assert "<script" not in html and "http" not in html
    calls.value = 5
    assert "<output>5</output>" in ex.snapshot() and ex.snapshot() != html


def test_the_snapshot_leaves_out_a_table_the_explorer_hides():
    ex = Explorer(lambda limit: timeline(limit=limit), {"limit": slider("limit", 4, 1, 6)},
                  table=False)
    assert "<pre>" not in ex.snapshot() and "<img alt=" in ex.snapshot()


def test_displayed_it_carries_the_live_view_and_the_snapshot(monkeypatch):
    shown = []
    monkeypatch.setattr("keel_lab.course._notebook.display",
                        lambda obj, raw=False: shown.append((obj, raw)))
    ex = Explorer(lambda limit: timeline(limit=limit), {"limit": slider("limit", 4, 1, 6)})
    shown.clear()
    ex._ipython_display_()
    [(bundle, raw)] = shown
    assert raw and bundle["text/html"] == ex.snapshot()
    assert bundle[WIDGET_VIEW]["model_id"] == ex.widget.model_id


def test_a_saved_widget_cell_keeps_only_its_snapshot():
    display_data = {"output_type": "display_data", "metadata": {},
                    "data": {"text/plain": "VBox()", "text/html": "<div>saved</div>",
                             WIDGET_VIEW: {"model_id": "abc"}}}
    bare_widget = {"output_type": "display_data", "metadata": {},
                   "data": {"text/plain": "VBox()", WIDGET_VIEW: {"model_id": "def"}}}
    assert static_outputs([display_data, bare_widget]) == [
        {"output_type": "display_data", "metadata": {},
         "data": {"text/plain": "VBox()", "text/html": "<div>saved</div>"}}]
    assert WIDGET_VIEW in display_data["data"]  # the input is left as it was
