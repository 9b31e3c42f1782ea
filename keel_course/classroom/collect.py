"""The instructor's collection: every student's saved notebooks, copied, then graded."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from keel_course.classroom.roster import NAME
from keel_course.grading.grade import GRADED, chapters
from keel_lab._core.errors import LabError
from keel_lab._i18n import N_

GRADEBOOK = "gradebook.csv"
ROSTER = "roster.txt"  # who should have handed in: `grade --roster` gives the others a 0 row

__all__ = ["GRADEBOOK", "GRADED", "ROSTER", "chapters", "collect", "grade"]


def collect(homes: Path, out_root: Path, given: Sequence[str] | None = None,
            now: datetime | None = None, roster: Sequence[str] = ()) -> Path:
    """Copy each student's notebooks of the chapters with exercises, or of the chapters `given`
    (`chapters`; `homes/<student>/**/<chapter>.ipynb`, which the handout puts in `notebooks/`;
    hidden folders such as `.ipynb_checkpoints` left out) into `out_root/<UTC time>/<student>/`,
    with `roster.txt`: the `roster`, then every other student with a folder (added on the hub
    later); return that folder.

    The timestamp is wall-clock time: a collection is a log entry, not an experiment output."""
    if not homes.is_dir():
        raise LabError("no_student_folders", N_("no students' folders in {homes}: has the "
                                                "class started?"), homes=homes)
    wanted = {f"{name}.ipynb" for name in chapters(given)}
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    out = out_root / stamp
    suffix = 1
    while out.exists():  # two collections within one second stay apart
        out = out_root / f"{stamp}-{suffix}"
        suffix += 1
    try:
        out.mkdir(parents=True)
        students = sorted(p for p in homes.iterdir() if p.is_dir())
        everyone = dict.fromkeys([*roster, *(p.name for p in students if NAME.fullmatch(p.name))])
        (out / ROSTER).write_text("".join(f"{name}\n" for name in everyone), encoding="utf-8")
        for home in students:
            for notebook in sorted(home.rglob("*.ipynb")):
                relative = notebook.relative_to(home)
                if notebook.name not in wanted or any(
                        part.startswith(".") for part in relative.parts) or not _inside(
                        notebook, home):
                    continue
                target = out / home.name / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(notebook, target)
    except OSError as exc:
        raise LabError("cannot_collect", N_("cannot collect into {out}: {reason}"),
                       out=out, reason=exc.strerror or exc) from exc
    return out


def _inside(path: Path, home: Path) -> bool:
    """A regular file of that student's, not a link to someone else's work."""
    return not path.is_symlink() and path.resolve().is_relative_to(home.resolve())


def grade(folder: Path, timeout: float | None = None, jobs: int | None = None,
          only: Sequence[str] = ()) -> int:
    """Run `keel-course grade` over a collection, writing `folder/gradebook.csv`: totals over
    the chapters `only` names (default: those handed in), a row for each student on the
    collection's roster who handed nothing in; its exit code."""
    argv = [sys.executable, "-m", "keel_course.cli", "grade", str(folder),
            "--csv", str(folder / GRADEBOOK)]
    if only:
        argv += ["--chapter", ",".join(only)]
    if (folder / ROSTER).is_file():
        argv += ["--roster", str(folder / ROSTER)]
    if timeout is not None:
        argv += ["--timeout", str(timeout)]
    if jobs is not None:
        argv += ["--jobs", str(jobs)]
    return subprocess.run(argv, check=False).returncode
