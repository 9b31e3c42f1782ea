"""The chapters as an nbgrader course: the metadata nbgrader reads, which the learner edition
carries too; the check of what students submitted; and a real round trip with the `nbgrader`
package (generate the assignment, students submit notebooks of the handout - solved, unsolved,
partly solved, with their check cells edited - autograde, and the scores are `keel-course
grade`'s)."""

from __future__ import annotations

import asyncio
import copy
import csv
import json
import os
import re
import socket
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

from keel_checks.check import POINTS
from keel_cli._cells import source, tags
from keel_course import bubblewrap
from keel_course import nbgrader as lab_nbgrader
from keel_course.bubblewrap import NOBODY
from keel_course.checkout import Checkout
from keel_course.cli import main
from keel_course.editions import (
    IMPORT_CHECK,
    STUB,
    exercises,
    fill_solutions,
    learner_edition,
    notebook_text,
    read_notebook,
    solution_paths,
)
from keel_course.grading import grade
from keel_course.handout import build_handout, find_leaks, solution_lines
from keel_course.nbgrader import (
    DEEPER,
    SCHEMA_VERSION,
    check_submissions,
    expected_cells,
    layout_course,
    nbgrader_source,
    submission_problems,
)
from keel_course.nbgrader_kernel import ConfinedKernelManager
from keel_course.translation import learner as translated_learner
from keel_lab._core.errors import LabError

