"""The handout: what a class receives, and the proof that no solution is in it."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from json_fields import damage

from keel_checks.exercises import EXERCISES
from keel_cli._cells import source, tags
from keel_course import handout, translation
from keel_course.checkout import Checkout
from keel_course.cli import main
from keel_course.editions import (
    PROGRESS_CELLS,
    exercises,
    learner_edition,
    read_notebook,
    solution_paths,
)
from keel_course.handout import (
    CHECK_COMMAND,
    CHECK_ENV,
    MANIFEST,
    MIN_LINE,
    STUDENT_PACKAGES,
    Leak,
    build_handout,
    find_leaks,
    learner_text,
    normalized,
    solution_lines,
    zip_handout,
)
from keel_lab._core.errors import LabError

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
CHECKOUT = Checkout.at(ROOT)
AT = ["--checkout", str(ROOT)]  # the checkout the handout is made from
SOLUTIONS = solution_paths(CHECKOUT)  # the chapters and the deeper notebooks beside them
LINES = solution_lines(SOLUTIONS)
CHAPTER_5 = solution_paths(CHECKOUT, ["05_"])[0]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    folder = build_handout(CHECKOUT, tmp_path_factory.mktemp("class") / "handout")
    return folder, zip_handout(folder)


def _exercise_lines(path: Path) -> dict[str, set[str]]:
    """Each exercise's telling solution lines, from its own cell."""
    out = {}
    for cell in read_notebook(path)["cells"]:
        if "exercise" in tags(cell):
            block = source(cell).split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0]
            out[exercises({"cells": [cell]})[0]] = {normalized(x) for x in block.splitlines()
                                                    if len(normalized(x)) >= MIN_LINE}
    return out


def test_every_exercise_has_solution_lines_the_check_looks_for():
    per_exercise = {k: v for p in SOLUTIONS for k, v in _exercise_lines(p).items()}
    assert len(per_exercise) == len(EXERCISES)
    assert all(lines and lines <= LINES for lines in per_exercise.values()), per_exercise
    assert 'prediction_1 = "C" # your letter, A to F' in LINES  # chapter 6's letters too
    assert all(len(line) >= MIN_LINE for line in LINES)


def test_the_check_finds_every_line_in_the_solutions():
    found = {leak.line for leak in find_leaks(ROOT / "notebooks" / "solutions", LINES)}
    assert found == LINES


def test_no_solution_line_in_any_file_of_the_handout_or_its_zip(built):
    folder, archive = built
    assert find_leaks(folder, LINES) == []
    assert find_leaks(archive, LINES) == []
    names = zipfile.ZipFile(archive).namelist()
    assert len(names) == len([p for p in folder.rglob("*") if p.is_file()]) > 100


def _plant(folder: Path, where: str) -> str:
    """Put the first solution line of chapter 5 somewhere in the handout; the file's name."""
    solution = read_notebook(CHAPTER_5)
    answer = next(c for c in solution["cells"] if "exercise" in tags(c))
    line = next(x for x in source(answer).splitlines() if normalized(x) in LINES)
    learner_path = folder / "notebooks" / CHAPTER_5.name
    learner = read_notebook(learner_path)
    cell = next(c for c in learner["cells"] if "exercise" in tags(c))
    if where == "solutions folder":
        (folder / "notebooks" / "solutions").mkdir()
        shutil.copy(CHAPTER_5, folder / "notebooks" / "solutions")
        return f"notebooks/solutions/{CHAPTER_5.name}"
    if where == "exercise cell":
        cell["source"] = source(answer)
    elif where == "output":
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": [line + "\n"]}]
    elif where == "metadata":
        learner["metadata"]["answer"] = {"lines": ["x\n", line.strip()]}
    elif where == "split source":  # one line across two strings of the source list
        cell["source"] = [line[:10], line[10:] + "\n"]
    elif where == "package":
        (folder / "keel_lab" / "course" / "answers.py").write_text(f"def f(codes):\n{line}\n")
        return "keel_lab/course/answers.py"
    learner_path.write_text(json.dumps(learner))
    return f"notebooks/{CHAPTER_5.name}"


