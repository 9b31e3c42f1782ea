"""Each student's server confined by bubblewrap (`keel_course.bubblewrap`), so that a student's
notebook cannot read the solutions: the instructor's checkout holds them, and the project's venv
imports keel_lab from that checkout.

Inside, the server and its kernels (its children, in the same namespaces) see the system and the
project's Python read-only, the student's own folder writable at its own path, and the class's
lab - the handout's `keel_lab`, with its data, no solution - read-only at `LAB`, first on
`PYTHONPATH`. Nothing else of the host: not the checkout's files, not another student's folder,
not the class's settings and tokens, not the host's processes. The host's network is kept, so
the server listens where the hub expects it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from jupyterhub.spawner import SimpleLocalProcessSpawner
from traitlets import List, Unicode, default

from keel_course.bubblewrap import NOBODY, Mount, confine

LAB = "/opt/keel-lab"  # where the kernels import the lab from, inside


class ConfinedSpawner(SimpleLocalProcessSpawner):  # type: ignore[misc]  # JupyterHub is untyped
    """The simple spawner (every student's folder under the class folder, no system account),
    its command run inside bubblewrap."""

    singleuser = List(Unicode(), help="the single-user server's command, run confined").tag(
        config=True)
    lab = Unicode(help="the host folder holding the read-only keel_lab the kernels import").tag(
        config=True)

    @default("cmd")
    def _confined(self) -> list[str]:
        home = str(self.home_dir)
        mounts = [Mount(Path(self.lab), LAB), Mount(Path(home), home, writable=True)]
        return confine(self.singleuser, mounts, chdir=home, network=True)

    @default("environment")
    def _lab_first(self) -> dict[str, str]:
        return {"PYTHONPATH": LAB}

    async def start(self) -> Any:
        """Start the server once its folder is writable by the user it runs as inside."""
        if os.geteuid() == 0:
            give_to_nobody(Path(self.home_dir))
        return await super().start()


def give_to_nobody(home: Path) -> None:
    """Make a student's folder `nobody`'s: run by root, bubblewrap runs the server as `nobody`,
    and the hub copied the handout in as root (run by another user, bubblewrap maps that user to
    `nobody` inside, so nothing is needed). Links are changed, never followed: a student's link
    to a system file must not hand that file to `nobody`."""
    for folder, dirs, files in os.walk(home):
        for name in [folder, *(os.path.join(folder, n) for n in (*dirs, *files))]:
            if os.lstat(name).st_uid != NOBODY:
                os.chown(name, NOBODY, NOBODY, follow_symlinks=False)
