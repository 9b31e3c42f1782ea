"""The gradebook's three forms: the --json object, the CSV, the table."""

from __future__ import annotations

import csv
import json
import os

import pytest

from keel_course.grading.gradebook import (
    Exercise,
    Gradebook,
    Row,
    Total,
    table,
    to_dict,
    totals,
    write_csv,
)
from keel_lab import LabError

pytestmark = pytest.mark.lab_wide

ROWS = [
    Row("alice.ipynb", "02_pairing", (Exercise("count_in_order", True, 1, 1, None),
                                      Exercise("pair_results", False, 0, 2, "case 1: wrong"))),
    Row("bob.ipynb", "05_partial_success", (Exercise("status_history", True, 3, 3, None),)),
    Row("=cmd|' /C calc'!A0.ipynb", None, error="-not a notebook"),
]


def test_the_json_object_has_the_promised_fields():
    out = json.loads(json.dumps(to_dict(Gradebook(ROWS, "."))))
    assert (out["folder"], out["chapters"]) == (os.path.abspath("."), ["02_pairing",
                                                                       "05_partial_success"])
    first = out["submissions"][0]
    assert set(first) == {"student", "path", "chapter", "points", "max_points", "exercises",
                          "error"}
    assert (first["student"], first["points"], first["max_points"]) == ("alice", 1, 3)
    assert first["exercises"][1] == {"name": "pair_results", "passed": False, "points": 0,
                                     "max_points": 2, "hint": "case 1: wrong"}
    assert out["submissions"][2] == {"student": "=cmd|' ", "path": "=cmd|' /C calc'!A0.ipynb",
                                     "chapter": None, "points": 0, "max_points": 0,
                                     "exercises": [], "error": "-not a notebook"}
    assert out["exercises"] == {"count_in_order": {"submissions": 1, "passed": 1},
                                "pair_results": {"submissions": 1, "passed": 0},
                                "status_history": {"submissions": 1, "passed": 1}}
    # loose files: each its own student, by its file's name; the last path has a folder
    assert out["students"] == [
        {"student": "alice", "submissions": 1, "points": 1, "max_points": 6},
        {"student": "bob", "submissions": 1, "points": 3, "max_points": 6},
        {"student": "=cmd|' ", "submissions": 1, "points": 0, "max_points": 6}]


def test_the_csv_has_a_row_per_submission_and_a_column_per_exercise(tmp_path):
    write_csv(Gradebook(ROWS, "."), tmp_path / "grades.csv")
    with (tmp_path / "grades.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["student", "chapter", "path", "count_in_order", "pair_results",
                       "status_history", "points", "max_points", "error", "feedback"]
    assert rows[1] == ["alice", "02_pairing", "alice.ipynb", "1", "0", "", "1", "3", "",
                       "pair_results: case 1: wrong"]
    assert rows[2] == ["bob", "05_partial_success", "bob.ipynb", "", "", "3", "3", "3", "", ""]
    # a spreadsheet would run these as formulas: written as text
    assert rows[3] == ["'=cmd|' ", "", "'=cmd|' /C calc'!A0.ipynb", "", "", "", "0", "0",
                       "'-not a notebook", ""]
    # each chapter of the assignment (02 and 05) a student did not hand in
    assert rows[4:8] == [["alice", "05_partial_success", "", "", "", "", "0", "3",
                          "no submission", ""],
                         ["bob", "02_pairing", "", "", "", "", "0", "3", "no submission", ""],
                         ["'=cmd|' ", "02_pairing", "", "", "", "", "0", "3", "no submission",
                          ""],
                         ["'=cmd|' ", "05_partial_success", "", "", "", "", "0", "3",
                          "no submission", ""]]
    assert rows[8:] == [["alice", "total", "", "", "", "", "1", "6", "", ""],
                        ["bob", "total", "", "", "", "", "3", "6", "", ""],
                        ["'=cmd|' ", "total", "", "", "", "", "0", "6", "", ""]]


def test_an_unwritable_csv_is_a_lab_error(tmp_path):
    with pytest.raises(LabError, match="cannot write"):
        write_csv(Gradebook(ROWS), tmp_path / "no" / "such" / "folder.csv")