@pytest.mark.parametrize("where", ["solutions folder", "exercise cell", "output", "metadata",
                                   "split source", "package"])
def test_a_planted_solution_is_caught_in_the_folder_and_the_zip(built, tmp_path, where):
    copy = tmp_path / "handout"
    shutil.copytree(built[0], copy)
    file = _plant(copy, where)
    leaks = find_leaks(copy, LINES)
    assert leaks and {leak.file for leak in leaks} == {file}
    archive = zip_handout(copy)
    assert {leak.file for leak in find_leaks(archive, LINES)} == {f"handout.zip:handout/{file}"}


def test_a_zip_inside_the_handout_is_opened(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("deep/answer.txt", "    " + sorted(LINES)[0] + "\n")
    (tmp_path / "extra.zip").write_bytes(buffer.getvalue())
    assert find_leaks(tmp_path, LINES) == [Leak("extra.zip:deep/answer.txt", sorted(LINES)[0])]


def test_a_build_that_would_leak_is_refused_and_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(handout, "learner_edition", lambda nb: nb)  # stubbing forgotten
    with pytest.raises(LabError, match="would give away a solution: notebooks/01_history"):
        build_handout(CHECKOUT, tmp_path / "handout")
    assert not (tmp_path / "handout").exists()


def test_contents_learner_edition_package_requirements_readme(built):
    folder, _ = built
    files = json.loads((folder / MANIFEST).read_text())["files"]
    assert {f.split("/")[0] for f in files} == {
        "README.md", "data", "keel_checks", "keel_cli", "keel_lab", "notebooks", "pyproject.toml",
        "requirements.txt"}
    assert not [f for f in files if "solutions" in f or f.startswith("docs/") or ".pyc" in f]
    assert "data/incidents.json" in files and "keel_checks/progress.py" in files
    for path in SOLUTIONS:
        learner = read_notebook(folder / "notebooks" / path.name)
        assert learner == learner_edition(read_notebook(path))
        has_exercises = bool(exercises(learner))
        assert (learner["cells"][-2:] == PROGRESS_CELLS) == has_exercises
    assert (folder / "notebooks" / "glossary.md").is_file()
    assert (folder / "notebooks" / "conftest.py").is_file()
    requirements = (folder / "requirements.txt").read_text().splitlines()
    named = [r for r in requirements if r and not r.startswith("#")]
    assert [r.split(">")[0].split("=")[0] for r in named] == list(STUDENT_PACKAGES)
    assert not {"ruff", "mypy", "nbgrader", "hypothesis"} & {r.split(">")[0] for r in named}
    readme = (folder / "README.md").read_text()
    assert "pip install -r requirements.txt ." in readme and "jupyter lab notebooks" in readme


def test_readme_checks_answers_as_make_check_does():
    recipe = (ROOT / "Makefile").read_text().split("\ncheck:")[1].split("\n\n")[0]
    flags = CHECK_COMMAND.split(" notebooks/")[0]  # then the notebooks: all, or one chapter's
    assert "KEEL_LAB_LANG=$(LANGUAGE) $(BIN)/" + flags + " $(if $(CHAPTER)" in recipe
    assert "$(LEARNER)/*.ipynb" in recipe
    for language, env in CHECK_ENV.items():
        assert f"{env}.venv/bin/{CHECK_COMMAND}" in handout.README[language]
        assert env == ("" if language == "en" else f"KEEL_LAB_LANG={language} ")


@pytest.fixture(scope="module")
def built_zh(tmp_path_factory) -> tuple[Path, Path]:
    folder = build_handout(CHECKOUT, tmp_path_factory.mktemp("class-zh") / "handout", "zh")
    return folder, zip_handout(folder)


def test_the_chinese_handout_is_the_chinese_learner_edition(built_zh):
    folder, archive = built_zh
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["language"] == "zh"
    assert not [f for f in manifest["files"] if "solutions" in f or f.startswith("docs/")]
    zh = ROOT / "notebooks" / "zh"
    for path in SOLUTIONS:
        learner = read_notebook(folder / "notebooks" / path.name)
        assert learner == translation.learner(read_notebook(zh / "solutions" / path.name), "zh",
                                              CHECKOUT.locale)
        first = next(c for c in learner["cells"] if c["cell_type"] == "code")
        assert source(first).endswith('set_language("zh")')  # checks answer in Chinese
    assert (folder / "notebooks" / "glossary.md").read_text(encoding="utf-8") == (
        zh / "glossary.md").read_text(encoding="utf-8")
    assert (folder / "notebooks" / "conftest.py").read_bytes() == (
        ROOT / "notebooks" / "conftest.py").read_bytes()
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert "jupyter lab notebooks" in readme and "KEEL_LAB_LANG=zh .venv/bin/pytest" in readme
    zh_solutions = sorted((zh / "solutions").glob("*.ipynb"))
    lines = solution_lines([*SOLUTIONS, *zh_solutions])
    assert find_leaks(folder, lines) == [] and find_leaks(archive, lines) == []


def test_a_chinese_build_that_would_leak_is_refused_and_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(handout, "learner", lambda nb, language, checkout: nb)  # unstubbed
    with pytest.raises(LabError, match="would give away a solution: notebooks/01_history"):
        build_handout(CHECKOUT, tmp_path / "handout", "zh")
    assert not (tmp_path / "handout").exists()


def test_a_chinese_edition_not_built_yet_is_a_lab_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(translation, "edition", lambda checkout, language: tmp_path / language)
    with pytest.raises(LabError, match=r"zh/solutions/00_asyncio_primer.ipynb is missing: build "
                                       r"the zh edition with `make notebooks` first"):
        build_handout(CHECKOUT, tmp_path / "handout", "zh")
    assert not (tmp_path / "handout").exists()
    assert main([*AT, "handout", str(tmp_path / "handout"), "--language", "zh"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


SMALL_SOLUTION = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
    {"cell_type": "markdown", "id": "m", "metadata": {}, "source": ["# 第 1 章\n"]},
    {"cell_type": "code", "id": "e", "metadata": {"tags": ["exercise"]}, "execution_count": 1,
     "outputs": [], "source": ["def f():\n", "    ### BEGIN SOLUTION\n", "    return 1\n",
                               "    ### END SOLUTION\n"]},
    {"cell_type": "code", "id": "c", "metadata": {"tags": ["check"]}, "execution_count": 2,
     "source": ["# NBVAL_CHECK_OUTPUT\n", "check(f)"],
     "outputs": [{"output_type": "stream", "name": "stdout", "text": ["ok\n"]}]}]}
REPLACEMENTS = [None, True, 0, 1.5, "", "x", [], {}, [1], {"cell_type": "code"}]


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.data())
def test_a_damaged_chinese_solution_is_a_lab_error_never_a_traceback(tmp_path_factory, data):
    nb = json.loads(json.dumps(SMALL_SOLUTION))
    damage(nb, data, REPLACEMENTS)
    file = tmp_path_factory.mktemp("zh") / "01_x.ipynb"
    file.write_text(json.dumps(nb), encoding="utf-8")
    try:
        text = learner_text(file, "zh", CHECKOUT)
    except LabError as exc:
        assert str(exc).startswith(f"{file} is not a notebook") and "\n" not in str(exc)
    else:  # a shape the edition still reads: a notebook comes out
        assert isinstance(json.loads(text)["cells"], list)


