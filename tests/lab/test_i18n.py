"""The package's messages in two languages: the runtime, and a catalog that cannot go stale."""
# ruff: noqa: RUF001 - the expected Chinese lines use Chinese punctuation

import io
import re
import string
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir, extract_from_file
from babel.messages.pofile import read_po
from hypothesis import given, settings
from hypothesis import strategies as st
from test_install import _run, installed, wheel  # noqa: F401 - the wheel and its install

from keel_checks.exercises import EXERCISES, PREDICTIONS
from keel_checks.partial_success import verify_status_history
from keel_checks.progress import Progress
from keel_checks.verdict import Verdict
from keel_lab import _i18n as i18n
from keel_lab._core.errors import LabError
from keel_lab._i18n import _, language, ngettext, pgettext, set_language, speaking, translations

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "keel_lab"
POT = PACKAGE / "locale" / "keel_lab.pot"
PO = PACKAGE / "locale" / "zh_CN" / "LC_MESSAGES" / "keel_lab.po"


@pytest.fixture(autouse=True)
def english(monkeypatch):
    """Every test starts in the environment's default, English, and leaves it so."""
    monkeypatch.delenv(i18n.ENV, raising=False)
    monkeypatch.setattr(i18n, "_chosen", None)


def marked() -> set[str | tuple[str, str]]:
    """Every message marked `_()`/`N_()` now, extracted the way `make messages` does; one
    marked `ngettext()` as its (singular, plural) pair, as the catalog keys it."""
    # private folders too (`_core`)
    found = [m for package in (PACKAGE, ROOT / "keel_checks", ROOT / "keel_cli")
             for _file, _line, m, _comments, _context in extract_from_dir(
                 package, method_map=[("**.py", "python")],
                 directory_filter=lambda folder: not Path(folder).name.startswith("."))]
    found += [m for path in ("notebooks/conftest.py", "keel_course/lab.py",
                             "keel_course/workspace.py")
              for _line, m, _comments, _context in extract_from_file("python", ROOT / path)]
    return {m if isinstance(m, str) else (m[0], m[1]) for m in found}


def catalog_of(path: Path) -> dict[str | tuple[str, str], object]:
    with path.open("rb") as f:
        return {m.id: m for m in read_po(f) if m.id}


def forms(entry) -> list[tuple[str, str]]:
    """An entry's (English, translation) pairs: one, or each plural form with the English
    plural, whose placeholders every form keeps."""
    if isinstance(entry.id, str):
        return [(entry.id, entry.string)]
    return [(entry.id[1], text) for text in entry.string]


def fields(text: str) -> list[str]:
    return sorted(name for _, name, _, _ in string.Formatter().parse(text) if name is not None)


def test_english_is_the_source_and_the_default():
    assert language() == "en"
    assert _("PASSED") == "PASSED"
    assert _("a message no catalog has") == "a message no catalog has"


def test_chinese_from_the_environment_or_set_language(monkeypatch):
    monkeypatch.setenv(i18n.ENV, "zh")
    assert language() == "zh" and _("PASSED") == "通过"
    set_language("en")
    assert _("PASSED") == "PASSED"  # the call outranks the environment
    set_language("zh")
    assert _("a message no catalog has") == "a message no catalog has"  # falls back


def test_a_copy_made_before_the_move_still_sets_its_language():
    from keel_lab._i18n import set_language as old_place

    assert old_place is set_language


def test_a_template_is_translated_then_formatted():
    set_language("zh")
    line = _("{n} of {total} exercises passed").format(n=3, total=8)
    assert line == "8 个练习中已通过 3 个"


@pytest.mark.parametrize("code", ["fr", "ZH", "zh_CN", "", "en "])
def test_an_unknown_language_is_one_clear_line(code, monkeypatch):
    with pytest.raises(LabError, match=r"^set_language: unknown language .*choose one of en, zh$"):
        set_language(code)
    if code:
        monkeypatch.setenv(i18n.ENV, code)
        with pytest.raises(LabError, match=rf"^{i18n.ENV}: unknown language") as err:
            language()
        assert "\n" not in str(err.value)


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(st.text(max_size=12) | st.sampled_from(["en", "zh", "zh-CN", "zh_Hans", "EN", "zh\n"]))
def test_any_language_code_is_accepted_or_one_line_of_error(code):
    """Whatever a learner types (or sets in KEEL_LAB_LANG): a language, or LabError in one
    line; the current language is unchanged by a refused code."""
    before = language()
    try:
        set_language(code)
    except LabError as exc:
        assert "\n" not in str(exc).replace(repr(code), "") and language() == before
    else:
        assert code in i18n.LOCALES and language() == code
    i18n._chosen = None


def test_a_fuzzy_or_empty_entry_falls_back_to_english():
    po = io.BytesIO('''msgid ""
msgstr "Content-Type: text/plain; charset=utf-8\\n"

msgid "done"
msgstr "完成"

#, fuzzy
msgid "running"
msgstr "执行中"

msgid "failed"
msgstr ""
'''.encode())
    assert translations(po, "zh_CN") == {"done": "完成"}


