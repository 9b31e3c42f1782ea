"""Sphinx configuration of the course site, one build per language.

`scripts/site.py` copies this folder into a staging folder per language, translates the index
page, adds that language's notebooks, glossary (and font) and an `edition.json` (this build's
language and translated strings, every language's pages), and runs `sphinx-build -W` there.
Nothing is executed: the notebooks' saved outputs are the pages.
"""

import json
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


def setup(app):
    app.connect("html-page-context", language_links)
