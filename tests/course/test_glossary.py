"""The glossary convention: every term has its entry, every link lands, and every chapter links
(or defines) a term no later than the cell where its prose first uses it. A deeper notebook
(`07a_...`) is read after the chapter it extends, whose links its reader has met: its links must
land, but it does not link every term again. Every glossary link of every notebook, in both
editions, lands on an entry of its edition's glossary."""

import json
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.lab_wide

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
GLOSSARY = NOTEBOOKS / "glossary.md"
SOLUTIONS = sorted((NOTEBOOKS / "solutions").glob("*.ipynb"))
# Each edition's glossary and its notebooks, learner and solution (the Chinese one is generated:
# its entries carry their English slugs as explicit anchors).
EDITIONS = {NOTEBOOKS / "glossary.md": [NOTEBOOKS, NOTEBOOKS / "solutions"],
            NOTEBOOKS / "zh" / "glossary.md": [NOTEBOOKS / "zh", NOTEBOOKS / "zh" / "solutions"]}
EDITION_NOTEBOOKS = [(glossary, path) for glossary, folders in EDITIONS.items()
                     for folder in folders for path in sorted(folder.glob("*.ipynb"))]
CHAPTERS = [p for p in SOLUTIONS if re.match(r"0[1-9]_", p.name)]

# The shared convention: the words a chapter may use for a term, and the term's slug.
TERMS = {
    "turn": ("turn",), "step": ("step",), "tool-call": ("tool call",),
    "tool-message": ("tool message",), "history": ("history",), "call-id": ("call id",),
    "index": ("index",), "delta": ("delta", "fragment"), "chunk": ("chunk",),
    "stream": ("stream",), "wire-format": ("wire format",), "provider": ("provider",),
    "finish-reason": ("finish reason",), "assembler": ("assembler",),
    "executable": ("executable",), "executor": ("executor",), "batch": ("batch",),
    "concurrency-safe": ("concurrency-safe",), "side-effect": ("side effect",),
    "idempotent": ("idempotent",), "at-least-once": ("at-least-once",),
    "exactly-once": ("exactly-once",), "lock": ("lock",), "business-error": ("business error",),
    "approval": ("approval",), "partial-success": ("partial success",), "status": ("status",),
    "outcome": ("outcome",), "error-code": ("error code",), "pairing": ("pairing",),
    "coroutine": ("coroutine",), "task": ("task",), "gather": ("gather",),
    "as_completed": ("as_completed",), "virtual-clock": ("virtual clock",),
    "policy": ("policy",), "quirk": ("quirk",), "sdk": ("SDK",),
    "json-schema": ("JSON Schema",),
}
# Entries that settle a word rather than teach a concept: every chapter says "the lab", and the
# Chinese edition needs its one word for each (本课程, never 本实验; 回放) - no link is required.
WORDS = {"the-lab": ("the lab",), "replay": ("replay",)}
# Terms of art the chapters use, often defined in place (chapter 1 defines run and runner): each
# has an entry, but a word match cannot require a link at first use, as each is also an everyday
# word ("run the cell", "a hook", "trace a bug") or is named before its chapter teaches it.
TERMS_OF_ART = {
    "run": ("run",), "runner": ("runner",), "trace": ("trace",), "accumulator": ("accumulator",),
    "server-tool": ("server tool",), "idle-timeout": ("idle timeout",),
    "fail-fast": ("fail-fast",), "event-store": ("event store",), "hook": ("hook",),
    "mismatch": ("mismatch",), "seed": ("seed",),
}
# Defined where chapter 1 first uses them, with a link to the entry.
CHAPTER_1_DEFINES = ("run", "runner")
LINK = re.compile(r"\]\(glossary\.md#([^)\s]*)\)")


def slug(heading: str) -> str:
    """JupyterLab's heading id, as the convention states it: lowercase, spaces to hyphens,
    punctuation other than hyphens and underscores dropped."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def headings(glossary: Path = GLOSSARY) -> list[str]:
    return re.findall(r"^###\s+(.+?)\s*$", glossary.read_text(encoding="utf-8"), flags=re.M)


def anchors(glossary: Path) -> set[str]:
    """The targets a link into this glossary can land on: its headings' ids and its explicit
    anchors (a translated entry's `<a id="tool-call"></a>`)."""
    explicit = re.findall(r'^<a id="([^"]+)"></a>$', glossary.read_text(encoding="utf-8"),
                          flags=re.M)
    return {slug(h) for h in headings(glossary)} | set(explicit)


def markdown_cells(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) if c["cell_type"] == "markdown" else ""
            for c in nb["cells"]]