def test_plurals_take_the_form_their_count_asks(monkeypatch):
    """`ngettext`: English's singular for one, its plural else; a catalog's forms by its own
    rule (Chinese has one form: a count never changes the words); a plural entry with a form
    untranslated falls back to English."""
    po = io.BytesIO('''msgid ""
msgstr "Content-Type: text/plain; charset=utf-8\\nPlural-Forms: nplurals=1; plural=0;\\n"

msgid "{n} call"
msgid_plural "{n} calls"
msgstr[0] "{n} 个调用"

msgid "{n} file"
msgid_plural "{n} files"
msgstr[0] ""
'''.encode())
    read = translations(po, "zh_CN")
    assert read == {} and read.plurals == {("{n} call", "{n} calls"): ("{n} 个调用",)}
    assert [ngettext("{n} call", "{n} calls", n).format(n=n) for n in (0, 1, 2)] == [
        "0 calls", "1 call", "2 calls"]
    monkeypatch.setattr(i18n, "catalog", lambda locale: read)
    set_language("zh")
    assert [ngettext("{n} call", "{n} calls", n).format(n=n) for n in (1, 2)] == [
        "1 个调用", "2 个调用"]
    assert ngettext("{n} file", "{n} files", 1) == "{n} file"
    set_language("qps")
    assert ngettext("{n} call", "{n} calls", 2) == i18n.pseudo("{n} calls")


def test_the_template_holds_every_marked_message():
    """`make messages` was run after the last change of a marked message."""
    assert set(catalog_of(POT)) == marked()


def test_the_chinese_catalog_translates_every_marked_message():
    """A new message is missing and a changed one fuzzy until a translator has been there."""
    entries = catalog_of(PO)
    missing = sorted(str(m) for m in marked()
                     if m not in entries or not all(t for _, t in forms(entries[m])))
    fuzzy = sorted(str(m) for m in marked() if m in entries and entries[m].fuzzy)
    assert missing == [] and fuzzy == []
    assert len(marked()) > 200


def test_translations_keep_placeholders_code_and_identifiers():
    """The same `{fields}`; code in backticks and snake_case names (`tool_call_id`, error
    codes) stay as they are."""
    for entry in catalog_of(PO).values():
        for msgid, text in forms(entry):
            assert fields(text) == fields(msgid), msgid
            for kept in re.findall(r"`[^`]+`|\b[a-z]+(?:_[a-z]+)+\b", msgid):
                assert kept in text, (msgid, kept)


CJK = "\u3400-\u9fff\uff00-\uffef\u3000-\u303f"


def ascii_punctuation_after_chinese(text: str) -> list[str]:
    """`字:` `字,` `字;` `字(` `字)` outside code spans: Chinese text takes Chinese punctuation."""
    prose = re.sub(r"`[^`]*`", " ", text)
    return re.findall(rf"[{CJK}][:,;()]", prose)


def test_chinese_lines_take_chinese_punctuation():
    assert ascii_punctuation_after_chinese("调用 ID：call_1（索引 0）") == []
    assert ascii_punctuation_after_chinese("状态: `a:b`") == ["态:"]
    found = {msgid: bad for entry in catalog_of(PO).values() for msgid, text in forms(entry)
             if (bad := ascii_punctuation_after_chinese(text))}
    assert found == {}


def test_verdicts_and_hints_in_chinese():
    set_language("zh")
    verdict = verify_status_history(lambda events: ["completed"])
    lines = verdict.lines()
    assert lines[-1] == "status_history：尚未通过（1/17 项检查）"
    assert lines[1].startswith("[未通过] 查询一个不存在的事故 [")
    assert "应为 ['partial']" in lines[1]
    set_language("en")
    assert verify_status_history(lambda events: ["completed"]).lines()[-1] == \
        "status_history: NOT YET (1/17 checks)"


def test_checks_not_tried_are_named_in_the_language_shown():
    verdict = Verdict("x", ["a real run"])
    set_language("zh")
    assert verdict.lines() == ["[----] 一次真实运行：未尝试（先修正第一个失败）",
                               "x：尚未通过（0/1 项检查）"]


def test_the_progress_table_in_chinese(tmp_path, monkeypatch):
    monkeypatch.delenv("KEEL_PROGRESS", raising=False)
    set_language("zh")
    table = Progress(tmp_path / "p.json", {}).table()
    head, columns = table.splitlines()[:2]
    assert head.endswith(f"{len(EXERCISES)} 个练习中已通过 0 个；已做 0/{len(PREDICTIONS)} 个预测，"
                         "其中 0 个正确（这里还没有运行过任何检查）")
    assert columns.split() == ["章节", "练习", "状态", "时间", "最近的提示"]
    assert "未尝试" in table and "not tried" not in table
    set_language("en")
    assert Progress(tmp_path / "p.json", {}).table().splitlines()[1].split() == [
        "chapter", "exercise", "status", "when", "last", "hint"]


def test_the_installed_wheel_carries_the_catalog_and_the_font(installed):  # noqa: F811
    done = _run("from keel_lab._i18n import _, set_language; set_language('zh'); "
                "from keel_lab.course import fonts, plots; import os; "
                "print(_('PASSED'), os.path.getsize(fonts.font_path()) > 0)", installed)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["通过", "True"]



def test_a_context_tells_one_english_word_apart():
    """Chapter 1's pipeline box "calls" (the calls) read 调用数 (a count), the column's word."""
    with speaking("zh"):
        assert pgettext("pipeline stage", "calls") == "调用"
        assert _("calls") == "调用数"
        assert pgettext("no such context", "calls") == "calls"  # English, never another's
    assert pgettext("pipeline stage", "calls") == "calls"
