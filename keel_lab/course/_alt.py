"""What a figure shows, in words: each plot and diagram registers its alt text here, its title and
its finding computed from the same data, and `_notebook.show` displays the figure as an
`<img alt=...>` carrying it.

Why HTML: JupyterLab's image renderer (4.x) sets no alt attribute from anything, and myst-nb,
the site's reader, takes an image's alt from cell metadata only (one per cell). An HTML output,
`<img alt="..." src="data:image/png;base64,...">`, is what JupyterLab (sanitized, it keeps `alt`
and the data URI), nbconvert and the site all render as that same element; its plain-text
fallback is the alt text itself. The explorers' snapshots were already this.
"""

from __future__ import annotations

import base64
import html
from weakref import WeakKeyDictionary

from matplotlib.figure import Figure

from keel_lab._core.tables import width_of
from keel_lab._i18n import N_, _

ALT = N_("{title}. {finding}")
_TEXTS: WeakKeyDictionary[Figure, str] = WeakKeyDictionary()


def title_of(fig: Figure) -> str:
    """The figure's title: its suptitle, else its panels' titles."""
    suptitle = fig.get_suptitle()
    return suptitle or _("; ").join(t for ax in fig.axes if (t := ax.get_title()))


def describe(fig: Figure, finding: str) -> Figure:
    """Give `fig` its alt text: its title, then `finding` (what the data shows, numbers in)."""
    _TEXTS[fig] = _(ALT).format(title=title_of(fig), finding=finding)
    return fig


def alt_text(fig: Figure) -> str:
    """The text registered for `fig`; its title for a figure drawn elsewhere."""
    return _TEXTS.get(fig) or title_of(fig)


def one_line(text: str) -> str:
    """`text`'s lines run together: a space between two, none between two wide characters
    (Chinese runs on without spaces, and keeps one beside a Latin word)."""
    out = ""
    for line in (part.strip() for part in text.splitlines()):
        if out and line and not width_of(out[-1]) == width_of(line[0]) == 2:
            out += " "
        out += line
    return out


def number(value: float) -> str:
    """A count with thousands separated as the language writes them ("1,000"; Chinese writes
    none), a share as a percentage ("83%")."""
    return _("{count:,}").format(count=value) if isinstance(value, int) else f"{value:.0%}"


def img(png: bytes, alt: str) -> str:
    """The figure as one HTML element, its alt text escaped."""
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'
