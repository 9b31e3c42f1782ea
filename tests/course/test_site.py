"""The course site (scripts/site.py): pages from the learner edition, built once per test session
into a temporary folder with the English edition and a one-chapter Chinese stand-in (chapter 1
and the glossary translated by a stand-in catalog, so the test does not wait for the translators;
the real edition is built the same way), then crawled, and opened in headless Chromium."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import shutil
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar
from urllib.parse import unquote, urlsplit

import pytest
from browser import chromium, sync_playwright
from hypothesis import given, settings
from hypothesis import strategies as st
from json_fields import damage

from keel_course import translation
from keel_course.editions import (
    PROGRESS_CELLS,
    notebook_text,
    read_notebook,
    solution_paths,
)
from keel_lab import _i18n as i18n
from keel_lab._core.errors import LabError
from keel_lab.course import _fonts as fonts
from keel_lab.course._experiments.pairing import pairing
from keel_lab.course._notebook import SNAPSHOT_NOTE, Explorer, slider

pytestmark = [pytest.mark.lab_wide, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("site_script", ROOT / "scripts" / "site.py")
assert spec and spec.loader
site = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = site  # its dataclass looks its module up
spec.loader.exec_module(site)

COURSE = site.CHECKOUT.notebooks  # the English learner edition
PAGES = [p.stem for p in sorted(COURSE.glob("[0-9][0-9]*_*.ipynb"))]  # chapters, deeper notebooks
CHAPTERS = [name for name in PAGES if re.match(r"0[1-9]_", name)]


def widget_cell(outputs):
    return {"cell_type": "code", "id": "w", "metadata": {"tags": ["widget"]}, "outputs": outputs,
            "execution_count": 1, "source": "# NBVAL_IGNORE_OUTPUT\nexplorer()"}


SNAPSHOT_OUTPUT = {"output_type": "display_data", "metadata": {},
                   "data": {"text/html": ['<div class="keel-snapshot">saved</div>']}}


# -- pages from notebooks, without Sphinx ----------------------------------------------------


def test_a_page_keeps_the_snapshot_and_drops_progress_and_nbval_markers():
    nb = {"cells": [widget_cell([SNAPSHOT_OUTPUT]), *PROGRESS_CELLS], "metadata": {}}
    page = site.site_notebook(nb, "01_x.ipynb")
    assert [c["id"] for c in page["cells"]] == ["w"]
    assert page["cells"][0]["source"] == "explorer()"
    assert page["cells"][0]["outputs"] == [SNAPSHOT_OUTPUT]
    assert len(nb["cells"]) == 3  # the notebook read is left as it was


def test_an_explorer_without_its_snapshot_is_refused():
    bare = {"output_type": "display_data", "metadata": {}, "data": {"text/plain": "VBox()"}}
    for outputs in ([], [bare]):
        with pytest.raises(LabError, match=r"01_x.ipynb: the widget cell 0 has no saved snapshot"
                                           r".*make notebooks"):
            site.site_notebook({"cells": [widget_cell(outputs)], "metadata": {}}, "01_x.ipynb")


def test_an_edition_without_chapters_has_no_pages(tmp_path):
    empty = site.Edition("zh", "中文", "zh-CN", "zh_CN", tmp_path / "none")
    assert empty.pages() == []
    assert site.EDITIONS[0].pages() == ["index", *PAGES, "glossary", "genindex", "search"]


def test_a_solution_in_the_staged_pages_stops_the_build(tmp_path):
    shutil.copy(solution_paths(site.CHECKOUT, ["02_pairing"])[0], tmp_path / "02_pairing.ipynb")
    with pytest.raises(LabError, match=r"the site would give away a solution: 02_pairing\.ipynb"):
        site.check_no_solutions(tmp_path)


def test_only_a_built_site_is_replaced(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert site.main(["--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (f"{tmp_path} exists and is not a built site: "
                                       "give a new folder\n")
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_the_first_page_says_what_the_course_is_in_each_language_and_links_each_edition():
    page = site.landing(site.EDITIONS)
    assert "http-equiv" not in page and "location" not in page  # no redirect: a reader chooses
    zh = site.EDITIONS[1].translate()
    for edition in site.EDITIONS:
        tr = edition.translate()
        section = page[page.index(f'<section lang="{edition.html_lang}">'):]
        section = section[:section.index("</section>")]
        assert f"<h1>{tr(site.TITLE)}</h1>" in section
        assert f'<a href="{edition.code}/index.html">{tr(site.READ)}</a>' in section
        assert site.inline(tr(site.about())) in section
    assert "one hard lesson of agent engineering" in site.about()
    assert zh(site.about()) != site.about() and zh(site.READ) == "阅读课程"
    assert f'<link rel="stylesheet" href="zh/_static/{site.FONT_CSS}">' in page


def test_the_first_page_joins_lines_with_a_space_but_never_between_chinese_characters():
    assert site.inline("a `x<y`\nand b") == "a <code>x&lt;y</code> and b"
    assert site.inline("一个\n难点 `keel_lab`\n运行") == "一个难点 <code>keel_lab</code> 运行"


def test_the_first_page_of_an_english_only_site_links_no_font():
    page = site.landing(site.EDITIONS[:1])
    assert '<section lang="en">' in page and "zh-CN" not in page and site.FONT_CSS not in page


NOTEBOOK = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
            "cells": [
                {"cell_type": "markdown", "id": "m", "metadata": {}, "source": ["# Chapter\n"]},
                {"cell_type": "code", "id": "c", "metadata": {"tags": ["check"]},
                 "execution_count": 2, "source": ["# NBVAL_CHECK_OUTPUT\n", "check(f)"],
                 "outputs": [{"output_type": "stream", "name": "stdout", "text": ["ok\n"]}]},
                widget_cell([SNAPSHOT_OUTPUT]), *PROGRESS_CELLS]}
REPLACEMENTS = [None, True, 0, 1.5, "", "x", [], {}, [1], {"cell_type": "code"}]


@settings(max_examples=400, derandomize=True, deadline=None, database=None)
@given(st.data())
def test_a_damaged_notebook_is_a_lab_error_never_a_traceback(tmp_path_factory, data):
    nb = copy.deepcopy(NOTEBOOK)
    damage(nb, data, REPLACEMENTS)
    file = tmp_path_factory.mktemp("nb") / "01_x.ipynb"
    file.write_text(json.dumps(nb))
    try:
        site.page(file)
    except LabError as exc:
        assert str(exc).startswith("01_x.ipynb") and "\n" not in str(exc)


def test_a_file_that_is_no_notebook_is_named(tmp_path):
    for text in ("{", "[]", "[" * 100_000, '{"cells": []}'):
        (tmp_path / "01_x.ipynb").write_text(text)
        with pytest.raises(LabError, match=r"^01_x\.ipynb is not a notebook nbformat accepts: "):
            site.page(tmp_path / "01_x.ipynb")
    (tmp_path / "01_x.ipynb").write_text(json.dumps(NOTEBOOK))
    assert [c["id"] for c in site.page(tmp_path / "01_x.ipynb")["cells"]] == ["m", "c", "w"]


def test_the_translated_glossarys_anchors_become_myst_targets():
    text = '# Glossary\n\n<a id="tool-call"></a>\n\n### 工具调用\n\nSee <a id="x"></a> inline.\n'
    assert site.myst_targets(text) == (
        '# Glossary\n\n(tool-call)=\n\n### 工具调用\n\nSee <a id="x"></a> inline.\n')
    english = (COURSE / "glossary.md").read_text(encoding="utf-8")
    assert site.myst_targets(english) == english


def test_the_site_catalog_is_complete_and_in_step_with_its_english():
    """A changed index page or site string fails here until `--update-catalogs` and a
    translator have been through it (a fuzzy entry would show English)."""
    for edition in site.EDITIONS[1:]:
        catalog = translation.read_catalog(edition.catalog())
        assert {m.id for m in catalog if m.id} == {m.id for m in site.template() if m.id}
        assert translation.problems(edition.catalog()) == [], edition.code
    zh = site.EDITIONS[1].translate()
    assert zh(site.TITLE) == "keel-lab：并行与流式工具调用"  # noqa: RUF001
    assert site.EDITIONS[0].translate()(site.TITLE) == site.TITLE


def test_updating_the_catalogs_keeps_a_catalog_in_step(tmp_path, monkeypatch):
    monkeypatch.setattr(site, "SITE", tmp_path / "site")
    shutil.copytree(ROOT / "site", tmp_path / "site")
    assert site.update_catalogs() == {"zh_CN": "kept"}
    index = tmp_path / "site" / "index.md"
    index.write_text(index.read_text(encoding="utf-8").replace("## Chapters", "## The chapters"))
    assert site.update_catalogs() == {"zh_CN": "updated"}
    catalog = translation.read_catalog(site.EDITIONS[1].catalog())  # the copy's
    assert catalog["The chapters"].fuzzy and "Chapters" not in catalog


def test_a_damaged_site_catalog_is_a_lab_error(tmp_path, monkeypatch):
    """A LabError: `main` says it in one line and exits 2."""
    monkeypatch.setattr(site, "SITE", tmp_path / "site")
    shutil.copytree(ROOT / "site", tmp_path / "site")
    site.EDITIONS[1].catalog().write_bytes(b'msgid "x"\nmsgstr \xff"unclosed\n')
    with pytest.raises(LabError, match=r"site\.po: not a readable gettext catalog"):
        site.EDITIONS[1].translate()


def test_the_font_covers_the_site_catalogs_chinese():
    """The web font is the plots' subset (scripts/make_font.py cuts it from the catalogs,
    this one included): every character the site's own text shows is in it."""
    from fontTools.ttLib import TTFont

    cmap = TTFont(fonts.font_path()).getBestCmap()
    for edition in site.EDITIONS:
        if edition.font:
            text = "".join(translation.translations(translation.read_catalog(edition.catalog()))
                           .values())
            assert sorted({c for c in text if ord(c) > 0x2E7F and ord(c) not in cmap}) == []


