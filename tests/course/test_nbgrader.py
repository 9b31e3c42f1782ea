"""The chapters as an nbgrader course: the metadata nbgrader reads, and a real round trip with
the `nbgrader` package (generate the assignment, students submit a solved, a wrong and a wrong
notebook with its check cell edited, autograde, scores)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from json_fields import damage
from nbgrader.api import Gradebook
from nbgrader.nbgraderformat import SCHEMA_VERSION as NBGRADER_SCHEMA
from nbgrader.nbgraderformat import MetadataValidator

from keel_course import nbgrader as lab_nbgrader
from keel_course.cli import main
from keel_course.editions import (
    STUB,
    exercises,
    notebook_text,
    read_notebook,
    solution_paths,
)
from keel_course.handout import find_leaks, solution_lines
from keel_course.nbgrader import SCHEMA_VERSION, layout_course, nbgrader_source
from keel_lab.core.errors import LabError
from keel_lab.course.cells import source, tags
from keel_lab.course.checks.check import POINTS

SOLUTIONS = solution_paths()
CHAPTER = "03_batching"  # the fastest chapter with an exercise under a kernel


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.stem)
def test_every_cell_has_the_metadata_nbgrader_expects(path):
    solution = read_notebook(path)
    nb = nbgrader_source(solution)
    assert SCHEMA_VERSION == NBGRADER_SCHEMA
    MetadataValidator().validate_nb(nbformat.reads(json.dumps(nb), as_version=4))
    names = exercises(solution)
    for cell, original in zip(nb["cells"], solution["cells"], strict=True):
        meta = cell["metadata"].get("nbgrader")
        kind = tags(cell)
        if "prediction" in kind:  # the learner writes a letter; not graded, not given
            assert meta is None and '= ""' in source(cell)
            continue
        assert meta["schema_version"] == SCHEMA_VERSION
        if "exercise" in kind:
            assert meta == {"grade": False, "grade_id": names.pop(0), "locked": False,
                            "schema_version": 3, "solution": True}
            assert source(cell) == source(original)  # the solution stays in the source
            exercise = meta["grade_id"]
        elif "check" in kind:
            assert meta == {"grade": True, "grade_id": f"{exercise}_check", "locked": True,
                            "points": POINTS[exercise], "schema_version": 3, "solution": False}
            assert source(cell).startswith("from keel_lab.course.checks import check\n")
            assert "NBVAL" not in source(cell)
        elif "observe" in kind:
            assert meta["solution"] and not meta["grade"] and "### BEGIN SOLUTION" in source(cell)
        else:
            assert meta == {"grade": False, "grade_id": original["id"], "locked": True,
                            "schema_version": 3, "solution": False}
    assert names == []


def test_layout_writes_each_chapter_and_keeps_an_edited_config(tmp_path):
    written = layout_course(tmp_path, ["05", "03"])
    assert written == [tmp_path / "source" / c / f"{c}.ipynb"
                       for c in ("03_batching", "05_partial_success")] + [
                           tmp_path / "nbgrader_config.py"]
    assert (tmp_path / "source" / "03_batching" / "glossary.md").is_file()
    config = (tmp_path / "nbgrader_config.py").read_text()
    compile(config, "nbgrader_config.py", "exec")
    assert STUB in config and 'course_id = "keel-lab"' in config
    (tmp_path / "nbgrader_config.py").write_text(config + "# mine\n")
    assert layout_course(tmp_path, ["05"]) == [
        tmp_path / "source" / "05_partial_success" / "05_partial_success.ipynb"]
    assert (tmp_path / "nbgrader_config.py").read_text().endswith("# mine\n")


def test_an_unknown_chapter_is_a_lab_error(tmp_path):
    with pytest.raises(LabError, match="no chapter matches 'nine'"):
        layout_course(tmp_path, ["nine"])


def test_an_unwritable_course_folder_is_a_lab_error(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(LabError, match="cannot write the nbgrader course to"):
        layout_course(tmp_path / "file" / "course", ["08"])


def test_cli_lays_out_the_course(tmp_path, capsys):
    assert main(["nbgrader", str(tmp_path / "course"), "08"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        str(tmp_path / "course" / "source" / "08_production" / "08_production.ipynb"),
        str(tmp_path / "course" / "nbgrader_config.py")]
    assert main(["nbgrader", str(tmp_path / "course"), "nine"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no chapter matches 'nine'" in err


WRONG = "def make_batches(requests, tools):\n    return [[request] for request in requests]\n"


def _nbgrader(course: Path, *args: str) -> None:
    """nbgrader's own command; it runs `alembic` from PATH, so the venv's bin goes first."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]


def _submit(course: Path, student: str, released: dict, answer: str, test: str = "") -> None:
    """The released notebook with `answer` written in; with `test`, its check cell edited."""
    nb = json.loads(json.dumps(released))
    [cell] = [c for c in nb["cells"] if "exercise" in tags(c)]
    cell["source"] = answer
    if test:
        [check] = [c for c in nb["cells"] if "check" in tags(c)]
        check["source"] = test
    folder = course / "submitted" / student / CHAPTER
    folder.mkdir(parents=True)
    (folder / f"{CHAPTER}.ipynb").write_text(notebook_text(nb))


