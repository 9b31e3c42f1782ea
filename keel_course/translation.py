"""The notebooks' text in another language: gettext catalogs of markdown units, and the
translated editions built from the English solutions with them.

A *unit* is what a translator translates at once, as its markdown source: a paragraph (also
inside a list item), a heading's text, a table cell, a `<details>` summary. Units are whole
sentences with their markup (links, code spans, emphasis), so the markup survives translation;
list markers, heading hashes, table pipes and indentation are not in a unit and are put back
around its translation. In a code cell, what speaks to the learner is a unit too: a comment's
text, and the text of a string literal that holds prose (a print label, a docstring, a stub's
message); the code around them, identifiers and data never are. In a fenced example of the
markdown (Python or shell), only its comments are units.

The catalogs are gettext `.po` files read and written with Babel: templates (`.pot`, one per
chapter, one for the glossary, one for the text the learner edition adds) are extracted into
build/gettext/, and `update` merges them into locale/<locale>/LC_MESSAGES/ as `msgmerge` and
`sphinx-intl update` do (new units empty, changed ones fuzzy), also keeping the previous msgid
of a fuzzy entry so a translator sees what changed. A unit whose entry is missing, empty or
fuzzy stays English in the translated edition.
"""

from __future__ import annotations

import ast
import copy
import io
import re
import tokenize
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keel_cli._cells import source
from keel_course.checkout import Checkout
from keel_course.editions import (
    PROGRESS_CELLS,
    STUB,
    Notebook,
    learner_edition,
    read_notebook,
    solution_paths,
)
from keel_lab._core.errors import LabError
from keel_lab._i18n import N_

Translate = Callable[[str], str]

# The first code cell of a translated chapter: the package speaks its language from there on.
LANGUAGE_CELL: dict[str, Any] = {
    "cell_type": "code", "execution_count": None, "id": "set-language", "metadata": {},
    "outputs": [],
}
_SUMMARY = re.compile(r"(<summary>)(.*?)(</summary>)")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_LINK_TARGET = re.compile(r"\]\(([^)\s]*)\)")
_TAG = re.compile(r"<[^>\n]+>")


@dataclass(frozen=True)
class Block:
    """Lines `first` to `last` (exclusive) of a markdown text holding `msgids`; `render` gives
    the lines that replace them, with each msgid translated."""

    first: int
    last: int
    msgids: tuple[str, ...]
    render: Callable[[Translate], list[str]]


def _parser() -> Any:
    from markdown_it import MarkdownIt  # imported here: only the build and its tests need it

    return MarkdownIt("commonmark").enable("table")


def translatable(text: str) -> bool:
    """Prose to translate: letters outside code spans, link targets and HTML tags."""
    rest = _TAG.sub(" ", _LINK_TARGET.sub("]", _CODE_SPAN.sub(" ", text)))
    return re.search(r"[^\W\d_]", rest) is not None


def _prose_block(lines: list[str], first: int, last: int, content: str,
                 one_line: bool) -> Block:
    """A paragraph or heading: its first line's prefix (list marker, hashes, indentation) stays,
    later lines keep the continuation indentation."""
    head, parts = lines[first], content.split("\n")
    prefix = _before(head, parts[0])
    if last - first > 1 and len(parts) > 1:
        indent = _before(lines[first + 1], parts[1])
    else:
        indent = re.sub(r"[^>\s]", " ", prefix)

    def render(tr: Translate) -> list[str]:
        if tr(content) == content:
            return lines[first:last]
        out = tr(content).strip()
        parts = [" ".join(out.split("\n"))] if one_line else out.split("\n")
        return [prefix + parts[0]] + [indent + p for p in parts[1:]]

    return Block(first, last, (content,), render)


def _before(line: str, text: str) -> str:
    """What precedes `text` on its line: a marker and indentation."""
    at = line.find(text) if text else -1
    return line[:at] if at >= 0 else line[:len(line) - len(line.lstrip(" >-*+#0123456789.)"))]


def _cells(row: str) -> list[tuple[int, int]]:
    """The spans of a table row's cell texts (stripped), split at unescaped pipes."""
    bounds = [m.start() for m in re.finditer(r"(?<!\\)\|", row)]
    if row.strip().startswith("|"):
        bounds = bounds[1:] if bounds else bounds
        start = row.index("|") + 1
    else:
        start = 0
    spans = []
    for end in [*bounds, len(row)]:
        cell = row[start:end]
        left = len(cell) - len(cell.lstrip())
        spans.append((start + left, start + len(cell.rstrip())))
        start = end + 1
    return [(a, b) for a, b in spans if b > a]


