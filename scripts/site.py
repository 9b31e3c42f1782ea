"""Build the course site: one Sphinx build per language into OUT/<code>/, offline.

Run: make site   (or .venv/bin/python scripts/site.py [--out build/site])
     .venv/bin/python scripts/site.py --update-catalogs   (after site/index.md changed)

The site shows the learner edition with its saved outputs: it is public, so it gives away no
solution (the same search the handout runs proves it), and a learner reading it sees the
notebooks they will run, stubs and checks included. Nothing is executed; each explorer shows the
static snapshot its widget cell saved, and the switch on every page links the same page in the
other language when that edition has it.

An edition is a folder of learner notebooks (NN_name.ipynb) and its glossary.md: English is
notebooks/, Chinese notebooks/zh/ once it exists. site/ holds what every edition shares (Sphinx
configuration, templates, styles, the index page). OUT/index.html, the first page, says what the
course is in every edition's language and links each edition. The site's own text (the index
page, the title, the switch's name, the first page's links) is translated at staging, as the
notebooks are, from a gettext catalog
site/locale/<locale>/LC_MESSAGES/site.po (`--update-catalogs` merges changed English into it,
fuzzy). A Chinese edition serves the CJK font subset the plots use (data/fonts/) from its
own _static/, so its pages read the same on any machine and ask no other host for a font.
"""

from __future__ import annotations

import argparse
import copy
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat
from nbformat.validator import get_validator

from keel_cli._cells import source, tags
from keel_course import translation
from keel_course.checkout import Checkout
from keel_course.editions import (
    CHAPTER,
    PROGRESS_CELLS,
    Notebook,
    notebook_text,
    solution_paths,
)
from keel_course.handout import find_leaks, solution_lines
from keel_course.translation import Translate
from keel_lab._core.errors import LabError
from keel_lab._i18n import N_
from keel_lab.course import _fonts as fonts

CHECKOUT = Checkout.at(Path(__file__).resolve().parent.parent)
SITE = CHECKOUT.root / "site"
MARKER = "site.json"  # marks a folder as a built site, so a rebuild may replace it
SNAPSHOT = 'class="keel-snapshot"'  # what keel_lab.course._notebook.Explorer saves
GENERATED = ("genindex", "search")  # pages Sphinx writes in every edition
CATALOG = "site"  # site/locale/<locale>/LC_MESSAGES/site.po: the site's own text
TITLE = "keel-lab: parallel and streamed tool calls"
SWITCH = "Language"  # the language switch's name for screen readers
# The names a screen reader gives the rest of a page (axe-core checks every page:
# tests/course/test_site_a11y.py): Furo's two sidebars, and each code block, which scrolls sideways
# when its lines are wide and so is a region the keyboard reaches; {n} counts the page's code
# cells, or its other code blocks.
NAMES = {"contents": "Course contents", "on_page": "On this page", "code": "Code cell {n}",
         "output": "Output of code cell {n}", "example": "Code example {n}"}
READ = "Read the course"  # the first page's link to each edition, in its language
STRINGS = (TITLE, SWITCH, READ, *NAMES.values())  # the site's text outside site/index.md
FONT_CSS = "keel-cjk.css"  # in site/_static/, kept only in an edition that serves the font
SCHEMA = get_validator(version=4, version_minor=nbformat.v4.nbformat_minor)  # type: ignore[no-untyped-call]


@dataclass(frozen=True)
class Edition:
    """One language of the site and where its notebooks are."""

    code: str  # its folder under OUT
    label: str  # its name in the language switch, in its own language
    html_lang: str
    sphinx_language: str  # also the locale of its site catalog
    notebooks: Path
    font: bool = False  # serve the CJK font subset (data/fonts/) as a web font

    def catalog(self) -> Path:
        return SITE / "locale" / self.sphinx_language / "LC_MESSAGES" / f"{CATALOG}.po"

    def translate(self) -> Translate:
        """The site's own text in this language; English where the catalog has no entry (and
        for English, which has no catalog)."""
        path = self.catalog()
        table = translation.translations(translation.read_catalog(path)) if path.is_file() else {}
        return translation.translator(table)

    def chapters(self) -> list[Path]:
        return sorted(self.notebooks.glob("[0-9][0-9]*_*.ipynb"))  # chapters and deeper notebooks

    def pages(self) -> list[str]:
        """The pages this edition's build writes; none when it has no chapters yet."""
        if not self.chapters():
            return []
        return ["index", *(p.stem for p in self.chapters()), "glossary", *GENERATED]


EDITIONS = (
    Edition("en", "English", "en", "en", CHECKOUT.notebooks),
    Edition("zh", "中文", "zh-CN", "zh_CN", CHECKOUT.edition("zh"), font=True),
)


