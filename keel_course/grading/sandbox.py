"""Running one submission's plan in a process of its own, in a temporary folder, within a time
limit, and reading back what it reported.

The child (`keel_course.grading.child`) starts as `python -I` (no environment variables
steering Python, no user site-packages, not the current folder on the path) in a new session,
importing a copy of the packages alone (`package()`: no notebooks, no solutions, no guide beside
them). Run as root, the grader starts it as the unprivileged user `nobody`, so it can neither
signal the grader nor write the grader's files. Reading stops when the child says it is done or
ends (a process it forked cannot hold the submission), then its whole process group is killed,
and so is every process it detached into a session of its own (the grader is their subreaper,
Linux only). What it sends is read up to a bound; a process that stops early - a crash,
`os._exit`, a time-out - is reported with the step it was at, and the verdicts it had already
sent still count.

This is a boundary against mistakes and casual cheating, not a security sandbox: see the README.
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
from typing import IO

import keel_course
import keel_lab
from keel_course.grading.plan import Plan
from keel_lab.core.errors import LabError
from keel_lab.core.strict_json import read_json
from keel_lab.course import data

# The child imports the copies of the grader's own keel_lab and keel_course that `package()`
# made, before anything else on its path (an editable install would otherwise show it the whole
# checkout).
_START = ("import sys; sys.path.insert(0, sys.argv[2]); "
          "from keel_course.grading.child import main; main()")
_PACKAGES = (Path(keel_lab.__file__).parent, Path(keel_course.__file__).parent)
_PR_SET_CHILD_SUBREAPER = 36
_running: set[int] = set()  # the pids of the children being graded now
_MARK = f"KEEL_LAB_GRADING={os.getpid()}-{secrets.token_hex(8)}"  # in every graded process's env
_lock = threading.Lock()
_PREFIX = f"keel-lab-grade-{os.getpid()}-"  # a sweep removes the folders of a killed grader
MEMORY = 2 * 1024**3  # bytes of address space for one submission's process
MAX_REPORT = 1024 * 1024  # bytes a child may send; its few lines take a few kilobytes


@dataclass
class Outcome:
    """What a child reported: a verdict per exercise it reached, errors, and why it stopped
    early (None when it finished). A verdict passes only when every result the check streamed
    while deciding it passed too (`results`), so a verdict object changed afterwards in the
    child counts for nothing."""

    verdicts: dict[str, tuple[bool, str | None]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    stopped: str | None = None
    at: str = "starting"  # the last step the child announced
    results: dict[str, list[bool]] = field(default_factory=dict)


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


def run(plan: Plan, timeout: float, memory: int = MEMORY) -> Outcome:
    job = {"chunks": [asdict(c) for c in plan.chunks], "exercises": plan.to_run,
           "checked_after": plan.checked_after, "elsewhere": plan.elsewhere, "memory": memory,
           "cpu": int(timeout) + 5, "seed": secrets.randbits(32)}
    user = _nobody()
    reaping = _subreaper()
    with tempfile.TemporaryDirectory(prefix=_PREFIX, ignore_cleanup_errors=True) as tmp:
        folder = Path(tmp)
        (folder / "job.json").write_text(json.dumps(job), encoding="utf-8")
        if user:
            os.chown(folder, *user)
            os.chown(folder / "job.json", *user)
        with (folder / "stderr.txt").open("w+b") as err:
            with _lock:
                proc = subprocess.Popen(
                    [sys.executable, "-I", "-c", _START, str(folder / "job.json"), package()],
                    cwd=folder, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                    env=_environment(), start_new_session=True,
                    user=user and user[0], group=user and user[1],
                    extra_groups=[] if user else None)
                _running.add(proc.pid)
            try:
                assert proc.stdout is not None
                data, why = _read(proc, time.monotonic() + timeout, timeout)
            finally:
                _kill(proc, reaping)
            outcome = _outcome(data)
            if outcome.stopped == "":  # no `done`: say why the process stopped, and where
                reason = why or _ended(proc.returncode, _last_line(err))
                outcome.stopped = f"{reason} while {outcome.at}"
    return outcome


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    name, value = _MARK.split("=")
    env.update({name: value, "MPLBACKEND": "Agg", "KEEL_PROGRESS": "off",
                "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    return env


CHANGED_VERDICT = ("refused: a check of this exercise failed (or none ran) while it was checked, "
                   "yet the verdict said passed - the submission changed the verdict")
_DONE = b'{"done": true}\n'
_POLL = 0.2  # seconds between looks at whether the child has ended


def _read(proc: subprocess.Popen[bytes], deadline: float, timeout: float
          ) -> tuple[bytes, str | None]:
    """Everything the child sends until it says it is done, closes its end or ends (what a
    process it forked holds open is not waited for), or until the deadline or the bound:
    (the bytes, None) or (the bytes so far, why reading stopped)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    chunks: list[bytes] = []
    size = 0
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return b"".join(chunks), f"timed out after {timeout:g} s"
            ended = proc.poll() is not None
            if not selector.select(0 if ended else min(left, _POLL)):
                if ended:  # drained: what the child wrote before it ended has been read
                    return b"".join(chunks), None
                continue
            data = os.read(fd, 65536)
            if not data:
                return b"".join(chunks), None
            size += len(data)
            if size > MAX_REPORT:
                return b"".join(chunks), "wrote more than the grader reads on its channel"
            chunks.append(data)
            if data.endswith(_DONE):
                return b"".join(chunks), None


def _kill(proc: subprocess.Popen[bytes], reaping: bool) -> None:
    """End the child's whole process group (the child and what it forked), reap it, then kill
    the orphans it left in sessions of their own."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    with _lock:
        _running.discard(proc.pid)
        if reaping:
            _kill_orphans()
    if proc.stdout:
        proc.stdout.close()


def _kill_orphans() -> None:
    """Kill and reap every process adopted by this one (the subreaper) that carries the graded
    processes' mark in its environment and is not a child being graded: each was left behind
    by a graded child. (Another submission's detached process, graded at the same time, goes
    too: it is not waited for either way.)"""
    for pid in _adopted(os.getpid()):
        if pid in _running or not _marked(pid):
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


def _outcome(data: bytes) -> Outcome:
    """The child's lines, read as the grader expects them; "" in `stopped` until `done`. A
    `result` line is one check decided while the exercise named by the last `at` was checked."""
    out = Outcome(stopped="")
    checking = None
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            message = read_json(line, "line")
        except LabError:
            out.errors.append("the grading process sent a line that is not JSON")
            continue
        if not isinstance(message, dict):
            continue
        if isinstance(message.get("at"), str):
            out.at = message["at"]
            checking = out.at.removeprefix("checking ") if out.at.startswith("checking ") \
                else None
        elif isinstance(message.get("error"), str):
            out.errors.append(message["error"])
        elif isinstance(message.get("result"), bool) and checking is not None:
            out.results.setdefault(checking, []).append(message["result"])
        elif isinstance(message.get("exercise"), str) and isinstance(message.get("passed"),
                                                                     bool):
            name, passed, hint = message["exercise"], message["passed"], message.get("hint")
            hint = hint if isinstance(hint, str) else None
            if passed and not all(out.results.get(name, [False])):
                passed, hint = False, CHANGED_VERDICT
                out.errors.append(f"checking {name}: {CHANGED_VERDICT.removeprefix('refused: ')}")
            out.verdicts[name] = (passed, hint)
        elif message.get("done") is True:
            out.stopped = None
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