def _row_block(lines: list[str], n: int) -> Block:
    row = lines[n]
    spans = [(a, b) for a, b in _cells(row) if translatable(row[a:b])]

    def render(tr: Translate) -> list[str]:
        out = row
        for a, b in reversed(spans):
            out = out[:a] + " ".join(tr(row[a:b]).strip().split("\n")) + out[b:]
        return [out]

    return Block(n, n + 1, tuple(row[a:b] for a, b in spans), render)


def _summary_block(lines: list[str], n: int) -> Block:
    line = lines[n]

    def render(tr: Translate) -> list[str]:
        return [_SUMMARY.sub(lambda m: m[1] + tr(m[2]).strip() + m[3], line)]

    return Block(n, n + 1, tuple(m[2] for m in _SUMMARY.finditer(line)), render)


def blocks(text: str) -> list[Block]:
    """The translatable blocks of a markdown text, in order."""
    lines = text.split("\n")
    tokens = _parser().parse(text)
    out: list[Block] = []
    for n, tok in enumerate(tokens):
        if tok.type == "inline" and tokens[n - 1].type in ("paragraph_open", "heading_open"):
            first, last = tok.map
            heading = tokens[n - 1].type == "heading_open"
            if tok.content and not (heading and tokens[n - 1].markup in ("=", "-")):
                out.append(_prose_block(lines, first, last, tok.content, heading))
        elif tok.type == "tr_open":
            out.append(_row_block(lines, tok.map[0]))
        elif tok.type == "html_block":
            first, last = tok.map
            out.extend(_summary_block(lines, i) for i in range(first, last)
                       if _SUMMARY.search(lines[i]))
        elif tok.type == "fence" and tok.info.strip() in _COMMENTED:
            out.append(_fence_block(lines, *tok.map))
    return [b for b in out if b.msgids and any(translatable(m) for m in b.msgids)]


_COMMENTED = ("python", "py", "sh", "bash", "console")  # fences whose `# ...` is a comment
_SHELL_COMMENT = re.compile(r"(?:^|\s)#\s+(\S.*?)\s*$")


def _fence_block(lines: list[str], first: int, last: int) -> Block:
    """A fenced example's comments (its code stays as it is): one unit per comment."""
    found: list[tuple[int, int, int, str]] = []  # line, start, end, text
    for n in range(first + 1, last - 1):
        m = _SHELL_COMMENT.search(lines[n])
        if m and translatable(m[1]):
            found.append((n, m.start(1), m.end(1), m[1]))

    def render(tr: Translate) -> list[str]:
        out = lines[first:last]
        for n, start, end, text in found:
            out[n - first] = out[n - first][:start] + tr(text) + out[n - first][end:]
        return out

    return Block(first, last, tuple(text for *_, text in found), render)


def units(text: str) -> list[tuple[str, int]]:
    """Each translatable unit of a markdown text with its line (from 1)."""
    return [(m, b.first + 1) for b in blocks(text) for m in b.msgids if translatable(m)]


def translate_markdown(text: str, tr: Translate) -> str:
    """The text with every unit replaced by `tr(unit)`; everything else kept as it is."""
    lines = text.split("\n")
    for block in reversed(blocks(text)):
        lines[block.first:block.last] = block.render(
            lambda m: tr(m) if translatable(m) else m)
    return "\n".join(lines)


def uncovered(text: str) -> list[str]:
    """Lines with prose that no unit holds (outside code fences and tag-only HTML): text the
    extraction would miss. Empty for every chapter, or the extraction needs a new kind of unit."""
    lines = text.split("\n")
    covered = {i for b in blocks(text) for i in range(b.first, b.last)}
    for tok in _parser().parse(text):
        if tok.type in ("fence", "code_block", "html_block") and tok.map:
            covered.update(range(*tok.map))
        if tok.type == "table_open" and tok.map:
            covered.update(range(*tok.map))  # delimiter rows and code-only cells
    html_text = [i for tok in _parser().parse(text) if tok.type == "html_block"
                 for i in range(*tok.map)
                 if translatable(_SUMMARY.sub("", lines[i]))]
    return [lines[i] for i in range(len(lines))
            if (i not in covered or i in html_text) and translatable(lines[i])]


