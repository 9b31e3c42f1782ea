"""`pytest --nbval-lax` on a chapter ends with one line per exercise: passed or not yet."""

from __future__ import annotations

from typing import Any

import pytest

from keel_lab.course.editions import function_name, source, tags

_exercise_of: dict[str, str] = {}
_outcome: dict[str, str] = {}


def pytest_collection_modifyitems(items: list[Any]) -> None:
    last = ""
    for item in items:
        cell = getattr(item, "cell", None)
        if cell is None:
            continue
        if "exercise" in tags(cell):
            last = function_name(source(cell))
        elif "check" in tags(cell) and last:
            _exercise_of[item.nodeid] = last


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    name = _exercise_of.get(report.nodeid)
    if name and (report.when == "call" or report.failed):
        file = report.nodeid.split("::")[0]
        _outcome[f"{file}: {name}"] = "passed" if report.passed else "NOT YET"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _outcome:
        return
    terminalreporter.section("exercises")
    for name, outcome in _outcome.items():
        terminalreporter.write_line(f"{name}: {outcome}")
