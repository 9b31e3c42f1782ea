"""`pytest --nbval-lax` on the chapters ends with one line per exercise, then one of totals:

    01_history  accumulate  passed
    02_pairing  pair_results  not yet  the results are paired by position ... (case: run 0 ...)
    1 of 2 exercises pass; every exercise, with its last hint: .venv/bin/keel-lab progress workspace

counted in exercises, not in cells as pytest counts (its own count, made for cells, is hidden by
`make check`'s `-qq`). A hint leads with what to do and names its case after it
(`keel_checks.verdict.Hint.advice_first`). Each exercise line is cut to the terminal's width (measured in display
cells: a Chinese character takes two, as `wcwidth` counts them), so a long hint never wraps into
a wall of text; its whole text stays in the progress file. Nothing here prints a colour code
when the output is not a terminal, nbval's failure reports included (they carry the kernel's
coloured traceback), so the single-notebook command can be piped into a file.

This run's verdicts are recorded in `.keel-progress.json` beside the notebooks
(`keel_checks.progress`), so `keel-lab progress` shows the whole course, a run of one chapter
too; its table is shown there and only there. Only the learner edition is recorded: a solution
notebook (its check cells keep `# NBVAL_CHECK_OUTPUT`) is the course under test, not a learner.
The kernels record nothing themselves (`KEEL_PROGRESS=off`): this file does it once per run.
In these kernels a check that does not pass fails its cell (`KEEL_CHECKS=raise`); in the
learner's own Jupyter it shows NOT YET and the notebook runs on.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from keel_checks import progress
from keel_checks.check import SWITCH
from keel_cli._cells import CHECK_MARK, function_name, source, tags
from keel_cli._command import command, here
from keel_lab._core.errors import LabError
from keel_lab._core.tables import cut, pad, printable, width_of
from keel_lab._i18n import _

PIPED_WIDTH = 100  # the width of a line when the output is not a terminal (a file, a pipe)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # a terminal's colour and cursor codes

_exercise_of: dict[str, str] = {}
_learner: set[str] = set()  # check cells of the learner edition, whose verdicts are recorded
# (notebook, exercise) -> (passed, first hint): this run's verdicts, the last per exercise
_verdicts: dict[tuple[Path, str], tuple[bool, str | None]] = {}
_recorded: dict[Path, dict[str, tuple[str, bool, str | None]]] = {}  # the learner edition's
_switch = os.environ.get(progress.SWITCH)  # the learner's own setting, read before ours


def pytest_configure(config: Any) -> None:
    os.environ[progress.SWITCH] = "off"  # kernels start after this: they record nothing
    os.environ[SWITCH] = "raise"  # and a check that does not pass fails its cell
    # and a table a cell prints is as wide as make notebooks saved it, a pipe's: pytest-xdist's
    # workers set COLUMNS=80, which a kernel would inherit
    os.environ.pop("COLUMNS", None)


def _first_hint(item: Any) -> str:
    """The first line of the error the cell raised, as the kernel reported it."""
    errors = [o for o in item.test_outputs or [] if o.get("output_type") == "error"]
    if not errors:
        return _("the cell did not run to its end")
    ename, evalue = errors[-1]["ename"], ANSI.sub("", str(errors[-1]["evalue"]))
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
    if isinstance(report.longrepr, str) and not _terminal(item.config):
        report.longrepr = ANSI.sub("", report.longrepr)  # nbval colours its reports regardless
    name = _exercise_of.get(item.nodeid)
    if name and (call.when == "call" or report.failed):
        hint = None if report.passed else _first_hint(item)
        _verdicts[(Path(item.path), name)] = (report.passed, hint)
        if item.nodeid in _learner:
            _recorded.setdefault(Path(item.path).parent, {})[name] = (name, report.passed, hint)
    return report


def _terminal(config: Any) -> bool:
    """Whether pytest writes to a terminal that shows colours (its own decision, `--color`)."""
    return bool(config.get_terminal_writer().hasmarkup)


def exercise_lines(verdicts: dict[tuple[Path, str], tuple[bool, str | None]],
                   width: int) -> list[str]:
    """One line per exercise: chapter (its notebook, below the notebooks' common folder),
    exercise, verdict and the first hint, aligned, each cut to `width` cells."""
    base = Path(os.path.commonpath([path.parent for path, _name in verdicts]))
    rows = [(printable(path.relative_to(base).with_suffix("")), name,
             _("passed") if passed else _("not yet"), printable(hint or ""))
            for (path, name), (passed, hint) in verdicts.items()]
    widths = [max(width_of(row[n]) for row in rows) for n in range(3)]
    return [cut("  ".join([*(pad(v, w) for v, w in zip(row[:3], widths, strict=True)),
                           row[3]]).rstrip(), width) for row in rows]


def totals_line(verdicts: dict[tuple[Path, str], tuple[bool, str | None]],
                recorded: bool = True) -> str:
    """The run's verdicts counted in exercises, and the command that shows every exercise
    (when they were recorded: a run of the solutions records nothing)."""
    passed = sum(ok for ok, _hint in verdicts.values())
    if not recorded:
        return _("{n} of {total} exercises passed").format(n=passed, total=len(verdicts))
    folders = sorted({path.parent for path, _name in verdicts} - {Path.cwd()})
    shows = " ".join([command(), "progress", *map(here, folders)])
    return _("{n} of {total} exercises pass; every exercise, with its last hint: "
             "{command}").format(n=passed, total=len(verdicts), command=shows)


def _record(folder: Path, verdicts: list[tuple[str, bool, str | None]]) -> str | None:
    """Record this run's verdicts in the folder's progress file; None when kept, else the one
    line saying why they could not be."""
    path = progress.location(folder, _switch)
    if path is None:
        return _("progress not recorded ({setting})").format(setting=f"{progress.SWITCH}={_switch}")
    try:
        progress.add(path, verdicts)
    except LabError as exc:
        return _("progress not recorded: {problem}").format(problem=exc)
    except OSError as exc:
        return _("progress not recorded: {problem}").format(
            problem=f"{exc.filename or path}: {exc.strerror or exc}")
    return None


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: Any) -> Generator[None, None, None]:
    yield  # after pytest's own summary (its failures, its short summary): these lines end it
    for report in terminalreporter.stats.get("error", []):  # a notebook that cannot be read
        if report.when == "collect":
            why = ANSI.sub("", str(report.longrepr)).strip().splitlines() or [""]
            terminalreporter.write_line(printable(_("{file}: not checked: {problem}").format(
                file=report.nodeid, problem=why[-1].removeprefix("E").strip())), red=True)
    if not _verdicts:
        return
    problems = [p for folder, verdicts in _recorded.items()
                if (p := _record(folder, list(verdicts.values())))]
    width = shutil.get_terminal_size((PIPED_WIDTH, 24)).columns - 1  # the last column wraps
    for line, (passed, _hint) in zip(exercise_lines(_verdicts, width), _verdicts.values(),
                                     strict=True):
        terminalreporter.write_line(line, green=passed, yellow=not passed)
    for problem in problems:
        terminalreporter.write_line(cut(printable(problem), width))
    terminalreporter.write_line(totals_line(_verdicts, bool(_recorded)), bold=True)