def test_an_explorer_saved_in_chinese_says_so_in_chinese():
    before = i18n.language()
    i18n.set_language("zh")
    try:
        html = Explorer(lambda calls: pairing(5, calls),
                        {"calls": slider("calls", 3, 1, 6)}).snapshot()
    finally:
        i18n.set_language(before)
    assert i18n.catalog("zh_CN")[SNAPSHOT_NOTE] in html and SNAPSHOT_NOTE not in html


# -- the built site ---------------------------------------------------------------------------


def stand_in(unit: str) -> str:
    """The stand-in catalog: every unit "translated" (its markup kept, as a translator must)."""
    return "中文：" + unit  # noqa: RUF001


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """The site with English and a Chinese stand-in of chapter 1 and the glossary (what is tested
    is the layout, the glossary's anchors, the font and the switch), and how long the build
    took."""
    tmp = tmp_path_factory.mktemp("site")
    zh_notebooks = tmp / "zh-notebooks"
    zh_notebooks.mkdir()
    chapter = read_notebook(COURSE / f"{CHAPTERS[0]}.ipynb")  # chapter 1: no deeper notebook
    (zh_notebooks / f"{CHAPTERS[0]}.ipynb").write_text(
        notebook_text(translation.translate_cells(chapter, stand_in)), encoding="utf-8")
    (zh_notebooks / "glossary.md").write_text(translation.translate_glossary(
        (COURSE / "glossary.md").read_text(encoding="utf-8"), stand_in), encoding="utf-8")
    zh = site.Edition("zh", "中文", "zh-CN", "zh_CN", zh_notebooks, font=True)
    start = time.perf_counter()
    site.build(tmp / "out", (site.EDITIONS[0], zh))
    return tmp / "out", time.perf_counter() - start