def test_cli_writes_the_chinese_handout(tmp_path, capsys):
    out = tmp_path / "handout"
    assert main([*AT, "handout", str(out), "--language", "zh"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"handout: {out}"]
    assert json.loads((out / MANIFEST).read_text())["language"] == "zh"


def test_a_rebuild_replaces_a_handout_and_nothing_else(tmp_path):
    out = build_handout(CHECKOUT, tmp_path / "handout")
    manifest = json.loads((out / MANIFEST).read_text())
    (out / "stale.txt").write_text("from an older handout")  # listed: an older handout's file
    (out / MANIFEST).write_text(json.dumps({**manifest, "files": [*manifest["files"],
                                                                  "stale.txt"]}))
    assert build_handout(CHECKOUT, out) == out and not (out / "stale.txt").exists()
    assert json.loads((out / MANIFEST).read_text()) == manifest
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.md").write_text("precious")
    with pytest.raises(LabError, match="exists and is not a handout"):
        build_handout(CHECKOUT, tmp_path / "mine")
    assert (tmp_path / "mine" / "thesis.md").read_text() == "precious"


@pytest.mark.parametrize("language", ["fr", "", "EN", "zh_CN", "en\x1b[2J"])
def test_an_unknown_language_is_a_lab_error(tmp_path, language):
    with pytest.raises(LabError, match="no handout in language") as err:
        build_handout(CHECKOUT, tmp_path / "h", language)
    assert err.value.code == "unknown_handout_language" and err.value.params["language"] == language
    assert not (tmp_path / "h").exists()


def test_an_unwritable_folder_is_a_lab_error(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(LabError, match="exists and is not a handout") as err:
        build_handout(CHECKOUT, tmp_path / "file")
    assert err.value.code == "not_a_handout"
    with pytest.raises(LabError, match="cannot write the handout to") as err:
        build_handout(CHECKOUT, tmp_path / "file" / "handout")
    assert err.value.code == "handout_unwritable"


def test_a_folder_inside_the_sources_is_refused():
    with pytest.raises(LabError, match="inside"):
        build_handout(CHECKOUT, ROOT / "keel_lab" / "handout")
    assert not (ROOT / "keel_lab" / "handout").exists()


def test_the_zip_is_the_same_bytes_each_time(built, tmp_path):
    folder, archive = built
    first = archive.read_bytes()
    assert zip_handout(folder).read_bytes() == first
    assert all(n.startswith("handout/") for n in zipfile.ZipFile(archive).namelist())


def test_the_handout_names_nothing_of_keel_course(built):
    text = (built[0] / "pyproject.toml").read_text(encoding="utf-8")
    assert "keel_course" not in text and "keel-course" not in text
    project = tomllib.loads(text)
    repository = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"] == {"keel-lab": "keel_cli:main"}
    assert set(project["project"]["optional-dependencies"]) == {"record"}
    assert project["tool"]["setuptools"]["packages"] == [
        p for p in repository["tool"]["setuptools"]["packages"]
        if p.startswith(("keel_lab", "keel_checks", "keel_cli"))]
    assert project["project"]["dependencies"] == repository["project"]["dependencies"]


def test_the_handout_installs_offline_keel_lab_alone_with_its_data(built, tmp_path):
    """`pip install .` in the handout, offline, with the venv's own setuptools, into a bare
    folder: keel_lab reads its data from there, and no keel_course comes with it."""
    src = shutil.copytree(built[0], tmp_path / "src")
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                    "--no-build-isolation", "--disable-pip-version-check", "-q", "--target",
                    str(site), "."], cwd=src, check=True, timeout=120)
    assert sorted(p.name for p in site.iterdir() if not p.name.endswith(".dist-info")) == [
        "bin", "keel_checks", "keel_cli", "keel_lab"]
    [info] = site.glob("keel_lab-*.dist-info")
    assert "keel_course" not in (info / "RECORD").read_text()
    assert (info / "entry_points.txt").read_text().split() == [
        "[console_scripts]", "keel-lab", "=", "keel_cli:main"]
    done = subprocess.run(
        [sys.executable, "-c", "import keel_lab; from keel_lab.course import _data as data, "
         "_fonts as fonts; "
         "print(keel_lab.__file__, data.root(), fonts.font_path(), len(data.incidents()))"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(site)}, capture_output=True,
        text=True, timeout=60, check=True)
    module, folder, font, incidents = done.stdout.split()
    assert Path(module) == site / "keel_lab" / "__init__.py"
    assert Path(folder) == site / "keel_lab" / "data" and Path(font).is_relative_to(folder)
    assert int(incidents) == len(json.loads((ROOT / "data" / "incidents.json").read_text()))


