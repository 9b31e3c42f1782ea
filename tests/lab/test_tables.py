from keel_lab.core.tables import format_table, printable
from keel_lab.course.experiments.report import Report


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


def test_report_table_wraps_title_and_findings_only_when_asked():
    report = Report("x", {"p": "v" * 150}, {}, [{"a": 1}], ["finding " * 20])
    assert report.table().splitlines()[0] == "x: p=" + "v" * 150
    assert max(len(line) for line in report.table(100).splitlines()) <= 100