class Page(HTMLParser):
    """What the crawl needs of one HTML page: ids, links, and what the browser loads."""

    LOADED: ClassVar[set[tuple[str, str]]] = {
        ("img", "src"), ("script", "src"), ("link", "href"), ("iframe", "src"),
        ("source", "src"), ("video", "src"), ("audio", "src"), ("embed", "src"),
        ("object", "data"), ("input", "src"), ("img", "srcset"), ("source", "srcset")}

    def __init__(self, text: str) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.loaded: list[tuple[str, str]] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name"):
                self.ids.add(value)
            if (tag, name) in self.LOADED:
                self.loaded.append((tag, value))
            if name in ("href", "src"):
                self.links.append(value)


def pages(out: Path) -> dict[Path, Page]:
    return {p: Page(p.read_text(encoding="utf-8")) for p in sorted(out.rglob("*.html"))}


def test_every_chapter_is_a_page(built):  # the build's time: bench/, docs/performance.md
    out, _seconds = built
    assert json.loads((out / "site.json").read_text()) == {"editions": ["en", "zh"]}
    for name in ["index", *PAGES, "glossary", "search", "genindex"]:
        assert (out / "en" / f"{name}.html").is_file(), name
    assert sorted(p.name for p in (out / "zh").glob("*.html")) == sorted(
        ["index.html", f"{CHAPTERS[0]}.html", "glossary.html", "search.html", "genindex.html"])
    assert not list(out.rglob("*.ipynb")) and not (out / "en" / "_sources").exists()