def test_cli_writes_the_handout_and_its_zip(tmp_path, capsys):
    out = tmp_path / "handout"
    assert main([*AT, "handout", str(out), "--zip"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"handout: {out}", f"zip: {out}.zip"]
    assert (out / MANIFEST).is_file() and (tmp_path / "handout.zip").is_file()


def test_cli_errors_are_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    for argv, message in [
        (["handout", str(tmp_path / "new"), "--language", "xx"], "no handout in language 'xx'"),
        (["handout", str(tmp_path / "taken")], "exists and is not a handout"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("keel-course: error: ") and message in err


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.one_of(
    st.binary(max_size=300),
    st.binary(max_size=300).map(lambda b: b"PK\x03\x04" + b),  # a zip's magic, then garbage
    st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.integers(1, 100_000).map(lambda n: b"[" * n + b"]" * n),  # JSON nested too deep
))
def test_any_file_is_searched_without_an_error(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "f").write_bytes(data)
    assert all(isinstance(leak, Leak) for leak in find_leaks(folder, LINES))


# A folder is replaced only when it is provably a previous handout (T1's finding 1).

def _precious(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "precious.txt").write_text("precious")
    return folder / "precious.txt"


@pytest.mark.parametrize("manifest", [
    "{}", "[]", "null", '{"language": "en"}', '{"files": []}', "not json", "",
    '{"language": "en", "files": []}',  # a manifest, but precious.txt is not in it
    '{"language": "en", "files": ["precious.txt"], "extra": 1}',
    '{"language": "xx", "files": ["precious.txt"]}',
    '{"language": "en", "files": "precious.txt"}',
    '{"language": "en", "files": [["precious.txt"]]}',
])
def test_a_folder_with_a_handout_json_of_its_own_is_never_emptied(tmp_path, manifest, capsys):
    precious = _precious(tmp_path / "myproject")
    (tmp_path / "myproject" / MANIFEST).write_text(manifest)
    assert main([*AT, "handout", str(tmp_path / "myproject")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "exists and is not a handout" in err
    assert precious.read_text() == "precious"
    assert sorted(p.name for p in precious.parent.iterdir()) == [MANIFEST, "precious.txt"]


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=12),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.sampled_from(["language", "files", "x"]), inner,
                                      max_size=3), max_leaves=8))
