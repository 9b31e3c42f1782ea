"""`make check`: the learner's copy, one line per exercise cut to the terminal's width, then one
line of totals (notebooks/conftest.py); plain text when piped; `make check LANGUAGE=zh` checks the
Chinese edition and says it in Chinese (the language KEEL_LAB_LANG names)."""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios
import types
from pathlib import Path

import pytest
from wcwidth import wcwidth

from keel_lab._i18n import ENV, catalog

pytestmark = [pytest.mark.lab_wide, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
MAKE = shutil.which("make")


def make_check(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`make check` as it would run (-n), never installing first (-o: the venv counts as done)."""
    if MAKE is None:
        pytest.skip("no make on this machine")
    base = {k: v for k, v in os.environ.items() if k not in (ENV, "LANGUAGE", "MAKEFLAGS")}
    return subprocess.run([MAKE, "--no-print-directory", "-o", ".venv/.installed", "check",
                           *args], cwd=ROOT, capture_output=True, text=True,
                          env={**base, **(env or {})}, timeout=60)


def command(*args: str, env: dict[str, str] | None = None) -> str:
    done = make_check("-n", *args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1]


def test_language_zh_checks_the_chinese_edition_in_chinese():
    assert command("LANGUAGE=zh").startswith("KEEL_LAB_LANG=zh .venv/bin/pytest --nbval-lax ")
    assert command("LANGUAGE=zh").endswith(" -rN -qq workspace/zh/*.ipynb")
    assert command().endswith(" -rN -qq workspace/*.ipynb")
    assert command().startswith("KEEL_LAB_LANG=en ")


def test_the_default_is_keel_lab_lang_and_never_gettexts_language():
    assert command(env={ENV: "zh"}).endswith(" workspace/zh/*.ipynb")
    assert command(env={"LANGUAGE": "en_US:en"}).endswith(" -qq workspace/*.ipynb")


def test_an_edition_that_does_not_exist_is_one_line_and_exit_2():
    done = make_check("LANGUAGE=fr")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[0] == (
        "make check: LANGUAGE=fr has no learner edition in notebooks/fr/ (en or zh)")


def _(message: str) -> str:
    return catalog("zh_CN").get(message, message)


def _notebook() -> dict[str, object]:
    """Two exercises: one whose check passes, and chapter 5's answered wrong (a long hint)."""
    def cell(text: str, tag: str | None = None) -> dict[str, object]:
        return {"cell_type": "code", "execution_count": None, "outputs": [], "source": text,
                "id": f"c{len(text)}", "metadata": {"tags": [tag] if tag else []}}
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "id": "m", "metadata": {}, "source": "## 练习 5"},
        cell("from keel_checks import check"),
        cell("def accumulate(deltas):\n    return deltas\n", "exercise"),
        cell("assert accumulate([]) == []", "check"),
        cell("def status_history(events):\n    return ['completed']\n", "exercise"),
        cell("check(status_history)", "check")]}


def run_check(folder: Path, language: str, columns: int | None = None, *extra: str) -> str:
    """The recipe's pytest, as `make check LANGUAGE=...` runs it, on one learner notebook in
    `folder`: its output piped, or on a terminal `columns` wide (a pseudo-terminal)."""
    (folder / "conftest.py").write_text((ROOT / "notebooks" / "conftest.py").read_text())
    (folder / "05_partial_success.ipynb").write_text(json.dumps(_notebook()))
    words = command(f"LANGUAGE={language}").split()
    flags = words[words.index("--nbval-lax"):-1]
    env = {k: v for k, v in os.environ.items()
           if k not in ("KEEL_PROGRESS", "COLUMNS", "PY_COLORS", "NO_COLOR", "FORCE_COLOR")}
    env[words[0].split("=")[0]] = words[0].split("=")[1]
    argv = [sys.executable, "-m", "pytest", *flags, *extra, "05_partial_success.ipynb"]
    if columns is None:
        done = subprocess.run(argv, capture_output=True, text=True, cwd=folder, timeout=300,
                              env=env)
        assert done.returncode == 1, done.stdout + done.stderr
        return done.stdout
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    process = subprocess.Popen(argv, stdout=child, stderr=child, cwd=folder, env=env)
    os.close(child)
    out = b""
    with contextlib.suppress(OSError):  # EIO: the child has closed the terminal
        while chunk := os.read(main, 65536):
            out += chunk
    os.close(main)
    assert process.wait(timeout=300) == 1, out
    return out.decode().replace("\r\n", "\n")


