"""Chinese plots from the shipped font subset: every glyph there, English figures unchanged."""

import io
import warnings
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from fontTools.ttLib import TTFont
from matplotlib import rc_context
from matplotlib.figure import Figure

from keel_lab import _i18n as i18n
from keel_lab.course import _fonts as fonts
from keel_lab.course._experiments.registry import EXPERIMENTS, Params
from keel_lab.course._plots import PLOTS, plot

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
PO = ROOT / "keel_lab" / "locale" / "zh_CN" / "LC_MESSAGES" / "keel_lab.po"


def plot_strings() -> list[str]:
    """Every translation the plots module uses (its msgstrs, by the catalog's locations)."""
    with PO.open("rb") as f:
        return [m.string for m in read_po(f)
                if m.id and any(path.endswith("plots.py") for path, _ in m.locations)]


def png(fig: Figure) -> bytes:
    out = io.BytesIO()
    fig.savefig(out, format="png", metadata={"Software": None})
    return out.getvalue()


def drawn(text: str) -> bytes:
    fig = Figure(figsize=(6, 1), dpi=100)
    fig.text(0.01, 0.5, text, fontsize=10)
    fig.suptitle(text, fontweight="bold")  # the subset has no bold: the regular one stands in
    return png(fig)


@pytest.fixture
def chinese(monkeypatch):
    monkeypatch.setattr(i18n, "_chosen", "zh")


def test_the_subset_has_every_character_of_every_plot_string():
    cmap = TTFont(fonts.font_path()).getBestCmap()
    strings = plot_strings()
    assert len(strings) >= 60
    missing = sorted({c for s in strings for c in s if ord(c) > 0x7E and ord(c) not in cmap})
    assert missing == []


def test_every_chinese_plot_string_draws_without_a_missing_glyph():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "Glyph ... missing from font(s)"
        for text in plot_strings():
            drawn(text)


@pytest.mark.parametrize("name", list(PLOTS))
def test_every_plot_draws_in_chinese_without_a_missing_glyph(name, chinese):
    fig = plot(EXPERIMENTS[name].run(Params(40, 3, 0)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        png(fig)
    assert any("\u4e00" <= c <= "\u9fff" for ax in fig.axes for c in ax.get_title()
               + ax.get_xlabel() + ax.get_ylabel()) or fig.get_suptitle()


def test_latin_text_keeps_dejavu_sans_byte_for_byte():
    """The subset is a fallback after DejaVu Sans: an English figure is the same PNG."""
    text = "Trials with a wrong or missing result (40 trials, 3 calls): 0.167 x trials"
    with rc_context({"font.family": ["sans-serif"]}):
        without = drawn(text)
    assert fonts.FAMILY in Figure().text(0, 0, "x").get_fontfamily()
    assert drawn(text) == without


def test_registering_twice_adds_the_family_once():
    from matplotlib import rcParams

    fonts.register_cjk_font()
    fonts.register_cjk_font()
    assert rcParams["font.family"].count(fonts.FAMILY) == 1


def test_the_font_is_small_and_ships_its_license():
    font = Path(fonts.font_path())
    assert font.stat().st_size < 1024 * 1024
    license_text = (font.parent / "OFL.txt").read_text()
    assert "SIL Open Font License" in license_text
    names = {r.toUnicode() for r in TTFont(font)["name"].names if r.nameID in (0, 1, 13)}
    assert "Noto Sans SC" in names and any("Open Font License" in n for n in names)


def test_bold_text_logs_no_missing_weight(caplog):
    """The one-weight subset stands in for bold: matplotlib says nothing, in either language
    (a log line would be a new stderr output in every English chapter with a bold heading)."""
    with caplog.at_level("WARNING", logger="matplotlib.font_manager"):
        for weight in ("bold", "light", "black"):
            fig = Figure()
            fig.text(0, 0, "English and 中文", fontweight=weight, family=fonts.FAMILY)
            fig.suptitle("English", fontweight=weight)
            png(fig)
    assert [r.getMessage() for r in caplog.records if fonts.FAMILY in r.getMessage()] == []
