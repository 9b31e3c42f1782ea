"""`make check LANGUAGE=zh`: the Chinese learner edition, with `make check`'s summary in Chinese
(notebooks/conftest.py prints it in the language KEEL_LAB_LANG names)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from keel_lab.course.i18n import ENV, catalog

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
    assert command("LANGUAGE=zh").endswith(" -rN workspace/zh/*.ipynb")
    assert command().endswith(" -rN workspace/*.ipynb")
    assert command().startswith("KEEL_LAB_LANG=en ")


def test_the_default_is_keel_lab_lang_and_never_gettexts_language():
    assert command(env={ENV: "zh"}).endswith(" workspace/zh/*.ipynb")
    assert command(env={"LANGUAGE": "en_US:en"}).endswith(" -rN workspace/*.ipynb")


def test_an_edition_that_does_not_exist_is_one_line_and_exit_2():
    done = make_check("LANGUAGE=fr")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[0] == (
        "make check: LANGUAGE=fr has no learner edition in notebooks/fr/ (en or zh)")


def _(message: str) -> str:
    return catalog("zh_CN").get(message, message)


def _notebook() -> dict[str, object]:
    def cell(text: str, tag: str | None = None) -> dict[str, object]:
        return {"cell_type": "code", "execution_count": None, "outputs": [], "source": text,
                "id": f"c{len(text)}", "metadata": {"tags": [tag] if tag else []}}
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "id": "m", "metadata": {}, "source": "## 练习 5"},
        cell("from keel_lab.course.checks import check"),
        cell("def status_history(events):\n    return ['completed']\n", "exercise"),
        cell("check(status_history)", "check")]}


def test_the_summary_of_a_chinese_check_is_chinese(tmp_path):
    """The recipe's pytest, as `make check LANGUAGE=zh` runs it, on one learner notebook."""
    (tmp_path / "conftest.py").write_text((ROOT / "notebooks" / "conftest.py").read_text())
    (tmp_path / "05_partial_success.ipynb").write_text(json.dumps(_notebook()))
    words = command("LANGUAGE=zh").split()
    flags = words[words.index("--nbval-lax"):-1]
    env = {k: v for k, v in os.environ.items() if k != "KEEL_PROGRESS"}
    result = subprocess.run([sys.executable, "-m", "pytest", *flags, "05_partial_success.ipynb"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300,
                            env={**env, words[0].split("=")[0]: words[0].split("=")[1]})
    lines = result.stdout.splitlines()
    assert result.returncode == 1, result.stdout
    assert any(_("your progress") in line for line in lines) and f" {_('exercises')} " in lines[-3]
    verdict = _("NOT YET - {hint}").split("{hint}")[0]
    assert verdict != "NOT YET - "  # the catalog translates it
    cell = _("cell {n}").format(n=4)
    assert lines[-2].startswith(
        f"05_partial_success.ipynb, {cell} (练习 5): status_history: {verdict}")
    hint = lines[-2].split(verdict, 1)[1]
    assert "'completed'" in hint and any("\u4e00" <= c <= "\u9fff" for c in hint), hint
