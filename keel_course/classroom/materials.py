"""What a student finds in their folder: the class's handout, copied in on their first start."""

from __future__ import annotations

import shutil
from pathlib import Path

from keel_lab.core.errors import LabError

# Written into a student's folder once the handout is in: a later start (a restarted server, a
# restarted hub) must never copy it over the student's work.
MARKER = ".keel-lab-handout"


def give_handout(handout: Path, home: Path) -> bool:
    """Copy the handout into a student's folder unless it was copied before; True if copied."""
    if (home / MARKER).exists():
        return False
    if not handout.is_dir():
        raise LabError(f"the class's handout {handout} is missing: start the class again")
    home.mkdir(parents=True, exist_ok=True)
    shutil.copytree(handout, home, dirs_exist_ok=True)
    (home / MARKER).write_text(f"copied from {handout}\n", encoding="utf-8")
    return True
