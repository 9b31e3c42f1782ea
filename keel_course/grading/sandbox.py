"""Running one submission's plan in a process of its own, in a temporary folder, within a time
limit, and reading back what it reported.

Where bubblewrap can run (`keel_course.bubblewrap`), the child runs confined: its own PID,
network and mount namespaces, as `nobody`, seeing the system and the grader's Python read-only,
a copy of the two packages alone read-only at /keel (`package()`: no notebooks, no solutions,
no checkout), its own job folder at /job and an empty /tmp. Nothing it forks outlives it, it
cannot see or signal the grader, and it can write nowhere another submission or the grader
reads. Where bubblewrap cannot run (`isolation()` says why, on every run and in the JSON), the
child is a plain `python -I` process in a new session, run as `nobody` when the grader is root,
and the grader kills what it detached (a subreaper sweep): a boundary against mistakes and casual
cheating only; grading as root without bubblewrap and without a `nobody` who can run this Python
is refused.

Reading stops when the child says it is done or ends (a process it forked cannot hold the
submission), then its whole process group is killed. What it sends is read up to a bound; a
process that stops early - a crash, `os._exit`, a time-out - is reported with the step it was
at, and the verdicts it had already sent still count.
"""

from __future__ import annotations

import atexit
import compileall
import ctypes
import json
import os
import pwd
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import IO, Any

import keel_checks
import keel_cli
import keel_course
import keel_lab
from keel_course import bubblewrap
from keel_course.grading.plan import Plan
from keel_course.grading.remote import Judgement, Stopped, judged, pickled
from keel_lab._core.errors import LabError
from keel_lab._core.strict_json import read_json
from keel_lab._i18n import N_
from keel_lab.course import _data as data

# The child imports the copies of the grader's own keel_lab and keel_course that `package()`
# made, before anything else on its path (an editable install would otherwise show it the whole
# checkout).
_START = ("import sys; sys.path.insert(0, sys.argv[2]); "
          "from keel_course.grading.child import main; main()")
_PACKAGES = (Path(keel_lab.__file__).parent, Path(keel_checks.__file__).parent,
             Path(keel_cli.__file__).parent, Path(keel_course.__file__).parent)
_PR_SET_CHILD_SUBREAPER = 36
_running: set[int] = set()  # the pids of the children being graded now
_MARK = f"KEEL_LAB_GRADING={os.getpid()}-{secrets.token_hex(8)}"  # in every graded process's env
_lock = threading.Lock()
_PREFIX = f"keel-lab-grade-{os.getpid()}-"  # a sweep removes the folders of a killed grader
# Inputs are drawn anew for every grading run, the same for every submission of it (a fair
# class; the lab's own answers are then computed once); no submission's process sees the seed.
_SEED = secrets.randbits(32)
MEMORY = 2 * 1024**3  # bytes of address space for one submission's process
MAX_REPORT = 1024 * 1024  # bytes a child may send; its few lines take a few kilobytes


@dataclass
class Outcome:
    """What a child reported: a verdict per exercise it reached, errors, and why it stopped
    early (None when it finished). A verdict passes only when every result the check streamed
    while deciding it passed too (`results`), so a verdict object changed afterwards in the
    child counts for nothing."""

    verdicts: dict[str, Judgement] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    stopped: str | None = None
    at: str = "starting"  # the last step the child announced

    def take(self, message: dict[str, Any]) -> None:
        """One line of the child, read as the grader expects it; `stopped` is "" until `done`.
        Nothing it says is a verdict: the grader makes those (`remote.judged`)."""
        if isinstance(message.get("at"), str):
            self.at = message["at"][:200]
        elif isinstance(message.get("error"), str):
            self.errors.append(message["error"][:1000])
        elif message.get("done") is True:
            self.stopped = None