def prose(cell: str) -> str:
    """The words a reader meets as prose: no fenced code, code spans, headings or link targets."""
    text = re.sub(r"```.*?```", " ", cell, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"^[ \t]*#.*$", " ", text, flags=re.M)
    return re.sub(r"\]\([^)]*\)", "]", text)


def uses(text: str, words: tuple[str, ...]) -> bool:
    """A whole-word use of the term, singular or plural, any case."""
    return any(re.search(rf"(?<![\w-]){re.escape(w)}(?:s|es)?(?![\w-])", text, flags=re.I)
               for w in words)


def unlinked_first_uses(cells: list[str],
                        terms: dict[str, tuple[str, ...]] = TERMS) -> list[str]:
    """Each term whose first use in prose comes before the first cell that links it."""
    late = []
    for term_slug, words in terms.items():
        first_use = next((i for i, c in enumerate(cells) if uses(prose(c), words)), None)
        if first_use is None:
            continue
        first_link = next((i for i, c in enumerate(cells) if term_slug in LINK.findall(c)),
                          None)
        if first_link is None or first_link > first_use:
            late.append(f"{term_slug} (first used in cell {first_use}, "
                        f"linked {'never' if first_link is None else f'in cell {first_link}'})")
    return late


def test_slugs_follow_jupyterlab_heading_ids():
    assert slug("tool call") == "tool-call"
    assert slug("JSON Schema") == "json-schema"
    assert slug("as_completed") == "as_completed"
    assert slug("concurrency-safe") == "concurrency-safe"
    assert slug("SDK?") == "sdk"


def test_every_term_has_one_entry_and_every_entry_is_a_term():
    found = [slug(h) for h in headings()]
    assert sorted(found) == sorted({**TERMS, **WORDS, **TERMS_OF_ART}), \
        "one ### heading per convention term"
    assert len(found) == len(set(found))
    assert not re.search(r"^##\s", GLOSSARY.read_text(encoding="utf-8"), flags=re.M), \
        "terms are ### headings; no other sections"


@pytest.mark.parametrize("glossary", EDITIONS, ids=lambda p: p.parent.name)
def test_glossary_cross_links_land(glossary):
    targets = re.findall(r"\]\(#([^)]*)\)", glossary.read_text(encoding="utf-8"))
    assert targets, "related terms are cross-linked"
    assert set(targets) <= anchors(glossary), sorted(set(targets) - anchors(glossary))


def test_the_chinese_glossary_has_every_entry():
    assert anchors(GLOSSARY) <= anchors(NOTEBOOKS / "zh" / "glossary.md")


@pytest.mark.parametrize(("glossary", "path"), EDITION_NOTEBOOKS,
                         ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_glossary_links_in_notebooks_land(glossary, path):
    links = {s for cell in markdown_cells(path) for s in LINK.findall(cell)}
    assert links <= anchors(glossary), sorted(links - anchors(glossary))


def test_every_notebook_of_both_editions_is_checked():
    names = {p.name for p in SOLUTIONS}
    for folders in EDITIONS.values():
        for folder in folders:
            assert {p.name for p in folder.glob("*.ipynb")} == names, folder


@pytest.mark.parametrize("term", TERMS_OF_ART)
def test_each_term_of_art_is_used_in_a_chapter(term):
    """The list stays true: a term of art no notebook uses any more loses its place."""
    assert any(uses(prose(cell), TERMS_OF_ART[term])
               for path in SOLUTIONS for cell in markdown_cells(path))


def test_chapter_1_links_run_and_runner():
    cells = markdown_cells(NOTEBOOKS / "solutions" / "01_history.ipynb")
    linked = {s for cell in cells for s in LINK.findall(cell)}
    assert set(CHAPTER_1_DEFINES) <= linked
    assert unlinked_first_uses(cells, {"runner": TERMS_OF_ART["runner"]}) == []


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_each_term_is_linked_at_its_first_use(path):
    assert unlinked_first_uses(markdown_cells(path)) == []


def test_first_use_rule_reads_prose_only():
    cells = ["# A turn heading\nThe `executor` in code.",
             "Each [turn](glossary.md#turn) is one response.",
             "Two turns, one executor."]
    assert unlinked_first_uses(cells) == ["executor (first used in cell 2, linked never)"]
    assert unlinked_first_uses(["Fragments arrive.", "[delta](glossary.md#delta)"]) == [
        "delta (first used in cell 0, linked in cell 1)"]
    assert uses("Tool Calls", ("tool call",))
    assert uses("Batches run", ("batch",)) and not uses("batching", ("batch",))
