"""`keel-course grade` from the command line: its JSON, its CSV, its exit codes."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from keel_course.cli import main
from keel_course.grading.grade import NOT_STARTED
from keel_lab import LabError

pytestmark = pytest.mark.lab_wide

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("class")
    (out / "alice").mkdir()
    (out / "alice" / "status_history.ipynb").write_bytes(
        (NOTEBOOKS / "solutions" / "05_partial_success.ipynb").read_bytes())
    (out / "bob.ipynb").write_text("not a notebook")
    return out


def test_json_and_csv_for_a_folder(folder, capsys, tmp_path):
    assert main(["grade", str(folder), "--json", "--csv", str(tmp_path / "g.csv"),
                 "--jobs", "2", "--timeout", "60.0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [s["path"] for s in out["submissions"]] == [
        str(folder / "alice" / "status_history.ipynb"), str(folder / "bob.ipynb")]
    alice, bob = out["submissions"]
    assert (alice["chapter"], alice["points"], alice["max_points"], alice["error"]) == (
        "05_partial_success", 3, 3, None)
    assert bob["chapter"] is None and bob["exercises"] == [] and "not valid JSON" in bob["error"]
    assert out["exercises"] == {"status_history": {"submissions": 1, "passed": 1}}
    with (tmp_path / "g.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["student", "chapter", "path", "status_history", "points", "max_points",
                       "error", "feedback"]
    assert rows[1][:7] == ["alice", "05_partial_success", "alice/status_history.ipynb", "3",
                           "3", "3", ""]
    assert rows[2][:3] == ["bob", "", "bob.ipynb"] and "not valid JSON" in rows[2][6]


def test_exit_2_and_one_line_when_no_path_can_be_read(tmp_path):
    done = subprocess.run([sys.executable, "-m", "keel_course.cli", "grade",
                           str(tmp_path / "missing.ipynb"), str(tmp_path)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == (
        f"keel-course: error: no notebook to grade: {tmp_path / 'missing.ipynb'}, {tmp_path}")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("argv", "message"), [
    (["grade"], "the following arguments are required: PATH"),
    (["grade", "x", "--timeout", "0"], "0 is outside 0..86400 seconds"),
    (["grade", "x", "--timeout", "soon"], "'soon' is not a number of seconds"),
    (["grade", "x", "--jobs", "0"], "0 is outside 1..256"),
])
def test_bad_arguments_get_usage(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_a_csv_over_a_submission_is_refused_before_grading(folder, capsys):
    target = folder / "alice" / "status_history.ipynb"
    before = target.read_bytes()
    assert main(["grade", str(folder), "--csv", str(target)]) == 2
    captured = capsys.readouterr()
    assert target.read_bytes() == before and captured.out == ""
    assert "that is one of the submissions" in captured.err


def test_a_csv_in_a_missing_folder_is_refused_before_grading(folder, tmp_path, capsys):
    assert main(["grade", str(folder), "--csv", str(tmp_path / "no" / "g.csv")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "no folder" in captured.err


def test_the_grades_are_printed_before_a_csv_write_fails(folder, capsys, tmp_path,
                                                         monkeypatch):
    from keel_course.grading import gradebook

    def fails(rows: object, path: Path) -> None:
        raise LabError("cannot_write", "cannot write {path}: {reason}", path=path,
                       reason="disk full")

    monkeypatch.setattr(gradebook, "write_csv", fails)
    assert main(["grade", str(folder / "bob.ipynb"), "--json", "--csv",
                 str(tmp_path / "g.csv")]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["submissions"][0]["chapter"] is None
    assert "disk full" in captured.err


# -- issue 35: a gradebook an instructor reads without --json; several chapters ---------------

def _wrong_pairing() -> str:
    nb = json.loads((NOTEBOOKS / "solutions" / "02_pairing.ipynb").read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if "".join(cell["source"]).startswith("def pair_results"):
            cell["source"] = ["def pair_results(calls, results):\n",
                              "    return list(zip(calls, results))\n"]
    return json.dumps(nb)


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A collection as `keel-course classroom collect` lays it out: <student>/notebooks/."""
    out = tmp_path_factory.mktemp("collected")
    for student in ("ada", "grace"):
        (out / student / "notebooks").mkdir(parents=True)
    (out / "ada" / "notebooks" / "02_pairing.ipynb").write_bytes(
        (NOTEBOOKS / "solutions" / "02_pairing.ipynb").read_bytes())
    (out / "ada" / "notebooks" / "03_batching.ipynb").write_bytes(
        (NOTEBOOKS / "03_batching.ipynb").read_bytes())
    (out / "ada" / "notebooks" / "05_partial_success.ipynb").write_bytes(
        (NOTEBOOKS / "05_partial_success.ipynb").read_bytes())
    (out / "grace" / "notebooks" / "02_pairing.ipynb").write_text(_wrong_pairing())
    (out / "roster.txt").write_text("ada\ngrace\nalan  # never logged in\n")
    return out


