# ruff: noqa: RUF001 - Chinese text takes Chinese punctuation
"""The notebooks' translation: units, catalogs, fuzzy fallback, and the Chinese edition in step
with the English solutions and the catalogs.

`test_every_unit_is_translated` fails, per catalog, until the translators have translated every
entry: it names the catalog, the line and the msgid of each entry still to do.
"""

from __future__ import annotations

import copy
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel_cli._cells import source
from keel_course import translation as t
from keel_course.checkout import Checkout
from keel_course.editions import learner_edition, read_notebook, solution_paths
from keel_lab._core.errors import LabError

pytestmark = pytest.mark.lab_wide

CHECKOUT = Checkout.at(Path(__file__).resolve().parents[2])
LOCALE = CHECKOUT.locale
CHAPTERS = solution_paths(CHECKOUT)
NAMES = [p.stem for p in CHAPTERS] + [t.GLOSSARY, t.EDITIONS]
ZH = CHECKOUT.edition("zh")
GLOSSARY_TEXT = (CHECKOUT.notebooks / "glossary.md").read_text(encoding="utf-8")

SAMPLE = """## Streaming `index`

A paragraph with a [link](glossary.md#turn)
and a second line.

- first item
  continues here
- second `item`

| column | why |
|---|---|
| `x` | a reason \\| with a pipe |
| `1` | `2` |

<details><summary>Show an answer</summary>

The answer.

</details>

```python
print("code is never a unit")
```
"""


def marked(msgid: str) -> str:
    return f"<<{msgid}>>"


def test_units_are_whole_blocks_with_their_markup():
    assert t.units(SAMPLE) == [
        ("Streaming `index`", 1),
        ("A paragraph with a [link](glossary.md#turn)\nand a second line.", 3),
        ("first item\ncontinues here", 6),
        ("second `item`", 8),
        ("column", 10), ("why", 10),
        ("a reason \\| with a pipe", 12),
        ("Show an answer", 15),
        ("The answer.", 17),
    ]


def test_translation_keeps_markers_indentation_pipes_and_code():
    out = t.translate_markdown(SAMPLE, marked)
    assert "## <<Streaming `index`>>\n" in out
    assert "<<A paragraph with a [link](glossary.md#turn)\nand a second line.>>" in out
    assert "- <<first item\n  continues here>>\n- <<second `item`>>" in out
    assert "| <<column>> | <<why>> |\n|---|---|\n| `x` | <<a reason \\| with a pipe>> |" in out
    assert "| `1` | `2` |" in out
    assert "<details><summary><<Show an answer>></summary>" in out
    assert 'print("code is never a unit")' in out
    assert t.translate_markdown(SAMPLE, lambda m: m) == SAMPLE


def test_a_heading_stays_one_line_and_continuations_keep_their_indent():
    text = "### A term\n\n- item\n"
    out = t.translate_markdown(text, lambda m: {"A term": "一个\n术语", "item": "一\n二"}[m])
    assert out == "### 一个 术语\n\n- 一\n  二\n"


@pytest.mark.parametrize("path", [*CHAPTERS, CHECKOUT.notebooks / "glossary.md"],
                         ids=lambda p: p.name)
def test_every_line_of_prose_is_in_a_unit(path):
    """Nothing the chapter says is left out of its catalog (a new kind of markup would be)."""
    texts = ([source(c) for c in read_notebook(path)["cells"] if c["cell_type"] == "markdown"]
             if path.suffix == ".ipynb" else [path.read_text(encoding="utf-8")])
    for text in texts:
        assert t.uncovered(text) == []
        assert t.translate_markdown(text, lambda m: m) == text


def test_uncovered_names_prose_no_unit_holds():
    assert t.uncovered("Title\n=====\n") == ["Title"]  # a setext heading is not a unit
    assert t.uncovered("<div>\nraw prose\n</div>\n") == ["raw prose"]
    assert t.uncovered(SAMPLE) == []


def test_translatable_means_letters_outside_code_links_and_tags():
    assert t.translatable("a `code` span")
    assert not t.translatable("`call.id`")
    assert not t.translatable("[`x`](glossary.md#turn)")
    assert not t.translatable("<br/> 42 - 7")
    assert t.translatable("工具调用")


