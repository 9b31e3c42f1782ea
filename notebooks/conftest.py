"""`pytest --nbval-lax` on the chapters ends with one plain line per exercise:

    notebooks/01_history.ipynb, cell 23 (Exercise 1 - answer every call): answer_all: PASSED
    notebooks/02_pairing.ipynb, cell 20 (Exercise 2 - ...): pair_results: NOT YET - <hint>

A cell is named as a learner finds it in JupyterLab: its position from the top of the notebook,
counting from 1 and counting markdown cells too (nbval's own `Cell 14` counts code cells only,
from 0), and the heading above it, the one JupyterLab's table of contents lists. The hint is the
first line of what the check cell raised (`ExerciseNotPassed` carries the check's hints).

Before those lines comes the learner's progress over the whole course: this run's verdicts are
recorded in `.keel-progress.json` beside the notebooks (`keel_lab.course.progress`), so a run of
one chapter still shows the others. Only the learner edition is recorded: a solution notebook
(its check cells keep `# NBVAL_CHECK_OUTPUT`) is the course under test, not a learner. The
kernels record nothing themselves (`KEEL_PROGRESS=off`): this file does it once per run.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from keel_lab.core.errors import LabError
from keel_lab.course import progress
from keel_lab.course.cells import CHECK_MARK, function_name, source, tags
from keel_lab.course.i18n import _

_exercise_of: dict[str, str] = {}
_outcome: dict[str, str] = {}
_learner: set[str] = set()  # check cells of the learner edition, whose verdicts are recorded
# folder -> exercise -> (exercise, passed, first hint): this run's verdicts, the last per exercise
_verdicts: dict[Path, dict[str, tuple[str, bool, str | None]]] = {}
_switch = os.environ.get(progress.SWITCH)  # the learner's own setting, read before ours


def pytest_configure(config: Any) -> None:
    os.environ[progress.SWITCH] = "off"  # kernels start after this: they record nothing


def _where(item: Any) -> str:
    """'cell 23 (Exercise 1 - answer every call)': position from 1 and the heading above it."""
    cells = item.parent.nb.cells
    n = next(i for i, c in enumerate(cells) if c is item.cell)
    heading = next((source(c).lstrip("#").splitlines()[0].strip() for c in cells[n::-1]
                    if c.cell_type == "markdown" and source(c).startswith("#")), "")
    return _("cell {n}").format(n=n + 1) + (f" ({heading})" if heading else "")


def _first_hint(item: Any) -> str:
    """The first line of the error the cell raised, as the kernel reported it."""
    errors = [o for o in item.test_outputs or [] if o.get("output_type") == "error"]
    if not errors:
        return _("the cell did not run to its end")
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
            if not source(cell).startswith(CHECK_MARK):
                _learner.add(item.nodeid)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Generator[None, Any, Any]:
    report = yield
    name = _exercise_of.get(item.nodeid)
    if name and (call.when == "call" or report.failed):
        file = item.nodeid.split("::")[0]
        hint = None if report.passed else _first_hint(item)
        _outcome[item.nodeid] = f"{file}, {_where(item)}: {name}: " + (
            _("PASSED") if hint is None else _("NOT YET - {hint}").format(hint=hint))
        if item.nodeid in _learner:
            _verdicts.setdefault(Path(item.path).parent, {})[name] = (name, hint is None, hint)
    return report


def _record(folder: Path, verdicts: list[tuple[str, bool, str | None]]) -> str:
    """Record this run's verdicts in the folder's progress file; the course's progress as a
    table, or the one line saying why it could not be kept."""
    path = progress.location(folder, _switch)
    if path is None:
        return _("progress not recorded ({setting})").format(setting=f"{progress.SWITCH}={_switch}")
    try:
        return progress.add(path, verdicts).table()
    except LabError as exc:
        return _("progress not recorded: {problem}").format(problem=exc)
    except OSError as exc:
        return _("progress not recorded: {problem}").format(
            problem=f"{exc.filename or path}: {exc.strerror or exc}")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: Any) -> Generator[None, None, None]:
    yield  # after pytest's own summary: these lines end the report
    for folder, verdicts in _verdicts.items():
        terminalreporter.write_sep("=", _("your progress"))
        for line in _record(folder, list(verdicts.values())).splitlines():
            terminalreporter.write_line(line)
    if _outcome:
        terminalreporter.write_sep("=", _("exercises"))
        for line in _outcome.values():
            terminalreporter.write_line(line)
