# ruff: noqa: RUF001 - a Chinese column takes Chinese punctuation
import pytest

from keel_lab._core.tables import format_table, printable, width_of, wrap
from keel_lab.course._experiments.report import Report

pytestmark = pytest.mark.lab_wide


def test_printable_escapes_controls_and_keeps_text():
    assert printable("a\x1b[31m\u202e\ud800\n é ☕") == "a\\x1b[31m\\u202e\\ud800\\n é ☕"
    # invisible marks: two ids that look alike must not print alike
    assert printable("call_1\u200b delete\u200d_all\u200f\u061c\xad\ufeff\U000e0041") == (
        "call_1\\u200b delete\\u200d_all\\u200f\\u061c\\xad\\ufeff\\U000e0041")


def test_a_table_without_width_is_unchanged():
    assert format_table([{"a": 1, "b": "xy"}]) == "a  b\n-  --\n1  xy"


def test_a_wide_table_wraps_its_widest_column():
    rows = [{"name": "n", "text": "word " * 40}]
    lines = format_table(rows, width=40).splitlines()
    assert max(len(line) for line in lines) <= 40 and len(lines) > 3
    assert " ".join(line[6:].strip() for line in lines[2:]) == ("word " * 40).strip()


def test_a_chinese_column_wraps_by_display_width_as_chinese_breaks():
    """Between two characters or at a space, never inside an English word that fits, never
    before a closing mark (a full-width comma or parenthesis) nor after an opening one; a
    word wider than its column is cut, so no line is ever wider."""
    text = "这条工具消息前面没有发起它的 tool_calls，供应商会拒绝这段消息历史（原文）"
    lines = format_table([{"n": 1, "text": text}], width=24).splitlines()[2:]
    column = [line[3:] for line in lines]
    assert all(width_of(line) <= 24 for line in lines) and len(lines) > 2
    assert "".join(column).replace(" ", "") == text.replace(" ", "")
    assert not any(c.startswith(("，", "）")) or c.endswith("（") for c in column)
    assert any(c.endswith("tool_calls，") or c.startswith("tool_calls") for c in column)
    assert all(width_of(line) <= 12 for line in wrap("一" * 5 + "x" * 30, 12))


def test_two_closing_marks_in_a_row_never_start_a_line():
    """A full-width parenthesis and full stop after a word that just fits: both marks go down
    with the word they close."""
    lines = wrap("completed：INC-001 最严重（critical）。INC-001", 18)
    assert not any(line.startswith(("）", "。")) for line in lines), lines
    assert "（critical）。" in lines and all(width_of(line) <= 18 for line in lines)
    alone = wrap("执行了 1 个调用（add_incident_note）；运行状态 cancelled", 19)
    assert "（" not in alone and all(width_of(line) <= 19 for line in alone), alone


def test_report_table_wraps_title_and_findings_only_when_asked():
    report = Report("x", {"p": "v" * 150}, {}, [{"a": 1}], ["finding " * 20])
    assert report.table().splitlines()[0] == "x: p=" + "v" * 150
    assert max(len(line) for line in report.table(100).splitlines()) <= 100


def test_a_report_with_its_own_width_wraps_to_it_or_to_a_narrower_one_asked():
    report = Report("x", {"p": "v" * 150}, {}, [{"a": "w " * 80}], [], width=60)
    assert max(len(line) for line in report.table().splitlines()) <= 60
    assert max(len(line) for line in report.table(40).splitlines()) <= 40
    assert report.table(100) == report.table()


def test_a_kept_column_stays_whole_while_another_can_narrow():
    """The instructor's collected table: paths wrapped over four lines while the feedback beside
    them could have wrapped at its spaces."""
    path = "students/ada/notebooks/02_pairing.ipynb"
    rows = [{"submission": path, "feedback": "look each call's result up by its id " * 4}]
    lines = format_table(rows, width=80, keep=("submission",)).splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert path in lines[2]
    # when nothing else can give, the path is cut too, and no line is wider than asked
    assert all(len(line) <= 30 for line in format_table(rows, width=30, keep=("submission",))
               .splitlines())
    # without keep, the widest column narrows first, as before
    assert path not in format_table(rows, width=60).splitlines()[2]
