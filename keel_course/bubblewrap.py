"""A process confined by bubblewrap (`bwrap`, the sandbox Flatpak uses): what a submission or a
student's server runs in.

The confined process gets new PID, IPC, UTS and mount namespaces (and a new network namespace
unless it must listen for the hub), a file system holding only the system's read-only folders,
this Python's installation and virtual environment read-only, and the mounts its caller names;
an empty private `/tmp`; the unprivileged user `nobody`. It is PID 2 under bubblewrap's own PID 1
in its namespace: when it or the caller ends, the kernel ends every process left in the
namespace, so nothing a submission forked outlives it. Run by root, bubblewrap mounts and then
`setpriv` drops to `nobody` for good (no capabilities, no new privileges); run by another user it
needs unprivileged user namespaces and maps that user to `nobody` inside.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

NOBODY = 65534  # the uid and gid of `nobody` and `nogroup` on Debian, inside the sandbox
_SYSTEM = ("/usr", "/etc")  # read-only; /bin, /lib... are links into /usr or bound as they are
_TOP_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


@dataclass(frozen=True)
class Mount:
    """A host folder (or file) shown at `target` inside, read-only unless `writable`."""

    source: Path
    target: str
    writable: bool = False


def _python() -> list[str]:
    """The folders this interpreter runs from: its virtual environment and its installation
    (through every symlink, so a venv's `bin/python` resolves inside)."""
    places = {sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    found = sorted({os.path.realpath(p) for p in places} | places)
    return [p for p in found if not any(p.startswith(q + "/") for q in found)]


def _parents(targets: Iterable[str]) -> list[str]:
    """`--dir` for every folder above a mount point, searchable by `nobody` (bubblewrap would
    make them 0700 when root runs it, and /root is 0700 on the host); never /tmp, the private
    tmpfs every user may write to."""
    out: list[str] = []
    seen: set[str] = set()
    for target in targets:
        for parent in reversed(Path(target).parents):
            text = str(parent)
            if text not in ("/", "/tmp") and text not in seen and not text.startswith(_SYSTEM):
                seen.add(text)
                out += ["--perms", "0755", "--dir", text]
    return out


def confine(argv: Sequence[str], mounts: Sequence[Mount] = (), *, chdir: str = "/tmp",
            env: Mapping[str, str] | None = None, network: bool = False) -> list[str]:
    """The command running `argv` confined (see the module's note); `env`, when given, is all it
    sees of the environment (else it inherits the caller's, as a spawner's process must)."""
    args = ["bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session"]
    if not network:
        args.append("--unshare-net")
    root = os.geteuid() == 0
    if not root:
        args += ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY)]
    for folder in _SYSTEM:
        args += ["--ro-bind", folder, folder]
    for link in _TOP_LINKS:
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            args += ["--ro-bind", link, link]
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp"]
    python = _python()
    args += _parents([*python, *(m.target for m in mounts)])
    for folder in python:
        if os.path.exists(folder):
            args += ["--ro-bind", folder, folder]
    for mount in mounts:
        args += ["--bind" if mount.writable else "--ro-bind", str(mount.source), mount.target]
    args += ["--chdir", chdir]
    if env is not None:
        args.append("--clearenv")
        for name, value in env.items():
            args += ["--setenv", name, value]
    if root:
        args += ["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups",
                 "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"]
    return args + list(argv)


@cache
def unavailable() -> str | None:
    """None when bubblewrap can confine a process here; else why not, in one line (checked once
    a run, by confining this Python for real)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return "setpriv (util-linux) is missing, so root cannot drop to nobody inside"
    try:
        probe = confine([sys.executable, "-I", "-c", "import os; print(os.getuid())"], env={})
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap could not start here ({exc})"
    if done.returncode != 0 or done.stdout.strip() != str(NOBODY):
        said = " ".join((done.stderr or done.stdout).split())[:200]
        said = said or f"exit {done.returncode}"
        return f"bubblewrap could not start a sandbox here ({said}): processes run unconfined"
    return None