def test_the_gradebook_says_who_why_and_who_handed_nothing_in(collected, tmp_path, capsys):
    assert main(["grade", str(collected), "--csv", str(tmp_path / "g.csv"), "--jobs", "2",
                 "--chapter", "02", "--chapter", "03", "--roster",
                 str(collected / "roster.txt")]) == 0
    captured = capsys.readouterr()
    assert "05_partial_success" not in captured.out
    assert "left out 1 notebook of another chapter" in captured.err
    with (tmp_path / "g.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["student", "chapter", "path", "count_in_order", "pair_results",
                             "make_batches", "points", "max_points", "error", "feedback"]
    assert [(r["student"], r["chapter"], r["path"], r["points"], r["max_points"], r["error"])
            for r in rows] == [
        ("ada", "02_pairing", "ada/notebooks/02_pairing.ipynb", "3", "3", ""),
        ("ada", "03_batching", "ada/notebooks/03_batching.ipynb", "0", "2",
         NOT_STARTED),  # the handout's notebook, untouched: said, not run
        ("grace", "02_pairing", "grace/notebooks/02_pairing.ipynb", "1", "3", ""),
        ("grace", "03_batching", "", "0", "2", "no submission"),  # a chapter not handed in
        ("alan", "", "", "0", "5", "no submission"),
        ("ada", "total", "", "3", "5", ""), ("grace", "total", "", "1", "5", ""),
        ("alan", "total", "", "0", "5", "")]
    grace = rows[2]["feedback"]
    assert grace.startswith("pair_results: your pairing was right in")
    assert grace.endswith("look each call's result up by its call_id")  # whole, not cut
    assert rows[1]["feedback"] == (
        "make_batches: not attempted: make_batches is still the handout's stub")
    assert str(collected) not in (tmp_path / "g.csv").read_text()  # paths below the class


@pytest.mark.parametrize("given", [["--chapter", "02,03"], ["--chapter", "03", "--chapter", "02"],
                                   ["--chapter", "02_pairing,03"]])
def test_several_chapters_are_graded_and_totalled_alone(collected, capsys, given):
    assert main(["grade", str(collected), "--json", "--jobs", "2", *given]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["chapters"] == ["02_pairing", "03_batching"]
    assert sorted(s["chapter"] for s in out["submissions"]) == [
        "02_pairing", "02_pairing", "03_batching"]
    assert out["students"] == [{"student": "ada", "submissions": 2, "points": 3, "max_points": 5},
                               {"student": "grace", "submissions": 1, "points": 1,
                                "max_points": 5}]


def test_an_unknown_chapter_is_one_line_before_grading(collected, capsys):
    assert main(["grade", str(collected), "--chapter", "02,08a"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "'08a' is not a chapter's name or number" in captured.err


def _keys(value: object) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def test_docs_grading_md_shows_the_json_as_it_is(collected, capsys):
    assert main(["grade", str(collected), "--json", "--jobs", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    text = (NOTEBOOKS.parent / "docs" / "grading.md").read_text(encoding="utf-8")
    block = text.split("With `--json`:", 1)[1].split("```", 2)[1]
    documented = set(re.findall(r'(?<![:|] )"(\w+)"', block))  # keys, not "none"
    assert documented == _keys(out) - set(out["exercises"])  # an exercise's name is `name:`
