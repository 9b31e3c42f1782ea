"""nbgrader's autograde with each submission's kernel confined by bubblewrap, as `keel-course
grade` confines a submission (`keel_course.bubblewrap`): the config `keel-course nbgrader`
writes names `ConfinedKernelManager` as the kernel manager of nbgrader's `Execute` step.

Inside, the kernel sees the system and this Python read-only, a copy of the lab's packages alone
at /keel (`sandbox.package()`: no solutions, no checkout), the submission's own autograded
folder, and a private folder holding its connection file and its sockets. It talks to nbgrader
over Unix sockets in that folder (ZeroMQ's `ipc` transport), so it gets no network at all. Not
the course's `source/` (the solutions), not `gradebook.db`, not another student's submission.
nbgrader itself runs outside, as before: it puts the test cells back, executes them in this
kernel and writes the scores.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from jupyter_client.manager import AsyncKernelManager

from keel_course import bubblewrap
from keel_course.grading.sandbox import package
from keel_course.nbgrader import CONFIG_LINE

LAB = "/keel"  # where the kernel imports the lab from, inside
_PASSED = ("PATH", "LANG", "LC_ALL", "TZ")  # and KEEL_*: no more of the instructor's env


class ConfinedKernelManager(AsyncKernelManager):
    """A kernel manager whose kernel runs inside bubblewrap, reached over Unix sockets."""

    async def _async_pre_start_kernel(self, **kw: Any) -> tuple[list[str], dict[str, Any]]:
        why = bubblewrap.unavailable()
        if why is not None:
            raise RuntimeError(f"keel-lab: cannot confine this submission's kernel: {why}. "
                               f"To autograde submissions you trust unconfined, delete the line "
                               f"{CONFIG_LINE!r} from nbgrader_config.py")
        private = tempfile.mkdtemp(prefix="keel-lab-kernel-")
        atexit.register(shutil.rmtree, private, ignore_errors=True)
        self.transport = "ipc"
        self.ip = os.path.join(private, "socket")
        cmd, kw = await super()._async_pre_start_kernel(**kw)
        connection = os.path.join(private, "connection.json")
        shutil.copy(self.connection_file, connection)
        if os.geteuid() == 0:  # the kernel runs as nobody: it must read the file and bind there
            for path in (private, connection):
                os.chown(path, bubblewrap.NOBODY, bubblewrap.NOBODY)
        cmd = [connection if part == self.connection_file else part for part in cmd]
        here = str(Path(kw.get("cwd") or os.getcwd()).resolve())
        mounts = [bubblewrap.Mount(Path(package()), LAB),
                  bubblewrap.Mount(Path(private), private, writable=True),
                  bubblewrap.Mount(Path(here), here, writable=True)]
        given = kw.get("env") or os.environ
        env = {name: value for name, value in given.items()
               if name.startswith("KEEL_") or name in _PASSED}
        env |= {"PYTHONPATH": LAB, "HOME": "/tmp", "MPLCONFIGDIR": "/tmp",
                "IPYTHONDIR": "/tmp/.ipython"}
        kw["env"] = env
        # ipykernel prints how to connect another client and that Ctrl-C will not work, once per
        # notebook: noise in autograde's log (its errors go to stderr, kept)
        kw["stdout"] = subprocess.DEVNULL
        return bubblewrap.confine(cmd, mounts, chdir=here, env=env), kw