def test_the_summary_of_a_chinese_check_is_chinese_and_piped_plain(tmp_path):
    (tmp_path / "00_broken.ipynb").write_text("{not json")  # one line, the others checked
    out = run_check(tmp_path, "zh", None, "00_broken.ipynb")
    lines = out.splitlines()
    assert "\x1b" not in out  # no colour code in a file or a pipe
    assert len(lines) == 5, out  # the dots, the unreadable notebook, an exercise a line, totals
    assert lines[1].startswith(_("{file}: not checked: {problem}").format(
        file="00_broken.ipynb", problem="nbformat.reader.NotJSONError: "))
    del lines[1]
    assert lines[1] == f"05_partial_success  accumulate      {_('passed')}"
    verdict = _("not yet")
    assert verdict != "not yet"  # the catalog translates it
    assert lines[2].startswith(f"05_partial_success  status_history  {verdict}  ")
    hint = lines[2].split(verdict, 1)[1]
    assert any("\u4e00" <= c <= "\u9fff" for c in hint), hint
    whole = json.loads((tmp_path / ".keel-progress.json").read_text())["exercises"]
    assert whole["status_history"]["hint"].startswith(hint.strip()[:-3])  # kept whole there
    assert "'completed'" in whole["status_history"]["hint"]
    assert cells(lines[2]) in (98, 99) and lines[2].endswith("...")  # 100 columns when piped
    keel_lab = Path(sys.executable).parent / "keel-lab"
    assert lines[3] == _("{n} of {total} exercises pass; every exercise, with its last hint: "
                         "{command}").format(n=1, total=2, command=f"{keel_lab} progress")
    assert "练习" in lines[3]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_on_a_terminal_every_exercise_line_fits_its_width(tmp_path, language):
    """Cut by display width: a Chinese character takes two of a terminal's cells."""
    out = run_check(tmp_path, language, columns=60)
    lines = [ANSI.sub("", line) for line in out.splitlines()]
    assert ANSI.search(out)  # colours on a terminal
    assert [line.split()[1] for line in lines[1:3]] == ["accumulate", "status_history"]
    assert cells(lines[2]) in (58, 59) and lines[2].endswith("...")
    assert all(cells(line) <= 59 for line in lines[1:3])
    assert lines[3].startswith("2 个练习中已通过 1 个" if language == "zh"
                               else "1 of 2 exercises pass")


def cells(text: str) -> int:
    return sum(max(wcwidth(c), 0) for c in text)


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def conftest() -> types.ModuleType:
    """notebooks/conftest.py as a module, for its pure functions."""
    spec = importlib.util.spec_from_file_location("make_check_conftest",
                                                  ROOT / "notebooks" / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("text", "width", "cut"), [
    ("short", 10, "short"),
    ("exactly ten", 11, "exactly ten"),
    ("a longer line of text", 10, "a longe..."),
    ("一个调用参数分成许多片段", 10, "一个调..."),  # 3 characters, 6 cells, then "..."
    ("一个调用", 8, "一个调用"),
    ("ab一个调用", 8, "ab一..."),  # a wide character that would cross the edge is left out
])
def test_cut_counts_display_cells(text, width, cut):
    module = conftest()
    assert module.cut(text, width) == cut
    assert module.width_of(module.cut(text, width)) <= width