def site_notebook(nb: Notebook, name: str) -> Notebook:
    """A learner notebook as a page: without "Your progress" (no kernel keeps progress on a
    web page) and without nbval's marker lines; `LabError` for an explorer with no snapshot."""
    progress = {cell["id"] for cell in PROGRESS_CELLS}
    page = copy.deepcopy(nb)
    page["cells"] = [c for c in page["cells"] if c.get("id") not in progress]
    for n, cell in enumerate(page["cells"]):
        if cell["cell_type"] != "code":
            continue
        if "widget" in tags(cell) and not any(
                SNAPSHOT in "".join(o.get("data", {}).get("text/html", ""))
                for o in cell.get("outputs", [])):
            raise LabError("no_snapshot", N_("{name}: the widget cell {n} has no saved snapshot "
                                             "of its explorer; run `make notebooks` to save it"),
                           name=name, n=n)
        cell["source"] = "".join(line for line in source(cell).splitlines(keepends=True)
                                 if not line.lstrip().startswith("# NBVAL_"))
    return page


def page(path: Path) -> Notebook:
    """The page of the notebook at `path`; `LabError` for a file that is no valid notebook."""
    try:
        nb: Notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise LabError("not_nbformat", N_("{name} is not a notebook nbformat accepts: {reason}"),
                       name=path.name, reason=exc) from exc
    # The schema alone: nbformat.validate first "normalizes", and fails on odd shapes with
    # TypeError or KeyError.
    error = next(iter(SCHEMA.iter_errors(nb)), None)
    if error is not None:
        raise LabError("not_nbformat", N_("{name} is not a notebook nbformat accepts: {reason}"),
                       name=path.name, reason=error.message)
    return site_notebook(nb, path.name)


def myst_targets(glossary: str) -> str:
    """A translated glossary's anchors (`<a id="tool-call"></a>` before a translated heading,
    for JupyterLab and GitHub) as MyST targets `(tool-call)=`: Sphinx resolves the chapters'
    `glossary.md#tool-call` only to a heading's own anchor or to a target."""
    return re.sub(r'^<a id="([^"]+)"></a>$', r"(\1)=", glossary, flags=re.M)


def described(edition: Edition) -> dict[str, object]:
    """An edition as edition.json gives it to conf.py: its fields and its translated strings."""
    tr = edition.translate()
    return {**asdict(edition), "notebooks": None, "title": tr(TITLE), "switch": tr(SWITCH),
            "names": {key: tr(text) for key, text in NAMES.items()},
            "css": [FONT_CSS] if edition.font else []}


def stage(edition: Edition, editions: tuple[Edition, ...], where: Path) -> Path:
    """A complete Sphinx project for one edition: site/ with its index page translated, its
    pages, its glossary, its font when it serves one, and edition.json."""
    src = where / edition.code
    shutil.copytree(SITE, src, ignore=shutil.ignore_patterns("__pycache__", "locale"))
    index = src / "index.md"
    text = index.read_text(encoding="utf-8")
    if all(CHAPTER.match(p.name) for p in edition.chapters()):  # no deeper notebook yet
        text = re.sub(r"<!-- deeper -->.*?<!-- /deeper -->\n", "", text, flags=re.DOTALL)
    index.write_text(translation.translate_markdown(text, edition.translate()), encoding="utf-8")
    for path in edition.chapters():
        (src / path.name).write_text(notebook_text(page(path)), encoding="utf-8")
    glossary = edition.notebooks / "glossary.md"
    if not glossary.is_file():
        raise LabError("glossary_missing", N_("{glossary} is missing: every edition has its "
                                              "glossary"), glossary=glossary)
    (src / "glossary.md").write_text(myst_targets(glossary.read_text(encoding="utf-8")),
                                     encoding="utf-8")
    if edition.font:
        font = Path(fonts.font_path())
        (src / "_static" / "fonts").mkdir()
        for file in (font, font.with_name("OFL.txt")):  # the license goes with the font
            shutil.copy(file, src / "_static" / "fonts" / file.name)
    else:
        (src / "_static" / FONT_CSS).unlink()
    (src / "edition.json").write_text(json.dumps(
        {**described(edition), "editions": [{**described(e), "pages": e.pages()}
                                             for e in editions]},
        ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return src


def check_no_solutions(where: Path) -> None:
    leaks = find_leaks(where, solution_lines(solution_paths(CHECKOUT)))
    if leaks:
        raise LabError("site_leak", N_("the site would give away a solution: {leak}"),
                       leak=leaks[0])


def sphinx(src: Path, work: Path) -> Path:
    """One edition's HTML in work/html; any warning fails the build (-W), after all are shown.
    Beside it go the doctrees and myst-nb's copies of the notebooks (it writes them next to
    its output folder), which the site does not publish."""
    html = work / "html"
    done = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going",
                           "-q", "-d", str(work / "doctrees"), str(src), str(html)], check=False)
    if done.returncode:
        raise LabError("sphinx_failed", N_("sphinx-build failed for {edition} (its messages are "
                                           "above)"), edition=src.name)
    shutil.rmtree(html / "_sources", ignore_errors=True)  # empty: sources are not copied
    return html


def about() -> str:
    """What the course is: the paragraph under site/index.md's title, which the first page
    shows in every language (its translation is the index page's)."""
    return translation.units((SITE / "index.md").read_text(encoding="utf-8"))[1][0]


