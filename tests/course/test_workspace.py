# ruff: noqa: RUF001 - Chinese text takes Chinese punctuation
"""The learner's copy of the course (keel_course/workspace.py): `make lab` and `make check`
work in workspace/, made from the learner edition and never overwritten, `make restore` puts one
chapter back after keeping the learner's copy; and whatever a learner writes there, the tracked
editions stay what `make test`, `make site` and `make handout` read."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import urllib.error
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

import browser  # the learner's JupyterLab started as test_live_lab.py starts it
import pytest
import test_notebooks  # the learner edition's sync check, called as `make test` runs it

from keel_course import workspace
from keel_course.checkout import Checkout
from keel_course.editions import (
    exercises,
    fill_solutions,
    learner_edition,
    notebook_text,
    read_notebook,
    solution_paths,
)
from keel_course.handout import build_handout, find_leaks, solution_lines
from keel_course.workspace import BACKUP, find_chapter, prepare, restore
from keel_lab._core.errors import LabError
from keel_lab._i18n import _, speaking

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
CHECKOUT = Checkout.at(ROOT)
MAKE = shutil.which("make")
WHEN = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def notebook(text: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "source": text}]})


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A small course: two chapters, the glossary and conftest beside them, what is not the
    learner's (a README, the solutions), and a Chinese edition in zh/."""
    nb = tmp_path / "notebooks"
    (nb / "solutions").mkdir(parents=True)
    (nb / "zh").mkdir()
    for name in ("01_history.ipynb", "02_pairing.ipynb"):
        (nb / name).write_text(notebook(f"start of {name}"))
        (nb / "solutions" / name).write_text(notebook("answer"))
        (nb / "zh" / name).write_text(notebook(f"开始 {name}"))
    (nb / "glossary.md").write_text("# Glossary\n")
    (nb / "zh" / "glossary.md").write_text("# 术语表\n")
    (nb / "conftest.py").write_text("# make check's summary\n")
    (nb / "README.md").write_text("# The chapters\n")
    return nb


