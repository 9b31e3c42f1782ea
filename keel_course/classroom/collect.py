"""The instructor's collection: every student's saved notebooks, copied, then graded."""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from keel_checks.progress import CHAPTERS
from keel_lab._core.errors import LabError
from keel_lab._i18n import N_

GRADEBOOK = "gradebook.csv"
GRADED = tuple(dict.fromkeys(CHAPTERS.values()))  # the chapters with exercises, in course order


def chapters(given: str | None = None) -> tuple[str, ...]:
    """The chapters to collect: every one with exercises (a notebook without any, such as
    00_asyncio_primer or 08a_screen_frames, would be an error row for every student), or the one
    `given` names by its name or number (`03_batching`, `03`)."""
    if given is None:
        return GRADED
    named = tuple(c for c in GRADED if given in (c, c.split("_", 1)[0]))
    if not named:
        raise LabError("unknown_chapter", N_("{given!r} is not a chapter's name or number (the "
                                             "chapters with exercises: {chapters})"),
                       given=given[:40], chapters=", ".join(GRADED))
    return named


def collect(homes: Path, out_root: Path, chapter: str | None = None,
            now: datetime | None = None) -> Path:
    """Copy each student's notebooks of the chapters with exercises, or of `chapter` only
    (`homes/<student>/**/<chapter>.ipynb`, which the handout puts in `notebooks/`; hidden folders
    such as `.ipynb_checkpoints` left out) into `out_root/<UTC time>/<student>/`; return that
    folder.

    The timestamp is wall-clock time: a collection is a log entry, not an experiment output."""
    if not homes.is_dir():
        raise LabError("no_student_folders", N_("no students' folders in {homes}: has the "
                                                "class started?"), homes=homes)
    wanted = {f"{name}.ipynb" for name in chapters(chapter)}
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    out = out_root / stamp
    suffix = 1
    while out.exists():  # two collections within one second stay apart
        out = out_root / f"{stamp}-{suffix}"
        suffix += 1
    try:
        out.mkdir(parents=True)
        for home in sorted(p for p in homes.iterdir() if p.is_dir()):
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


def grade(folder: Path, timeout: float | None = None, jobs: int | None = None) -> int:
    """Run `keel-course grade` over a collection, writing `folder/gradebook.csv`; its exit code."""
    argv = [sys.executable, "-m", "keel_course.cli", "grade", str(folder),
            "--csv", str(folder / GRADEBOOK)]
    if timeout is not None:
        argv += ["--timeout", str(timeout)]
    if jobs is not None:
        argv += ["--jobs", str(jobs)]
    return subprocess.run(argv, check=False).returncode