def test_the_table_lists_submissions_then_exercises():
    text = table(Gradebook(ROWS, "."), 100)
    assert "alice.ipynb" in text and "1/3" in text and "count_in_order" in text
    lines = text.splitlines()
    assert lines[-11:-8] == ["count_in_order: 1/1 passed", "pair_results: 0/1 passed",
                             "status_history: 1/1 passed"]
    assert lines[-7:-2] == ["student  notebooks  total", "-------  ---------  -----",
                            "alice    1          1/6", "bob      1          3/6",
                            "=cmd|'   1          0/6"]
    # an exercise failed: the last line says where its feedback is
    assert lines[-1] == "why each exercise failed: the feedback column of --csv FILE, or --json"
    assert max(map(len, text.splitlines())) <= 100


def _graded(path: str, points: int, max_points: int, chapter: str = "01_history") -> Row:
    return Row(path, chapter, (Exercise("accumulate", points == max_points, points, max_points,
                                        None),))


CLASS = [_graded("c/T/ada/notebooks/01_history.ipynb", 2, 2),
         _graded("c/T/grace/notebooks/01_history.ipynb", 0, 2),
         _graded("c/T/ada/notebooks/03_batching.ipynb", 1, 2, "03_batching"),
         _graded("c/T/ada/mine/05_partial_success.ipynb", 3, 3, "05_partial_success"),
         Row("c/T/alan/notebooks/02_pairing.ipynb", "02_pairing", error="not a notebook")]


def test_partial_credit_shows_in_the_passed_column():
    """An instructor saw `passed: -` beside 1/2 and could not tell what earned the point."""
    assert "accumulate(1/2)" in table(Gradebook(CLASS), 200)


def test_a_total_per_student_folder_over_every_chapter():
    # the assignment: every chapter graded, 01 02 03 05: 4 + 3 + 2 + 3
    assert totals(Gradebook(CLASS)) == [Total("ada", 3, 6, 12), Total("grace", 1, 0, 12),
                                        Total("alan", 1, 0, 12)]
    # one student's collection: their chapters share one folder, one total
    assert totals(Gradebook([CLASS[0], CLASS[2]])) == [Total("ada", 2, 3, 6)]
    assert totals(Gradebook([])) == []
    mixed = totals(Gradebook([CLASS[0], Row(os.path.abspath("c/T/grace/x.ipynb"), None)]))
    assert [t.student for t in mixed] == ["ada", "grace"]


def test_the_totals_in_all_three_forms(tmp_path):
    assert to_dict(Gradebook(CLASS))["students"][0] == {"student": "ada", "submissions": 3,
                                                        "points": 6, "max_points": 12}
    write_csv(Gradebook(CLASS), tmp_path / "grades.csv")
    with (tmp_path / "grades.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(r["student"], r["points"], r["max_points"]) for r in rows
            if r["chapter"] == "total"] == [("ada", "6", "12"), ("grace", "0", "12"),
                                            ("alan", "0", "12")]
    missing = [(r["student"], r["chapter"]) for r in rows if r["error"] == "no submission"]
    assert missing == [("ada", "02_pairing"), ("grace", "02_pairing"), ("grace", "03_batching"),
                       ("grace", "05_partial_success"), ("alan", "01_history"),
                       ("alan", "03_batching"), ("alan", "05_partial_success")]
    assert len(rows) == len(CLASS) + len(missing) + 3
    assert table(Gradebook(CLASS), 100).splitlines()[-5:-2] == ["ada      3          6/12",
                                                             "grace    1          0/12",
                                                             "alan     1          0/12"]


# -- issue 35: a gradebook an instructor reads without --json -------------------------------

LONG = ("your pairing was right in 2 of 10 runs; first problem, in run 0 (calls ['toolu_01jl', "
        "'toolu_01RT'], results of calls [1, 0] in that order): " + "toolu_01jl was paired "
        "with the result of toolu_01RT; " * 12 + "- you paired the n-th call with the n-th "
        "result, but results come in the order they finished and a skipped call has none: "
        "look each call's result up by its call_id")
COLLECTED = "/class/collected/20261130-140509"
PAIRING = (Exercise("count_in_order", True, 1, 1, None),)
A_CLASS = [
    Row(f"{COLLECTED}/ada/notebooks/02_pairing.ipynb", "02_pairing",
        (*PAIRING, Exercise("pair_results", True, 2, 2, None))),
    Row(f"{COLLECTED}/ada/notebooks/03_batching.ipynb", "03_batching",
        (Exercise("make_batches", False, 0, 2, "case 0: not implemented yet"),)),
    Row(f"{COLLECTED}/grace/notebooks/02_pairing.ipynb", "02_pairing",
        (*PAIRING, Exercise("pair_results", False, 0, 2, LONG))),
]


