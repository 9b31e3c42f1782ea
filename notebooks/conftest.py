"""`pytest --nbval-lax` on the chapters ends with one plain line per exercise:

    notebooks/01_history.ipynb, cell 23 (Exercise 1 - answer every call): answer_all: PASSED
    notebooks/02_pairing.ipynb, cell 20 (Exercise 2 - ...): pair_results: NOT YET - <hint>

A cell is named as a learner finds it in JupyterLab: its position from the top of the notebook,
counting from 1 and counting markdown cells too (nbval's own `Cell 14` counts code cells only,
from 0), and the heading above it, the one JupyterLab's table of contents lists. The hint is the
first line of what the check cell raised (`ExerciseNotPassed` carries the check's hints).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from keel_lab.course.editions import function_name, source, tags

_exercise_of: dict[str, str] = {}
_outcome: dict[str, str] = {}


def _where(item: Any) -> str:
    """'cell 23 (Exercise 1 - answer every call)': position from 1 and the heading above it."""
    cells = item.parent.nb.cells
    n = next(i for i, c in enumerate(cells) if c is item.cell)
    heading = next((source(c).lstrip("#").splitlines()[0].strip() for c in cells[n::-1]
                    if c.cell_type == "markdown" and source(c).startswith("#")), "")
    return f"cell {n + 1}" + (f" ({heading})" if heading else "")


def _first_hint(item: Any) -> str:
    """The first line of the error the cell raised, as the kernel reported it."""
    errors = [o for o in item.test_outputs or [] if o.get("output_type") == "error"]
    if not errors:
        return "the cell did not run to its end"
    ename, evalue = errors[-1]["ename"], str(errors[-1]["evalue"])
    first = evalue.splitlines()[0] if evalue else ""
    return first if ename == "ExerciseNotPassed" else f"{ename}: {first}"


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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Generator[None, Any, Any]:
    report = yield
    name = _exercise_of.get(item.nodeid)
    if name and (call.when == "call" or report.failed):
        file = item.nodeid.split("::")[0]
        verdict = "PASSED" if report.passed else f"NOT YET - {_first_hint(item)}"
        _outcome[item.nodeid] = f"{file}, {_where(item)}: {name}: {verdict}"
    return report


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: Any) -> Generator[None, None, None]:
    yield  # after pytest's own summary: these lines end the report
    if _outcome:
        terminalreporter.write_sep("=", "exercises")
        for line in _outcome.values():
            terminalreporter.write_line(line)
