"""A learner's progress file: what `check` records, what `show_progress`, `keel-lab progress`
and `make check` show, and that neither a bad folder nor a bad file ever breaks a check."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_fields import MARK, paths, reshape
from test_checks_status_history import by_segments, final_only

from keel_checks import VERIFIERS, check, progress
from keel_checks.exercises import PREDICTIONS
from keel_checks.progress import CHAPTERS, FILE, SWITCH, read, show_progress
from keel_checks.verdict import ExerciseNotPassed
from keel_cli._cells import CHECK_MARK
from keel_cli._command import main
from keel_course.editions import exercises
from keel_lab import LabError

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "notebooks" / "solutions").glob("*.ipynb"))


def named(fn: Any, name: str) -> Any:
    """A copy of `fn` under the exercise's name, as a learner's cell defines it."""
    return types.FunctionType(fn.__code__, fn.__globals__, name)


RIGHT, WRONG = named(by_segments, "status_history"), named(final_only, "status_history")


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A notebook folder the kernel runs in, with recording switched on."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(SWITCH, raising=False)
    progress._said.clear()
    return tmp_path


def kept(folder: Path) -> dict[str, Any]:
    return json.loads((folder / FILE).read_text(encoding="utf-8"))["exercises"]


def test_chapters_are_the_notebooks_exercises_in_course_order():
    found = {name: p.stem for p in SOLUTIONS for name in exercises(json.loads(p.read_text()))}
    assert list(CHAPTERS.items()) == list(found.items())
    assert set(CHAPTERS) == set(VERIFIERS)


def test_a_check_records_its_verdict_and_prints_only_the_verdict(here, capsys, raising):
    with pytest.raises(ExerciseNotPassed):
        check(WRONG)
    wrong_out = capsys.readouterr()
    entry = kept(here)["status_history"]
    assert entry["passed"] is False and entry["chapter"] == "05_partial_success"
    assert entry["hint"].startswith("a restart nobody has decided yet")
    assert entry["hint"] == str(wrong_out.out).split("[FAIL] ", 1)[1].splitlines()[0]
    check(RIGHT)
    right_out = capsys.readouterr()
    entry = kept(here)["status_history"]
    assert entry["passed"] is True and entry["hint"] is None
    assert "progress" not in right_out.out + right_out.err + wrong_out.out + wrong_out.err
    assert right_out.out.endswith("status_history: PASSED (17/17 checks)\n")


def test_switched_off_nothing_is_written_and_a_path_moves_the_file(here, monkeypatch):
    monkeypatch.setenv(SWITCH, "off")
    check(RIGHT)
    assert not (here / FILE).exists()
    monkeypatch.setenv(SWITCH, str(here / "elsewhere.json"))
    check(RIGHT)
    assert not (here / FILE).exists()
    assert read(here / "elsewhere.json").passed == 1


@pytest.mark.parametrize("switch", ["off", " False "])
def test_switched_off_the_table_says_recording_is_off_not_that_no_check_ran(
        here, capsys, monkeypatch, switch):
    monkeypatch.setenv(SWITCH, switch)
    check(RIGHT)
    show_progress()
    assert main(["progress"]) == 1
    out = capsys.readouterr().out
    assert out.count(f"(recording is off, KEEL_PROGRESS={switch}: no check is kept)") == 2
    assert "no check has run" not in out


def test_a_folder_that_cannot_be_written_never_breaks_a_check_and_is_said_once(
        here, capsys, monkeypatch, raising):
    (here / "a_file").write_text("")
    monkeypatch.setenv(SWITCH, str(here / "a_file" / FILE))  # its folder is a file
    check(RIGHT)
    with pytest.raises(ExerciseNotPassed):
        check(WRONG)
    err = capsys.readouterr().err
    assert err.count("keel-lab: your progress is not being saved") == 1
    assert "Not a directory" in err and err.count("\n") == 1
    assert [p.name for p in here.iterdir()] == ["a_file"]  # no temporary file left behind


def test_a_write_that_fails_at_the_end_leaves_no_temporary_file(here, capsys, monkeypatch):
    def refuse(src, dst):
        raise PermissionError(13, "Permission denied", str(dst))

    monkeypatch.setattr(progress.os, "replace", refuse)
    check(RIGHT)
    assert "Permission denied" in capsys.readouterr().err
    assert list(here.iterdir()) == []


def test_a_corrupt_file_is_left_alone_and_said_once(here, capsys):
    (here / FILE).write_text('{"exercises": {"run_status": ')
    check(RIGHT)
    check(RIGHT)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{FILE}: not valid JSON" in err
    assert (here / FILE).read_text() == '{"exercises": {"run_status": '


def test_from_the_course_folder_the_default_is_the_learners_copys_progress(here, monkeypatch):
    """`keel-lab progress` run where `make check` is run finds what `make check` recorded, in
    the learner's copy of the course (workspace/; workspace/zh/ for the Chinese edition), or in
    a handout's notebooks/."""
    monkeypatch.delenv("KEEL_LAB_LANG", raising=False)
    assert progress.find() == here / FILE  # nothing anywhere: the working folder's
    (here / "notebooks").mkdir()
    (here / "notebooks" / FILE).write_text("{}")  # a handout's folder
    assert progress.find() == here / "notebooks" / FILE
    (here / "workspace" / "zh").mkdir(parents=True)
    (here / "workspace" / "zh" / FILE).write_text("{}")
    assert progress.find() == here / "workspace" / "zh" / FILE  # the only one there is
    (here / "workspace" / FILE).write_text("{}")
    assert progress.find() == here / "workspace" / FILE
    monkeypatch.setenv("KEEL_LAB_LANG", "zh")
    assert progress.find() == here / "workspace" / "zh" / FILE  # the language's first
    (here / FILE).write_text("{}")
    assert progress.find() == here / FILE  # a file here wins


