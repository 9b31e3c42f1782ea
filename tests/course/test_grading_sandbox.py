"""One submission in its own process: limits, a flooded channel, and reading what it sent."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from keel_course.grading.plan import Chunk, Plan
from keel_course.grading.sandbox import (
    Outcome,
    _adopted,
    _ended,
    _marked,
    package,
    run,
)

pytestmark = pytest.mark.lab_wide


def _plan(text: str) -> Plan:
    return Plan("05_partial_success", ("status_history",), (Chunk(1, text),))


def test_memory_is_limited_in_the_child():
    out = run(_plan("x = bytearray(3 * 1024**3)\n"
                    "def status_history(events):\n    return ['failed']"), timeout=60)
    assert out.stopped is None
    assert out.errors == ["cell 1 raised MemoryError"]
    assert out.verdicts["status_history"][0] is False


def test_a_flood_on_the_grader_channel_is_cut_off():
    out = run(_plan("import os\nfor fd in range(3, 10):\n    try:\n"
                    "        os.write(fd, b'{}' * 1_000_000)\n    except OSError:\n"
                    "        pass\n"), timeout=60)
    assert out.stopped == "wrote more than the grader reads on its channel while running cell 1"
    assert out.verdicts == {}


def _outcome(lines: list[dict]) -> Outcome:
    out = Outcome(stopped="")
    for line in lines:
        out.take(line)
    return out


def test_the_childs_lines_are_read_defensively():
    out = _outcome([{"at": "checking read_turn"}, {"exercise": 1}, {"at": 3},
                    {"exercise": "read_turn", "passed": True}, {"error": "cell 2 raised X"},
                    {"result": True}, {"error": ["x"]}])
    assert out.at == "checking read_turn" and out.stopped == ""
    assert out.errors == ["cell 2 raised X"]
    assert out.verdicts == {}  # a verdict is the grader's: nothing the child says is one
    assert _outcome([{"done": True}]).stopped is None


def test_how_a_process_ended_is_said_in_words():
    assert _ended(-11, "") == "the process crashed (SIGSEGV)"
    assert _ended(-200, "") == "the process crashed (signal 200)"
    assert _ended(1, "ImportError: x") == ("the process ended (exit code 1) before grading "
                                           "finished: ImportError: x")


def test_limits_are_hard_so_the_learner_cannot_raise_them():
    out = run(_plan("import resource\nsoft, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
                    "assert soft == hard, (soft, hard)\n"
                    "resource.setrlimit(resource.RLIMIT_AS, (hard + 1, hard + 1))\n"
                    "def status_history(events):\n    return ['failed']"), timeout=60)
    assert out.errors == ["cell 1 raised ValueError: not allowed to raise maximum limit"]


def test_a_forked_child_does_not_hold_the_submission_and_no_process_is_left():
    text = ("import os, subprocess, time\nif os.fork() == 0:\n    time.sleep(600)\n"
            "p = subprocess.Popen(['sleep', '600'], start_new_session=True)\n"
            "open('pid', 'w').write(str(p.pid))\n"
            "def status_history(events):\n    return ['failed']")
    start = time.monotonic()
    out = run(_plan(text), timeout=60)
    assert out.stopped is None and time.monotonic() - start < 30
    assert not [pid for pid in _adopted(os.getpid()) if _marked(pid)]


def test_the_child_sees_the_packages_alone_with_the_data():
    root = Path(package())
    assert sorted(p.name for p in root.iterdir()) == [
        "keel_checks", "keel_cli", "keel_course", "keel_lab"]
    assert (root / "keel_course" / "grading" / "child.py").is_file()
    assert (root / "keel_lab" / "data" / "incidents.json").is_file()
    assert not list(root.rglob("*.ipynb"))


def test_the_child_reads_the_data_from_its_copy():
    """Under an editable install too, whose keel_lab.data is the checkout's data/."""
    out = run(_plan("from pathlib import Path\nfrom keel_lab.course import data, fonts\n"
                    "assert data.root() == Path(data.__file__).parents[1] / 'data'\n"
                    "assert len(data.incidents()) > 10 and fonts.font_path()\n"
                    "def status_history(events):\n    return ['failed']"), timeout=60)
    assert out.stopped is None and out.errors == []