def files(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = workspace.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- prepare: made once, never overwritten ---------------------------------------------------


def test_the_first_prepare_copies_the_learner_edition_and_what_make_check_needs(course, tmp_path):
    done = prepare(course, tmp_path / "workspace")
    assert done.created and done.updated == []
    assert files(tmp_path / "workspace") == {
        name: (course / name).read_text()
        for name in ("01_history.ipynb", "02_pairing.ipynb", "conftest.py", "glossary.md")}
    assert [p.name for p in done.added] == ["01_history.ipynb", "02_pairing.ipynb",
                                            "glossary.md", "conftest.py"]


def test_a_learners_work_is_never_overwritten(course, tmp_path):
    ws = tmp_path / "workspace"
    prepare(course, ws)
    (ws / "01_history.ipynb").write_text(notebook("my answer"))
    (ws / "glossary.md").write_text("# Glossary\nmy notes\n")
    (ws / "notes.txt").write_text("mine")
    (course / "01_history.ipynb").write_text(notebook("a newer start"))  # after `git pull`
    done = prepare(course, ws)
    assert not done.created and done.added == [] and done.updated == []
    assert (ws / "01_history.ipynb").read_text() == notebook("my answer")
    assert (ws / "glossary.md").read_text() == "# Glossary\nmy notes\n"
    assert (ws / "notes.txt").read_text() == "mine"


def test_a_missing_chapter_is_added_and_the_others_left_alone(course, tmp_path):
    ws = tmp_path / "workspace"
    prepare(course, ws)
    (ws / "01_history.ipynb").write_text(notebook("my answer"))
    (ws / "02_pairing.ipynb").unlink()
    (course / "03_batching.ipynb").write_text(notebook("start of chapter 3"))  # a new chapter
    done = prepare(course, ws)
    assert [p.name for p in done.added] == ["02_pairing.ipynb", "03_batching.ipynb"]
    assert (ws / "03_batching.ipynb").read_text() == notebook("start of chapter 3")
    assert (ws / "01_history.ipynb").read_text() == notebook("my answer")


def test_a_link_or_a_folder_in_a_chapters_place_is_left_alone(course, tmp_path):
    ws = tmp_path / "workspace"
    ws.mkdir()
    (ws / "01_history.ipynb").symlink_to(tmp_path / "nowhere.ipynb")
    (ws / "02_pairing.ipynb").mkdir()
    assert [p.name for p in prepare(course, ws).added] == ["glossary.md", "conftest.py"]
    assert (ws / "01_history.ipynb").is_symlink() and (ws / "02_pairing.ipynb").is_dir()


def test_make_checks_machinery_follows_the_course(course, tmp_path):
    """conftest.py holds no work of the learner's: an older one would break `make check`."""
    ws = tmp_path / "workspace"
    prepare(course, ws)
    (course / "conftest.py").write_text("# make check's summary, version 2\n")
    done = prepare(course, ws)
    assert done.added == [] and done.updated == [ws / "conftest.py"]
    assert (ws / "conftest.py").read_text() == "# make check's summary, version 2\n"
    assert prepare(course, ws).updated == []


def test_prepare_leaves_no_temporary_file_and_refuses_a_folder_without_chapters(course, tmp_path):
    ws = tmp_path / "workspace"
    prepare(course, ws)
    assert not [p for p in ws.iterdir() if p.name.startswith(".")]
    with pytest.raises(LabError, match=r"has no chapters \(NN_name.ipynb\) to copy"):
        prepare(course / "solutions" / "none", tmp_path / "other")
    assert not (tmp_path / "other").exists()


def test_a_file_in_the_way_of_the_folder_is_one_line(course, tmp_path, capsys):
    (tmp_path / "workspace").write_text("not a folder")
    code, out, err = run(capsys, "prepare", course, tmp_path / "workspace")
    assert code == 2 and out == ""
    assert err == f"cannot prepare your copy of the course: {tmp_path / 'workspace'}: File exists\n"


def test_prepare_says_where_the_copy_is_and_how_to_restore_in_one_line(course, tmp_path, capsys,
                                                                       monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "prepare", course, "workspace")
    assert (code, err) == (0, "")
    assert out == ("Your copy of the course, where your answers go: workspace/ (made now from "
                   "notebooks/). Restore a chapter to its start: make restore CHAPTER=04\n")
    (course / "03_batching.ipynb").write_text(notebook("start of chapter 3"))
    assert run(capsys, "prepare", course, "workspace")[1] == (
        "Your copy of the course, where your answers go: workspace/ (new chapters added: "
        "workspace/03_batching.ipynb). Restore a chapter to its start: make restore CHAPTER=04\n")
    assert "(as you left it)" in run(capsys, "prepare", course, "workspace")[1]
    assert run(capsys, "prepare", course, "workspace", "--quiet") == (0, "", "")


def test_the_chinese_edition_goes_to_its_own_folder_beside_the_english(course, tmp_path, capsys):
    ws = tmp_path / "workspace"
    code, out, _ = run(capsys, "prepare", course, ws, "--language", "zh")
    assert code == 0 and f"{ws / 'zh'}/（刚从 {course / 'zh'}/ 创建）" in out  # said in Chinese
    assert out.endswith("make restore CHAPTER=04 LANGUAGE=zh\n")
    assert files(ws / "zh") == {name: (course / "zh" / name).read_text()
                                for name in ("01_history.ipynb", "02_pairing.ipynb",
                                             "glossary.md")}
    assert (ws / "conftest.py").is_file()  # make check's, for workspace/zh/ too
    assert (ws / "01_history.ipynb").read_text() == (course / "01_history.ipynb").read_text()


@pytest.mark.parametrize("language", ["fr", "../zh", ""])
def test_a_language_without_an_edition_is_one_line_and_exit_2(course, tmp_path, capsys,
                                                              language):
    code, out, err = run(capsys, "prepare", course, tmp_path / "ws", "--language", language)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("cannot prepare your copy of the course: ")
    assert not (tmp_path / "ws" / "fr").exists()


# -- restore: one chapter back to its start, the learner's copy kept -------------------------


def test_restore_keeps_the_learners_copy_then_puts_the_chapter_back(course, tmp_path):
    ws = tmp_path / "workspace"
    prepare(course, ws)
    (ws / "02_pairing.ipynb").write_text(notebook("my answer"))
    (ws / "01_history.ipynb").write_text(notebook("my other answer"))
    done = restore(course, ws, "02", now=WHEN)
    assert done.backup == ws / BACKUP / "02_pairing.20250102T030405Z.ipynb" and done.changed
    assert done.backup.read_text() == notebook("my answer")
    assert (ws / "02_pairing.ipynb").read_text() == (course / "02_pairing.ipynb").read_text()
    assert (ws / "01_history.ipynb").read_text() == notebook("my other answer")
    (ws / "02_pairing.ipynb").write_text(notebook("my second try"))
    again = restore(course, ws, "pairing", now=WHEN)  # the same second: a name of its own
    assert again.backup == ws / BACKUP / "02_pairing.20250102T030405Z-2.ipynb"
    assert again.backup.read_text() == notebook("my second try")
    assert done.backup.read_text() == notebook("my answer")


def test_restore_of_an_untouched_or_missing_chapter_needs_no_backup(course, tmp_path):
    ws = tmp_path / "workspace"
    prepare(course, ws)
    done = restore(course, ws, "1")
    assert (done.backup, done.changed) == (None, False)
    (ws / "01_history.ipynb").unlink()
    done = restore(course, ws, "history")
    assert (done.backup, done.changed) == (None, True)
    assert (ws / "01_history.ipynb").read_text() == (course / "01_history.ipynb").read_text()
    assert not (ws / BACKUP).exists()


@pytest.mark.parametrize(("given", "name"), [
    ("04", "04_streaming"), ("4", "04_streaming"), (" 04 ", "04_streaming"),
    ("stream", "04_streaming"), ("STREAMING", "04_streaming"),
    ("04_streaming.ipynb", "04_streaming"),
    ("1", "01_history"), ("history", "01_history"),
    ("04a", "04a_where_calls_close"), ("4A", "04a_where_calls_close"),
    ("where_calls", "04a_where_calls_close"), ("02b", "02b_when_a_call_raises"),
    ("00", "00_asyncio_primer"), ("0", "00_asyncio_primer"), ("asyncio", "00_asyncio_primer")])
def test_a_chapter_is_named_by_its_number_or_a_part_of_its_name(given, name):
    """A number names the core chapter, not the deeper notebooks beside it (04a, ...)."""
    assert find_chapter(NOTEBOOKS, given).stem == name


@pytest.mark.parametrize(("given", "error"), [
    ("12", r"^no chapter matches '12': give its number or a part of its file name "
          r"\(00_asyncio_primer, 01_history, 02_pairing, 02a_delay_spread, "),
    ("04c", r"^no chapter matches '04c': .*04_streaming, 04a_where_calls_close, 05_"),
    ("stremaing", r"^no chapter matches 'stremaing'"),
    ("solutions", r"^no chapter matches 'solutions'"),
    ("²", r"^no chapter matches '²'"),
    ("ing", r"^'ing' matches \d chapters \(02_pairing, 03_batching, 04_streaming.*\): "
            r"give its number$"),
    ("", r"^no chapter given: name one by its number or a part of its file name, "
         r"e\.g\. CHAPTER=04 \(00_asyncio_primer, 01_history, ")])
def test_no_match_or_more_than_one_is_a_clear_error(given, error):
    with pytest.raises(LabError, match=error):
        find_chapter(NOTEBOOKS, given)


@pytest.mark.parametrize(("given", "code"), [("12", "no_chapter_matches"),
                                             ("ing", "chapter_ambiguous"),
                                             ("", "no_chapter_given")])
def test_a_chapter_error_is_told_by_its_code_in_any_language(given, code):
    """The pseudo-locale turns every word to nonsense (in ⟦ ⟧); the code stays."""
    with speaking("qps"):
        with pytest.raises(LabError) as err:
            find_chapter(NOTEBOOKS, given)
        shown = str(err.value)  # rendered where it is shown, in the language spoken there
    assert err.value.code == code and shown.startswith("\u27e6")


def test_restore_says_where_the_copy_is_kept_in_one_line(course, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    prepare(course, Path("workspace"))
    Path("workspace/02_pairing.ipynb").write_text(notebook("my answer"))
    code, out, err = run(capsys, "restore", course, "workspace", "pairing")
    assert (code, err) == (0, "") and out.count("\n") == 1
    assert out.startswith("Restored workspace/02_pairing.ipynb to its start; your copy is kept "
                          "as workspace/.backup/02_pairing.20")
    assert out.endswith(".ipynb (in JupyterLab: File > Reload Notebook from Disk)\n")
    assert run(capsys, "restore", course, "workspace", "2")[1] == (
        "workspace/02_pairing.ipynb is already at its start: nothing to restore\n")
    code, out, err = run(capsys, "restore", course, "workspace", "7")
    assert (code, out) == (2, "") and err == (
        "make restore: no chapter matches '7': give its number or a part of its file name "
        "(01_history, 02_pairing)\n")


def test_a_number_restores_the_core_chapter_and_a_letter_the_deeper_notebook(course, tmp_path,
                                                                           capsys):
    (course / "02a_more.ipynb").write_text(notebook("start of 02a"))
    ws = tmp_path / "workspace"
    prepare(course, ws)
    (ws / "02_pairing.ipynb").write_text(notebook("my answer"))
    (ws / "02a_more.ipynb").write_text(notebook("my deeper answer"))
    assert run(capsys, "restore", course, ws, "02")[0] == 0
    assert (ws / "02_pairing.ipynb").read_text() == notebook("start of 02_pairing.ipynb")
    assert (ws / "02a_more.ipynb").read_text() == notebook("my deeper answer")
    assert run(capsys, "restore", course, ws, "2a")[0] == 0
    assert (ws / "02a_more.ipynb").read_text() == notebook("start of 02a")
    code, out, err = run(capsys, "restore", course, ws, "02b")
    assert (code, out) == (2, "") and err == (
        "make restore: no chapter matches '02b': give its number or a part of its file name "
        "(01_history, 02_pairing, 02a_more)\n")


def test_restore_in_the_chinese_edition(course, tmp_path, capsys):
    ws = tmp_path / "workspace"
    run(capsys, "prepare", course, ws, "--language", "zh")
    (ws / "zh" / "01_history.ipynb").write_text(notebook("我的答案"))
    code, _, _ = run(capsys, "restore", course, ws, "01", "--language", "zh")
    assert code == 0
    assert (ws / "zh" / "01_history.ipynb").read_text() == notebook("开始 01_history.ipynb")
    [kept] = (ws / "zh" / BACKUP).iterdir()
    assert kept.read_text() == notebook("我的答案")


# -- the Makefile: make lab, make check and make restore go through the module ---------------


def make_n(*args: str) -> list[str]:
    """What make would run (-n), never installing first (-o: the venv counts as done)."""
    if MAKE is None:
        pytest.skip("no make on this machine")
    env = {k: v for k, v in os.environ.items()
           if k not in ("KEEL_LAB_LANG", "LANGUAGE", "MAKEFLAGS")}
    done = subprocess.run([MAKE, "--no-print-directory", "-n", "-o", ".venv/.installed", *args],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_make_lab_opens_jupyterlab_on_the_learners_copy():
    lines = make_n("lab")
    assert lines[0] == (".venv/bin/python -m keel_course.workspace prepare notebooks "
                        "workspace --language en")
    assert lines[-1] == ".venv/bin/python -m keel_course.lab workspace --language en"
    assert make_n("lab", "LANGUAGE=zh")[0].endswith(" prepare notebooks workspace --language zh")


@pytest.mark.slow
def test_make_labs_jupyterlab_really_serves_the_learners_copy_without_nbgrader(tmp_path):
    """`jupyter lab workspace` would run JupyterLab's own `workspace` subcommand: the command
    `make lab` runs is started for real, and must serve the learner's folder; nbgrader is
    installed in the same venv for instructors, and the learner's server loads none of it: its
    page disables nbgrader's lab extension and the news question, its log has no NbGrader line,
    and nbgrader's pages are not found."""
    (tmp_path / "workspace").mkdir()
    command = make_n("lab")[-1].split()
    command[0] = str(ROOT / command[0])
    with browser.running_lab(tmp_path / "workspace", tmp_path, command) as lab:
        config = browser.page_config(lab.get(f"lab?token={lab.token}"))
        with pytest.raises(urllib.error.HTTPError, match="404"):
            lab.get("formgrader")
    text = lab.log.read_text()
    assert text.startswith("JupyterLab on workspace/: open the http://127.0.0.1 URL it prints "
                           "below. Ctrl-C twice stops it"), text
    assert f"Serving notebooks from local directory: {tmp_path / 'workspace'}" in text, text
    assert "nbgrader" not in text.casefold(), text
    assert "@jupyter/nbgrader" in config["disabledExtensions"]
    assert "@jupyterlab/apputils-extension:announcements" in config["disabledExtensions"]
    assert config["news"] == {"disabled": True}


def test_make_check_prepares_the_copy_then_checks_it():
    lines = make_n("check")
    assert lines[-2] == (".venv/bin/python -m keel_course.workspace prepare notebooks "
                         "workspace --language en --quiet")
    assert lines[-1].endswith(" -rN -qq workspace/*.ipynb")
    assert make_n("check", "LANGUAGE=zh")[-1].endswith(" -rN -qq workspace/zh/*.ipynb")


def test_make_check_chapter_checks_the_one_chapter_make_restore_names():
    assert make_n("check", "CHAPTER=02")[-1].startswith(
        "chapter=$(.venv/bin/python -m keel_course.workspace chapter notebooks workspace '02' "
        "--language en) && KEEL_LAB_LANG=en .venv/bin/pytest --nbval-lax ")
    assert make_n("check", "CHAPTER=02")[-1].endswith(' -rN -qq "$chapter"')
    assert " workspace '02' --language zh) && KEEL_LAB_LANG=zh " in make_n(
        "check", "LANGUAGE=zh", "CHAPTER=02")[-1]


def test_the_chapter_command_prints_the_learners_copy_of_the_chapter(course, tmp_path, capsys):
    ws = tmp_path / "workspace"
    assert run(capsys, "chapter", course, ws, "2") == (0, f"{ws / '02_pairing.ipynb'}\n", "")
    assert run(capsys, "chapter", course, ws, "history", "--language", "zh") == (
        0, f"{ws / 'zh' / '01_history.ipynb'}\n", "")
    code, out, err = run(capsys, "chapter", course, ws, "7")
    assert (code, out) == (2, "") and err == (
        "make check: no chapter matches '7': give its number or a part of its file name "
        "(01_history, 02_pairing)\n")
    assert not ws.exists()  # it names a chapter and writes nothing


@pytest.fixture(scope="module")
def learner_checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder that sees the checkout by links, with a learner's copy made as `make lab` makes
    it, in English and in Chinese: `make check` there runs as in the course's folder."""
    if MAKE is None or not (ROOT / ".venv" / "bin" / "python").is_file():
        pytest.skip("no make or no .venv on this machine")
    folder = tmp_path_factory.mktemp("checkout")
    for entry in ROOT.iterdir():
        if entry.name not in {"build", "workspace", ".git"}:
            (folder / entry.name).symlink_to(entry)
    assert workspace.main(["prepare", str(folder / "notebooks"), str(folder / "workspace"),
                           "--language", "zh"]) == 0
    return folder


def make_check(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("KEEL_LAB_LANG", "LANGUAGE", "MAKEFLAGS", "KEEL_PROGRESS", "COLUMNS")}
    return subprocess.run([str(MAKE), "--no-print-directory", "-o", ".venv/.installed", "check",
                           *args], cwd=folder, capture_output=True, text=True, env=env,
                          timeout=300)


def test_make_check_chapter_runs_that_chapter_alone_and_ends_with_its_totals(learner_checkout):
    """Chapter 2 answered as its solution has it; every other chapter unanswered, never run."""
    ws = learner_checkout / "workspace"
    mine = ws / "02_pairing.ipynb"
    filled = fill_solutions(read_notebook(mine),
                            read_notebook(NOTEBOOKS / "solutions" / "02_pairing.ipynb"))
    mine.write_text(json.dumps(filled, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    done = make_check(learner_checkout, "CHAPTER=02")
    assert done.returncode == 0, done.stdout + done.stderr
    cells = sum(c["cell_type"] == "code" for c in filled["cells"])
    lines = done.stdout.splitlines()
    assert lines[0].split()[0] == "." * cells  # one dot per cell of chapter 2, none of another's
    assert lines[1:3] == ["02_pairing  count_in_order  passed",
                          "02_pairing  pair_results    passed"]
    assert lines[3:] == [f"2 of 2 exercises pass; every exercise, with its last hint: "
                         f"{lines[3].split()[-3]} progress workspace"]
    assert lines[3].split()[-3].endswith("/bin/keel-lab")
    recorded = json.loads((ws / ".keel-progress.json").read_text())["exercises"]
    assert sorted(recorded) == ["count_in_order", "pair_results"]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_make_check_with_a_chapter_that_does_not_exist_names_the_chapters(learner_checkout,
                                                                         language):
    """One line before anything is checked, in the edition's language: make's own `Error 2`
    line follows it."""
    done = make_check(learner_checkout, "CHAPTER=12", f"LANGUAGE={language}")
    assert done.returncode == 2 and done.stdout == ""
    with speaking(language):
        said = _("make check: {error}").format(error=_(
            "no chapter matches {given}: give its number or a part of its file name "
            "({chapters})").format(given="'12'", chapters="\0"))
    assert done.stderr.startswith(said.split("\0")[0] + "00_asyncio_primer, 01_history, "), \
        done.stderr
    assert "02_pairing, 02a_delay_spread, " in done.stderr.splitlines()[0]


def test_make_restore_restores_through_the_module():
    assert make_n("restore", "CHAPTER=04") == [
        ".venv/bin/python -m keel_course.workspace restore notebooks workspace '04' "
        "--language en"]


def test_make_restore_without_a_match_is_one_line_and_exit_2():
    """Run for real: an error is found before anything is written."""
    if MAKE is None or not (ROOT / ".venv" / "bin" / "python").is_file():
        pytest.skip("no make or no .venv on this machine")
    env = {k: v for k, v in os.environ.items()
           if k not in ("KEEL_LAB_LANG", "LANGUAGE", "MAKEFLAGS")}
    done = subprocess.run([MAKE, "--no-print-directory", "-o", ".venv/.installed", "restore",
                           "CHAPTER=no-such-chapter"], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[0].startswith(
        "make restore: no chapter matches 'no-such-chapter': give its number or a part of its "
        "file name (00_asyncio_primer, 01_history, ")


def test_the_learners_copy_is_git_ignored():
    assert "workspace/" in (ROOT / ".gitignore").read_text().splitlines()


# -- end to end: a learner's answers leave make test, make handout and make site alone -------


def _site_script() -> ModuleType:
    """scripts/site.py, loaded as tests/course/test_site.py loads it (once per session)."""
    if "site_script" in sys.modules:
        return sys.modules["site_script"]
    spec = importlib.util.spec_from_file_location("site_script", ROOT / "scripts" / "site.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def _sync_verdicts() -> dict[str, str | None]:
    """test_learner_edition_is_in_sync on every chapter: None when it passes, else its message."""
    verdicts: dict[str, str | None] = {}
    for path in test_notebooks.SOLUTIONS:
        try:
            test_notebooks.test_learner_edition_is_in_sync(path)
            verdicts[path.name] = None
        except AssertionError as exc:
            verdicts[path.name] = str(exc)
    return verdicts


@dataclass(frozen=True)
class Answered:
    folder: Path  # the learner's copy, answers written in
    sync: dict[str, str | None]  # make test's sync check before they were written


@pytest.fixture(scope="module")
def answered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Answered]:
    """A learner's copy made by `make lab` from this repository, English and Chinese, with
    every exercise, prediction and fault written in as the solutions have them. It is the
    repository's own workspace/ when there is none yet (as in CI), removed afterwards: that is
    where a tool reading the wrong folder would find it; a workspace/ already there is someone's
    work and is left alone, and a temporary folder is used instead."""
    real = ROOT / "workspace"
    ws = real if not (real.exists() or real.is_symlink()) else \
        tmp_path_factory.mktemp("learner") / "workspace"
    before = _sync_verdicts()
    try:
        assert workspace.main(["prepare", str(NOTEBOOKS), str(ws), "--language", "zh"]) == 0
        for edition, folder in ((NOTEBOOKS, ws), (NOTEBOOKS / "zh", ws / "zh")):
            for solution in sorted((edition / "solutions").glob("*.ipynb")):
                mine = folder / solution.name
                filled = fill_solutions(read_notebook(mine), read_notebook(solution))
                mine.write_text(json.dumps(filled, indent=1, ensure_ascii=False) + "\n",
                                encoding="utf-8")
        (ws / ".keel-progress.json").write_text('{"exercises": {}}\n', encoding="utf-8")
        yield Answered(ws, before)
    finally:
        if ws == real:
            shutil.rmtree(real, ignore_errors=True)


@pytest.fixture(scope="module")
def answers() -> set[str]:
    return solution_lines([*solution_paths(CHECKOUT), *sorted((NOTEBOOKS / "zh" / "solutions")
                                                      .glob("*.ipynb"))])


def test_the_learners_copy_holds_the_answers(answered, answers):
    """The end-to-end tests below are meaningful: read, this copy would give answers away."""
    leaks = find_leaks(answered.folder, answers)
    assert {leak.file for leak in leaks} >= {"02_pairing.ipynb", "zh/02_pairing.ipynb"}


def test_make_tests_sync_check_is_the_same_whatever_the_learner_wrote(answered):
    """test_learner_edition_is_in_sync's verdicts (whether the tracked edition is in sync is its
    own test's business) do not change when a learner's copy holds answers."""
    assert _sync_verdicts() == answered.sync
    assert [test_notebooks.ROOT / p.name for p in test_notebooks.SOLUTIONS] == \
        [NOTEBOOKS / p.name for p in solution_paths(CHECKOUT)]


def test_the_handout_is_built_from_the_tracked_editions(answered, answers, tmp_path):
    out = build_handout(CHECKOUT, tmp_path / "handout")  # refuses to finish on a solution line
    assert find_leaks(out, answers) == []
    for path in solution_paths(CHECKOUT):
        handed = read_notebook(out / "notebooks" / path.name)
        assert handed == learner_edition(read_notebook(path))
        if exercises(handed):  # a chapter with exercises the learner has answered
            assert handed != read_notebook(answered.folder / path.name)


def test_the_sites_pages_are_staged_from_the_tracked_editions(answered, answers, tmp_path):
    site = _site_script()
    assert [e.notebooks for e in site.EDITIONS] == [NOTEBOOKS, NOTEBOOKS / "zh"]
    for edition in site.EDITIONS:
        site.stage(edition, site.EDITIONS, tmp_path / "src")
    site.check_no_solutions(tmp_path / "src")  # what refuses to build a site that would leak
    for edition in site.EDITIONS:
        staged = sorted((tmp_path / "src" / edition.code).glob("[0-9]*.ipynb"))
        assert [p.name for p in staged] == [p.name for p in workspace.chapters(edition.notebooks)]
        for page in staged:
            assert page.read_text(encoding="utf-8") == notebook_text(
                site.page(edition.notebooks / page.name))


@pytest.mark.slow
def test_the_built_site_publishes_no_answer(answered, answers, tmp_path):
    site = _site_script()
    out = tmp_path / "site"
    assert [e.code for e in site.build(out)] == ["en", "zh"]
    assert find_leaks(out, answers) == []
