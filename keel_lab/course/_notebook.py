"""Notebook helpers: deterministic figures, and controls that re-run an experiment and redraw.

Imported by the chapters only; it loads IPython, ipywidgets and matplotlib.
"""

from __future__ import annotations

import html
import io
from collections.abc import Callable, Hashable
from functools import lru_cache
from typing import Any

import ipywidgets as widgets
from IPython.display import display
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from keel_lab._i18n import N_, _
from keel_lab.course._alt import alt_text, img
from keel_lab.course._experiments.report import Report
from keel_lab.course._plots import plot, refresh

# Shown in the snapshot (in the language set when the notebook ran, so the site shows it too).
SNAPSHOT_NOTE = N_("Saved state of the controls: run this cell in the notebook to move them.")


def png(fig: Figure) -> bytes:
    """The figure as PNG bytes with no varying metadata, so saved outputs reproduce exactly.
    The figure keeps its Agg canvas, and with it the renderer's cache of text layouts."""
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def figure_bundle(fig: Figure, image: bytes | None = None) -> dict[str, str]:
    """The figure as a display bundle: an `<img>` with its alt text (`_alt` says why HTML), and
    the alt text alone where no HTML is shown."""
    alt = alt_text(fig)
    return {"text/html": img(image if image is not None else png(fig), alt), "text/plain": alt}


def show(item: Report | Figure) -> None:
    """Display a figure, or a report's table and then its figure."""
    if isinstance(item, Report):
        print(item.table())
        fig = plot(item)
        if fig is None:
            return
        item = fig
    display(figure_bundle(item), raw=True)


class Explorer:
    """Controls bound to an experiment (`run`, called with their values): every change re-runs
    it and redraws (`draw`; by default the report's plot, kept and refilled in place). Runs are
    deterministic, so each setting's report and image are computed once (`MEMO` kept).
    Displayed, it carries a static snapshot beside the live view, for a reader without a
    kernel: a saved notebook, the site."""

    MEMO = 64  # settings remembered: about 5 MB of images

    def __init__(self, run: Callable[..., Report], controls: dict[str, widgets.ValueWidget],
                 draw: Callable[[Report], Figure | None] | None = None, table: bool = True
                 ) -> None:
        self.run_fn, self.controls, self.draw, self.table = run, controls, draw, table
        self._run = lru_cache(self.MEMO)(lambda settings: run(**dict(settings)))
        self._images: dict[Hashable, bytes] = {}
        self.output = widgets.Output()
        self.report: Report | None = None
        self.figure: Figure | None = None
        self.image: bytes | None = None
        self.runs = 0
        self._holding = False
        for control in controls.values():
            control.observe(self._changed, names="value")
        self.widget = widgets.VBox([widgets.HBox(list(controls.values())), self.output])
        self.update()

    def values(self) -> dict[str, Any]:
        return {name: c.value for name, c in self.controls.items()}

    def set(self, **values: Any) -> None:
        """Move several controls at once and redraw once, as one slider move would."""
        self._holding = True
        try:
            for name, value in values.items():
                self.controls[name].value = value
        finally:
            self._holding = False
        self.update()

    def _changed(self, _change: dict[str, Any]) -> None:
        if not self._holding:
            self.update()

    def update(self) -> None:
        settings = tuple(self.values().items())
        self.report = self._run(settings)
        self.figure = (refresh(self.figure, self.report) if self.draw is None
                       else self.draw(self.report))
        self.image = None if self.figure is None else self._image(settings, self.figure)
        self.runs += 1
        self.output.clear_output(wait=True)
        with self.output:
            if self.table:
                print(self.report.table())
            if self.figure is not None and self.image is not None:
                display(figure_bundle(self.figure, self.image), raw=True)

    def _image(self, settings: Hashable, fig: Figure) -> bytes:
        """The PNG for these settings, drawn once: a refilled figure shows what a fresh one
        does (tests/lab/test_explorers.py). Its pixels may differ by a legend's nudge:
        constrained layout starts from where the last draw put a legend beside the axes."""
        if self.draw is not None:  # a custom drawing may differ from run to run
            return png(fig)
        if settings not in self._images:
            if len(self._images) >= self.MEMO:
                del self._images[next(iter(self._images))]
            self._images[settings] = png(fig)
        return self._images[settings]

    def snapshot(self) -> str:
        """The current state as plain HTML (controls, table, plot as a data URI): no script, so
        it shows wherever the widget cannot, and a front end with a kernel prefers the widget."""
        parts = [f'<p class="keel-snapshot-note">{_(SNAPSHOT_NOTE)}</p>',
                 '<div class="keel-snapshot-controls">'
                 + "".join(map(_control_html, self.controls.values())) + "</div>"]
        if self.table and self.report is not None:
            parts.append(f"<pre>{html.escape(self.report.table())}</pre>")
        if self.figure is not None and self.image is not None:
            parts.append(img(self.image, alt_text(self.figure)))
        return '<div class="keel-snapshot">\n' + "\n".join(parts) + "\n</div>"

    def _ipython_display_(self) -> None:
        bundle = {**self.widget._repr_mimebundle_(), "text/html": self.snapshot()}
        display(bundle, raw=True)


def _control_html(control: widgets.ValueWidget) -> str:
    """One control, frozen: a disabled range for a slider, and its value as the readout shows it."""
    value = control.value
    shown = (format(value, control.readout_format) if isinstance(control, widgets.FloatSlider)
             else str(value))
    field = ""
    if isinstance(control, widgets.IntSlider | widgets.FloatSlider):
        field = (f'<input type="range" min="{control.min}" max="{control.max}" '
                 f'step="{control.step}" value="{value}" disabled> ')
    label = html.escape(str(getattr(control, "description", "")))
    return f"<label>{label} {field}<output>{html.escape(shown)}</output></label>"


def slider(description: str, value: int, low: int, high: int, step: int = 1
           ) -> widgets.IntSlider:
    """An integer slider that only fires when released (each move re-runs an experiment)."""
    return widgets.IntSlider(value=value, min=low, max=high, step=step,
                             description=description, continuous_update=False,
                             style={"description_width": "initial"})


def float_slider(description: str, value: float, low: float, high: float, step: float
                 ) -> widgets.FloatSlider:
    return widgets.FloatSlider(value=value, min=low, max=high, step=step,
                               description=description, continuous_update=False,
                               readout_format=".3f", style={"description_width": "initial"})
