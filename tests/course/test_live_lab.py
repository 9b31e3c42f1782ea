"""The live course in a real browser, English edition (test_live_lab_zh.py runs the same tests on
the Chinese one, so that `make test`'s two workers share them): the learner's JupyterLab started
through its launcher, every chapter opened and run with Run All (`live_notebooks` says which),
every explorer's controls moved as a learner moves them. Screenshots of each explorer and each
move's time, measured in the page, go to build/live/ for review; the times are not asserted here
(bench/live_sliders.py measures them against their budget)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest
from browser import (
    EDITIONS,
    ROOT,
    LivePage,
    Move,
    chromium,
    cjk_font,
    controls,
    explorer_cells,
    extreme,
    move,
    neighbour,
    notebook_errors,
    running_lab,
    stage_course,
    sync_playwright,
)

from keel_course.workspace import chapters

EDITION = "en"
pytestmark = [pytest.mark.lab_wide, pytest.mark.slow]  # minutes: server, browser, nine notebooks
REVIEW = ROOT / "build" / "live"  # screenshots and timings, for a person to look at


@dataclass
class Live:
    edition: str
    page: LivePage
    folder: Path
    moves: list[dict[str, Any]] = field(default_factory=list)


def live_notebooks(edition: str) -> list[str]:
    """The eight chapters and each deeper notebook that holds an explorer (04a): the primer and
    the other deeper notebooks have no live control, and run under nbval in the same `make test`
    (all fifteen here would double this file's minutes)."""
    return [p.name for p in chapters(EDITIONS[edition])
            if re.match(r"0[1-9]_", p.name) or explorer_cells(p)]


def pytest_generate_tests(metafunc: Any) -> None:
    if "chapter" in metafunc.fixturenames:
        metafunc.parametrize("chapter", live_notebooks(metafunc.module.EDITION))


@pytest.fixture(scope="module")
def live(request: Any, tmp_path_factory: Any) -> Iterator[Live]:
    edition = request.module.EDITION
    executable = chromium()
    if edition == "zh":
        cjk_font()
    with sync_playwright() as p:  # skips first, with what to install, where it cannot run
        folder = tmp_path_factory.mktemp(f"live-{edition}")
        stage_course(folder / "course", (edition,))
        with running_lab(folder / "course", folder / "state") as lab:
            browser = p.chromium.launch(executable_path=executable, headless=True)
            found = Live(edition, LivePage(browser, lab), folder / "course")
            yield found
            browser.close()
    REVIEW.mkdir(parents=True, exist_ok=True)
    (REVIEW / f"{edition}-moves.json").write_text(json.dumps(found.moves, indent=1) + "\n")


def test_the_learners_lab_shows_no_instructor_tooling_and_asks_no_news(live):
    menus = live.page.menus()
    assert "Run" in menus and "Kernel" in menus, menus
    assert not [m for m in menus if "nbgrader" in m.casefold()], menus
    assert live.page.page.get_by_text("Create Assignment").count() == 0
    assert live.page.page.get_by_text("official Jupyter news").count() == 0
    log = live.page.lab.log.read_text()
    assert "NbGrader" not in log and "nbgrader" not in log, log


def moves_of(explorer: Any) -> Iterator[tuple[int, str]]:
    """Each control to its maximum (End, or the last option), its minimum (Home, or the first)
    and one step up from there (an arrow key, or the second option), in turn."""
    for index in range(len(controls(explorer))):
        for action in (lambda c: extreme(c, high=True), lambda c: extreme(c, high=False),
                       lambda c: neighbour(c, 1)):
            step = action(controls(explorer)[index])
            if step is not None:  # None: the control is there already
                yield index, step


def test_a_chapter_runs_clean_and_its_explorers_redraw(live, chapter):
    page = live.page
    before = len(page.errors)
    panel = page.run_all(f"{live.edition}/{chapter}")
    try:
        saved = live.folder / live.edition / chapter
        assert notebook_errors(saved) == []
        for cell, name in explorer_cells(saved):
            explorer = page.explorer(panel, cell)
            explorer.screenshot(path=str(REVIEW / f"{live.edition}-{name}.png"))
            moved: list[Move] = []
            for index, action in moves_of(explorer):
                moved.append(move(explorer, index, action))
                live.moves.append({"edition": live.edition, "explorer": name,
                                   **asdict(moved[-1])})
            # Each move redrew what it shows; each control changed the plot at least once (a
            # plot can stay as it was: 2 calls at 20 trials never mismatch, at any spread).
            assert [m for m in moved if not (m.image_changed or m.table_changed)] == []
            labels = {m.label for m in moved}
            assert labels == {c.label for c in controls(explorer)}
            assert {m.label for m in moved if m.image_changed} == labels
            explorer.screenshot(path=str(REVIEW / f"{live.edition}-{name}-moved.png"))
    finally:
        page.close(panel)
    assert page.errors[before:] == []
