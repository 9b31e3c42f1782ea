"""The cheating class (cheating_class.py) graded in one run of `keel-course grade`: every cheat
gets 0 points, every fair answer full points, the grader finishes and its files stay its own
after it exits, and no process of a submission outlives it."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import site
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cheating_class import CHEATS, FAIR, Entry, build

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
LEARNER = ROOT / "notebooks" / "02_pairing.ipynb"
KEEL_COURSE = Path(sys.executable).parent / "keel-course"
MARK = "keel-cheat"  # in the command line of what a cheat spawns, in the name of what it plants
DROP = Path("/tmp/keel-cheat-drop.py")  # what aa-tmp-drop leaves for zz-tmp-read


def _site_dirs() -> list[Path]:
    dirs = {sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    return [Path(d) for d in sorted(dirs) if Path(d).is_dir()]


def _planted() -> list[Path]:
    """Files a cheat planted where the next grading (or the next student) would run them."""
    return [p for d in _site_dirs() for p in d.glob("keel_cheat*")] + (
        [DROP] if DROP.exists() else [])


def _mentioning(*needles: str) -> dict[int, str]:
    """pid -> command line of every other process whose command line or environment names one
    of `needles` (what a submission spawned; a survivor clears its environment, not its mark)."""
    found = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ")
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        if any(n.encode() in cmdline or n.encode() in environ for n in needles):
            found[int(proc.name)] = cmdline.decode(errors="replace")[:200]
    return found


def _digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


@dataclass
class Run:
    returncode: int | None
    rows: dict[str, dict[str, Any]]  # entry name -> its row in the JSON
    rewritten: list[str]  # the grader's files that changed after it exited
    survivors: dict[int, str]  # processes of submissions alive after the grader
    planted: list[str]  # files planted in site-packages or /tmp
    stderr: str = ""
    parsed: bool = False


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """One grading run of every entry (one notebook each, named after it)."""
    DROP.unlink(missing_ok=True)
    before = set(_planted())
    tmp = tmp_path_factory.mktemp("cheating-class")
    folder, out_json, out_csv = tmp / "submissions", tmp / "grades.json", tmp / "grades.csv"
    for entry in (*CHEATS, *FAIR):
        build(entry, LEARNER, folder)
    with out_json.open("w") as stdout:
        try:
            done = subprocess.run([str(KEEL_COURSE), "grade", str(folder), "--json", "--csv",
                                   str(out_csv), "--timeout", "30"], stdout=stdout,
                                  stderr=subprocess.PIPE, text=True, timeout=300, cwd=tmp)
            returncode, stderr = done.returncode, done.stderr
        except subprocess.TimeoutExpired as exc:
            returncode, stderr = None, str(exc.stderr or "")
    digests = {p: _digest(p) for p in (out_json, out_csv)}
    time.sleep(2)
    rewritten = [p.name for p, d in digests.items() if _digest(p) != d]
    survivors = _mentioning(str(tmp), MARK)
    for pid in [p for p, cmd in survivors.items() if "python" in cmd]:  # a submission's, killed
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    planted = [p for p in _planted() if p not in before]
    for path in planted:
        path.unlink(missing_ok=True)
    rows: dict[str, dict[str, Any]] = {}
    with contextlib.suppress(ValueError, KeyError, TypeError):
        rows = {Path(r["path"]).stem: r for r in json.loads(out_json.read_text())["submissions"]}
    return Run(returncode, rows, rewritten, survivors, [str(p) for p in planted],
               stderr[-2000:], bool(rows))


def test_the_grader_finished_with_a_row_per_entry(graded: Run) -> None:
    assert graded.returncode == 0, f"exit {graded.returncode}: {graded.stderr}"
    assert graded.parsed, f"no JSON on stdout: {graded.stderr}"
    assert sorted(graded.rows) == sorted(e.name for e in (*CHEATS, *FAIR))


def test_the_grader_s_files_stay_its_own(graded: Run) -> None:
    assert not graded.rewritten, f"changed after the grader exited: {graded.rewritten}"


def test_no_process_of_a_submission_survives(graded: Run) -> None:
    assert not graded.survivors, f"still running after the grader: {graded.survivors}"


def test_nothing_planted_for_later_runs(graded: Run) -> None:
    assert not graded.planted, f"planted (removed again): {graded.planted}"


def test_the_table_is_large_enough() -> None:
    assert len(CHEATS) >= 32 and len(FAIR) >= 6
    assert len({e.name for e in (*CHEATS, *FAIR)}) == len(CHEATS) + len(FAIR)
    assert all(e.fair for e in FAIR) and not any(e.fair for e in CHEATS)


# Cheats that still get points, each with why (docs/grading.md: the threat model); strict, so the
# day one of them gets 0 this list must shrink.
OPEN = {
    "capstone-runner-source-edited": "the lab's runner and executor re-parsed and edited (ast) "
                                     "into modules of the submission's own: no lab code object "
                                     "runs, and what runs behaves as a right loop",
}


def _entries() -> list[object]:
    return [pytest.param(e, id=e.name, marks=[pytest.mark.xfail(strict=True, reason=OPEN[e.name])]
                         if e.name in OPEN else []) for e in (*CHEATS, *FAIR)]


@pytest.mark.parametrize("entry", _entries())
def test_entry_points(graded: Run, entry: Entry) -> None:
    row = graded.rows.get(entry.name)
    assert row is not None, f"{entry.name}: no row ({entry.tries}); grader: {graded.stderr}"
    told = f"{entry.name} ({entry.tries}): {row['points']}/{row['max_points']}, " \
           f"error {row['error']!r}, hints {[e['hint'] for e in row['exercises']]}"
    if entry.fair:
        assert row["points"] == row["max_points"] > 0, told
    else:
        assert row["points"] == 0, told