def test_a_solution_in_another_language_sets_it_in_its_first_code_cell():
    nb = read_notebook(CHAPTERS[0])
    zh = t.translated_solution(nb, marked, "zh")
    first = next(n for n, c in enumerate(nb["cells"]) if c["cell_type"] == "code")
    assert zh["cells"][first]["id"] == "set-language"
    assert source(zh["cells"][first]).endswith('set_language("zh")')
    assert zh["cells"][:first] + zh["cells"][first + 1:] == t.translate_cells(nb, marked)["cells"]
    code = [c for c in zh["cells"] if c["cell_type"] == "code"][1:]
    english = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert [c["outputs"] for c in code] == [c["outputs"] for c in english]
    assert [t.translate_code(source(c), lambda m: m) for c in english] == \
        [source(c) for c in english]  # an identity translation changes no code
    assert source(zh["cells"][0]).startswith("# <<")


CELL = '''x = 1  # your letter, A to F
print("protocol form:", y)  # NBVAL_IGNORE_OUTPUT
### BEGIN SOLUTION
def f(n):
    """One ToolMessage per call, successes and
    failures alike."""
    print(f"{n} events; cancelled after {n - 1}")
    return '{"incident_id": "INC-1 is open"}', "call_1", "c0 only", b"raw bytes here"
### END SOLUTION
'''


def test_a_code_cell_units_are_its_comments_and_prose_strings():
    assert [u.text for u in t.code_units(CELL)] == [
        "your letter, A to F", "protocol form:",
        "One ToolMessage per call, successes and\n    failures alike.",
        "{n} events; cancelled after {n - 1}"]
    assert t.code_units("%timeit f(\n") == []  # no Python: nothing to translate


def test_a_fenced_examples_comments_are_units_and_its_code_stays():
    text = ("```python\npairs = zip(a, b)  # the i-th call gets it\nx = \"#  no comment\"\n```\n\n"
            "```bash\nkeel-lab assemble s.sse   # calls, diagnostics; exit 1\n```\n\n"
            "```json\n{\"a\": \"# not one either\"}\n```\n")
    assert [m for m, _line in t.units(text)] == ["the i-th call gets it",
                                                 "calls, diagnostics; exit 1"]
    out = t.translate_markdown(text, lambda m: f"<<{m}>>")
    assert "pairs = zip(a, b)  # <<the i-th call gets it>>\n" in out
    assert "keel-lab assemble s.sse   # <<calls, diagnostics; exit 1>>\n" in out
    assert 'x = "#  no comment"' in out and '{"a": "# not one either"}' in out


def test_a_code_cell_translation_keeps_the_code_and_refuses_what_breaks_it():
    zh = {"your letter, A to F": "你的字母，A 到 F", "protocol form:": "协议形式：",
          "{n} events; cancelled after {n - 1}": "{n} 个事件；在第 {n - 1} 个后取消"}
    out = t.translate_code(CELL, lambda m: zh.get(m, m))
    assert 'x = 1  # 你的字母，A 到 F\nprint("协议形式：", y)  # NBVAL_IGNORE_OUTPUT\n' in out
    assert 'print(f"{n} 个事件；在第 {n - 1} 个后取消")' in out and "### BEGIN SOLUTION" in out
    with pytest.raises(LabError, match=r"^cell 3: a translation breaks the code at line 2"):
        t.translate_code(CELL, lambda m: '协议"形式' if m == "protocol form:" else m, "cell 3")
    with pytest.raises(LabError, match=r"changes its \{fields\}"):
        t.translate_code(CELL, lambda m: "{n} 个事件" if m.startswith("{n}") else m)