@cache
def package() -> str:
    """A folder holding copies of the two packages alone (compiled, readable by every user), made
    once per grading run and removed at exit: the child's code finds no solution beside it.
    keel_lab's data goes to keel_lab/data/, where a wheel has it: an editable install reads it
    from the checkout's data/, which the child's path does not show."""
    _sweep()
    root = tempfile.mkdtemp(prefix=f"{_PREFIX}package-")
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    os.chmod(root, 0o755)
    for source, target in [*((p, p.name) for p in _PACKAGES), (data.root(), "keel_lab/data")]:
        shutil.copytree(source, Path(root) / target, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    compileall.compile_dir(root, quiet=2, workers=1)
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            os.chmod(os.path.join(folder, name), 0o755 if name in dirs else 0o644)
    return root


def _sweep() -> None:
    """Remove the temporary folders a grader that was killed left behind (their names carry its
    process id)."""
    for folder in Path(tempfile.gettempdir()).glob("keel-lab-grade-*-*"):
        pid = folder.name.split("-")[3]
        if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(folder, ignore_errors=True)


@cache
def _nobody() -> tuple[int, int] | None:
    """The unprivileged user the child runs as when the grader is root and that user can run
    this Python (it cannot when the interpreter lives in root's home); else None."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        return None
    user = entry.pw_uid, entry.pw_gid
    try:
        probe = subprocess.run([sys.executable, "-I", "-c", "import json"], cwd="/",
                               capture_output=True, timeout=30, check=False, user=user[0],
                               group=user[1], extra_groups=[])
    except (OSError, subprocess.SubprocessError):
        return None
    return user if probe.returncode == 0 else None


@cache
def _subreaper() -> bool:
    """Make this process the parent of the orphans its children leave (Linux), so that a
    process a submission detached (`setsid`) is found and killed."""
    with suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    return False


def isolation() -> str | None:
    """None when submissions run confined by bubblewrap; else why not (said on every run)."""
    return bubblewrap.unavailable()


def _command(folder: Path) -> tuple[list[str], dict[str, str] | None, tuple[int, int] | None]:
    """How the child starts: (argv, the environment Popen gives it, the user Popen runs it as)."""
    if isolation() is None:
        argv = bubblewrap.confine(
            [sys.executable, "-I", "-c", _START, "/job/job.json", "/keel"],
            [bubblewrap.Mount(Path(package()), "/keel"), bubblewrap.Mount(folder, "/job", True)],
            chdir="/job", env=_SETTINGS | {"PATH": "/usr/bin:/bin", "HOME": "/tmp",
                                            "LANG": "C.UTF-8"})
        return argv, {}, None
    user = _nobody()
    if os.geteuid() == 0 and user is None:
        raise LabError("root_without_sandbox", N_("refusing to grade as root: bubblewrap is "
                                                  "unavailable and the user nobody cannot run "
                                                  "this Python ({why})"), why=isolation() or "")
    return ([sys.executable, "-I", "-c", _START, str(folder / "job.json"), package()],
            _environment(), user)


def run(plan: Plan, timeout: float, memory: int = MEMORY) -> Outcome:
    job = {"chunks": [asdict(c) for c in plan.chunks], "exercises": plan.to_run,
           "checked_after": plan.checked_after, "elsewhere": plan.elsewhere, "memory": memory,
           "cpu": int(timeout) + 5}
    seed = _SEED  # the inputs of this run: the grader's, never the child's
    reaping = _subreaper()
    with tempfile.TemporaryDirectory(prefix=_PREFIX, ignore_cleanup_errors=True) as tmp:
        folder = Path(tmp) / "job"  # the child's: the grader's stderr file stays beside it
        folder.mkdir()
        os.chmod(tmp, 0o711)  # a plain child as nobody reaches its folder, lists nothing
        argv, env, user = _command(folder)
        (folder / "job.json").write_text(json.dumps(job), encoding="utf-8")
        if os.geteuid() == 0:
            owner = user or (bubblewrap.NOBODY, bubblewrap.NOBODY)
            os.chown(folder, *owner)
            os.chown(folder / "job.json", *owner)
        with (Path(tmp) / "stderr.txt").open("w+b") as err:
            with _lock:
                proc = subprocess.Popen(
                    argv, cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=err, env=env, start_new_session=True,
                    user=user and user[0], group=user and user[1],
                    extra_groups=[] if user else None)
                _running.add(proc.pid)
            outcome = Outcome(stopped="")
            why = None
            try:
                _converse(_Link(proc, time.monotonic() + timeout, timeout), outcome, seed,
                          plan.elsewhere, plan.to_run)
            except Stopped as exc:
                why = exc.reason or None
            finally:
                _kill(proc, reaping)
            if outcome.stopped == "":  # no `done`: say why the process stopped, and where
                code = proc.returncode
                if isolation() is None and 128 < code < 160:
                    code = 128 - code  # bubblewrap exits 128+N for a child ended by signal N
                reason = why or _ended(code, _last_line(err))
                outcome.stopped = f"{reason} while {outcome.at}"
    return outcome


def _converse(link: _Link, outcome: Outcome, seed: int, elsewhere: dict[str, int],
              exercises: list[str]) -> None:
    """Read the child until it is done; judge each exercise it offers to serve, here."""
    while outcome.stopped == "":
        message = link.message()
        if isinstance(message.get("serve"), str):
            name = message["serve"]
            if name in exercises and name not in outcome.verdicts:
                outcome.verdicts[name] = judged(name, message, link, seed, elsewhere)
                hint = outcome.verdicts[name][1]
                if hint and hint.startswith("refused: "):
                    outcome.errors.append(hint.removeprefix("refused: "))
            link.send(("done",))
        else:
            outcome.take(message)


class _Link:
    """The child's two pipes: requests pickled to its stdin, JSON lines read from its stdout,
    within the deadline and the bound."""

    def __init__(self, proc: subprocess.Popen[bytes], deadline: float, timeout: float) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc, self.deadline, self.timeout = proc, deadline, timeout
        self._buffer = b""
        self._size = 0
        self._selector = selectors.DefaultSelector()
        self._selector.register(proc.stdout.fileno(), selectors.EVENT_READ)

    def send(self, message: tuple[Any, ...], handles: dict[int, Any] | None = None) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(pickled(message, {} if handles is None else handles))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise Stopped("") from exc

    def message(self) -> dict[str, Any]:
        """The next JSON object the child sends (other lines are skipped, each an error)."""
        while True:
            line = self._line()
            try:
                message = read_json(line.decode("utf-8", "replace"), "line")
            except LabError:
                continue
            if isinstance(message, dict):
                return message

    def _line(self) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise Stopped(f"timed out after {self.timeout:g} s")
            ended = self.proc.poll() is not None
            if not self._selector.select(0 if ended else min(left, _POLL)):
                if ended:
                    raise Stopped("")
                continue
            data = os.read(fd, 65536)
            if not data:
                raise Stopped("")
            self._size += len(data)
            if self._size > MAX_REPORT:
                raise Stopped("wrote more than the grader reads on its channel")
            self._buffer += data
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line


_SETTINGS = {"MPLBACKEND": "Agg", "KEEL_PROGRESS": "off", "OPENBLAS_NUM_THREADS": "1",
             "OMP_NUM_THREADS": "1"}


def _environment() -> dict[str, str]:
    """A plain child's environment: the grader's, marked so the sweep finds what it left."""
    name, value = _MARK.split("=")
    return dict(os.environ) | _SETTINGS | {name: value}


_POLL = 0.2  # seconds between looks at whether the child has ended


def _kill(proc: subprocess.Popen[bytes], reaping: bool) -> None:
    """End the child's whole process group (the child and what it forked), reap it, then kill
    the orphans it left in sessions of their own. A confined child is first given a moment to
    end by itself (it exits once done), so bubblewrap reaps its namespace, not this process."""
    confined = isolation() is None
    if confined:
        with suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=1)
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    with _lock:
        _running.discard(proc.pid)
        if reaping:
            _kill_orphans(confined)
    for pipe in (proc.stdin, proc.stdout):
        if pipe:
            with suppress(OSError):
                pipe.close()


def _kill_orphans(confined: bool) -> None:
    """Kill and reap every process adopted by this one (the subreaper) that is not a child being
    graded and carries the graded processes' mark in its environment (or, confined, any: the
    grader starts no other): each was left behind by a graded child. (Another submission's
    detached process, graded at the same time, goes too: it is not waited for either way.)"""
    for pid in _adopted(os.getpid()):
        if pid in _running or not (confined or _marked(pid)):
            continue
        with suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        with suppress(ChildProcessError):
            os.waitpid(pid, 0)


def _marked(pid: int) -> bool:
    try:
        return _MARK.encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


def _adopted(parent: int) -> list[int]:
    """The pids whose parent is `parent`, from /proc."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == parent:
            out.append(int(entry))
    return out


def _ended(returncode: int, last: str) -> str:
    if returncode < 0:
        with suppress(ValueError):
            return f"the process crashed ({signal.Signals(-returncode).name})"
        return f"the process crashed (signal {-returncode})"
    return (f"the process ended (exit code {returncode}) before grading finished"
            + (f": {last}" if last else ""))


def _last_line(err: IO[bytes]) -> str:
    """The last line the child wrote on stderr (its own failure, if any), bounded."""
    err.seek(0, os.SEEK_END)
    err.seek(max(0, err.tell() - 2000))
    lines = err.read().decode("utf-8", "replace").strip().splitlines()
    return " ".join(lines[-1].split())[:300] if lines else ""