def test_show_progress_is_a_table_of_every_exercise(here, capsys):
    check(RIGHT)
    capsys.readouterr()
    show_progress()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (f"{here / FILE}: 1 of {len(CHAPTERS)} exercises passed; "
                        f"0 of {len(PREDICTIONS)} predictions made, 0 right")
    assert lines[1].split() == ["chapter", "exercise", "status", "when", "last", "hint"]
    rows = {line.split()[1]: line.split()[2] for line in lines[3:]}
    assert list(rows) == list(CHAPTERS)
    assert rows["status_history"] == "passed" and rows["answer_all"] == "not"


def test_show_progress_says_in_one_line_what_is_wrong_with_the_file(here, capsys):
    (here / FILE).write_text('{"exercises": {"status_history": {"passed": "yes"}}}')
    show_progress(here)
    assert capsys.readouterr().out == (
        f"keel-lab: {here / FILE}: exercise 'status_history': field 'passed' must be true or "
        "false, got a string\n")


def test_a_long_hint_is_shortened_in_the_table_only(here):
    progress.add(here / FILE, [("answer_all", False, "x" * 500)])
    row = next(r for r in read(here / FILE).rows() if r["exercise"] == "answer_all")
    assert row["last hint"] == "x" * 117 + "..."
    assert kept(here)["answer_all"]["hint"] == "x" * 500


def test_hints_are_stored_as_printable_text(here):
    progress.add(here / FILE, [("answer_all", False, "bad \ud800 \x1b[31m red")])
    assert read(here / FILE).entries["answer_all"].hint == "bad \\ud800 \\x1b[31m red"


# --- keel-lab progress ---