def test_every_internal_link_image_and_script_resolves(built):
    out, _ = built
    crawled = pages(out)
    checked = 0
    for path, page in crawled.items():
        for link in page.links:
            url = urlsplit(link)
            if url.scheme or link.startswith(("//", "mailto:")):
                continue
            target = (path if not url.path else
                      (path.parent / unquote(url.path)).resolve())
            if target.is_dir():
                target = target / "index.html"
            assert target.is_file(), f"{path.relative_to(out)}: {link} is missing"
            assert target.is_relative_to(out.resolve()) or target == path
            if url.fragment and target.suffix == ".html":
                ids = crawled[target].ids if target in crawled else Page(target.read_text()).ids
                assert unquote(url.fragment) in ids, f"{path.relative_to(out)}: {link}"
            checked += 1
    assert checked > 500


def test_nothing_is_loaded_from_another_host(built):
    out, _ = built
    for path, page in pages(out).items():
        for tag, value in page.loaded:
            urls = [part.split()[0] for part in value.split(",")] if "srcset" in tag else [value]
            for url in urls:
                assert not re.match(r"(?i)(https?:)?//", url.strip()), \
                    f"{path.relative_to(out)}: <{tag}> loads {url}"
    for css in out.rglob("*.css"):
        text = css.read_text(encoding="utf-8")
        for ref in re.findall(r"""(?:url\(\s*['"]?|@import\s+['"])([^'")\s]+)""", text):
            assert not re.match(r"(?i)(https?:)?//", ref), f"{css.relative_to(out)} loads {ref}"
            if not ref.startswith(("data:", "#")):
                assert (css.parent / ref.split("?")[0].split("#")[0]).exists(), ref
    for script in out.rglob("*.js"):
        assert "cdn.jsdelivr" not in script.read_text(encoding="utf-8", errors="replace")


def test_each_chapter_shows_its_plots_and_its_explorer_snapshot(built):
    out, _ = built
    for name in CHAPTERS:
        text = (out / "en" / f"{name}.html").read_text(encoding="utf-8")
        assert "After this chapter you can" in text and "Checkpoint questions" in text, name
        learner = read_notebook(COURSE / f"{name}.ipynb")
        # a plot that answers a prediction waits in the learner edition, and so on the site
        plotted = any('<img alt="' in "".join(o.get("data", {}).get("text/html", ""))
                      for c in learner["cells"] if c["cell_type"] == "code" for o in c["outputs"])
        assert bool(re.search(r'<img alt="[^"]{20,}" src="data:image/png;base64,', text)) \
            == plotted, name
        widgets = any("widget" in c.get("metadata", {}).get("tags", []) for c in learner["cells"])
        assert (text.count('class="keel-snapshot"') >= 1 and SNAPSHOT_NOTE in text) == widgets, \
            name
        assert "application/vnd.jupyter.widget" not in text and "require.js" not in text, name
        assert "NBVAL_" not in text and "show_progress" not in text, name