def test_nbgrader_releases_and_autogrades_a_chapter(tmp_path):
    course = tmp_path / "course"
    layout_course(course, [CHAPTER])
    _nbgrader(course, "generate_assignment", CHAPTER)
    released_path = course / "release" / CHAPTER / f"{CHAPTER}.ipynb"
    released = read_notebook(released_path)
    assert find_leaks(released_path.parent, solution_lines(SOLUTIONS)) == []
    [exercise] = [c for c in released["cells"] if "exercise" in tags(c)]
    assert STUB in source(exercise) and "### BEGIN SOLUTION" not in source(exercise)

    solution = read_notebook(course / "source" / CHAPTER / f"{CHAPTER}.ipynb")
    [answer] = [source(c) for c in solution["cells"] if "exercise" in tags(c)]
    solved = "".join(x for x in answer.splitlines(keepends=True) if "SOLUTION" not in x)
    _submit(course, "ada", released, solved)
    _submit(course, "bob", released, WRONG)
    _submit(course, "cy", released, WRONG, test="print('make_batches: PASSED')")
    _nbgrader(course, "autograde", CHAPTER)

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        submissions = {s: gradebook.find_submission(CHAPTER, s) for s in ("ada", "bob", "cy")}
        scores = {s: (sub.score, sub.max_score) for s, sub in submissions.items()}
    points = POINTS["make_batches"]
    assert scores == {"ada": (points, points), "bob": (0, points), "cy": (0, points)}
    assert not (course / "autograded" / "ada" / CHAPTER / ".keel-progress.json").exists()


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("inside", ["keel_lab", "keel_lab/course", "notebooks",
                                    "notebooks/solutions"])
def test_a_folder_inside_the_sources_is_refused(inside, capsys):
    root = ROOT / inside / "nbgrader-course"
    assert main(["nbgrader", str(root), "03"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{root} is inside" in err
    assert not root.exists()


def test_a_link_to_a_source_folder_is_refused(tmp_path):
    (tmp_path / "course").symlink_to(ROOT / "keel_lab")
    with pytest.raises(LabError, match="is inside"):
        layout_course(tmp_path / "course", ["03"])
    assert not (ROOT / "keel_lab" / "source").exists()


@pytest.mark.parametrize("damage", ['{"cells": [', "", '{"cells": [3]}', "{}"])
def test_a_half_written_solution_is_one_line_naming_it(tmp_path, monkeypatch, capsys, damage):
    broken = tmp_path / "03_batching.ipynb"
    broken.write_text(damage)
    monkeypatch.setattr(lab_nbgrader, "solution_paths", lambda names=(): [broken])
    assert main(["nbgrader", str(tmp_path / "course")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"keel-course: error: {broken} is not a notebook the course can read (")
    assert err.count("\n") == 1 and not (tmp_path / "course").exists()


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.data())
def test_fuzz_a_damaged_solution_is_a_lab_error_never_a_traceback(tmp_path_factory, data):
    nb = read_notebook(SOLUTIONS[2])
    damage(nb, data, [None, 0, "", [], {}, {"cell_type": "code"}])
    folder = tmp_path_factory.mktemp("damaged")
    file = folder / SOLUTIONS[2].name
    file.write_text(json.dumps(nb), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lab_nbgrader, "solution_paths", lambda names=(): [file])
        try:
            written = layout_course(folder / "course")
        except LabError as exc:
            assert "\n" not in str(exc)
            assert not (folder / "course").exists()
        else:  # a shape nbgrader_source still reads: it comes out as JSON
            assert written[0].name == SOLUTIONS[2].name
            assert isinstance(read_notebook(written[0]), dict)


def test_a_notebook_path_taken_by_a_folder_is_named(tmp_path, capsys):
    target = tmp_path / "course" / "source" / "08_production" / "08_production.ipynb"
    target.mkdir(parents=True)
    assert main(["nbgrader", str(tmp_path / "course"), "08"]) == 2
    assert capsys.readouterr().err == (f"keel-course: error: cannot write the nbgrader course to "
                                       f"{tmp_path / 'course'}: {target}: Is a directory\n")


def test_a_config_linked_to_nothing_is_not_written_through(tmp_path, capsys):
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").symlink_to(tmp_path / "outside" / "config.py")
    assert main(["nbgrader", str(course), "08"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nbgrader_config.py is a link to a missing file" in err
    assert not (tmp_path / "outside").exists() and not (course / "source").exists()
    (tmp_path / "mine.py").write_text("c = get_config()  # mine\n")
    (course / "nbgrader_config.py").unlink()
    (course / "nbgrader_config.py").symlink_to(tmp_path / "mine.py")  # a link to a file: kept
    assert main(["nbgrader", str(course), "08"]) == 0
    assert (tmp_path / "mine.py").read_text() == "c = get_config()  # mine\n"
