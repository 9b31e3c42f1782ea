"""The gradebook's three forms: the --json object, the CSV, the table."""

from __future__ import annotations

import csv
import json

import pytest

from keel_course.grading.gradebook import Exercise, Row, table, to_dict, write_csv
from keel_lab import LabError

ROWS = [
    Row("alice.ipynb", "02_pairing", (Exercise("count_in_order", True, 1, 1, None),
                                      Exercise("pair_results", False, 0, 2, "case 1: wrong"))),
    Row("bob.ipynb", "05_partial_success", (Exercise("status_history", True, 3, 3, None),)),
    Row("=cmd|' /C calc'!A0.ipynb", None, error="-not a notebook"),
]


def test_the_json_object_has_the_promised_fields():
    out = json.loads(json.dumps(to_dict(ROWS)))
    first = out["submissions"][0]
    assert set(first) == {"path", "chapter", "points", "max_points", "exercises", "error"}
    assert (first["points"], first["max_points"]) == (1, 3)
    assert first["exercises"][1] == {"name": "pair_results", "passed": False, "points": 0,
                                     "max_points": 2, "hint": "case 1: wrong"}
    assert out["submissions"][2] == {"path": "=cmd|' /C calc'!A0.ipynb", "chapter": None,
                                     "points": 0, "max_points": 0, "exercises": [],
                                     "error": "-not a notebook"}
    assert out["exercises"] == {"count_in_order": {"submissions": 1, "passed": 1},
                                "pair_results": {"submissions": 1, "passed": 0},
                                "status_history": {"submissions": 1, "passed": 1}}


def test_the_csv_has_a_row_per_submission_and_a_column_per_exercise(tmp_path):
    write_csv(ROWS, tmp_path / "grades.csv")
    with (tmp_path / "grades.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["path", "chapter", "count_in_order", "pair_results", "status_history",
                       "points", "max_points", "error"]
    assert rows[1] == ["alice.ipynb", "02_pairing", "1", "0", "", "1", "3", ""]
    assert rows[2] == ["bob.ipynb", "05_partial_success", "", "", "3", "3", "3", ""]
    # a spreadsheet would run these as formulas: written as text
    assert rows[3] == ["'=cmd|' /C calc'!A0.ipynb", "", "", "", "", "0", "0",
                       "'-not a notebook"]


def test_an_unwritable_csv_is_a_lab_error(tmp_path):
    with pytest.raises(LabError, match="cannot write"):
        write_csv(ROWS, tmp_path / "no" / "such" / "folder.csv")


def test_the_table_lists_submissions_then_exercises():
    text = table(ROWS, 100)
    assert "alice.ipynb" in text and "1/3" in text and "count_in_order" in text
    assert text.splitlines()[-3:] == ["count_in_order: 1/1 passed", "pair_results: 0/1 passed",
                                      "status_history: 1/1 passed"]
    assert max(map(len, text.splitlines())) <= 100
