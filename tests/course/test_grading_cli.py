"""`keel-course grade` from the command line: its JSON, its CSV, its exit codes."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from keel_course.cli import main
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
    assert rows[0] == ["path", "chapter", "status_history", "points", "max_points", "error"]
    assert rows[1][1:5] == ["05_partial_success", "3", "3", "3"]


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
