"""Sphinx configuration of the course site, one build per language.

`scripts/site.py` copies this folder into a staging folder per language, translates the index
page, adds that language's notebooks, glossary (and font) and an `edition.json` (this build's
language and translated strings, every language's pages), and runs `sphinx-build -W` there.
Nothing is executed: the notebooks' saved outputs are the pages.
"""

import json
from html import escape
from html.parser import HTMLParser
from pathlib import Path

edition = json.loads((Path(__file__).parent / "edition.json").read_text(encoding="utf-8"))

project = "keel-lab"
author = "keel-lab"
copyright = "keel-lab authors"
language = edition["sphinx_language"]
html_title = edition["title"]

extensions = ["myst_nb"]
exclude_patterns = ["edition.json", "_build"]
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["keel-site.css", *edition["css"]]  # and the Chinese pages' web font
html_context = {"names": edition["names"]}  # what a screen reader calls the sidebars

# Furo serves its fonts and scripts from _static: no request leaves the site.
html_theme = "furo"
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None

# The notebooks as saved: no kernel at build time, and no widget JavaScript (myst-nb would load
# require.js and the widget manager from a CDN); each explorer shows its static snapshot.
nb_execution_mode = "off"
nb_ipywidgets_js: dict[str, dict[str, str]] = {}
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None)]
nb_merge_streams = True

# The chapters link glossary entries as `glossary.md#turn`: anchors for ### headings.
myst_heading_anchors = 3
# ... and its entries are ### headings under its # title, on purpose (short entries, small type).
suppress_warnings = ["myst.header"]


def language_links(app, pagename, templatename, context, doctree):
    """Each edition's link for the switch: the same page there if it exists, otherwise its
    index; an edition with no pages is named without a link."""
    up = "../" * (pagename.count("/") + 1)
    context["language_switch_name"] = edition["switch"]
    context["language_links"] = [
        {"label": e["label"], "lang": e["html_lang"], "current": e["code"] == edition["code"],
         "href": (None if not e["pages"] else
                  f"{up}{e['code']}/{pagename if pagename in e['pages'] else 'index'}.html")}
        for e in edition["editions"]]


class CodeBlocks(HTMLParser):
    """Each <pre> of a page's body: where it starts and what holds it, a code cell's code
    ("code") or output ("output") with the cell's number (the divs myst-nb wraps code cells in,
    counted from 1), or the text ("example", numbered on its own)."""

    def __init__(self, body):
        super().__init__(convert_charrefs=False)
        self.lines = [0, *(n + 1 for n, c in enumerate(body) if c == "\n")]
        self.divs = []  # the classes of each open div
        self.count = {"cell": 0, "example": 0}
        self.found = []  # (offset, kind, number)
        self.feed(body)
        self.close()

    def handle_starttag(self, tag, attrs):
        if tag == "div":
            classes = (dict(attrs).get("class") or "").split()
            self.count["cell"] += "cell" in classes
            self.divs.append(classes)
        elif tag == "pre":
            part = next((c for classes in reversed(self.divs) for c in classes
                         if c in ("cell_input", "cell_output")), None)
            kind = {"cell_input": "code", "cell_output": "output"}.get(part, "example")
            self.count["example"] += kind == "example"
            line, column = self.getpos()
            self.found.append((self.lines[line - 1] + column, kind,
                               self.count["example" if kind == "example" else "cell"]))

    def handle_endtag(self, tag):
        if tag == "div" and self.divs:
            self.divs.pop()


def focusable_code(app, pagename, templatename, context, doctree):
    """Every code block of the page a named region the keyboard reaches (tabindex="0"): one that
    scrolls sideways must be, for a reader without a mouse (axe-core's
    scrollable-region-focusable), and its name says which cell's code or output it is. A second
    block of the same name (two outputs of one cell) adds its number: landmarks' names differ."""
    body = context.get("body")
    if not body:
        return
    seen, named = {}, []
    for offset, kind, number in CodeBlocks(body).found:
        name = edition["names"][kind].format(n=number)
        seen[name] = seen.get(name, 0) + 1
        named.append((offset, name if seen[name] == 1 else f"{name} ({seen[name]})"))
    for offset, name in reversed(named):
        assert body.startswith("<pre", offset), body[offset:offset + 40]
        at = offset + len("<pre")
        body = f'{body[:at]} tabindex="0" role="region" aria-label="{escape(name)}"{body[at:]}'
    context["body"] = body


def setup(app):
    app.connect("html-page-context", language_links)
    app.connect("html-page-context", focusable_code)