# --- notebooks ----------------------------------------------------------------------------


def _as_lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


# --- code cells ------------------------------------------------------------------------------

# Comments that are instructions to a tool, not to the learner: nbval's, nbgrader's, linters'.
_DIRECTIVE = re.compile(r"(NBVAL_|#* ?(BEGIN|END) (SOLUTION|HIDDEN)|noqa|type: |ruff: )")
_LITERAL = re.compile(r"([rRuUfF]{0,2})('{3}|\"{3}|'|\")(.*)\2\Z", re.S)
_PROSE = re.compile(r"[A-Za-z]{2,}[ ,;:']+[A-Za-z]{2,}"  # two words: prose, not an id or data
                    r"|\A[\s>*-]*[A-Za-z]{2,}:\s*\Z")  # or a print label: "ran:", "- result:"
_FIELD_LABEL = re.compile(r"\A[^A-Za-z]*: ")  # an f-string's "{name}: {value}": a Chinese colon
_FIELD = re.compile(r"\{[^{}]*\}")  # an f-string's replacement field
_DATA = re.compile(r'\s*(\{\s*"|\[)')  # a string holding JSON or a list: data


@dataclass(frozen=True)
class CodeUnit:
    """A unit of a code cell: `text`, which begins on line `line` (from 1), at characters
    `start` to `end` of the cell."""

    text: str
    line: int
    start: int
    end: int


def code_units(code: str) -> list[CodeUnit]:
    """The comments' texts and the prose string literals' texts of a cell, in order; none for
    a cell Python cannot tokenize (a magic, a learner's half-written line)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    starts = [0]
    for line in code.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    out = []
    for tok in tokens:
        row, col = tok.start
        at = starts[row - 1] + col
        if tok.type == tokenize.COMMENT:
            text = tok.string.lstrip("#").strip()
            if text and translatable(text) and not _DIRECTIVE.match(text):
                start = at + tok.string.index(text)
                out.append(CodeUnit(text, row, start, start + len(text)))
        elif tok.type == tokenize.STRING:
            literal = _LITERAL.match(tok.string)
            if literal and "b" not in literal[1].lower():
                text = literal[3]
                fields = "f" in literal[1].lower() and _FIELD.search(text) is not None
                words = _FIELD.sub(" ", text) if fields else text
                label = fields and _FIELD_LABEL.match(_FIELD.sub("", text)) is not None
                if (_PROSE.search(words) or label) and not _DATA.match(text):
                    start = at + len(literal[1]) + len(literal[2])
                    out.append(CodeUnit(text, row, start, start + len(text)))
    return out


def translate_code(code: str, tr: Translate, where: str = "a code cell") -> str:
    """`code` with its units translated; `LabError` naming the unit when a translation breaks
    the cell (a quote that ends its string, an f-string field lost)."""
    out = code
    for unit in reversed(code_units(code)):
        new = tr(unit.text)
        if new == unit.text:
            continue
        if sorted(_FIELD.findall(unit.text)) != sorted(_FIELD.findall(new)):
            raise LabError("translation_changes_fields", N_("{where}: the translation of "
                                                           "{text!r} changes its {{fields}}"),
                           where=where, text=unit.text)
        out = out[:unit.start] + new + out[unit.end:]
    try:
        ast.parse(out)
    except SyntaxError as exc:
        ast.parse(code)  # the English itself does not parse: not the translation's fault
        raise LabError("translation_breaks_code", N_("{where}: a translation breaks the code "
                                                     "at line {line}: {text}"),
                       where=where, line=exc.lineno, text=(exc.text or "").strip()) from None
    return out


def notebook_units(nb: Notebook) -> list[tuple[str, int, int]]:
    """(unit, cell position from 1 as JupyterLab counts, line in the cell) of the markdown and
    of the code cells."""
    out = []
    for n, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "markdown":
            out += [(m, n + 1, line) for m, line in units(source(cell))]
        elif cell["cell_type"] == "code":
            out += [(u.text, n + 1, u.line) for u in code_units(source(cell))]
    return out


def translate_cells(nb: Notebook, tr: Translate) -> Notebook:
    """A copy with every markdown cell and the units of every code cell translated; outputs
    untouched."""
    out = copy.deepcopy(nb)
    for n, cell in enumerate(out["cells"]):
        if cell["cell_type"] == "markdown":
            cell["source"] = _as_lines(translate_markdown(source(cell), tr))
        elif cell["cell_type"] == "code":
            cell["source"] = _as_lines(translate_code(source(cell), tr, f"cell {n + 1}"))
    return out


def translated_solution(nb: Notebook, tr: Translate, language: str) -> Notebook:
    """A chapter's solution in `language`: markdown translated, and a first code cell that
    sets the package's language (checks, hints and plots), before the English first one."""
    out = translate_cells(nb, tr)
    cell = {**copy.deepcopy(LANGUAGE_CELL), "source": _as_lines(
        f'from keel_lab import set_language\n\nset_language("{language}")')}
    cells = out["cells"]
    at = next((n for n, c in enumerate(cells) if c["cell_type"] == "code"), len(cells))
    cells.insert(at, cell)
    return out