def test_cli_exit_codes_and_json(here, capsys):
    assert main(["progress"]) == 1
    assert (f"0 of {len(CHAPTERS)} exercises passed; 0 of {len(PREDICTIONS)} predictions made, "
            "0 right (no check has run here yet)" in capsys.readouterr().out)
    progress.add(here / FILE, [(name, True, None) for name in CHAPTERS])
    assert main(["progress", str(here)]) == 0
    assert f"{len(CHAPTERS)} of {len(CHAPTERS)} exercises passed" in capsys.readouterr().out
    assert main(["progress", str(here / FILE), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads((here / FILE).read_text())


@pytest.mark.parametrize(("content", "message"), [
    (b"\xff", "not UTF-8 text"),
    (b"[]", "not a progress file (expected an object with an 'exercises' object, got a list)"),
    (b'{"exercises": []}', "got 'exercises' as a list"),
    (b'{"exercises": {"a": 1}}', "exercise 'a': must be an object, got a number"),
    (b'{"exercises": {"a": {"passed": true}}}', "field 'chapter' is missing"),
    (b'{"exercises": {}, "exercises": {}}', "the key 'exercises' appears twice"),
    (b"[" * 100_000, "nested deeper than 100 levels"),
    (b" " * (progress.MAX_BYTES + 1), "not a progress file"),
])
def test_cli_reads_an_odd_file_with_one_line_and_exit_2(here, capsys, content, message):
    (here / FILE).write_bytes(content)
    assert main(["progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and err.startswith("keel-lab: error: ")


def test_cli_names_a_folder_it_may_not_search(here, capsys, monkeypatch):
    def denied(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "exists", denied)
    assert main(["progress", str(here)]) == 2
    assert capsys.readouterr().err == (
        f"keel-lab: error: {here}: cannot read (Permission denied)\n")


def test_cli_refuses_what_is_no_file(here, capsys):
    assert main(["progress", "/dev/zero"]) == 2
    assert main(["progress", str(here / "missing")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "keel-lab: error: /dev/zero: not a regular file",
        f"keel-lab: error: {here / 'missing'}: no such folder or file"]


# --- fuzz: any single-field mutation of a real file is read or refused in one line ---

VALID = {"exercises": {
    "answer_all": {"passed": True, "chapter": "01_history", "when": "2026-11-30T14:00:00+00:00",
                   "hint": None},
    "status_history": {"passed": False, "chapter": "05_partial_success",
                   "when": "2026-11-30T14:05:00+00:00", "hint": "a pause and a crash"}}}
REPLACEMENTS: list[Any] = [None, True, 0, 10**40, 1.5, "", "\ud800", "\x1b[2J", [], {}]
RAW = {"deep": "[" * 50_000, "huge_int": "9" * 5000, "nan": "NaN", "cut": '"unterminated'}


def mutate(path: tuple[Any, ...], kind: str, pick: int) -> str:
    value = copy.deepcopy(VALID)
    parent: Any = value
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    if kind == "drop":
        del parent[key]
    elif not reshape(parent, key, kind, REPLACEMENTS[pick % len(REPLACEMENTS)], pick):
        parent[key] = MARK
        return json.dumps(value).replace(json.dumps(MARK), RAW[kind], 1)
    return json.dumps(value)


@st.composite
def cases(draw: st.DrawFn) -> str:
    every = list(paths(VALID))
    path = every[draw(st.integers(0, len(every) - 1))]
    kind = draw(st.sampled_from(["drop", "retype", "renest", "truncate", *RAW]))
    return mutate(path, kind, draw(st.integers(0, 100)))


@settings(max_examples=400, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(cases())
def test_every_single_field_mutation_is_read_or_refused_in_one_line(here, text):
    (here / FILE).write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        table = read(here / FILE).table()
        assert "\x1b" not in table
    except LabError as exc:
        assert str(exc) and "\n" not in str(exc)
    except Exception as exc:  # pragma: no cover - the failure names where it came from
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        pytest.fail(f"{type(exc).__name__} at {Path(frame.filename).name}:{frame.lineno}")
    progress.record(Judged("status_history", False, ["a hint"]))  # recording over it never raises


@dataclass
class Judged:
    exercise: str
    passed: bool
    hints: list[str] = field(default_factory=list)


# --- make check: records the learner edition's verdicts, never the solutions' ---


def _notebook(check_source: str) -> dict[str, Any]:
    def cell(text: str, tag: str | None = None) -> dict[str, Any]:
        return {"cell_type": "code", "execution_count": None, "outputs": [], "source": text,
                "id": f"c{len(text)}", "metadata": {"tags": [tag] if tag else []}}
    body = "def status_history(events):\n    return ['completed']\n"
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "id": "m", "metadata": {}, "source": "## Exercise 5"},
        cell("from keel_checks import check"),
        cell(body, "exercise"), cell(check_source, "check")]}


def test_make_check_records_the_learner_edition_and_ends_with_its_totals(tmp_path):
    (tmp_path / "conftest.py").write_text((ROOT / "notebooks" / "conftest.py").read_text())
    (tmp_path / "05_partial_success.ipynb").write_text(
        json.dumps(_notebook("check(status_history)")))
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "05_partial_success.ipynb").write_text(
        json.dumps(_notebook(f"{CHECK_MARK}\ncheck(status_history)")))
    makefile = (ROOT / "Makefile").read_text()
    line = makefile.split("$(BIN)/pytest --nbval-lax")[1].split("\n")[0]
    flags = line[:line.index(" -qq ") + 4].split()  # what follows names the notebooks checked
    env = {k: v for k, v in os.environ.items() if k not in (SWITCH, "COLUMNS")}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval-lax", *flags, "05_partial_success.ipynb",
         "solutions/05_partial_success.ipynb"],
        capture_output=True, text=True, cwd=tmp_path, env=env)
    lines = result.stdout.splitlines()
    assert result.returncode == 1, result.stdout
    assert not (tmp_path / "solutions" / FILE).exists()
    entry = kept(tmp_path)["status_history"]
    assert entry["passed"] is False  # the advice first, the case (a long trace) after it
    assert entry["hint"].startswith("a business error goes back to the model, which answers "
                                    "with what it has: partial - expected ['partial']")
    assert entry["hint"].endswith("(case: a lookup of a missing incident [model.called, "
                                  "tool.requested, tool.finished, tool.requested, "
                                  "tool.failed(incident_not_found), model.called])")
    # the progress table is `keel-lab progress`'s alone: the dots, one line per exercise of
    # each notebook, the totals
    assert len(lines) == 4, result.stdout
    keel_lab = Path(sys.executable).parent / "keel-lab"
    assert lines[-1] == (f"0 of 2 exercises pass; every exercise, with its last hint: "
                         f"{keel_lab} progress solutions")
    for line, chapter in zip(lines[1:3], ["05_partial_success", "solutions/05_partial_success"],
                             strict=True):
        assert line.startswith(f"{chapter:<28}  status_history  not yet  a business error goes "
                               "back to the model")
        assert line.endswith("...") and len(line) == 99  # the width when piped, less one
