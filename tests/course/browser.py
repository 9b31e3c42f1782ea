"""Headless Chromium on the course, for the tests and the bench: Debian's chromium and a CJK font
(installed with apt where this runs as root, else the caller is skipped with what to install),
the learner's JupyterLab started through the launcher `make lab` uses (keel_course/lab.py), and a
learner's actions in it: open a chapter, Run All, move an explorer's controls.

Used by tests/course/test_live_lab*.py and bench/live_sliders.py; test_site.py's own `chromium()`
does what `chromium()` here does and could use it. A move is timed in the page: from the key press
(or the dropdown's change) to the redrawn plot in the DOM, seen by a MutationObserver.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from keel_course.workspace import chapters
from keel_lab.course._explorers import EXPLORERS

ROOT = Path(__file__).resolve().parents[2]
EDITIONS = {"en": ROOT / "notebooks" / "solutions", "zh": ROOT / "notebooks" / "zh" / "solutions"}
START_S, RUN_S, MOVE_S = 120, 600, 60  # the server's start, one Run All, one redraw
VIEWPORT = {"width": 1280, "height": 1200}
# The explorer cell calls one of these: `history_explorer()` -> "01_history"
EXPLORER_CALLS = {make.__name__: name for name, make in EXPLORERS.items()}


def apt_install(package: str) -> None:
    """`apt-get install package` where this runs as root with apt (as in CI), else nothing."""
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", package]
    if subprocess.run(install, capture_output=True, timeout=900, env=env).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], capture_output=True, timeout=900, env=env)
        subprocess.run(install, capture_output=True, timeout=900, env=env)


def chromium() -> str:
    """Debian's chromium, installed first where possible."""
    if not shutil.which("chromium"):
        apt_install("chromium")
    found = shutil.which("chromium")
    if not found:
        pytest.skip("no chromium: install Debian's (sudo apt-get install chromium) to open the "
                    "course in a headless browser")
    return found


def has_cjk_font() -> bool:
    listed = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True,
                            check=False) if shutil.which("fc-list") else None
    return bool(listed and listed.stdout.strip())


def cjk_font() -> None:
    """A font with Chinese characters for the browser (Debian's fonts-noto-cjk), installed first
    where possible: without one the Chinese pages show boxes."""
    if not has_cjk_font():
        apt_install("fonts-noto-cjk")
    if not has_cjk_font():
        pytest.skip("no Chinese font: install Debian's (sudo apt-get install fonts-noto-cjk) to "
                    "open the Chinese course in a browser")


def sync_playwright() -> Any:
    api = pytest.importorskip("playwright.sync_api", reason="pip install playwright "
                              "(requirements.txt) to open the course in a headless browser")
    return api.sync_playwright()


# -- the course in the learner's JupyterLab ---------------------------------------------------


def stage_course(folder: Path, editions: tuple[str, ...] = tuple(EDITIONS)) -> dict[str, list[str]]:
    """The solution notebooks of `editions` (they run clean; the learner edition's stubs do not)
    in `folder/<edition>/`, with the glossary their links point at; each edition's chapters by
    their path in `folder`. The cells import keel_lab, which finds its data itself."""
    staged = {}
    for edition in editions:
        (folder / edition).mkdir(parents=True, exist_ok=True)
        shutil.copy(EDITIONS[edition] / "glossary.md", folder / edition / "glossary.md")
        for chapter in chapters(EDITIONS[edition]):
            shutil.copy(chapter, folder / edition / chapter.name)
        staged[edition] = [f"{edition}/{p.name}" for p in chapters(folder / edition)]
    return staged


