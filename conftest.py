"""Markers for the whole test run, the way minitorch marks its tasks: each test file marks its own
chapter (`pytestmark = pytest.mark.ch4`; a list with `pytest.mark.slow` when it takes minutes: the
hub, the browser, nbgrader, the fuzzers) or says that it is lab-wide (`pytest.mark.lab_wide`), and
tests/lab/test_markers.py fails on a file that says neither. `pytest -m ch4` runs chapter 4's
rule, check and notebook tests; `-m "not slow"` leaves out the slow ones.

Here: the markers, a chapter's for each chapter of the exercise table
(`keel_checks.exercises`); a notebook's chapter by its file name; and in a lab-wide file, a
test's chapter by the exercise its name holds (the grader's and the hints' tests)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from keel_checks.exercises import EXERCISES

CHAPTERS = {x.marker: x.chapter for x in EXERCISES}  # marker -> its chapter's notebook
_NOTEBOOK = re.compile(r"0([1-9])[a-z]?_\w+\.ipynb$")  # 07a_x: chapter 7's deeper notebook


def pytest_configure(config: Any) -> None:
    for marker, notebook in CHAPTERS.items():
        config.addinivalue_line("markers", f"{marker}: chapter {marker[2:]}'s tests ({notebook})")
    config.addinivalue_line("markers", "lab_wide: tests of the whole lab, of no one chapter "
                                       "(tooling, i18n, the site, docs, grading)")
    config.addinivalue_line("markers", "slow: minutes-long tests (hub, browser, nbgrader, fuzz)")


def pytest_collection_modifyitems(items: list[Any]) -> None:
    for item in items:
        if any(m.name in CHAPTERS for m in item.iter_markers()):
            continue  # its file's chapter
        notebook = _NOTEBOOK.search(item.path.name)
        chapter = (f"ch{notebook.group(1)}" if notebook
                   else next((x.marker for x in EXERCISES if x.name in item.name), None))
        if chapter:
            item.add_marker(getattr(pytest.mark, chapter))
