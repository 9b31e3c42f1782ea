"""The learner's JupyterLab: the course's notebooks without the instructor's tooling.

The project's environment holds nbgrader for instructors, and installing it enables its server
extensions and its JupyterLab extension for every server started there: a plain `jupyter lab`
shows a "Nbgrader" menu and a "Create Assignment" panel, and its log warns that no
nbgrader_config.py was found. JupyterLab also asks on first start whether to fetch Jupyter's news.

`make lab` starts JupyterLab through `serve`, which puts a private configuration folder (a
temporary one, removed when the server stops) first on JUPYTER_CONFIG_PATH for that process only:
nbgrader's server extensions off, its JupyterLab extensions and JupyterLab's announcements plugin
(the news question, the news and the update check) disabled in the page config, and no news feed or
version check on the server either. Nothing is written into the environment's or the user's
Jupyter configuration, so an instructor's `jupyter lab` in the same environment keeps nbgrader.
The extensions turned off are found in the installed configuration, not listed here by hand.

Its own lines (how to open and stop JupyterLab, an error) are in the learner's language: the
edition's with `--language zh` (`make lab LANGUAGE=zh`), else KEEL_LAB_LANG's.

Run: python -m keel_course.lab FOLDER [--language zh] [jupyter lab options, e.g. --port=8890]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from jupyter_core.paths import jupyter_config_path, jupyter_path
from jupyter_server.extension.config import ExtensionConfigManager
from jupyterlab_server.config import get_federated_extensions

from keel_cli._command import FilledHelpFormatter
from keel_course.sources import failure
from keel_lab._core.errors import LabError
from keel_lab._i18n import N_, _, speaking

INSTRUCTOR = "nbgrader"  # the instructor's tooling: its server and lab extensions' names hold it
ANNOUNCEMENTS = "@jupyterlab/apputils-extension:announcements"  # news question, news, updates
QUIET_SERVER = {"news_url": None,
                "check_for_updates_class": "jupyterlab.handlers.announcements.NeverCheckForUpdate"}
HOW_TO_STOP = N_("Ctrl-C twice stops it (or Ctrl-C once, then y and Enter).")


@dataclass(frozen=True)
class LearnerConfig:
    """What the learner's JupyterLab leaves out, and the configuration files that say so."""

    server_extensions: tuple[str, ...]  # modules, switched off in ServerApp.jpserver_extensions
    lab_extensions: tuple[str, ...]  # packages and plugins, in the page config's disabledExtensions

    def files(self) -> dict[str, dict[str, Any]]:
        """Each file of the private configuration folder, by its path there, as JSON."""
        return {
            "jupyter_server_config.json": {
                "ServerApp": {"jpserver_extensions": dict.fromkeys(self.server_extensions, False)},
                "LabApp": QUIET_SERVER},
            "labconfig/page_config.json": {
                "disabledExtensions": dict.fromkeys(self.lab_extensions, True)},
        }

    def write(self, folder: Path) -> None:
        for name, data in self.files().items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def learner_config() -> LearnerConfig:
    """The instructor's extensions installed in this environment (enabled or not: disabling one
    that is off changes nothing), and the announcements plugin."""
    manager = ExtensionConfigManager(read_config_path=jupyter_config_path())
    servers = manager.get_jpserver_extensions()  # type: ignore[no-untyped-call]  # untyped there
    labs = get_federated_extensions(jupyter_path("labextensions"))
    return LearnerConfig(
        tuple(sorted(m for m in servers if INSTRUCTOR in m)),
        (*sorted(name for name in labs if INSTRUCTOR in name), ANNOUNCEMENTS))


def command(folder: Path, options: Sequence[str] = ()) -> list[str]:
    """JupyterLab on `folder` from this environment, on 127.0.0.1 and with no browser opened
    (the learner opens the URL it prints); root needs `--allow-root`."""
    root = ["--allow-root"] if os.geteuid() == 0 else []
    return [sys.executable, "-m", "jupyterlab", f"--notebook-dir={folder}", "--no-browser",
            "--ip=127.0.0.1", *root, *options]


def environment(private: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """`base` (this process's environment) with `private` first on JUPYTER_CONFIG_PATH: ahead of
    the environment's configuration, behind only the user's own (~/.jupyter)."""
    env = dict(os.environ if base is None else base)
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
        p for p in (str(private), env.get("JUPYTER_CONFIG_PATH", "")) if p)
    return env


def serve(folder: Path, options: Sequence[str] = ()) -> int:
    """Run the learner's JupyterLab on `folder` until it stops; its exit status.

    The terminal's Ctrl-C reaches JupyterLab itself (same process group), which asks before it
    stops; this process only waits, and passes a SIGTERM or SIGHUP on to it."""
    if not folder.is_dir():
        raise LabError("not_a_folder", N_("{folder} is not a folder: `make lab` makes the "
                                          "learner's copy first"), folder=folder)
    config = learner_config()
    with tempfile.TemporaryDirectory(prefix="keel-lab-jupyter-") as private:
        print(_("JupyterLab on {folder}/: open the http://127.0.0.1 URL it prints below. "
                "{how_to_stop}").format(folder=folder, how_to_stop=_(HOW_TO_STOP)), flush=True)
        try:
            config.write(Path(private))
            lab = subprocess.Popen(command(folder, options), env=environment(Path(private)))
        except OSError as exc:
            raise LabError("lab_not_started", N_("cannot start JupyterLab: {reason}"),
                           reason=failure(exc)) from exc

        def forward(signum: int, _frame: FrameType | None) -> None:
            lab.send_signal(signum)

        previous = {s: signal.signal(s, handler) for s, handler in
                    ((signal.SIGINT, signal.SIG_IGN), (signal.SIGTERM, forward),
                     (signal.SIGHUP, forward))}
        try:
            return lab.wait()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)


def parser() -> argparse.ArgumentParser:
    """The launcher's options, its help in the learner's language (KEEL_LAB_LANG's, read now)."""
    p = argparse.ArgumentParser(
        prog="python -m keel_course.lab", allow_abbrev=False, formatter_class=FilledHelpFormatter,
        description=_("The learner's JupyterLab: the course's notebooks without the instructor's "
                      "tooling."),
        epilog=_("Any other option goes to jupyter lab as it is."))
    p.add_argument("folder", type=Path, help=_("the notebooks' folder, e.g. workspace"))
    p.add_argument("--language", default="en", metavar="CODE",
                   help=_("the edition's language, en or zh: with zh these lines are in "
                          "Chinese (default: en, in KEEL_LAB_LANG's language)"))
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args, options = parser().parse_known_args(argv)
    with speaking(args.language):
        try:
            return serve(args.folder, options)
        except LabError as exc:
            print(_("make lab: {error}").format(error=exc), file=sys.stderr)
            return 2


if __name__ == "__main__":
    sys.exit(main())