def test_the_language_switch_links_the_same_page_or_the_other_index(built):
    out, _ = built
    chapter = (out / "en" / f"{CHAPTERS[0]}.html").read_text(encoding="utf-8")
    assert f'href="../zh/{CHAPTERS[0]}.html">中文</a>' in chapter
    assert '<span class="current" lang="en" aria-current="page">English</span>' in chapter
    other = (out / "en" / f"{CHAPTERS[1]}.html").read_text(encoding="utf-8")
    assert 'href="../zh/index.html">中文</a>' in other
    back = (out / "zh" / f"{CHAPTERS[0]}.html").read_text(encoding="utf-8")
    assert f'href="../en/{CHAPTERS[0]}.html">English</a>' in back and 'lang="zh-CN"' in back
    for path in out.glob("*/*.html"):
        assert path.read_text(encoding="utf-8").count('class="language-switch"') == 1, path.name


def test_the_chinese_pages_have_their_own_text_and_glossary_anchors(built):
    out, _ = built
    index = (out / "zh" / "index.html").read_text(encoding="utf-8")
    assert "keel-lab：并行与流式工具调用" in index and "在这里阅读课程" in index  # noqa: RUF001
    assert 'aria-label="语言"' in index and 'lang="zh-CN"' in index
    assert 'aria-label="Language"' in (out / "en" / "index.html").read_text(encoding="utf-8")
    crawled = pages(out / "zh")
    glossary = crawled[out / "zh" / "glossary.html"]
    links = [link for page in crawled.values() for link in page.links
             if link.startswith("glossary.html#")
             or (link.startswith("#") and len(link) > 1 and page is glossary)]
    assert len(links) > 100
    assert [link for link in links if link.split("#")[1] not in glossary.ids] == []
    assert "&lt;a id=" not in (out / "zh" / "glossary.html").read_text(encoding="utf-8")


def test_the_built_first_page_shows_both_languages_and_links_both_editions(built):
    out, _ = built
    first = (out / "index.html").read_text(encoding="utf-8")
    assert first == site.landing((site.EDITIONS[0], site.EDITIONS[1]))
    links = Page(first).links
    assert "en/index.html" in links and "zh/index.html" in links


def test_the_chinese_pages_serve_their_font_and_english_ones_do_not(built):
    out, _ = built
    served = out / "zh" / "_static" / "fonts"
    assert (served / fonts.FONT).read_bytes() == Path(fonts.font_path()).read_bytes()
    assert (served / "OFL.txt").is_file()
    css = (out / "zh" / "_static" / site.FONT_CSS).read_text(encoding="utf-8")
    assert f'url("fonts/{fonts.FONT}")' in css and "@font-face" in css
    for path in (out / "zh").glob("*.html"):
        assert f'href="_static/{site.FONT_CSS}' in path.read_text(encoding="utf-8"), path.name
    assert not (out / "en" / "_static" / "fonts").exists()
    assert not (out / "en" / "_static" / site.FONT_CSS).exists()
    assert site.FONT_CSS not in (out / "en" / "index.html").read_text(encoding="utf-8")


def test_the_served_font_has_every_chinese_character_a_page_shows(built):
    """Sphinx's and Furo's own Chinese (search, contents, ...), the site's catalog and the
    switch: no character falls back to whatever font a reader has."""
    from fontTools.ttLib import TTFont

    out, _ = built
    cmap = TTFont(out / "zh" / "_static" / "fonts" / fonts.FONT).getBestCmap()
    for path in [*(out / "zh").glob("*.html"), out / "index.html"]:
        text = re.sub(r"<script.*?</script>|data:[^\"]*", "", path.read_text(encoding="utf-8"),
                      flags=re.S)
        shown = {c for c in text if 0x2E80 <= ord(c) <= 0xFFEF}
        assert sorted(c for c in shown if ord(c) not in cmap) == [], path.name