def reuse_outputs(new: Notebook, saved: Notebook, name: str) -> Notebook:
    """`new` with the outputs `saved` has for the same code: a retranslation, or a new learner
    edition, that executes nothing. `LabError` when a code cell changed since `saved` was
    executed."""
    old = {c.get("id"): c for c in saved["cells"] if c["cell_type"] == "code"}
    out = copy.deepcopy(new)
    for cell in out["cells"]:
        if cell["cell_type"] != "code":
            continue
        was = old.get(cell.get("id"))
        if was is None or source(was) != source(cell):
            raise LabError("code_cell_changed", N_("{name}: code cell {cell} changed since the "
                                                   "notebook was last executed; build it "
                                                   "without --editions-only"),
                           name=name, cell=cell.get("id"))
        cell["outputs"], cell["execution_count"] = was["outputs"], was["execution_count"]
    return out


# --- the glossary --------------------------------------------------------------------------


def slug(heading: str) -> str:
    """A heading's anchor as JupyterLab, GitHub and MyST make it from English text."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def translate_glossary(text: str, tr: Translate) -> str:
    """The glossary translated; each translated entry heading gets an explicit anchor with its
    English slug (`<a id="tool-call"></a>`), so links such as `glossary.md#tool-call` land."""
    lines = text.split("\n")
    for block in reversed(blocks(text)):
        new = block.render(lambda m: tr(m) if translatable(m) else m)
        head = lines[block.first]
        if head.startswith("### ") and new != lines[block.first:block.last]:
            new = [f'<a id="{slug(head[4:])}"></a>', "", *new]
        lines[block.first:block.last] = new
    return "\n".join(lines)


# --- catalogs --------------------------------------------------------------------------------


def template(domain: str, entries: Iterable[tuple[str, str, int]]) -> Any:
    """A Babel catalog (a .pot) of (unit, file, line) entries, in the order given."""
    from babel.messages.catalog import Catalog

    cat = Catalog(domain=domain, project="keel-lab", version="1",
                  copyright_holder="keel-lab authors", language_team="keel-lab translators",
                  charset="utf-8", fuzzy=False)
    for msgid, where, line in entries:
        if msgid in cat:
            cat[msgid].locations.append((where, line))
        else:
            cat.add(msgid, locations=[(where, line)])
    return cat


def write_catalog(cat: Any, path: Path) -> None:
    """A catalog as a .po file: one file line per line of text, and each fuzzy entry's previous
    msgid in gettext's `#| msgid` lines (Babel writes multi-line ones as a wrapped comment)."""
    from io import BytesIO

    from babel.messages.pofile import normalize, write_po

    out = BytesIO()
    write_po(out, cat, width=0, sort_output=False)
    text = out.getvalue().decode("utf-8")
    for m in cat:
        if m.id and m.fuzzy and m.previous_id:
            msgid = f"\nmsgid {normalize(m.id, width=0)}\nmsgstr"
            before = "".join(f"#| {line}\n" for line in
                             f"msgid {normalize(m.previous_id[0], width=0)}".split("\n"))
            text = text.replace(msgid, "\n" + before + msgid[1:], 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def read_catalog(path: Path, locale: str | None = None) -> Any:
    """A .po or .pot file as a Babel catalog, with the previous msgids of its fuzzy entries;
    `LabError` for a file that is missing or not a catalog."""
    from babel.messages.pofile import read_po

    try:
        with path.open("rb") as f:
            cat = read_po(f, locale=locale, abort_invalid=True)
    except OSError as exc:
        raise LabError("catalog_unreadable", N_("{path}: cannot read the catalog ({reason})"),
                       path=path, reason=exc.strerror or exc) from exc
    except Exception as exc:  # Babel's PoFileError and whatever a damaged file raises
        raise LabError("not_a_catalog", N_("{path}: not a readable gettext catalog ({reason})"),
                       path=path, reason=exc) from exc
    for m in cat:
        _previous(m)
    return cat


def _previous(message: Any) -> None:
    """Babel reads `#| msgid` lines as user comments: make them the previous msgid again."""
    from babel.messages.pofile import unescape

    lines = [c[1:].strip() for c in message.user_comments if c.startswith("|")]
    if not lines:
        return
    message.user_comments = [c for c in message.user_comments if not c.startswith("|")]
    quoted = [line.removeprefix("msgid").strip() for line in lines
              if not line.startswith("msgid_plural")]
    try:
        message.previous_id = ["".join(unescape(q) for q in quoted if q)]
    except Exception:  # a hand-edited line that is no quoted string: keep no previous msgid
        message.previous_id = []


def _entries(cat: Any) -> list[tuple[Any, ...]]:
    return [(m.id, m.string, sorted(m.flags), m.previous_id, m.locations) for m in cat
            if m.id] + [("obsolete", m.id, m.string) for m in cat.obsolete.values()]


def update(pot_dir: Path, locale_dir: Path, locale: str) -> dict[str, str]:
    """Merge each template of `pot_dir` into `locale_dir/<locale>/LC_MESSAGES/<name>.po`:
    new units empty, changed ones fuzzy with their previous msgid, removed ones obsolete.
    A catalog is rewritten only when an entry changed. Returns name -> created/updated/kept."""
    from babel.messages.catalog import Catalog

    status = {}
    for pot in sorted(pot_dir.glob("*.pot")):
        po = locale_dir / locale / "LC_MESSAGES" / f"{pot.stem}.po"
        fresh = read_catalog(pot)
        if not po.exists():
            cat = Catalog(locale=locale, domain=pot.stem, project="keel-lab", version="1",
                          copyright_holder="keel-lab authors",
                          language_team="keel-lab translators", fuzzy=False)
            cat.update(fresh, update_header_comment=False, update_creation_date=False)
            write_catalog(cat, po)
            status[pot.stem] = "created"
            continue
        cat = read_catalog(po, locale)
        before = _entries(cat)
        previous = {m.id: m.previous_id for m in cat if m.id and m.fuzzy and m.previous_id}
        cat.update(fresh, update_header_comment=False, update_creation_date=False)
        for m in cat:  # Babel forgets the previous msgid of an entry that is still fuzzy
            if m.fuzzy and not m.previous_id and m.id in previous:
                m.previous_id = previous[m.id]
        if _entries(cat) == before:
            status[pot.stem] = "kept"
        else:
            write_catalog(cat, po)
            status[pot.stem] = "updated"
    return status


def translations(cat: Any) -> dict[str, str]:
    """English -> translation of every entry translated and not fuzzy."""
    return {m.id: m.string for m in cat if isinstance(m.id, str) and m.id
            and isinstance(m.string, str) and m.string.strip() and not m.fuzzy}


def translator(table: dict[str, str]) -> Translate:
    return lambda msgid: table.get(msgid, msgid)


@dataclass(frozen=True)
class Problem:
    """An entry that keeps its unit English (or breaks its markup) in a catalog."""

    catalog: str
    line: int
    msgid: str
    what: str

    def __str__(self) -> str:
        first = self.msgid.split("\n")[0]
        return f"{self.catalog}:{self.line}: {self.what}: {first[:70]!r}"


def markup_changes(msgid: str, msgstr: str) -> list[str]:
    """What a translation changed that must stay as it is: code spans, link targets,
    HTML tags, and table pipes."""
    out = []
    for what, pattern in (("code span", _CODE_SPAN), ("link target", _LINK_TARGET),
                          ("HTML tag", _TAG)):
        gone = sorted(set(_matches(pattern, msgid)) - set(_matches(pattern, msgstr)))
        if gone:
            out.append(f"{what} {gone[0]} is missing")
    if "|" in _CODE_SPAN.sub("", msgstr.replace("\\|", "")):
        out.append("an unescaped | would split the table cell")
    return out


def _matches(pattern: re.Pattern[str], text: str) -> list[str]:
    return [m.group(0) for m in pattern.finditer(text)]


def problems(path: Path) -> list[Problem]:
    """Every entry of a catalog that is missing, empty or fuzzy, or that breaks its unit's
    markup, with the catalog's line."""
    out = []
    for m in read_catalog(path):
        if not m.id:
            continue
        if not m.string or not str(m.string).strip():
            out.append(Problem(path.name, m.lineno, m.id, "not translated"))
        elif m.fuzzy:
            out.append(Problem(path.name, m.lineno, m.id, "fuzzy (its English changed)"))
        else:
            out.extend(Problem(path.name, m.lineno, m.id, change)
                       for change in markup_changes(m.id, m.string))
    return out


def counts(path: Path) -> tuple[int, int]:
    """(translated and not fuzzy, all) entries of a catalog."""
    cat = read_catalog(path)
    return len(translations(cat)), sum(1 for m in cat if m.id)


def iter_units(nb: Notebook, where: str) -> Iterator[tuple[str, str, int]]:
    """A notebook's units as template entries: (unit, file, cell position)."""
    for msgid, cell, _line in notebook_units(nb):
        yield msgid, where, cell


# --- the course's catalogs and editions ------------------------------------------------------
# A checkout's catalogs are locale/<locale>/LC_MESSAGES/<name>.po (committed, `Checkout.locale`);
# scripts/i18n.py extracts the templates into build/gettext/.

LOCALES = {"zh": "zh_CN"}  # an edition's language -> its catalogs' locale
GLOSSARY = "glossary"
EDITIONS = "editions"  # the text the learner edition adds ("Your progress")


def course_templates(checkout: Checkout, chapters: Iterable[Path]) -> dict[str, Any]:
    """name -> template: one per chapter, the glossary, and the learner edition's own text."""
    out = {p.stem: template(p.stem, iter_units(read_notebook(p), f"notebooks/solutions/{p.name}"))
           for p in chapters}
    glossary = (checkout.notebooks / "glossary.md").read_text(encoding="utf-8")
    out[GLOSSARY] = template(GLOSSARY, ((m, "notebooks/glossary.md", line)
                                        for m, line in units(glossary)))
    stub = {"cell_type": "code", "source": STUB}  # the learner edition's stubs say it too
    out[EDITIONS] = template(EDITIONS, iter_units({"cells": [*PROGRESS_CELLS, stub]},
                                                  "keel_lab/course/editions.py"))
    return out


def extract(checkout: Checkout, pot_dir: Path) -> dict[str, int]:
    """Write every template of the checkout into `pot_dir` (and remove templates of no current
    source); name -> number of msgids."""
    templates = course_templates(checkout, solution_paths(checkout))
    for old in pot_dir.glob("*.pot"):
        if old.stem not in templates:
            old.unlink()
    for name, cat in templates.items():
        write_catalog(cat, pot_dir / f"{name}.pot")
    return {name: sum(1 for m in cat if m.id) for name, cat in templates.items()}


def catalog_path(language: str, name: str, locale_dir: Path) -> Path:
    if language not in LOCALES:
        raise LabError("unknown_catalog_language", N_("no catalogs for language {language!r}; "
                                                      "translated editions: {languages}"),
                       language=language, languages=", ".join(LOCALES))
    return locale_dir / LOCALES[language] / "LC_MESSAGES" / f"{name}.po"


def load(language: str, name: str, locale_dir: Path) -> Translate:
    """The translation of `name`'s units; English for all of them when it has no catalog."""
    path = catalog_path(language, name, locale_dir)
    return translator(translations(read_catalog(path)) if path.exists() else {})


def edition(checkout: Checkout, language: str) -> Path:
    """Where a translated edition lives: notebooks/<language>/ (its solutions in solutions/)."""
    catalog_path(language, GLOSSARY, checkout.locale)
    return checkout.edition(language)


def chapter(nb: Notebook, name: str, language: str, locale_dir: Path) -> Notebook:
    """The solution notebook of chapter `name` (e.g. "04_streaming") in `language`."""
    return translated_solution(nb, load(language, name, locale_dir), language)


def learner(solution: Notebook, language: str, locale_dir: Path) -> Notebook:
    """The learner edition of a translated solution, the cells it adds translated too."""
    return translate_cells(learner_edition(solution), load(language, EDITIONS, locale_dir))


def glossary(checkout: Checkout, language: str) -> str:
    text = (checkout.notebooks / "glossary.md").read_text(encoding="utf-8")
    return translate_glossary(text, load(language, GLOSSARY, checkout.locale))
