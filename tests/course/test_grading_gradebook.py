"""The gradebook's three forms: the --json object, the CSV, the table."""

from __future__ import annotations

import csv
import json
import os

import pytest

from keel_course.grading.gradebook import Exercise, Row, Total, table, to_dict, totals, write_csv
from keel_lab import LabError

pytestmark = pytest.mark.lab_wide

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
    # loose files in one folder: one total, as for one student's chapters; the last path has a
    # folder of its own
    assert out["students"] == [{"folder": ".", "submissions": 2, "points": 4, "max_points": 6},
                               {"folder": "=cmd|' ", "submissions": 1, "points": 0,
                                "max_points": 0}]


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
    assert rows[4:] == [[".", "total", "", "", "", "4", "6", ""],
                        ["'=cmd|' ", "total", "", "", "", "0", "0", ""]]


def test_an_unwritable_csv_is_a_lab_error(tmp_path):
    with pytest.raises(LabError, match="cannot write"):
        write_csv(ROWS, tmp_path / "no" / "such" / "folder.csv")


def test_the_table_lists_submissions_then_exercises():
    text = table(ROWS, 100)
    assert "alice.ipynb" in text and "1/3" in text and "count_in_order" in text
    lines = text.splitlines()
    assert lines[-8:-5] == ["count_in_order: 1/1 passed", "pair_results: 0/1 passed",
                            "status_history: 1/1 passed"]
    assert lines[-4:] == ["student  notebooks  total", "-------  ---------  -----",
                          ".        2          4/6", "=cmd|'   1          0/0"]
    assert max(map(len, text.splitlines())) <= 100


def _graded(path: str, points: int, max_points: int) -> Row:
    return Row(path, "01_history", (Exercise("accumulate", points == max_points, points,
                                             max_points, None),))


CLASS = [_graded("c/T/ada/notebooks/01_history.ipynb", 2, 2),
         _graded("c/T/grace/notebooks/01_history.ipynb", 0, 2),
         _graded("c/T/ada/notebooks/03_batching.ipynb", 1, 2),
         _graded("c/T/ada/mine/05_partial_success.ipynb", 3, 3),
         Row("c/T/alan/notebooks/02_pairing.ipynb", "02_pairing", error="not a notebook")]


def test_a_total_per_student_folder_over_every_chapter():
    assert totals(CLASS) == [Total("c/T/ada", 3, 6, 7), Total("c/T/grace", 1, 0, 2),
                             Total("c/T/alan", 1, 0, 0)]
    # one student's collection: their chapters share one folder, one total
    assert totals([CLASS[0], CLASS[2]]) == [Total("c/T/ada/notebooks", 2, 3, 4)]
    assert totals([]) == []
    mixed = totals([CLASS[0], Row(os.path.abspath("c/T/grace/x.ipynb"), None)])
    assert [t.folder for t in mixed] == [os.path.abspath(f"c/T/{n}") for n in ("ada", "grace")]


def test_the_totals_in_all_three_forms(tmp_path):
    assert to_dict(CLASS)["students"][0] == {"folder": "c/T/ada", "submissions": 3,
                                             "points": 6, "max_points": 7}
    write_csv(CLASS, tmp_path / "grades.csv")
    with (tmp_path / "grades.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(r["path"], r["points"], r["max_points"]) for r in rows if r["chapter"] == "total"
            ] == [("c/T/ada", "6", "7"), ("c/T/grace", "0", "2"), ("c/T/alan", "0", "0")]
    assert len(rows) == len(CLASS) + 3
    assert table(CLASS, 100).splitlines()[-3:] == ["c/T/ada    3          6/7",
                                                  "c/T/grace  1          0/2",
                                                  "c/T/alan   1          0/0"]
