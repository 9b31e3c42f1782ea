"""Starting the class's JupyterHub: the settings written, the handout built, then the hub itself."""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from keel_course.checkout import Checkout
from keel_course.classroom.materials import stage_lab
from keel_course.classroom.settings import Classroom
from keel_course.handout import build_handout
from keel_lab._core.errors import LabError
from keel_lab._i18n import N_

SETTINGS_ENV = "KEEL_LAB_CLASSROOM"  # tells the config file which class folder to read


def hub_config(checkout: Checkout) -> Path:
    """The hub's configuration file, which reads the class's settings."""
    return checkout.classroom / "jupyterhub_config.py"


def local_proxy(checkout: Checkout) -> Path:
    """Where `make classroom` installs the proxy with npm (no global install)."""
    return checkout.build / "classroom" / "node" / "node_modules" / ".bin" / \
        "configurable-http-proxy"


def find_proxy(checkout: Checkout, given: Path | None = None) -> str:
    """The configurable-http-proxy to run: the one given, the Makefile's, or one on PATH."""
    local = local_proxy(checkout)
    candidates = [given] if given else [local, shutil.which("configurable-http-proxy")]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return str(Path(candidate).resolve())
    where = given or local
    raise LabError("proxy_not_found", N_("configurable-http-proxy not found at {where}: `make "
                                         "classroom` installs it with npm, or pass --proxy"),
                   where=where)


def prepare(checkout: Checkout, roster: tuple[str, ...], class_dir: Path, port: int,
            language: str, proxy: str) -> Classroom:
    """Write the class's settings, its handout and the lab its kernels import (built anew: a
    student who starts from now on gets the course as it is; one who has started keeps their
    copy of the notebooks)."""
    config = hub_config(checkout)
    if not config.is_file():
        raise LabError("hub_config_missing", N_("{config} is missing: give a complete checkout "
                                                "of the repository"), config=config)
    if importlib.util.find_spec("jupyterhub") is None:
        raise LabError("jupyterhub_missing", N_("JupyterHub is not installed: pip install "
                                                "'keel-lab[classroom]' (make install has it)"))
    room = Classroom.create(class_dir, roster, port, proxy, language)
    build_handout(checkout, room.handout, language)
    stage_lab(room.handout, room.lab)
    room.save()
    keep_private(room.database)
    return room


def keep_private(path: Path) -> None:
    """Make a file its owner's only before the hub opens it, creating it empty if missing:
    JupyterHub would create its database 0644 under the usual umask, readable by every account
    of the machine (SQLite gives its journal the database's mode)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        os.chmod(path, 0o600)
    except OSError as exc:
        raise LabError("cannot_write", N_("cannot write {path}: {reason}"),
                       path=path, reason=exc.strerror or exc) from exc


def banner(room: Classroom) -> str:
    """What the instructor needs to hand out and to come back with."""
    return "\n".join([
        f"class of {len(room.students)} student(s), folders in {room.homes}",
        f"students open {room.url} and log in with their name and the class password "
        f"{room.password}",
        f"instructor: log in as 'instructor' with the password in {room.path} "
        "(admin_password); REST API token: instructor_token",
        f"collect and grade: keel-course classroom collect {room.class_dir}",
        "stop: Ctrl-C",
    ])


def announce_when_listening(url: str, text: str, alive: Callable[[], bool],
                            poll: float = 0.2) -> None:
    """Print `text` once `url` answers, or nothing if the hub ends first: a banner printed
    before the hub listened sent students to an address that answered nothing."""
    while alive():
        try:
            with urllib.request.urlopen(url, timeout=2):
                print(text, flush=True)
                return
        except OSError:  # not listening yet, or the proxy not routing to the hub yet
            time.sleep(poll)


def run_hub(checkout: Checkout, room: Classroom) -> NoReturn:
    """Replace this process by the hub (so Ctrl-C and a signal reach it directly), leaving a
    process that prints the banner once the hub answers at the students' address, then ends
    (or ends with the hub). Forked twice, it is no child of the hub, which would never reap it."""
    os.environ[SETTINGS_ENV] = str(room.class_dir)
    os.chdir(room.class_dir)  # the hub keeps its proxy's pid file in its working folder
    sys.stdout.flush()
    sys.stderr.flush()
    hub = os.getpid()
    child = os.fork()
    if child == 0:
        try:
            if os.fork() == 0:
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the hub's to handle
                announce_when_listening(f"{room.url}/hub/api/", banner(room),
                                        lambda: _running(hub))
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    os.execv(room.python, [room.python, "-m", "jupyterhub", "-f", str(hub_config(checkout))])


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