def inline(markdown: str) -> str:
    """One translated paragraph as HTML: escaped, code spans as <code>, its lines joined (by a
    space, but none between two Chinese characters)."""
    text = re.sub(r"(?<=[^\x00-\x7f])\n(?=[^\x00-\x7f])", "", markdown).replace("\n", " ")
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text, quote=False))


def landing(editions: tuple[Edition, ...]) -> str:
    """OUT/index.html, the site's first page: in every edition's language, what the course is
    and a link to that edition; no redirect, so a reader chooses. A Chinese edition's font
    stylesheet is linked from its own folder (its font URL is relative to the stylesheet)."""
    fonts = "".join(f'<link rel="stylesheet" href="{e.code}/_static/{FONT_CSS}">\n'
                    for e in editions if e.font)
    sections = []
    for e in editions:
        tr = e.translate()
        sections.append(f"""<section lang="{e.html_lang}">
<h1>{html.escape(tr(TITLE))}</h1>
<p>{inline(tr(about()))}</p>
<p class="read"><a href="{e.code}/index.html">{html.escape(tr(READ))}</a></p>
</section>""")
    body = "\n".join(sections)
    return f"""<!DOCTYPE html>
<html lang="{editions[0].html_lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(" / ".join(dict.fromkeys(e.translate()(TITLE) for e in editions)))}</title>
{fonts}<style>
body {{ font-family: var(--font-stack, system-ui, sans-serif); max-width: 42em; margin: 3em auto;
       padding: 0 1em; line-height: 1.6; }}
section + section {{ border-top: 1px solid #ccc; margin-top: 2em; }}
h1 {{ font-size: 1.5em; }}
.read a {{ font-size: 1.2em; }}
</style>
</head>
<body>
<main>
{body}
</main>
</body>
</html>
"""


def replaceable(out: Path) -> None:
    """`LabError` unless `out` is new, empty or a previous site: nothing else is ever removed."""
    if out.exists() and not (out.is_dir() and (not any(out.iterdir())
                                               or (out / MARKER).is_file())):
        raise LabError("not_a_site", N_("{out} exists and is not a built site: give a new "
                                        "folder"), out=out)


def build(out: Path, editions: tuple[Edition, ...] = EDITIONS) -> list[Edition]:
    """Build every edition that has chapters into `out`; return them, in order."""
    built = tuple(e for e in editions if e.pages())
    if not built:
        raise LabError("no_edition_built", N_("no edition has chapters to build: run `make "
                                              "notebooks` first"))
    replaceable(out)
    with tempfile.TemporaryDirectory(prefix="keel-site-") as tmp:
        where = Path(tmp)
        sources = [stage(e, editions, where / "src") for e in built]
        check_no_solutions(where / "src")
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        (out / MARKER).write_text("{}\n", encoding="utf-8")  # a failed build may be redone
        for edition, src in zip(built, sources, strict=True):
            shutil.move(sphinx(src, where / "work" / edition.code), out / edition.code)
    (out / "index.html").write_text(landing(built), encoding="utf-8")
    (out / MARKER).write_text(json.dumps({"editions": [e.code for e in built]}) + "\n",
                              encoding="utf-8")
    return list(built)


def template() -> object:
    """The site catalog's template: the units of site/index.md and `STRINGS`."""
    index = (SITE / "index.md").read_text(encoding="utf-8")
    return translation.template(CATALOG, [
        *((unit, "site/index.md", line) for unit, line in translation.units(index)),
        *((text, "scripts/site.py", 0) for text in STRINGS)])


def update_catalogs(editions: tuple[Edition, ...] = EDITIONS) -> dict[str, str]:
    """Merge the template into each translated edition's site catalog (new text empty, changed
    text fuzzy, as `make locale` does for the notebooks); locale -> created/updated/kept."""
    with tempfile.TemporaryDirectory(prefix="keel-site-pot-") as tmp:
        translation.write_catalog(template(), Path(tmp) / f"{CATALOG}.pot")
        return {e.sphinx_language: translation.update(Path(tmp), SITE / "locale",
                                                      e.sphinx_language)[CATALOG]
                for e in editions if e.code != "en"}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=CHECKOUT.build / "site",
                   help="the folder to write (default: build/site)")
    p.add_argument("--update-catalogs", action="store_true",
                   help="merge the site's English text into its catalogs instead of building")
    args = p.parse_args(argv)
    start = time.perf_counter()
    try:
        if args.update_catalogs:
            for locale, done in update_catalogs().items():
                print(f"site/locale/{locale}/LC_MESSAGES/{CATALOG}.po: {done}")
            return 0
        built = build(args.out)
    except LabError as exc:
        print(exc, file=sys.stderr)
        return 2
    size = sum(f.stat().st_size for f in args.out.rglob("*") if f.is_file())
    print(f"site: {', '.join(e.code for e in built)} in {args.out} "
          f"({size / 1e6:.1f} MB, {time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