def test_an_edition_not_built_yet_is_named_without_a_link(tmp_path):
    notebooks = tmp_path / "en"
    notebooks.mkdir()
    (notebooks / "01_history.ipynb").write_text(json.dumps(
        {"cells": [widget_cell([SNAPSHOT_OUTPUT])], "metadata": {}, "nbformat": 4,
         "nbformat_minor": 5}))
    shutil.copy(COURSE / "glossary.md", notebooks / "glossary.md")
    en = site.Edition("en", "English", "en", "en", notebooks)
    empty = site.Edition("zh", "中文", "zh-CN", "zh_CN", tmp_path / "none")
    src = site.stage(en, (en, empty), tmp_path / "src")
    assert json.loads((src / "01_history.ipynb").read_text())["cells"][0]["source"] == "explorer()"
    described = json.loads((src / "edition.json").read_text(encoding="utf-8"))
    assert [e["pages"] for e in described["editions"]][1] == []
    namespace: dict[str, object] = {"__file__": str(src / "conf.py")}
    exec(compile((src / "conf.py").read_text(encoding="utf-8"), "conf.py", "exec"), namespace)
    context: dict[str, object] = {}
    namespace["language_links"](None, "01_history", "page.html", context, None)
    assert context["language_links"] == [
        {"label": "English", "lang": "en", "current": True, "href": "../en/01_history.html"},
        {"label": "中文", "lang": "zh-CN", "current": False, "href": None}]


# -- in a browser -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    """Playwright's sync API keeps an asyncio loop running in this thread while it is open: it
    must close with this module, or the next module on the worker runs inside that loop (its own
    Playwright refuses to start, and asyncio.run in a learner's answer meets a running loop)."""
    executable = chromium()
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=executable, headless=True)
        yield launched
        launched.close()


def test_pages_of_both_languages_in_headless_chromium(built, browser):
    out, _ = built
    page = browser.new_page()
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto((out / "index.html").as_uri())  # the first page: both languages, no redirect
    page.wait_for_load_state("load")
    page.wait_for_timeout(500)  # a redirect, if there were one, would have left by now
    assert page.url.endswith("/index.html") and "/en/" not in page.url
    english, chinese = page.locator('section[lang="en"]'), page.locator('section[lang="zh-CN"]')
    assert english.locator("h1").inner_text().startswith("keel-lab")
    assert "tool calls in one turn" in english.inner_text()
    assert chinese.locator("h1").inner_text().startswith("keel-lab：")  # noqa: RUF001
    assert "工具调用" in chinese.inner_text()
    assert english.is_visible() and chinese.is_visible()
    assert page.evaluate("async () => { await document.fonts.ready; return [...document.fonts]"
                         ".some(f => f.family.includes('Keel Noto Sans SC')"
                         " && f.status === 'loaded'); }")  # its Chinese in the site's font
    chinese.locator("a", has_text="阅读课程").click()
    page.wait_for_url("**/zh/index.html")
    page.go_back()
    english.locator("a", has_text="Read the course").click()
    page.wait_for_url("**/en/index.html")
    assert page.locator("h1").first.inner_text().startswith("keel-lab")
    page.goto((out / "en" / f"{CHAPTERS[0]}.html").as_uri())
    page.wait_for_load_state("load")
    assert page.locator("h1").first.inner_text().startswith("Chapter 1")
    images = page.locator("article img")
    assert images.count() >= 2
    assert page.evaluate("() => [...document.querySelectorAll('article img')]"
                         ".every(i => i.complete && i.naturalWidth > 0)")
    assert page.locator(".keel-snapshot input[type=range]").count() >= 1
    page.locator(".language-switch a", has_text="中文").click()
    page.wait_for_url(f"**/zh/{CHAPTERS[0]}.html")
    assert page.locator("html").get_attribute("lang") == "zh-CN"
    assert page.locator("article h1").count() == 1 and page.locator("article img").count() >= 2
    assert page.locator(".language-switch a", has_text="English").count() == 1
    assert page.evaluate("async () => { await document.fonts.ready; return [...document.fonts]"
                         ".some(f => f.family.includes('Keel Noto Sans SC')"
                         " && f.status === 'loaded'); }")  # the site's own font draws the text
    page.goto((out / "zh" / "index.html").as_uri())
    page.wait_for_load_state("load")
    assert page.locator("article h1").first.inner_text().startswith("keel-lab：")  # noqa: RUF001
    assert page.locator(".language-switch").get_attribute("aria-label") == "语言"
    page.close()
    assert any(u.endswith(f"/zh/_static/fonts/{fonts.FONT}") for u in requested)
    outside = [u for u in requested if not u.startswith(("file://", "data:"))]
    assert requested and outside == []