pytestmark = [pytest.mark.lab_wide, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
CHECKOUT = Checkout.at(ROOT)
AT = ["--checkout", str(ROOT)]  # the checkout the course is laid out from
SOLUTIONS = solution_paths(CHECKOUT)


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
            assert source(cell).startswith("from keel_lab.course import check\n")
            assert "NBVAL" not in source(cell)
        elif "observe" in kind:
            assert meta["solution"] and not meta["grade"] and "### BEGIN SOLUTION" in source(cell)
        else:
            assert meta == {"grade": False, "grade_id": original["id"], "locked": True,
                            "schema_version": 3, "solution": False}
    assert names == []


def test_layout_writes_each_chapter_and_keeps_an_edited_config(tmp_path):
    written = layout_course(CHECKOUT, tmp_path, ["05", "03"])
    assert written == [tmp_path / "source" / c / f"{c}.ipynb"
                       for c in ("03_batching", "05_partial_success")] + [
                           tmp_path / "nbgrader_config.py"]
    assert (tmp_path / "source" / "03_batching" / "glossary.md").is_file()
    config = (tmp_path / "nbgrader_config.py").read_text()
    compile(config, "nbgrader_config.py", "exec")
    assert STUB in config and 'course_id = "keel-lab"' in config
    (tmp_path / "nbgrader_config.py").write_text(config + "# mine\n")
    assert layout_course(CHECKOUT, tmp_path, ["05"]) == [
        tmp_path / "source" / "05_partial_success" / "05_partial_success.ipynb"]
    assert (tmp_path / "nbgrader_config.py").read_text().endswith("# mine\n")


def test_a_deeper_notebook_goes_to_the_deeper_assignment_with_the_chapter_that_links_it(tmp_path):
    """Optional, nothing to grade: in an assignment of their own, `deeper`, so that autograding
    a chapter never looks for them in a submission ("No submitted file"); laid out with the
    chapter that links them (the primer with chapter 2); named alone, one brings its chapter."""
    pairing = [f"{DEEPER}/00_asyncio_primer", "02_pairing/02_pairing",
               f"{DEEPER}/02a_delay_spread", f"{DEEPER}/02b_when_a_call_raises"]
    for name in ("02", "00", "02b"):
        assert layout_course(CHECKOUT, tmp_path, [name])[:4] == [
            tmp_path / "source" / f"{n}.ipynb" for n in pairing]
    assert sorted(p.name for p in (tmp_path / "source").iterdir()) == ["02_pairing", DEEPER]
    written = layout_course(CHECKOUT, tmp_path)
    chapters = [p.stem for p in SOLUTIONS if p.name[:2] != "00" and p.name[2] == "_"]
    assert sorted({p.parent.name for p in written if p.suffix == ".ipynb"}) == sorted(
        [*chapters, DEEPER])
    assert len(written) == len(SOLUTIONS)  # every notebook, the config kept
    assert (tmp_path / "source" / DEEPER / "glossary.md").is_file()


def test_links_between_assignments_reach_the_other_folder(tmp_path):
    """nbgrader releases each assignment into a folder of its own (`<home>/<assignment>/` once
    fetched): a link to a notebook of another assignment goes up and into it; within one, as
    it was."""
    layout_course(CHECKOUT, tmp_path, ["02", "05"])
    text = {p.stem: p.read_text() for p in (tmp_path / "source").rglob("*.ipynb")}
    assert "](../deeper/00_asyncio_primer.ipynb)" in text["02_pairing"]
    assert "](../deeper/02a_delay_spread.ipynb)" in text["02_pairing"]
    assert "](../02_pairing/02_pairing.ipynb)" in text["02a_delay_spread"]
    assert "](../01_history/01_history.ipynb)" in text["05_partial_success"]
    assert not re.search(r"\]\(0\w+\.ipynb", "".join(text.values()))


def test_an_unknown_chapter_is_a_lab_error(tmp_path):
    with pytest.raises(LabError, match="no chapter matches 'nine'"):
        layout_course(CHECKOUT, tmp_path, ["nine"])


def test_an_unwritable_course_folder_is_a_lab_error(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(LabError, match="cannot write the nbgrader course to"):
        layout_course(CHECKOUT, tmp_path / "file" / "course", ["08"])


def test_cli_lays_out_the_course(tmp_path, capsys):
    assert main([*AT, "nbgrader", str(tmp_path / "course"), "08"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        str(tmp_path / "course" / "source" / "08_production" / "08_production.ipynb"),
        str(tmp_path / "course" / "source" / DEEPER / "08a_screen_frames.ipynb"),
        str(tmp_path / "course" / "nbgrader_config.py")]
    assert main([*AT, "nbgrader", str(tmp_path / "course"), "nine"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no chapter matches 'nine'" in err


def _solution(chapter: str) -> dict:
    return read_notebook(solution_paths(CHECKOUT, [chapter])[0])


def _learner(chapter: str) -> dict:
    return learner_edition(_solution(chapter))


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.stem)
def test_the_learner_edition_carries_the_metadata_of_the_cells_nbgrader_grades(path):
    solution = read_notebook(path)
    learner, src = learner_edition(solution), nbgrader_source(solution)
    MetadataValidator().validate_nb(nbformat.reads(json.dumps(learner), as_version=4))
    for n, cell in enumerate(learner["cells"]):
        meta = cell["metadata"].get("nbgrader")
        if {"exercise", "check", "observe"} & set(tags(cell)):
            assert meta == src["cells"][n]["metadata"]["nbgrader"]
        else:  # nbgrader grades nothing else; "Your progress" is not in its source at all
            assert meta is None
        if "check" in tags(cell):  # to the character: nbgrader puts back an edited check
            assert source(cell) == source(src["cells"][n]) and source(cell).startswith(
                IMPORT_CHECK)
    expected = expected_cells(src)
    assert submission_problems(learner, expected) == []
    assert submission_problems(fill_solutions(learner, solution), expected) == []
    chinese = ROOT / "notebooks" / "zh" / "solutions" / path.name  # a Chinese handout's too
    assert submission_problems(translated_learner(read_notebook(chinese), "zh",
                                                  CHECKOUT.locale), expected) == []


def test_an_exercise_without_points_has_a_learner_edition_but_no_nbgrader_course():
    solution = {"cells": [
        {"cell_type": "code", "metadata": {"tags": ["exercise"]}, "outputs": [],
         "source": "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n"},
        {"cell_type": "code", "metadata": {"tags": ["check"]}, "outputs": [],
         "source": "# NBVAL_CHECK_OUTPUT\ncheck(f)"}]}
    learner = learner_edition(solution)
    assert "nbgrader" not in learner["cells"][1]["metadata"]
    with pytest.raises(LabError, match="exercise 'f' has no points in checks\\.check\\.POINTS"):
        nbgrader_source(solution)


def _nbgrader(course: Path, *args: str) -> str:
    """nbgrader's own command, and its log; it runs `alembic` from PATH, so the venv's bin goes
    first."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stderr


def _submit(course: Path, student: str, nb: dict, chapter: str = "02_pairing",
            name: str = "") -> Path:
    folder = course / "submitted" / student / chapter
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or f"{chapter}.ipynb")
    path.write_text(notebook_text(nb) if isinstance(nb, dict) else nb)
    return path


def _with(nb: dict, kind: str, edit) -> dict:
    """`nb` with `edit(cell)` applied to each cell tagged `kind`."""
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        if kind in tags(cell):
            edit(cell)
    return nb


CHAPTER = "02_pairing"  # two exercises, so a notebook can be partly solved


def test_nbgrader_autogrades_handout_notebooks_as_keel_course_grade_does(tmp_path):
    course = tmp_path / "course"
    layout_course(CHECKOUT, course, [CHAPTER])
    _nbgrader(course, "generate_assignment", CHAPTER)
    released = course / "release" / CHAPTER / f"{CHAPTER}.ipynb"
    assert find_leaks(released.parent, solution_lines(SOLUTIONS)) == []
    assert all(STUB in source(c) for c in read_notebook(released)["cells"]
               if "exercise" in tags(c))

    # What students have, not nbgrader's release:
    handout = build_handout(CHECKOUT, tmp_path / "handout")
    learner = read_notebook(handout / "notebooks" / f"{CHAPTER}.ipynb")
    solved = fill_solutions(learner, _solution(CHAPTER))
    first, second = exercises(learner)
    partly = copy.deepcopy(solved)
    [stub] = [c for c in learner["cells"] if "exercise" in tags(c) and f"def {second}(" in
              source(c)]
    [answer] = [c for c in partly["cells"] if c["id"] == stub["id"]]
    answer["source"] = stub["source"]

    def passed(cell):
        cell["source"] = f"print('{first}: PASSED')"

    students = {"ada": solved, "bob": learner, "cy": partly, "dee": _with(learner, "check", passed)}
    paths = [_submit(course, s, nb) for s, nb in students.items()]
    count, findings = check_submissions(course)
    assert count == 4 and [f.path.split("/")[1] for f in findings] == ["dee", "dee"]
    assert not any(f.blocking for f in findings)

    log = _nbgrader(course, "autograde", CHAPTER)
    assert "ERROR" not in log and "does not exist in the database" not in log
    assert "No submitted file" not in log  # once per optional notebook, when beside the chapter
    rows = grade(paths)
    by_keel = {s: {x.name: x.points for x in row.exercises}
               for s, row in zip(students, rows, strict=True)}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        by_nbgrader = {s: {x: gradebook.find_grade(f"{x}_check", CHAPTER, CHAPTER, s).auto_score
                           for x in (first, second)} for s in students}
        totals = {s: gradebook.find_submission(CHAPTER, s).score for s in students}
    assert by_nbgrader == by_keel == {
        "ada": {first: POINTS[first], second: POINTS[second]}, "bob": {first: 0, second: 0},
        "cy": {first: POINTS[first], second: 0}, "dee": {first: 0, second: 0}}
    assert totals == {s: sum(row.values()) for s, row in by_keel.items()}
    assert not (course / "autograded" / "ada" / CHAPTER / ".keel-progress.json").exists()

    # The grades out of nbgrader's gradebook, as docs/instructors.md says.
    _nbgrader(course, "export")
    with (course / "grades.csv").open(newline="") as f:
        exported = {r["student_id"]: float(r["raw_score"]) for r in csv.DictReader(f)}
    assert exported == {s: float(t) for s, t in totals.items()}

    # What docs/grading.md says of autograde: each submission's kernel is confined. Eve's
    # notebook looks for the solutions in source/, for gradebook.db, for the network, and tries
    # to leave a file in the course folder; it prints what it found into its own output. The
    # network: a port this test listens on, on the host's loopback.
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    spy = "\n".join([
        "import os, pathlib, socket",
        "here = pathlib.Path.cwd().parents[2]",
        "seen = (here / 'source').exists()",
        "db = (here / 'gradebook.db').exists()",
        "try:",
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=1).close(); net = True",
        "except OSError:",
        "    net = False",
        "try:",
        "    (here / 'eve-was-here').write_text('x'); wrote = True",
        "except OSError:",
        "    wrote = False",
        "print('SPY', os.getuid(), seen, db, net, wrote)", ""])
    eve = _with(learner, "exercise", lambda cell: cell.update(
        source=spy + "".join(cell["source"])) if f"def {first}(" in source(cell) else None)
    _submit(course, "eve", eve)
    with listener:
        _nbgrader(course, "autograde", CHAPTER, "--student", "eve")
    graded = read_notebook(course / "autograded" / "eve" / CHAPTER / f"{CHAPTER}.ipynb")
    said = [line for cell in graded["cells"] for out in cell.get("outputs", [])
            for line in "".join(out.get("text", "")).splitlines() if line.startswith("SPY")]
    assert said == [f"SPY {NOBODY} False False False False"]
    assert not (course / "eve-was-here").exists()


def test_without_bubblewrap_the_confined_kernel_refuses_and_says_how_to_opt_out(monkeypatch):
    monkeypatch.setattr(bubblewrap, "unavailable", lambda: "bubblewrap is not installed")
    with pytest.raises(RuntimeError, match=r"bubblewrap is not installed.*delete the line"):
        asyncio.run(ConfinedKernelManager()._async_pre_start_kernel())


def test_the_threat_model_says_how_autograde_confines_a_submission():
    """What the round trip above shows (eve's notebook) is in the threat model, with what it
    still lacks and the command to use instead, and the nbgrader section of the instructors'
    page points there; the config `keel-course nbgrader` writes names the confined kernel."""
    grading = (ROOT / "docs" / "grading.md").read_text(encoding="utf-8")
    model = grading[grading.index("### nbgrader's autograde"):grading.index("## Speed")]
    said = " ".join(model.split())
    for words in ("bubblewrap", "`nobody`", "no network", "`source/`", "`gradebook.db`",
                  "no memory limit", "refuses to start", "`keel-course grade`",
                  "`c.Execute.kernel_manager_class`"):
        assert words in said
    assert lab_nbgrader.CONFIG_LINE in lab_nbgrader.CONFIG
    instructors = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    nbgrader = instructors[instructors.index("## nbgrader"):]
    assert "grading.md#nbgraders-autograde" in nbgrader[:nbgrader.index("\n## ", 3)]


def _problems(nb: dict, chapter: str = CHAPTER) -> list[tuple[bool, str]]:
    return submission_problems(nb, expected_cells(nbgrader_source(
        _solution(chapter))), "release/x.ipynb")


def _set(key, value):
    def edit(cell):
        if value is None:
            del cell["metadata"]["nbgrader"][key]
        else:
            cell["metadata"]["nbgrader"][key] = value
    return edit


@pytest.mark.parametrize(("kind", "edit", "says"), [
    ("check", lambda c: c["metadata"].update(nbgrader="yes"), "damaged (not an object)"),
    ("check", _set("extra", 1), "damaged (unknown key 'extra')"),
    ("check", _set("schema_version", 2), "damaged (schema_version 2, not 3)"),
    ("exercise", _set("solution", "yes"), "damaged ('solution' is not true or false)"),
    ("check", _set("grade_id", "a b"), "damaged (grade_id 'a b')"),
    ("check", _set("points", None), "damaged (points None)"),
    ("check", _set("points", -1), "damaged (points -1)"),
    ("exercise", _set("grade_id", "x" * 100), "carries nbgrader metadata for 'xxxxx"),
    ("check", _set("grade", False), "is not the course's"),
    ("check", lambda c: c["metadata"].pop("nbgrader"), "the check cell 'count_in_order_check' "
                                                       "is missing"),
    ("exercise", lambda c: c.update(source=["x =", 3]), None),  # an answer: anything goes
])
def test_each_thing_nbgrader_cannot_grade_is_said_with_what_to_do(kind, edit, says):
    nb = _with(_learner(CHAPTER), kind, edit)
    problems = _problems(nb)
    if says is None:
        assert problems == []
        return
    assert problems and all(blocking for blocking, _ in problems)
    assert says in problems[0][1] and "\n" not in problems[0][1]
    assert "stops" in problems[0][1] or "0" in problems[0][1]
    assert "`keel-course grade`" in problems[0][1] or "release/x.ipynb" in problems[0][1]


def test_a_copied_cell_or_no_metadata_at_all_is_said():
    learner = _learner(CHAPTER)
    cells = learner["cells"]
    n = next(i for i, c in enumerate(cells) if "exercise" in tags(c))
    copied = {**learner, "cells": [*cells[:n + 1], copy.deepcopy(cells[n]), *cells[n + 1:]]}
    [(blocking, text)] = _problems(copied)
    assert blocking and text.startswith(f"cells {n + 1}, {n + 2} carry the same nbgrader "
                                        "grade_id 'count_in_order' (a copied cell)")
    bare = copy.deepcopy(learner)
    for cell in bare["cells"]:
        cell["metadata"].pop("nbgrader", None)
    assert _problems(bare) == [(True, "no cell carries nbgrader metadata (it was made from an "
                                      "older handout, or its cells were pasted into a new "
                                      "notebook): nbgrader would give it 0 points; grade it "
                                      "with `keel-course grade`, which finds exercises by "
                                      "their functions")]
    no_exercise = learner_edition(_solution("08a"))  # a deeper notebook
    assert _problems(no_exercise, "08a") == []  # nothing to grade, nothing missing


def test_an_edited_check_is_a_note_nbgrader_puts_the_check_back():
    edited = _with(_learner(CHAPTER), "check", lambda c: c.update(source="print('PASSED')"))
    problems = _problems(edited)
    assert [b for b, _ in problems] == [False, False]
    assert "was edited: nbgrader runs the course's copy in its place" in problems[0][1]


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.data())
def test_fuzz_a_damaged_submission_is_said_never_a_traceback(data):
    nb = _learner(CHAPTER)
    damage(nb, data, [None, 0, "", [], {}, True, {"cell_type": "code"}])
    for blocking, text in _problems(nb):
        assert isinstance(blocking, bool) and text and "\n" not in text


def test_cli_check_lists_what_nbgrader_cannot_grade_then_one_error_line(tmp_path, capsys):
    course = tmp_path / "course"
    layout_course(CHECKOUT, course, [CHAPTER])
    learner = _learner(CHAPTER)
    _submit(course, "ada", fill_solutions(learner, _solution(CHAPTER)))
    _submit(course, "bob", learner)
    # optional, handed in anyway: not a notebook of the chapter's assignment (those are in
    # `deeper`), so nothing nbgrader grades or asks for
    _submit(course, "bob", _learner("02a"), name="02a_delay_spread.ipynb")
    assert main(["nbgrader", "--check", str(course)]) == 0
    assert capsys.readouterr() == ("2 submitted notebooks: nbgrader can autograde them all\n", "")

    _submit(course, "cy", _with(learner, "check", lambda c: c["metadata"].pop("nbgrader")))
    _submit(course, "dee", learner, name=f"{CHAPTER}-Copy1.ipynb")
    _submit(course, "eve", '{"cells": [')
    _submit(course, "fay", learner, chapter="09_extra")
    _submit(course, "gus", _with(learner, "check", lambda c: c.update(source="pass")))
    assert main(["nbgrader", "--check", str(course), "02", "09"]) == 2
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        f"submitted/cy/{CHAPTER}/{CHAPTER}.ipynb", f"submitted/cy/{CHAPTER}/{CHAPTER}.ipynb",
        f"submitted/dee/{CHAPTER}/{CHAPTER}.ipynb", f"submitted/eve/{CHAPTER}/{CHAPTER}.ipynb",
        "submitted/fay/09_extra", f"submitted/gus/{CHAPTER}/{CHAPTER}.ipynb",
        f"submitted/gus/{CHAPTER}/{CHAPTER}.ipynb"]
    assert "the check cell 'count_in_order_check' is missing" in lines[0]
    assert f"rename '{CHAPTER}-Copy1.ipynb' to {CHAPTER}.ipynb" in lines[2]
    assert "nbgrader cannot read it (not valid JSON" in lines[3]
    assert "nbgrader has no assignment '09_extra'" in lines[4]
    assert ": note: the check cell" in lines[5]
    assert err == ("keel-course: error: 4 of 6 submitted notebooks cannot be autograded by "
                   "nbgrader as they are (listed above, each with what to do)\n")


def test_cli_check_with_nothing_submitted_is_one_line(tmp_path, capsys):
    assert main(["nbgrader", "--check", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "submitted is not a folder: nothing was submitted" in err
    _submit(tmp_path, "ada", _learner(CHAPTER))
    assert main(["nbgrader", "--check", str(tmp_path), "05"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "of an assignment matching '05'" in err
    (tmp_path / "source" / CHAPTER).mkdir(parents=True)
    (tmp_path / "source" / CHAPTER / f"{CHAPTER}.ipynb").write_text('{"cells": [3]}')
    assert main(["nbgrader", "--check", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a source notebook `keel-course nbgrader` wrote" in err


@pytest.mark.parametrize("inside", ["keel_lab", "keel_lab/course", "notebooks",
                                    "notebooks/solutions"])
def test_a_folder_inside_the_sources_is_refused(inside, capsys):
    root = ROOT / inside / "nbgrader-course"
    assert main([*AT, "nbgrader", str(root), "03"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{root} is inside" in err
    assert not root.exists()


def test_a_link_to_a_source_folder_is_refused(tmp_path):
    (tmp_path / "course").symlink_to(ROOT / "keel_lab")
    with pytest.raises(LabError, match="is inside"):
        layout_course(CHECKOUT, tmp_path / "course", ["03"])
    assert not (ROOT / "keel_lab" / "source").exists()


@pytest.mark.parametrize("damage", ['{"cells": [', "", '{"cells": [3]}', "{}"])
def test_a_half_written_solution_is_one_line_naming_it(tmp_path, monkeypatch, capsys, damage):
    broken = tmp_path / "03_batching.ipynb"
    broken.write_text(damage)
    monkeypatch.setattr(lab_nbgrader, "solution_paths", lambda checkout, names=(): [broken])
    assert main([*AT, "nbgrader", str(tmp_path / "course")]) == 2
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
        patch.setattr(lab_nbgrader, "solution_paths", lambda checkout, names=(): [file])
        try:
            written = layout_course(CHECKOUT, folder / "course")
        except LabError as exc:
            assert "\n" not in str(exc)
            assert not (folder / "course").exists()
        else:  # a shape nbgrader_source still reads: it comes out as JSON
            assert written[0].name == SOLUTIONS[2].name
            assert isinstance(read_notebook(written[0]), dict)


def test_a_notebook_path_taken_by_a_folder_is_named(tmp_path, capsys):
    target = tmp_path / "course" / "source" / "08_production" / "08_production.ipynb"
    target.mkdir(parents=True)
    assert main([*AT, "nbgrader", str(tmp_path / "course"), "08"]) == 2
    assert capsys.readouterr().err == (f"keel-course: error: cannot write the nbgrader course to "
                                       f"{tmp_path / 'course'}: {target}: Is a directory\n")


def test_a_config_linked_to_nothing_is_not_written_through(tmp_path, capsys):
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").symlink_to(tmp_path / "outside" / "config.py")
    assert main([*AT, "nbgrader", str(course), "08"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nbgrader_config.py is a link to a missing file" in err
    assert not (tmp_path / "outside").exists() and not (course / "source").exists()
    (tmp_path / "mine.py").write_text("c = get_config()  # mine\n")
    (course / "nbgrader_config.py").unlink()
    (course / "nbgrader_config.py").symlink_to(tmp_path / "mine.py")  # a link to a file: kept
    assert main([*AT, "nbgrader", str(course), "08"]) == 0
    assert (tmp_path / "mine.py").read_text() == "c = get_config()  # mine\n"
