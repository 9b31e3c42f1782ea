"""Every figure's series styles, declared once, so a plot reads in grayscale and for colour-blind
readers: each series differs from the others of its plot by a hatch, or a marker and a line
style, as well as by colour, and its colour by grey level too (`grey`, apart by at least
`GREY_STEP`). The hues are Okabe and Ito's colour-blind-safe palette, some darkened or lightened
where a plot needs more grey levels than the palette's own (several of its colours share one).
Black is kept for references (theory lines, marks), never a series.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from matplotlib.colors import to_rgb

LineStyle = str | tuple[int, tuple[int, ...]]  # a name ("--") or an on-off dash sequence

# Grey levels (0-255) two series of one plot keep apart: about a tenth of the range, several
# times the step a reader tells between adjacent grey patches, and what a grayscale print keeps;
# matplotlib's Set2, used before, had its four main colours within 13 of each other.
GREY_STEP = 25


def grey(color: Any) -> float:
    """A colour's grey level as a grayscale print or `PIL.Image.convert("L")` makes it (ITU-R
    BT.601 luma, 0 black to 255 white), over white when it is translucent."""
    r, g, b = to_rgb(color)
    alpha = 1.0 if isinstance(color, str) or len(color) < 4 else float(color[3])
    luma = 0.299 * r + 0.587 * g + 0.114 * b
    return 255 * (alpha * luma + 1 - alpha)


@dataclass(frozen=True)
class Style:
    """One series: its colour, and the marker, line style and hatch that tell it apart without
    colour (a line uses the first two, a bar or span the hatch)."""

    color: str
    marker: str = ""
    linestyle: LineStyle = "-"
    hatch: str = ""

    def line(self) -> dict[str, Any]:
        return {"color": self.color, "marker": self.marker or "None", "linestyle": self.linestyle}

    def fill(self) -> dict[str, Any]:
        """A bar's look: outlined, its hatch drawn light on a dark colour and dark on a light."""
        return {"color": self.color, "hatch": self.hatch, "edgecolor": "#333333",
                "hatchcolor": "white" if grey(self.color) < 110 else "black", "linewidth": 0.6}


BLUE, SKY, ORANGE, YELLOW = "#0072B2", "#56B4E9", "#E69F00", "#F0E442"  # Okabe-Ito
PURPLE = "#CC79A7"  # Okabe-Ito's reddish purple
VERMILLION, GREEN = "#D55E00", "#005C40"  # Okabe-Ito's vermillion; its bluish green, darker

# Indexed series (the calls of a stream or a diagram, the batches of a timeline), in this order;
# past the sixth they repeat.
CYCLE = (Style(BLUE, ".", "-", ""), Style(ORANGE, ".", "--", "//"),
         Style(GREEN, ".", ":", "\\\\"), Style(VERMILLION, ".", "-.", "xx"),
         Style(YELLOW, ".", (0, (5, 1, 1, 1, 1, 1)), ".."),
         Style("#F7F7F7", ".", (0, (1, 3)), "++"))

# Named series: pairing strategies (`keel_lab._core.pairing.StrategyName`) and the order
# experiment's collectors in the style of the strategy built on each; the learner's own
# function (`pairing(mine=...)`); outcomes, policies, the screen's phases and the like.
STYLES: dict[str, Style] = {
    "position_over_gather": Style(BLUE, "D", "-", "\\\\"),
    "position_over_completion": Style(VERMILLION, "o", "--", "//"),
    "position_with_skip": Style(ORANGE, "^", "-.", "xx"),
    "position_over_gather_filtered": Style(ORANGE, "^", "-.", "xx"),
    "by_call_id": Style(GREEN, "s", "-", ""),
    "yours": Style(YELLOW, "*", ":", ".."),
    "gather": Style(BLUE, "D", "-", "\\\\"),
    "as_completed": Style(VERMILLION, "o", "--", "//"),
    # executions that went wrong, split (chapter 2b and the naive readings)
    "wrong": Style(VERMILLION, hatch="//"), "lost": Style(SKY, hatch=""),
    # how runs end (chapter 5)
    "completed": Style(BLUE, "o", "-"), "partial": Style(ORANGE, "s", "-"),
    "failed": Style(VERMILLION, "^", "-", "\\\\"),
    "failed_if_fail_fast": Style("black", "x", "--"),
    # the lab's policy per stream shape (7a)
    "tolerated": Style(BLUE, hatch=""), "reported": Style(YELLOW, hatch=".."),
    "refused": Style(VERMILLION, hatch="//"),
    # when calls start (4a): the time to a turn's results, and what ran for turns that failed
    "ms_to_all_results": Style(BLUE, hatch=""),
    "ms_block_close_to_result": Style(ORANGE, hatch="//"),
    "turn cancelled or cut off": Style(SKY, hatch=""),
    "turn refused (reused id)": Style(VERMILLION, hatch="//"),
    # what the screen says about a call (8a), lightest while nothing is decided
    "model still writing": Style("#F7F7F7", hatch=""),
    "running": Style(YELLOW, hatch=".."),
    "confirmed, not run yet": Style("#80C4EC", hatch="//"),
    "cancelled, never ran": Style(PURPLE, hatch="xx"),
    "refused, never runs": Style("#7F3F7A", hatch="++"),
    "done": Style(GREEN, hatch="--"),
}


def style(name: str) -> Style:
    return STYLES[name]


def indexed(i: int) -> Style:
    return CYCLE[i % len(CYCLE)]