def _csv(book: Gradebook, tmp_path) -> list[dict[str, str]]:
    write_csv(book, tmp_path / "gradebook.csv")
    with (tmp_path / "gradebook.csv").open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_the_csv_names_the_student_and_says_why_below_the_class_folder(tmp_path):
    rows = _csv(Gradebook(A_CLASS, COLLECTED), tmp_path)
    write_csv(Gradebook(A_CLASS, COLLECTED), tmp_path / "g.csv")
    assert (tmp_path / "g.csv").read_text().splitlines()[0] == (
        "student,chapter,path,count_in_order,pair_results,make_batches,points,max_points,error,"
        "feedback")
    assert [(r["student"], r["chapter"], r["path"]) for r in rows] == [
        ("ada", "02_pairing", "ada/notebooks/02_pairing.ipynb"),
        ("ada", "03_batching", "ada/notebooks/03_batching.ipynb"),
        ("grace", "02_pairing", "grace/notebooks/02_pairing.ipynb"),
            ("grace", "03_batching", ""),  # the assignment's chapter grace did not hand in
        ("ada", "total", ""), ("grace", "total", "")]
    # each failed exercise's whole hint, one "exercise: hint" line each; nothing for a pass
    assert [r["feedback"] for r in rows] == [
        "", "make_batches: case 0: not implemented yet", f"pair_results: {LONG}", "", "", ""]
    assert [(r["pair_results"], r["points"], r["max_points"], r["error"]) for r in rows] == [
        ("2", "3", "3", ""), ("", "0", "2", ""), ("0", "1", "3", ""),
        ("", "0", "2", "no submission"), ("", "3", "5", ""), ("", "1", "5", "")]


def test_a_plain_folder_of_notebooks_names_each_student_by_its_file():
    rows = [Row("/hand-ins/alice.ipynb", "02_pairing", PAIRING),
            Row("/hand-ins/bob.ipynb", "02_pairing", PAIRING),
            Row("/hand-ins/late/carol.ipynb", None, error="not a notebook")]
    book = Gradebook(rows)  # the class folder: the one the paths share
    assert [s["student"] for s in to_dict(book)["submissions"]] == ["alice", "bob", "late"]
    # one student's chapters, as the handout names them: the student is their folder
    mine = Gradebook([Row("/c/T/ada/notebooks/02_pairing.ipynb", "02_pairing", PAIRING),
                      Row("/c/T/ada/notebooks/03_batching.ipynb", "03_batching")], "/c/T/ada")
    assert [t.student for t in totals(mine)] == ["ada"]
    assert [t.student for t in totals(Gradebook(mine.rows))] == ["ada"]


def test_a_rostered_student_who_handed_nothing_in_gets_a_row_with_0(tmp_path):
    book = Gradebook(A_CLASS, COLLECTED, ("02_pairing",), ("ada", "alan", "grace"))
    rows = _csv(book, tmp_path)
    assert [(r["student"], r["chapter"], r["points"], r["max_points"], r["error"])
            for r in rows if r["student"] == "alan"] == [
        ("alan", "", "0", "3", "no submission"), ("alan", "total", "0", "3", "")]
    assert [s for s in to_dict(book)["students"] if s["student"] == "alan"] == [
        {"student": "alan", "submissions": 0, "points": 0, "max_points": 3}]
    assert "no submission" in table(book, 100)


def test_a_chapter_a_student_did_not_hand_in_gets_a_row_of_its_own():
    book = Gradebook(A_CLASS, COLLECTED, ("02_pairing", "05_partial_success"))
    assert book.missing() == [("ada", "05_partial_success"), ("grace", "05_partial_success")]
    shown = [line for line in table(book, 200).splitlines() if "no submission" in line]
    assert len(shown) == 2 and all("05_partial_success" in line for line in shown)


def test_the_totals_are_over_the_assignments_chapters_alone():
    # ada handed in 03 as well; the assignment is 02 and 05, and grace did 02 alone
    book = Gradebook(A_CLASS, COLLECTED, ("02_pairing", "05_partial_success"))
    assert totals(book) == [Total("ada", 2, 3, 6), Total("grace", 1, 1, 6)]
    assert to_dict(book)["chapters"] == ["02_pairing", "05_partial_success"]
    # the same chapter twice (a copy in another folder) counts once, the better one
    twice = Gradebook([*A_CLASS, Row(f"{COLLECTED}/grace/old/02_pairing.ipynb", "02_pairing",
                                     (*PAIRING, Exercise("pair_results", True, 2, 2, None)))],
                      COLLECTED, ("02_pairing",))
    assert totals(twice)[1] == Total("grace", 2, 3, 3)
