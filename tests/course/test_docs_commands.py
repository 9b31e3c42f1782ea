"""Every command the README and docs/*.md give a reader works: each line of a fenced ```sh block
(other blocks are not commands) is either run here - from a scratch folder that sees the checkout,
offline, with a time limit, its exit code the one its comment documents ("exit N", else 0) - or
is one that takes minutes or starts a server, and is mapped to the tests that run it. A command
that is neither fails with its file and line."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TIMEOUT_S = 120

# Run here: commands that are quick and offline, in the scratch folder (they may write there).
RUN = re.compile(r"\.venv/bin/(keel-lab\b|keel-course grade\b|keel-course --help$)"
                 r"|\.venv/bin/python scripts/course_table\.py$")

# Mapped: each pattern (the whole command) to the tests that run it. `make test` is the suite
# itself, and CI runs it (test_ci_runs_the_readmes_test_command below).
MAPPED: dict[str, list[str]] = {
    r"make lab( LANGUAGE=zh)?": [
        "tests/course/test_workspace.py::test_make_lab_opens_jupyterlab_on_the_learners_copy",
        "tests/course/test_workspace.py::"
        "test_make_labs_jupyterlab_really_serves_the_learners_copy_without_nbgrader",
        "tests/course/test_live_lab.py::test_the_learners_lab_shows_no_instructor_tooling_and_asks_no_news"],
    r"make test": ["tests/course/test_docs_commands.py::test_ci_runs_the_readmes_test_command"],
    r"keel-lab (assemble|validate) ~/agent/\S+.*": [
        "tests/lab/test_install.py::test_the_documented_commands_run_on_files_outside_the_checkout"],
    r"keel-lab record openai-chat ~/agent/\S+ --base-url \S+ --model \S+": [
        "tests/lab/test_record.py::test_a_compatible_server_with_its_own_key_variable"],
    r"make check": [
        "tests/course/test_workspace.py::test_make_check_prepares_the_copy_then_checks_it",
        "tests/course/test_notebooks.py::test_make_check_passes_a_right_answer_and_says_so"],
    r"make check LANGUAGE=zh": [
        "tests/lab/test_make_check.py::test_language_zh_checks_the_chinese_edition_in_chinese"],
    r"make check CHAPTER=\S+( LANGUAGE=zh)?": [
        "tests/course/test_workspace.py::"
        "test_make_check_chapter_runs_that_chapter_alone_and_ends_with_its_totals",
        "tests/course/test_workspace.py::"
        "test_make_check_chapter_checks_the_one_chapter_make_restore_names"],
    r"make restore CHAPTER=\S+( LANGUAGE=zh)?": [
        "tests/course/test_workspace.py::test_make_restore_restores_through_the_module",
        "tests/course/test_workspace.py::test_restore_in_the_chinese_edition"],
    r"make site": [
        "tests/course/test_site.py::test_every_chapter_is_a_page"],
    r"make handout": ["tests/course/test_handout.py::test_cli_writes_the_handout_and_its_zip"],
    r"make handout LANGUAGE=zh": [
        "tests/course/test_handout.py::test_cli_writes_the_chinese_handout"],
    r"make notebooks": ["tests/course/test_notebooks.py::test_learner_edition_is_in_sync",
                        "tests/course/test_translation.py::test_chinese_edition_is_in_sync"],
    r"make locale": ["tests/course/test_translation.py::test_the_catalogs_hold_every_current_unit"],
    r"make messages": ["tests/lab/test_i18n.py::test_the_template_holds_every_marked_message"],
    r"make guide": ["tests/course/test_instructors_guide.py::test_every_generated_part_is_current"],
    r"make (classroom|collect)( [A-Z]+=\S+)*": [
        "tests/course/test_classroom_hub.py::test_a_class_on_one_hub"],
    r"make install": [
        "tests/course/test_docs_commands.py::test_make_install_sets_up_without_opening_anything"],
    # nbgrader's course (docs/instructors.md): laid out, released, checked, autograded, exported
    r"\.venv/bin/keel-course nbgrader \S+ \S+": [
        "tests/course/test_nbgrader.py::test_cli_lays_out_the_course"],
    r"\. \.venv/bin/activate && cd \S+|nbgrader (generate_assignment|autograde) \S+"
    r"|nbgrader export": [
        "tests/course/test_nbgrader.py::"
        "test_nbgrader_autogrades_handout_notebooks_as_keel_course_grade_does"],
    r"keel-course nbgrader \. --check": [
        "tests/course/test_nbgrader.py::"
        "test_cli_check_lists_what_nbgrader_cannot_grade_then_one_error_line"],
    # a class's hub through its REST API and a student's server (docs/classroom.md)
    r"[A-Z]+=\$\((python3|curl) .*\)|curl -s .*http://127\.0\.0\.1:8000/.*": [
        "tests/course/test_classroom_hub.py::test_a_class_on_one_hub"],
}


@dataclass(frozen=True)
class Command:
    """One command of a document: where it is, what runs, and the exit code its comment says."""

    file: str
    line: int
    text: str
    exit_code: int

    def where(self) -> str:
        return f"{self.file}:{self.line}"


def commands(path: Path) -> list[Command]:
    """The commands of the ```sh blocks of `path`: a line continued by a trailing backslash is
    one command; a comment (`#` after a blank) is said, not run."""
    found: list[Command] = []
    name = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name
    inside, pending, start = False, "", 0
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            inside = line.strip() == "```sh" and not inside
            continue
        if not inside:
            continue
        if not pending:
            start = n
        pending += line
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        said = re.search(r"(?:^|\s)#(?:\s|$)", pending)
        text, comment = (pending[:said.start()], pending[said.end():]) if said else (pending, "")
        pending = ""
        if text.strip():
            code = re.search(r"\bexit(?:s| code| status)? (\d+)\b", comment)
            found.append(Command(name, start, " ".join(text.split()),
                                 int(code.group(1)) if code else 0))
    return found


