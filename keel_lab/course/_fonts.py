"""Chinese in the plots from `pip install` alone: the package ships a subset of Noto Sans SC
(SIL Open Font License, `data/fonts/OFL.txt`) cut to the characters the course's
Chinese plot text uses (`scripts/make_font.py` reproduces the cut).

Registering appends the font to matplotlib's family list as a fallback: text is drawn with the
first family that has a glyph, so Latin text keeps DejaVu Sans (English figures do not change by
a byte) and only the characters DejaVu Sans lacks come from the subset. The subset has one
weight; it is registered for every weight, so bold text (Chinese drawn regular) makes matplotlib
log no "Failed to find font weight" line - in any language.
"""

from __future__ import annotations

import dataclasses

from keel_lab.course import _data as data

FONT = "NotoSansSC-keel-subset.ttf"
FAMILY = "Noto Sans SC"


def font_path() -> str:
    """The subset's file; `LabError` when the install lost it."""
    return str(data.path("fonts", FONT))


def register_cjk_font() -> None:
    """Add the subset to matplotlib's fonts and its family fallback list (once)."""
    from matplotlib import font_manager, rcParams

    if FAMILY in rcParams["font.family"]:
        return
    manager = font_manager.fontManager
    font = font_path()
    manager.addfont(font)
    regular = next(e for e in reversed(manager.ttflist) if e.fname == font)
    manager.ttflist += [dataclasses.replace(regular, weight=w)
                        for w in range(100, 1000, 100) if w != regular.weight]
    rcParams["font.family"] = [*rcParams["font.family"], FAMILY]
