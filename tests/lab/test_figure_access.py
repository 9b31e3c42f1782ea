"""Every figure the course shows reads without its colours and without being seen: its alt text
says what it shows, numbers from the data included; each pair of its series differs by a marker,
a line style or a hatch as well as by hue, and by grey level (`_styles.GREY_STEP`, 25 of 255:
about a tenth of the range, several times the step a reader tells between adjacent grey patches,
and what a grayscale print keeps; Set2's four main colours, used before, were within 13).

A series is a labelled line (a legend entry: measured values, a call, a theory line) or a colour
group of bars and spans. Two black or grey lines are references (theory, marks), told apart by
form, so only their form is compared. Shaded ranges drawn around a series or a theory line
(fill_between, axhspan) take the look of what they surround and are not series of their own."""

import re
from itertools import combinations

import matplotlib
import pytest

matplotlib.use("Agg")

from matplotlib.colors import to_rgb
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch

from keel_lab import OfflineAdapter, Runner
from keel_lab import _i18n as i18n
from keel_lab._i18n import set_language
from keel_lab.course._alt import alt_text, title_of
from keel_lab.course._diagrams import message_format, turn_pipeline
from keel_lab.course._experiments.registry import EXPERIMENTS, Params
from keel_lab.course._explorers import EXPLORERS
from keel_lab.course._notebook import figure_bundle, show
from keel_lab.course._plots import PLOTS, plot
from keel_lab.course._scenarios import COMPARE, offline_stream
from keel_lab.course._styles import CYCLE, GREY_STEP, STYLES, grey

pytestmark = pytest.mark.lab_wide

NUMBER = re.compile(r"\d[\d,.]*%?")


def report(name, trials=200):
    return EXPERIMENTS[name].run(Params(trials, 3, 0))


def neutral(color) -> bool:
    r, g, b = to_rgb(color)
    return max(r, g, b) - min(r, g, b) < 0.1


def series(ax):
    """(kind, form, colour) of each series of the axes: labelled lines, colour groups of bars."""
    found = []
    for line in ax.get_lines():
        if not line.get_label().startswith("_"):
            # a dash sequence is kept privately; get_linestyle() names every one "--"
            dashes = line._unscaled_dash_pattern
            found.append(("line", (line.get_marker(), line.get_linestyle(), str(dashes)),
                          line.get_color()))
    bars = {}
    for container in ax.containers:
        if isinstance(container, BarContainer):
            for bar in container:
                bars.setdefault((tuple(bar.get_facecolor()), bar.get_hatch() or ""), bar)
    found += [("bar", hatch, color) for color, hatch in bars]
    return found


def arrows(fig: Figure):
    return [("arrow", str(p.get_linestyle()), p.get_edgecolor()) for p in fig.axes[0].patches
            if isinstance(p, FancyArrowPatch) and (p.get_gid() or "").startswith("pair:")]


def assert_legible(fig: Figure, what: str) -> None:
    groups = [series(ax) for ax in fig.axes] + [arrows(fig)]
    for found in groups:
        for (kind, form, color), (kind2, form2, color2) in combinations(found, 2):
            if kind != kind2:
                continue  # a line and a bar differ in form already
            pair = (what, form, color, form2, color2)
            assert form != form2, ("series told apart by hue alone", *pair)
            if not (kind == "line" and neutral(color) and neutral(color2)):
                assert abs(grey(color) - grey(color2)) >= GREY_STEP, ("grey levels too close",
                                                                      *pair)


def assert_described(fig: Figure, what: str) -> str:
    alt, title = alt_text(fig), title_of(fig)
    assert title and alt.startswith(title) and len(alt) > len(title) + 20, (what, alt)
    numbers = set(NUMBER.findall(alt[len(title):]))
    assert numbers, (what, "alt text without a number from the data", alt)
    return alt


def every_figure():
    for name in PLOTS:
        yield name, plot(report(name))
    messages = Runner(OfflineAdapter()).run(COMPARE).messages
    yield "message_format", message_format(messages)
    yield "message_format, unanswered", message_format(messages[:3] + messages[4:])
    yield "turn_pipeline", turn_pipeline(offline_stream(COMPARE))


@pytest.mark.parametrize(("what", "fig"), list(every_figure()), ids=lambda x: str(x)[:30])
def test_every_figure_is_described_and_legible(what, fig):
    assert_described(fig, what)
    assert_legible(fig, what)


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_every_explorer_figure_and_snapshot_carry_the_alt_text(name):
    explorer = EXPLORERS[name]()
    if explorer.figure is None:
        return
    alt = assert_described(explorer.figure, name)
    assert_legible(explorer.figure, name)
    assert f'<img alt="{alt}"'.replace("'", "&#x27;") in explorer.snapshot()


def test_the_alt_text_is_the_data_not_only_the_title():
    pairing = report("pairing", 1000)
    counts = {n: s["trials_with_mismatch"] for n, s in pairing.data["strategies"].items()}
    alt = alt_text(plot(pairing))
    assert all(f"{n} {c:,}" in alt for n, c in counts.items()), alt
    assert "position_over_completion 0" not in alt and "1,000" in alt
    screen = report("screen")
    last = dict(zip(screen.data["calls"], screen.data["phases"][-1], strict=True))
    assert all(f"{c}: {p}" in alt_text(plot(screen)) for c, p in last.items())


def test_a_shown_figure_is_an_img_with_its_alt_and_a_text_fallback(monkeypatch):
    shown = []
    monkeypatch.setattr("keel_lab.course._notebook.display",
                        lambda obj, raw=False: shown.append((obj, raw)))
    show(report("order"))
    [(bundle, raw)] = shown
    fig = plot(report("order"))
    assert raw and bundle == figure_bundle(fig)
    assert bundle["text/plain"] == alt_text(fig)
    assert bundle["text/html"].startswith('<img alt="How often results come back in request order.')
    assert 'src="data:image/png;base64,' in bundle["text/html"]


def test_the_styles_declared_keep_apart_where_they_meet():
    """The cycle's styles pairwise (calls and batches meet in any number), line and fill."""
    for a, b in combinations(CYCLE, 2):
        assert a.hatch != b.hatch and a.linestyle != b.linestyle
        assert abs(grey(a.color) - grey(b.color)) >= GREY_STEP, (a, b)
    assert all(neutral(s.color) or 40 < grey(s.color) < 250 for s in STYLES.values())


def test_the_alt_text_speaks_chinese(monkeypatch):
    monkeypatch.delenv(i18n.ENV, raising=False)
    monkeypatch.setattr(i18n, "_chosen", None)
    set_language("zh")
    alt = alt_text(plot(report("pairing")))
    finding = alt[len(title_of(plot(report("pairing")))):]
    assert re.search(r"[\u4e00-\u9fff]", finding) and "trials with a mismatch" not in alt, alt


def test_a_diagram_note_reads_as_one_line_in_either_language():
    """Its lines run together with a space, except between two Chinese characters."""
    from keel_lab.course._alt import one_line

    assert one_line("streams 42 events,\nthe last") == "streams 42 events, the last"
    assert one_line("\u6d41\u51fa 42\n\u4e2a\u4e8b\u4ef6") == "\u6d41\u51fa 42 \u4e2a\u4e8b\u4ef6"
    assert one_line("\u4e8b\u4ef6\u3002\n\u6700\u540e") == "\u4e8b\u4ef6\u3002\u6700\u540e"
    assert one_line("\u5404\u6709\nid") == "\u5404\u6709 id"