def test_fuzz_no_manifest_but_a_true_one_lets_a_file_go(tmp_path_factory, value):
    folder = tmp_path_factory.mktemp("fuzz")
    precious = _precious(folder / "out")
    (folder / "out" / MANIFEST).write_text(json.dumps(value))
    with pytest.raises(LabError, match="exists and is not a handout"):
        build_handout(CHECKOUT, folder / "out")
    assert precious.read_text() == "precious"


@pytest.mark.parametrize("name", ["notebooks/.keel-progress.json", "notebooks/linked",
                                  "keel_lab/new/answer.py"])
def test_a_file_or_a_link_a_handout_did_not_write_keeps_it_in_place(tmp_path, name):
    out = build_handout(CHECKOUT, tmp_path / "handout")
    elsewhere = _precious(tmp_path / "elsewhere")
    stray = out / name
    if name.endswith("linked"):
        stray.symlink_to(elsewhere.parent)  # a link to a folder counts as one entry
    else:
        stray.parent.mkdir(exist_ok=True)
        stray.write_text("{}")
    with pytest.raises(LabError, match=f"{name} is not in its {MANIFEST}"):
        build_handout(CHECKOUT, out)
    assert stray.exists() and elsewhere.read_text() == "precious"


def test_a_link_to_nowhere_or_a_file_is_not_a_folder_to_write(tmp_path):
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    with pytest.raises(LabError, match="link exists and is not a handout"):
        build_handout(CHECKOUT, tmp_path / "link")
    assert not (tmp_path / "nowhere").exists()


