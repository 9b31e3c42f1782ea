"""A class on one machine: how long a student's server takes to start, and what it costs.

Starts the real hub (`keel-course classroom start`, 127.0.0.1 only), then STUDENTS students through
the REST API: one alone (a cold start, handout copy included), then the others all at once, as
a class does at the start of a lesson. Memory is each process's resident set (RSS; shared pages
count in each): the student's server idle, then its kernel after chapter 3's first cell (the
imports every chapter starts with), and the hub with its proxy.

Run: .venv/bin/python bench/classroom_hub.py [STUDENTS]   (the proxy: make classroom installs it)
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

from keel_course.checkout import Checkout
from keel_course.classroom.driver import RunningClass, running_class
from keel_course.classroom.hub import find_proxy
from keel_course.classroom.settings import free_ports

CHECKOUT = Checkout.at(Path(__file__).resolve().parent.parent)
STUDENTS = 6
MB = 1024 * 1024


def _ready(hub: RunningClass, names: list[str]) -> float:
    start = time.perf_counter()
    for name in names:
        hub.instructor.start_server(name)
    for name in names:
        hub.instructor.wait_ready(name, timeout=300)
    return time.perf_counter() - start


def _rss(pid: int) -> float:
    return float(psutil.Process(pid).memory_info().rss) / MB


def main(students: int = STUDENTS) -> dict[str, str]:
    names = [f"student{i}" for i in range(students)]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "roster.txt").write_text("")
        (port,) = free_ports(1, avoid=0)
        with running_class(CHECKOUT, folder / "roster.txt", folder / "class", port,
                           find_proxy(CHECKOUT), folder / "hub.log") as hub:
            hub.instructor.create_students(names)
            alone = _ready(hub, names[:1])
            together = _ready(hub, names[1:])
            servers = [hub.instructor.server(n)["state"]["pid"] for n in names]
            idle = [_rss(pid) for pid in servers]
            notebook = hub.room.handout / "notebooks" / "03_batching.ipynb"
            kernels = []
            for name, pid in zip(names, servers, strict=True):
                student = hub.instructor.as_student(name)
                first = next(c for c in student.notebook(
                    notebook.relative_to(hub.room.handout).as_posix())["cells"]
                    if c["cell_type"] == "code")
                with student.kernel() as kernel:
                    kernel.execute("".join(first["source"]))
                    [process] = psutil.Process(pid).children()
                    kernels.append(_rss(process.pid))
            base = sum(_rss(p.pid) for p in hub.processes()
                       if p.pid not in servers and p.ppid() not in servers)
    others = students - 1
    return {
        "classroom: a student's server starts (alone, handout copied)": f"{alone:.1f} s",
        f"classroom: {others} students' servers start at once":
            f"{together:.1f} s ({together / others:.1f} s per student)",
        "classroom: memory per student, server idle (RSS, median)":
            f"{statistics.median(idle):.0f} MB",
        "classroom: memory per student, kernel after chapter 3's imports (RSS, median)":
            f"{statistics.median(kernels):.0f} MB",
        "classroom: hub and proxy (RSS)": f"{base:.0f} MB",
    }


if __name__ == "__main__":
    for k, v in main(int(sys.argv[1]) if len(sys.argv) > 1 else STUDENTS).items():
        print(f"{k}: {v}")