ALL = [c for path in DOCUMENTS for c in commands(path)]


def mapped(command: Command) -> list[str] | None:
    return next((tests for pattern, tests in MAPPED.items()
                 if re.fullmatch(pattern, command.text)), None)


def test_the_documents_have_commands_and_every_one_is_run_or_mapped():
    assert {c.file for c in ALL} >= {"README.md", "docs/learners.md", "docs/practitioners.md"}
    neither = [f"{c.where()}: {c.text}" for c in ALL
               if mapped(c) is None and not RUN.match(c.text)]
    assert neither == [], ("a command no test runs: run it here (RUN) or map it to its tests "
                           f"(MAPPED): {neither}")


def test_every_mapped_test_exists():
    missing = []
    for tests in MAPPED.values():
        for test in tests:
            file, name = test.split("::")
            source = (ROOT / file).read_text(encoding="utf-8") if (ROOT / file).is_file() else ""
            if not re.search(rf"^def {re.escape(name)}\(", source, re.M):
                missing.append(test)
    assert missing == []


def test_every_mapping_is_used():
    """A command removed from the documents takes its mapping with it."""
    unused = [p for p in MAPPED if not any(re.fullmatch(p, c.text) for c in ALL)]
    assert unused == []


def test_ci_runs_the_readmes_test_command():
    readme = [c.text for c in commands(ROOT / "README.md")]
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert "make test" in readme and run[-1] == "make test"


def test_the_instructors_page_starts_with_its_set_up():
    """An instructor on a fresh clone reads the set-up first: `make install`, which opens
    nothing (`make lab` blocks, `make test` takes minutes); the README names it too."""
    page = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    first = page[page.index("\n## "):]
    first = first[:first.index("\n## ", 1)]
    assert first.startswith("\n## Set up")
    assert re.search(r"```sh\nmake install +#", first)
    assert "make install" in [c.text for c in commands(ROOT / "README.md")]


def test_make_install_sets_up_without_opening_anything():
    """What `make install` would run, from nothing (`-B`: as on a fresh clone; `-n`: printed,
    not run): the venv and the editable install, and nothing that serves or tests."""
    done = subprocess.run(["make", "-n", "-B", "install"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "-m venv .venv" in done.stdout and "-r requirements.txt -e ." in done.stdout
    assert not re.search(r"keel_course\.lab|pytest|jupyterhub", done.stdout)


def test_the_parser_joins_continued_lines_and_reads_the_documented_exit_code(tmp_path):
    doc = tmp_path / "x.md"
    doc.write_text("```sh\na --b \\\n  c   # exits 1: why\nd#e\n\n# a comment\n```\n"
                   "```text\nnot a command\n```\n```sh\nf # x\ng # exit code 2\n```\n")
    assert [(c.line, c.text, c.exit_code) for c in commands(doc)] == [
        (2, "a --b c", 1), (4, "d#e", 0), (12, "f", 0), (13, "g", 2)]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A folder that sees the checkout's files by links (so a command's paths read as in the
    docs) and keeps what a command writes; no learner's copy, no build output."""
    folder = tmp_path_factory.mktemp("docs-commands")
    for entry in ROOT.iterdir():
        if entry.name not in {"build", "workspace", ".git"}:
            (folder / entry.name).symlink_to(entry)
    return folder


@pytest.mark.parametrize("command", [c for c in ALL if mapped(c) is None and RUN.match(c.text)],
                         ids=Command.where)
def test_the_command_runs_with_its_documented_exit_code(command, scratch):
    env = {k: v for k, v in os.environ.items() if k not in ("KEEL_PROGRESS", "KEEL_LAB_LANG")}
    done = subprocess.run(["bash", "-c", command.text], cwd=scratch, env=env, timeout=TIMEOUT_S,
                          capture_output=True, text=True, check=False)
    assert done.returncode == command.exit_code, (
        f"{command.where()}: `{command.text}` exited {done.returncode}, the document says "
        f"{command.exit_code}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    assert done.stdout or done.stderr, f"{command.where()}: `{command.text}` printed nothing"