def test_a_failed_rebuild_leaves_the_previous_handout_as_it_was(tmp_path, monkeypatch):
    out = build_handout(CHECKOUT, tmp_path / "handout")
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def full(requirements: str) -> str:
        raise OSError(28, "No space left on device", str(tmp_path / "requirements.txt"))

    monkeypatch.setattr(handout, "student_requirements", full)
    with pytest.raises(LabError, match=r"cannot write the handout to .*requirements.txt: No "
                                       r"space left on device"):
        build_handout(CHECKOUT, out)
    monkeypatch.undo()
    monkeypatch.setattr(handout, "learner_edition", lambda nb: nb)  # a leak this time
    with pytest.raises(LabError, match="would give away a solution"):
        build_handout(CHECKOUT, out)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_handout_dot_in_an_empty_folder_and_again(tmp_path, monkeypatch, capsys):
    here = tmp_path / "class"
    here.mkdir()
    monkeypatch.chdir(here)
    for _ in range(2):  # a new handout, then a rebuild in place
        assert main([*AT, "handout", ".", "--zip"]) == 0
        assert capsys.readouterr().out.splitlines() == ["handout: .", f"zip: {here}.zip"]
    assert json.loads((here / MANIFEST).read_text())["language"] == "en"
    assert sorted(p.name for p in here.iterdir()) == [
        "README.md", "data", MANIFEST, "keel_checks", "keel_cli", "keel_lab", "notebooks",
        "pyproject.toml",
        "requirements.txt"]
    assert zipfile.ZipFile(tmp_path / "class.zip").namelist()[0].startswith("class/")


def test_a_new_folder_in_a_file_names_the_path(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert main([*AT, "handout", str(tmp_path / "file" / "handout")]) == 2
    err = capsys.readouterr().err
    assert err == (f"keel-course: error: cannot write the handout to {tmp_path}/file/handout: "
                   f"{tmp_path}/file/handout: Not a directory\n")


@pytest.mark.parametrize("content", [
    b"my archive", b"", b"PK\x03\x04garbage",
    "zip of something else", "zip without manifest", "zip with one more member",
])
def test_zip_never_overwrites_a_file_it_did_not_write(built, tmp_path, content):
    folder = tmp_path / "notes"
    shutil.copytree(built[0], folder)
    target = tmp_path / "notes.zip"
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        zip_handout(folder)
        with zipfile.ZipFile(target) as z:
            members = {n: z.read(n) for n in z.namelist()}
        if content == "zip of something else":
            members = {"notes/thesis.md": b"mine"}
        elif content == "zip without manifest":
            del members[f"notes/{MANIFEST}"]
        else:
            members["notes/extra.txt"] = b"x"
        with zipfile.ZipFile(target, "w") as z:
            for name, data in members.items():
                z.writestr(name, data)
    before = target.read_bytes()
    with pytest.raises(LabError, match=r"notes\.zip exists and is not a zip of a handout"):
        zip_handout(folder)
    assert target.read_bytes() == before


def test_cli_refuses_a_foreign_zip_before_building(tmp_path, capsys):
    (tmp_path / "notes.zip").write_text("my archive")
    assert main([*AT, "handout", str(tmp_path / "notes"), "--zip"]) == 2
    err = capsys.readouterr().err
    assert err == (f"keel-course: error: {tmp_path}/notes.zip exists and is not a zip of a "
                   "handout: move it away, or give another OUT\n")
    assert not (tmp_path / "notes").exists()
    assert (tmp_path / "notes.zip").read_text() == "my archive"


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.binary(max_size=200).map(lambda b: b"PK\x03\x04" + b) | st.binary(max_size=200))
def test_fuzz_any_other_zip_file_is_refused(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("fuzz") / "h"
    folder.mkdir()
    (folder.with_name("h.zip")).write_bytes(data)
    with pytest.raises(LabError, match="is not a zip of a handout"):
        zip_handout(folder)
    assert folder.with_name("h.zip").read_bytes() == data


@pytest.mark.parametrize("damage", ['{"cells": [', "", "\x00", '{"cells": 3}', "[]"])
def test_a_half_written_solution_is_one_line_naming_it(tmp_path, monkeypatch, capsys, damage):
    broken = tmp_path / "01_history.ipynb"
    broken.write_text(damage)
    monkeypatch.setattr(handout, "solution_paths", lambda checkout, names=(): [broken])
    assert main([*AT, "handout", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"keel-course: error: {broken} is not a notebook the course can read (")
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()
