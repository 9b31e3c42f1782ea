"""What a student finds in their folder: the class's handout, copied in on their first start."""

from __future__ import annotations

import shutil
from pathlib import Path

from keel_lab._core.errors import LabError
from keel_lab._i18n import N_

# Written into a student's folder once the handout is in: a later start (a restarted server, a
# restarted hub) must never copy it over the student's work.
MARKER = ".keel-lab-handout"


def give_handout(handout: Path, home: Path) -> bool:
    """Copy the handout into a student's folder unless it was copied before; True if copied.
    Either way the folder is closed to every other account of the machine (0700: the server
    runs as the folder's owner, or as `nobody` once the spawner hands it over), a folder of a
    class started before included."""
    copied = not (home / MARKER).exists()
    if copied:
        if not handout.is_dir():
            raise LabError("class_handout_missing", N_("the class's handout {handout} is "
                                                       "missing: start the class again"),
                           handout=handout)
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        shutil.copytree(handout, home, dirs_exist_ok=True)  # gives home the handout's mode
        (home / MARKER).write_text(f"copied from {handout}\n", encoding="utf-8")
    home.chmod(0o700)
    return copied


def stage_lab(handout: Path, lab: Path) -> None:
    """Lay out the handout's package as an install holds it, `lab/keel_lab` with its data in
    `keel_lab/data` (the handout keeps the data beside the package, for pip), for the students'
    kernels to import read-only (`keel_course.classroom.spawner`); built anew at every start of
    the class, like the handout."""
    try:
        shutil.rmtree(lab, ignore_errors=True)
        shutil.copytree(handout / "keel_lab", lab / "keel_lab")
        shutil.copytree(handout / "keel_cli", lab / "keel_cli")
        shutil.copytree(handout / "keel_checks", lab / "keel_checks")
        shutil.copytree(handout / "data", lab / "keel_lab" / "data")
    except OSError as exc:
        raise LabError("cannot_stage_lab", N_("cannot lay out the students' lab in {lab}: "
                                              "{reason}"), lab=lab, reason=exc.strerror or exc
                       ) from exc
