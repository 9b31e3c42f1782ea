"""Every explorer in the learner's JupyterLab, in headless Chromium: how long a learner waits
from a slider move to the redrawn plot, both editions.

bench/sliders.py times the same explorers in a plain kernel; this adds what a learner also waits
for: the widget's message to the kernel, the PNG's way back and its drawing. Timed in the page
(performance.now() from the key press, or the dropdown's change, to the new image in the DOM),
with tests/course/browser.py's helpers, as tests/course/test_live_lab.py moves them: each
control a step up and a step down from its default and back (the defaults' neighbours), then to
its maximum and its minimum (the extremes; the controls moved before stay at their minimum). The
budget (issue 33): a median move of 0.10 s, and no move over 0.25 s. A screenshot of each
explorer's output at its defaults goes to docs/screenshots/<edition>-<explorer>.png.
Run: .venv/bin/python bench/live_sliders.py [--all]   (--all prints every move; the last lines
are docs/performance.md's table)
"""

from __future__ import annotations

import re
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "course"))

import browser  # noqa: E402 - tests/course/browser.py, found through the line above
import pytest  # noqa: E402 - its skip says what to install where the browser cannot run

DEFAULT_BUDGET_S, WORST_BUDGET_S = 0.10, 0.25  # issue 33: the median, and the worst move
SCREENSHOTS = ROOT / "docs" / "screenshots"


def neighbours(explorer: Any, index: int) -> list[browser.Move]:
    """A step each way from the default and back to it, where the control has room."""
    moved = []
    for there, back in ((1, -1), (-1, 1)):
        for step in (there, back):
            action = browser.neighbour(browser.controls(explorer)[index], step)
            if action is None:  # at the end of its range: no step that way
                break
            moved.append(browser.move(explorer, index, action))
    return moved


def extremes(explorer: Any, index: int) -> list[browser.Move]:
    moved = []
    for high in (True, False):
        action = browser.extreme(browser.controls(explorer)[index], high)
        if action is not None:
            moved.append(browser.move(explorer, index, action))
    return moved


def measure(page: browser.LivePage, folder: Path, path: str,
            log: Callable[[str], None]) -> dict[str, tuple[list[float], list[float]]]:
    """Each explorer of one notebook: its times at the defaults' neighbours and at the extremes,
    in seconds; its screenshot taken first."""
    panel = page.run_all(path)
    edition = path.split("/")[0]
    found = {}
    try:
        for cell, name in browser.explorer_cells(folder / path):
            explorer = page.explorer(panel, cell)
            explorer.locator(".widget-output").screenshot(
                path=str(SCREENSHOTS / f"{edition}-{name}.png"), animations="disabled")
            count = len(browser.controls(explorer))
            near = [m for i in range(count) for m in neighbours(explorer, i)]
            far = [m for i in range(count) for m in extremes(explorer, i)]
            for m in near + far:
                log(f"  {edition} {name} {m.ms / 1000:6.3f} s  {m.label}: {m.action}")
            found[f"{name} ({edition})"] = ([m.ms / 1000 for m in near],
                                           [m.ms / 1000 for m in far])
    finally:
        page.close(panel)
    return found


def summary(near: list[float], far: list[float]) -> str:
    over = (statistics.median(near + far) > DEFAULT_BUDGET_S
            or max(near + far) > WORST_BUDGET_S)
    return (f"defaults' neighbours: median {statistics.median(near):.2f} s, max {max(near):.2f} s; "
            f"extremes: median {statistics.median(far):.2f} s, max {max(far):.2f} s"
            f"{' OVER BUDGET' if over else ''}")


def main(verbose: bool = False) -> dict[str, str]:
    def log(line: str) -> None:
        if verbose:
            print(line, file=sys.stderr)

    try:
        executable = browser.chromium()
        browser.cjk_font()
        playwright = browser.sync_playwright()
    except pytest.skip.Exception as skipped:
        return {"slider move in the browser": f"not measured: {skipped.msg}"}
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    out = {}
    with tempfile.TemporaryDirectory() as temp, playwright as p:
        staged = browser.stage_course(Path(temp) / "course")
        with browser.running_lab(Path(temp) / "course", Path(temp) / "state") as lab:
            chromium = p.chromium.launch(executable_path=executable, headless=True)
            page = browser.LivePage(chromium, lab)
            for paths in staged.values():
                for path in paths:
                    if browser.explorer_cells(Path(temp) / "course" / path):
                        for name, (near, far) in measure(page, lab.folder, path, log).items():
                            out[f"slider move in the browser, {name}"] = summary(near, far)
            chromium.close()
    return out


def table(found: dict[str, str]) -> str:
    """docs/performance.md's table: per explorer, both editions' median and worst move."""
    rows: dict[str, dict[str, list[str]]] = {}
    for key, line in found.items():
        if " (" not in key:
            continue
        name = key.removeprefix("slider move in the browser, ").split(" (")[0]
        figures = re.findall(r"median ([\d.]+) s, max ([\d.]+) s", line)
        for column, (median, worst) in zip(("near", "far"), figures, strict=True):
            rows.setdefault(name, {}).setdefault(column, []).append(f"{median}, {worst}")
    lines = ["| explorer | at the defaults, en / zh (median, max) | "
             "at the extremes, en / zh (median, max) |", "|---|---|---|"]
    lines += [f"| {name} | {' / '.join(c['near'])} s | {' / '.join(c['far'])} s |"
              for name, c in rows.items()]
    return "\n".join(lines)


if __name__ == "__main__":
    measured = main(verbose="--all" in sys.argv)
    for k, v in measured.items():
        print(f"{k}: {v}")
    print(table(measured))
