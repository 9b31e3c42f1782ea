"""Notebook helpers: deterministic figures, and controls that re-run an experiment and redraw.

Imported by the chapters only; it loads IPython, ipywidgets and matplotlib.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets
from IPython.display import Image, display
from matplotlib.figure import Figure

from keel_lab.course.experiments.report import Report
from keel_lab.course.plots import plot


def png(fig: Figure) -> bytes:
    """The figure as PNG bytes with no varying metadata, so saved outputs reproduce exactly."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def show(item: Report | Figure) -> None:
    """Display a figure, or a report's table and then its figure."""
    if isinstance(item, Report):
        print(item.table())
        fig = plot(item)
        if fig is None:
            return
        item = fig
    display(Image(png(item)))


class Explorer:
    """Controls bound to an experiment: every change re-runs it and redraws the output.

    `run` takes the controls' values as keyword arguments and returns a Report; `draw` turns
    it into a Figure (default: the report's own plot).
    """

    def __init__(self, run: Callable[..., Report], controls: dict[str, widgets.ValueWidget],
                 draw: Callable[[Report], Figure | None] = plot, table: bool = True) -> None:
        self.run_fn, self.controls, self.draw, self.table = run, controls, draw, table
        self.output = widgets.Output()
        self.report: Report | None = None
        self.figure: Figure | None = None
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
        self.report = self.run_fn(**self.values())
        self.figure = self.draw(self.report)
        self.runs += 1
        self.output.clear_output(wait=True)
        with self.output:
            if self.table:
                print(self.report.table())
            if self.figure is not None:
                display(Image(png(self.figure)))

    def _ipython_display_(self) -> None:
        display(self.widget)


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