@dataclass(frozen=True)
class Lab:
    """A running learner's JupyterLab."""

    url: str  # http://127.0.0.1:<port>/
    token: str
    folder: Path
    log: Path

    def page(self) -> str:
        return f"{self.url}lab?token={self.token}"

    def get(self, path: str) -> str:
        """A page or API answer of the server, as text (raises on an HTTP error)."""
        from urllib.request import Request, urlopen

        request = Request(self.url + path, headers={"Authorization": f"token {self.token}"})
        with urlopen(request, timeout=30) as answer:
            return str(answer.read().decode("utf-8"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def lab_environment(state: Path) -> dict[str, str]:
    """This process's environment with JupyterLab's settings, workspaces and runtime files kept
    in `state` (nothing written into the user's ~/.jupyter), no progress recorded by the kernels,
    and the language left to each notebook's first cell."""
    env = {k: v for k, v in os.environ.items() if k != "KEEL_LAB_LANG"}
    return {**env, "JUPYTERLAB_SETTINGS_DIR": str(state / "settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(state / "workspaces"),
            "JUPYTER_RUNTIME_DIR": str(state / "runtime"), "KEEL_PROGRESS": "off"}


@contextmanager
def running_lab(folder: Path, state: Path, command: list[str] | None = None) -> Iterator[Lab]:
    """The learner's JupyterLab on `folder` (by default through `python -m keel_course.lab`;
    `command` is another way to it, such as the command `make lab` runs), on 127.0.0.1, a free
    port and a token, with the app exposed to the page's scripts (`window.jupyterapp`, as
    JupyterLab's own UI tests do); stopped, with its kernels, on leaving."""
    port, token = free_port(), secrets.token_hex(16)
    state.mkdir(parents=True, exist_ok=True)
    # Every cell drawn, none estimated: a screenshot is not shifted by cells drawn late.
    notebook = state / "settings" / "@jupyterlab" / "notebook-extension"
    notebook.mkdir(parents=True, exist_ok=True)
    (notebook / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}\n')
    log = state / "lab.log"
    base = command or [sys.executable, "-m", "keel_course.lab", str(folder)]
    with log.open("w") as out:
        process = subprocess.Popen(
            [*base, f"--port={port}", "--port-retries=0", f"--IdentityProvider.token={token}",
             "--LabApp.expose_app_in_browser=True"], cwd=state, stdout=out,
            stderr=subprocess.STDOUT, env=lab_environment(state), start_new_session=True)
    try:
        deadline = time.monotonic() + START_S
        while "is running at" not in log.read_text() and process.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.3)
        assert "is running at" in log.read_text(), log.read_text()[-3000:]
        yield Lab(f"http://127.0.0.1:{port}/", token, folder, log)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def page_config(html: str) -> dict[str, Any]:
    """The page config JupyterLab serves in its page (what the front end loads by)."""
    found = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                      html, re.S)
    assert found, html[:500]
    return dict(json.loads(found.group(1)))


class LivePage:
    """One browser page on the learner's JupyterLab; the console's errors are kept."""

    def __init__(self, browser: Any, lab: Lab) -> None:
        self.lab, self.errors = lab, []
        self.page = browser.new_page(viewport=VIEWPORT)
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))
        self.page.goto(lab.page())
        self.page.wait_for_function("() => window.jupyterapp !== undefined", timeout=START_S * 1000)
        self.page.evaluate("() => window.jupyterapp.restored")

    def menus(self) -> list[str]:
        return [str(t) for t in self.page.locator(".lm-MenuBar-itemLabel").all_inner_texts()]

    def run_all(self, path: str) -> str:
        """Open the notebook at `path`, start its kernel, Run All (JupyterLab's own command, as
        the Run menu's "Run All Cells"), wait for the kernel to be idle, save; the panel's id."""
        return str(self.page.evaluate("""async (path) => {
            const app = window.jupyterapp;
            const panel = await app.commands.execute('docmanager:open',
                                                     {path, factory: 'Notebook'});
            await panel.context.ready;
            await panel.sessionContext.ready;
            app.shell.activateById(panel.id);
            await app.commands.execute('notebook:run-all-cells');
            while (panel.sessionContext.session?.kernel?.status !== 'idle') {
                await new Promise(r => setTimeout(r, 100));
            }
            await panel.context.save();
            return panel.id;
        }""", path))

    def close(self, panel: str) -> None:
        """Shut the notebook's kernel down and close its tab, as its tab's close button does
        (the focus taken off a control first: a notebook disposed with a control focused can
        still be asked to focus itself)."""
        self.page.evaluate("""async (id) => {
            const panel = [...window.jupyterapp.shell.widgets('main')].find(w => w.id === id);
            document.activeElement?.blur();
            await panel.sessionContext.shutdown();
            panel.close();
            while (!panel.isDisposed) await new Promise(r => setTimeout(r, 50));
        }""", panel)

    def explorer(self, panel: str, cell: int) -> Any:
        """The live explorer in the output of the notebook's cell `cell` (counted from 0 over
        every cell, as the notebook file lists them)."""
        view = self.page.locator(f"[id='{panel}'] .jp-Notebook .jp-Cell").nth(cell) \
            .locator(".widget-vbox").first
        view.wait_for(timeout=MOVE_S * 1000)
        return view


def notebook_errors(path: Path) -> list[str]:
    """Each code cell of a saved notebook that shows an error or did not run, one line each."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found = []
    for number, cell in enumerate(cells, 1):
        if cell["cell_type"] != "code":
            continue
        if cell.get("execution_count") is None:
            found.append(f"{path.name}, cell {number}: did not run")
        found += [f"{path.name}, cell {number}: {o['ename']}: {o['evalue']}"
                  for o in cell["outputs"] if o["output_type"] == "error"]
    return found


def explorer_cells(path: Path) -> list[tuple[int, str]]:
    """Each explorer in a notebook: its cell's position (from 0, every cell counted) and its
    name in EXPLORERS."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found = []
    for index, cell in enumerate(cells):
        text = "".join(cell["source"])
        found += [(index, name) for call, name in EXPLORER_CALLS.items()
                  if re.search(rf"^{call}\(\)", text, re.M)]
    return found