def test_retranslation_reuses_outputs_and_refuses_changed_code():
    saved = t.translated_solution(read_notebook(CHAPTERS[0]), marked, "zh")
    nb = copy.deepcopy(saved)  # the markdown retranslated, the code as it was executed
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = ["# <<retranslated>>"]
    code = next(c for c in saved["cells"] if c["cell_type"] == "code" and c["id"] != "set-language")
    code["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "kept\n"}]
    again = t.reuse_outputs(nb, saved, "01_history.ipynb")
    assert any(c.get("outputs") == code["outputs"] for c in again["cells"])
    assert source(again["cells"][0]).startswith("# <<")
    code["source"] = "print('changed')"
    with pytest.raises(LabError, match=r"01_history.ipynb: code cell .* changed"):
        t.reuse_outputs(nb, saved, "01_history.ipynb")


def test_glossary_anchors_survive_translated_headings():
    out = t.translate_glossary(GLOSSARY_TEXT, lambda m: "轮次" if m == "turn" else m)
    assert '<a id="turn"></a>\n\n### 轮次\n' in out
    assert '<a id="tool-call"></a>' not in out  # an English heading keeps its own anchor
    assert t.slug("as_completed") == "as_completed" and t.slug("JSON Schema") == "json-schema"


def translated_copy(tmp_path: Path) -> Path:
    """The committed catalogs in tmp_path/locale, with every 04_streaming entry translated."""
    shutil.copytree(LOCALE, tmp_path / "locale")
    po = t.catalog_path("zh", "04_streaming", tmp_path / "locale")
    cat = t.read_catalog(po, "zh_CN")
    for m in cat:
        if m.id:
            m.string = "中文 " + m.id
    t.write_catalog(cat, po)
    return po


def test_a_changed_english_paragraph_turns_fuzzy_and_falls_back_to_english(tmp_path):
    po = translated_copy(tmp_path)
    nb = read_notebook(CHECKOUT.solutions / "04_streaming.ipynb")
    old = t.units(source(nb["cells"][0]))[1][0]
    new = "Indeed, " + old
    nb["cells"][0]["source"] = source(nb["cells"][0]).replace(old, new)
    pots = tmp_path / "gettext"
    t.write_catalog(t.template("04_streaming", t.iter_units(nb, "04_streaming.ipynb")),
                    pots / "04_streaming.pot")

    assert t.update(pots, tmp_path / "locale", "zh_CN") == {"04_streaming": "updated"}
    entry = t.read_catalog(po)[new]
    assert entry.fuzzy and entry.previous_id == [old] and entry.string == "中文 " + old
    written = po.read_text(encoding="utf-8")
    assert f'#, fuzzy\n#| msgid ""\n#| "{old.splitlines()[0]}\\n"\n' in written  # gettext's form
    t.write_catalog(t.read_catalog(po), po)
    assert po.read_text(encoding="utf-8") == written  # read and written back unchanged
    found = [p for p in t.problems(po) if p.msgid == new]
    assert [p.what for p in found] == ["fuzzy (its English changed)"]
    assert str(found[0]).startswith(f"04_streaming.po:{found[0].line}: fuzzy")

    zh = t.chapter(nb, "04_streaming", "zh", tmp_path / "locale")
    text = source(zh["cells"][0])
    assert new in text and "中文 " + old not in text  # the fuzzy unit is English
    assert text.startswith("# 中文 Chapter 4")  # its unchanged siblings are translated
    assert t.update(pots, tmp_path / "locale", "zh_CN") == {"04_streaming": "kept"}


def test_a_new_catalog_is_created_with_empty_entries(tmp_path):
    pots = tmp_path / "gettext"
    t.write_catalog(t.template("x", [("Hello", "x.md", 1), ("Hello", "x.md", 5)]),
                    pots / "x.pot")
    assert t.update(pots, tmp_path / "locale", "zh_CN") == {"x": "created"}
    po = tmp_path / "locale" / "zh_CN" / "LC_MESSAGES" / "x.po"
    assert t.counts(po) == (0, 1)
    assert [(p.msgid, p.what) for p in t.problems(po)] == [("Hello", "not translated")]
    assert "#: x.md:1 x.md:5" in po.read_text(encoding="utf-8")


def test_markup_a_translation_must_keep():
    msgid = "Use `tool_call_id`, see [turn](glossary.md#turn) and <code>x</code>."
    kept = "用 `tool_call_id`，见[轮次](glossary.md#turn)和 <code>x</code>。"
    lost = "用 tool_call_id，见[轮次](glossary.md#step)。"
    assert t.markup_changes(msgid, kept) == []
    assert t.markup_changes(msgid, lost) == [
        "code span `tool_call_id` is missing", "link target ](glossary.md#turn) is missing",
        "HTML tag </code> is missing"]
    assert t.markup_changes("a | b", "甲 | 乙") == ["an unescaped | would split the table cell"]
    assert t.markup_changes("a", "`x|y` 和 a \\| b") == []


def test_the_catalogs_hold_every_current_unit():
    """`make locale` was run after the last change of English text: no unit is missing from
    its catalog (it would stay English without anyone being told)."""
    stale = []
    for name, template in t.course_templates(CHECKOUT, CHAPTERS).items():
        path = t.catalog_path("zh", name, LOCALE)
        have = {m.id for m in t.read_catalog(path) if m.id} if path.exists() else set()
        stale += [f"{name}: {m.id.splitlines()[0][:60]!r}" for m in template
                  if m.id and m.id not in have]
    assert stale == [], "run `make locale`: " + "; ".join(stale[:5])


@pytest.mark.parametrize("name", NAMES)
def test_every_unit_is_translated(name):
    """Fails until the translators are done: every entry translated, none fuzzy, markup kept."""
    found = t.problems(t.catalog_path("zh", name, LOCALE))
    assert not found, f"{len(found)} entries to translate or fix:\n" + "\n".join(
        str(p) for p in found)


def test_damaged_catalogs_are_lab_errors(tmp_path):
    bad = tmp_path / "bad.po"
    for text in ('msgid "a"\n', "garbage line\n", "\x00\xff"):
        bad.write_text(text, encoding="latin-1")
        with pytest.raises(LabError, match=r"bad\.po: not a readable gettext catalog"):
            t.read_catalog(bad)
    bad.write_text('msgid "a"\nmsgstr "b', encoding="utf-8")  # Babel reads it as untranslated
    assert [p.what for p in t.problems(bad)] == ["not translated"]
    with pytest.raises(LabError, match="cannot read"):
        t.read_catalog(tmp_path / "missing.po")
    with pytest.raises(LabError, match="no catalogs for language 'fr'"):
        t.catalog_path("fr", "glossary", LOCALE)


MARKDOWN = st.lists(st.sampled_from([
    "word ", "`code` ", "[link](x.md#a) ", "| ", "\\| ", "- ", "1. ", "> ", "### ", "\n", "\n\n",
    "  ", "<details><summary>S</summary>", "</details>", "```", "**b** ", "|---|", "\t", "中文",
    "<div>", "===", "* ",
]), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(MARKDOWN)
def test_any_markdown_survives_translation(text):
    """Whatever markdown an author writes: the identity translation changes nothing, and a
    real one leaves every line that holds no unit as it was."""
    assert t.translate_markdown(text, lambda m: m) == text
    out = t.translate_markdown(text, marked)
    assert out.count("<<") == len(t.units(text))  # each unit translated once


# --- the Chinese edition as built ---------------------------------------------------------

BUILT = sorted((ZH / "solutions").glob("*.ipynb"))
needs_built = pytest.mark.skipif(not BUILT, reason="no Chinese edition yet: run `make notebooks`")


@needs_built
@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chinese_edition_is_in_sync(path):
    """The Chinese solution is the English one translated by the catalogs (code, markdown), and
    its learner edition is generated from it: else `make notebooks`."""
    zh_path = ZH / "solutions" / path.name
    assert zh_path.is_file(), "run `make notebooks`"
    built = read_notebook(zh_path)
    expected = t.chapter(read_notebook(path), path.stem, "zh", LOCALE)
    assert [(c["cell_type"], source(c)) for c in built["cells"]] == [
        (c["cell_type"], source(c)) for c in expected["cells"]], "run `make notebooks`"
    learner = read_notebook(ZH / path.name)  # executed as Run All leaves it: its cells compared
    assert [(c["cell_type"], source(c), c.get("metadata")) for c in learner["cells"]] == [
        (c["cell_type"], source(c), c.get("metadata"))
        for c in t.learner(built, "zh", LOCALE)["cells"]], "run `make notebooks`"


@needs_built
def test_chinese_glossary_is_in_sync_and_its_links_land():
    zh_glossary = (ZH / "glossary.md").read_text(encoding="utf-8")
    assert zh_glossary == t.glossary(CHECKOUT, "zh"), "run `make notebooks`"
    assert (ZH / "solutions" / "glossary.md").resolve() == (ZH / "glossary.md").resolve()
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', zh_glossary)) | {
        t.slug(h) for h in re.findall(r"^###\s+(.+?)\s*$", zh_glossary, flags=re.M)}
    links = set(re.findall(r"\]\(#([^)\s]*)\)", zh_glossary))
    for path in [*BUILT, *sorted(ZH.glob("*.ipynb"))]:
        nb = read_notebook(path)
        text = "".join(source(c) for c in nb["cells"] if c["cell_type"] == "markdown")
        links |= set(re.findall(r"\]\(glossary\.md#([^)\s]*)\)", text))
        for target in re.findall(r"\]\(([^)#\s]+\.ipynb)", text):
            assert (path.parent / target).is_file(), f"{path.name}: {target}"
    assert links and links <= anchors, sorted(links - anchors)


def test_learner_edition_of_a_translation_translates_what_it_adds(tmp_path):
    shutil.copytree(LOCALE, tmp_path / "locale")
    po = t.catalog_path("zh", t.EDITIONS, tmp_path / "locale")
    cat = t.read_catalog(po, "zh_CN")
    for m in cat:
        if m.id:
            m.string = "中文 " + m.id.replace("\n", " ")
    t.write_catalog(cat, po)
    first = next(p for p in CHAPTERS if p.name.startswith("01_"))  # a chapter with exercises
    nb = t.chapter(read_notebook(first), first.stem, "zh", tmp_path / "locale")
    learner = t.learner(nb, "zh", tmp_path / "locale")
    plain = learner_edition(nb)
    assert len(learner["cells"]) == len(plain["cells"])
    assert source(learner["cells"][-2]).startswith("## 中文 Your progress")