# -- moving a control, timed in the page --------------------------------------------------------


@dataclass(frozen=True)
class Control:
    """One control of an explorer as the page shows it."""

    label: str
    kind: str  # "slider" or "dropdown"
    value: str  # a slider's aria-valuenow, a dropdown's chosen option
    low: str  # a slider's aria-valuemin, a dropdown's first option
    high: str  # a slider's aria-valuemax, a dropdown's last option
    options: tuple[str, ...]  # a dropdown's options; () for a slider


@dataclass(frozen=True)
class Move:
    """One move of a control and what the page showed after it."""

    label: str  # the control's label
    action: str  # the key pressed, or the option chosen
    ms: float  # from the key press or the change to the redrawn plot in the DOM
    image_changed: bool
    table_changed: bool | None  # None: the explorer shows no table


def controls(explorer: Any) -> list[Control]:
    return [Control(**c) for c in explorer.evaluate("""root => [...root.querySelectorAll(
        ':scope > .widget-hbox > .jupyter-widgets')].map(c => {
            const label = c.querySelector('.widget-label')?.textContent ?? '';
            const handle = c.querySelector('.noUi-handle');
            if (handle) return {label, kind: 'slider', options: [],
                value: handle.getAttribute('aria-valuenow'),
                low: handle.getAttribute('aria-valuemin'),
                high: handle.getAttribute('aria-valuemax')};
            const options = [...c.querySelectorAll('select option')].map(o => o.textContent);
            const value = c.querySelector('select').selectedOptions[0]?.textContent ?? '';
            return {label, kind: 'dropdown', options, value,
                    low: options[0], high: options[options.length - 1]};
        })""")]


ARM = """(root, [index, timeoutMs]) => {
    const out = root.querySelector('.widget-output');
    const control = root.querySelectorAll(':scope > .widget-hbox > .jupyter-widgets')[index];
    const image = out.querySelector('img');
    const table = out.querySelector('pre')?.textContent ?? null;
    window.keelMove = new Promise(resolve => {
        let start = null;
        const begin = () => { if (start === null) start = performance.now(); };
        for (const type of ['keydown', 'input', 'change']) {
            control.addEventListener(type, begin, {capture: true, once: true});
        }
        const observer = new MutationObserver(() => {
            const now = out.querySelector('img');
            if (start === null || !now || now === image) return;
            const ms = performance.now() - start;
            observer.disconnect();
            const after = out.querySelector('pre')?.textContent ?? null;
            resolve({ms, imageChanged: now.src !== image?.src,
                     tableChanged: table === null ? null : after !== table});
        });
        observer.observe(out, {childList: true, subtree: true});
        setTimeout(() => { observer.disconnect(); resolve(null); }, timeoutMs);
    });
}"""


def move(explorer: Any, index: int, action: str) -> Move:
    """Move control `index` as a learner does: a slider's handle by a key (Home, End,
    ArrowLeft, ArrowRight, ...), a dropdown by choosing the option `action`; timed in the page."""
    control = controls(explorer)[index]
    explorer.evaluate(ARM, [index, MOVE_S * 1000])
    widget = explorer.locator(":scope > .widget-hbox > .jupyter-widgets").nth(index)
    if control.kind == "slider":
        widget.locator(".noUi-handle").focus()
        widget.page.keyboard.press(action)
    else:
        widget.locator("select").select_option(label=action)
    seen = explorer.page.evaluate("() => window.keelMove")
    assert seen is not None, f"{control.label}: {action} redrew nothing in {MOVE_S} s"
    return Move(control.label, action, seen["ms"], seen["imageChanged"], seen["tableChanged"])


def neighbour(control: Control, step: int) -> str | None:
    """The action that moves `control` one step (+1 or -1) from where it is; None at its end."""
    if control.kind == "slider":
        if control.value == (control.high if step > 0 else control.low):
            return None
        return "ArrowRight" if step > 0 else "ArrowLeft"
    at = control.options.index(control.value) + step
    return control.options[at] if 0 <= at < len(control.options) else None


def extreme(control: Control, high: bool) -> str | None:
    """The action that moves `control` to its end (`high`: the maximum or the last option);
    None when it is there already."""
    if control.value == (control.high if high else control.low):
        return None
    if control.kind == "slider":
        return "End" if high else "Home"
    return control.high if high else control.low
