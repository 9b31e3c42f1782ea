"""A class on a real JupyterHub: real processes, loopback only, bounded in time.

The instructor starts the hub with `keel-course classroom start`, creates three students through
the REST API with the service token and starts their servers; each student sees the handout and
runs chapter 3's exercise and check through the kernel API with their own token (one solved,
one wrong, one untouched); the instructor collects and grades; the gradebook says who passed.
A wrong password is refused. Stopping the hub leaves no process and no listening port.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from keel_course.checkout import Checkout
from keel_course.classroom.collect import GRADEBOOK, collect, grade
from keel_course.classroom.driver import Student, login, running_class
from keel_course.classroom.hub import find_proxy, local_proxy
from keel_course.classroom.settings import LOOPBACK, free_ports

CHECKOUT = Checkout.at(Path(__file__).resolve().parents[2])

BUDGET = 120  # seconds, on 2 cores: the bound for this test
CHAPTER = "03_batching.ipynb"
EXERCISE = "make_batches"
WRONG = (f"def {EXERCISE}(requests, tools):\n"
         "    return [[request] for request in requests]  # every call alone\n")


def _cells(notebook: dict[str, Any], tag: str) -> list[dict[str, Any]]:
    return [c for c in notebook["cells"] if tag in c.get("metadata", {}).get("tags", [])]


def _text(cell: dict[str, Any]) -> str:
    """A cell's source: a list of lines in a file, one string from the contents API."""
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def _exercise(path: Path) -> str:
    return _text(_cells(json.loads(path.read_text()), "exercise")[0])


SOLVED = _exercise(CHECKOUT.solutions / CHAPTER)
ANSWERS = {"ada": SOLVED, "grace": WRONG, "alan": None}  # None: the student changes nothing


def _proxy() -> str:
    """The Makefile's install step, when the proxy is not installed yet."""
    proxy = local_proxy(CHECKOUT)
    if not proxy.exists():
        subprocess.run(["make", "-s", str(proxy.relative_to(CHECKOUT.root))],
                       cwd=CHECKOUT.root, check=True, timeout=300)
    return find_proxy(CHECKOUT)


def _work(student: Student, path: str, answer: str | None) -> list[dict[str, Any]]:
    """What the student does in JupyterLab: edit the exercise, run the chapter's imports, the
    exercise and its check, save. The outputs of the check cell."""
    notebook = student.notebook(path)
    imports = next(c for c in notebook["cells"] if c["cell_type"] == "code")
    exercise, check = _cells(notebook, "exercise")[0], _cells(notebook, "check")[0]
    if answer is not None:
        exercise["source"] = answer
    with student.kernel() as kernel:
        prefix = kernel.execute("import sys; print(sys.prefix)")
        assert prefix[0]["text"].strip() == sys.prefix  # the project's environment
        for cell in (imports, exercise, check):
            cell["outputs"] = kernel.execute(_text(cell))
    student.save(path, notebook)
    return list(check["outputs"])


def test_a_class_on_one_hub(tmp_path: Path) -> None:
    began = time.monotonic()
    roster = tmp_path / "roster.txt"
    roster.write_text("dana  # on the roster, logs in with the class password\n")
    class_dir = tmp_path / "class"
    (port,) = free_ports(1, avoid=0)
    with running_class(CHECKOUT, roster, class_dir, port, _proxy(),
                       tmp_path / "hub.log") as hub:
        room = hub.room
        assert login(room.url, "dana", room.password)
        assert not login(room.url, "dana", room.password + "x")
        assert not login(room.url, "mallory", "not the password")

        names = list(ANSWERS)
        hub.instructor.create_students(names)
        for name in names:
            hub.instructor.start_server(name)
        for name in names:
            hub.instructor.wait_ready(name)
        students = {name: hub.instructor.as_student(name) for name in names}
        handout = {p.name for p in room.handout.iterdir()}
        chapter = next(p.relative_to(room.handout).as_posix() for p in room.handout.rglob(CHAPTER))
        given = [_text(c) for c in json.loads((room.handout / chapter).read_text())["cells"]]
        for student in students.values():
            assert handout <= set(student.listing())
            assert [_text(c) for c in student.notebook(chapter)["cells"]] == given

        with ThreadPoolExecutor(len(names)) as pool:
            checks = dict(zip(names, pool.map(
                lambda n: _work(students[n], chapter, ANSWERS[n]), names), strict=True))
        assert f"{EXERCISE}: PASSED" in "".join(o.get("text", "") for o in checks["ada"])
        for name, shown in (("grace", "NOT YET"), ("alan", "not implemented yet")):
            assert shown in "".join(o.get("text", "") for o in checks[name])
            assert [o["ename"] for o in checks[name] if o["output_type"] == "error"] == [
                "ExerciseNotPassed"]

        folder = collect(room.homes, class_dir / "collected", CHAPTER.removesuffix(".ipynb"))
        for name, answer in ANSWERS.items():  # what each student saved, not the handout
            assert _exercise(folder / name / chapter) == (
                answer or _exercise(room.handout / chapter))
        assert grade(folder, jobs=2) == 0
        with (folder / GRADEBOOK).open(newline="") as f:
            rows = {Path(row["path"]).relative_to(folder).parts[0]: row
                    for row in csv.DictReader(f)}
        assert sorted(rows) == sorted(names)
        assert {n: (r[EXERCISE], r["points"], r["max_points"], r["error"])
                for n, r in rows.items()} == {"ada": ("2", "2", "2", ""),
                                              "grace": ("0", "0", "2", ""),
                                              "alan": ("0", "0", "2", "")}

        students["alan"].start_kernel()  # still running when the class ends
        hub.stop()
    assert sum("ipykernel_launcher" in c for c in hub.stopped) == 1
    assert sum("jupyterhub.singleuser" in c for c in hub.stopped) == len(names)
    assert sum("configurable-http-proxy" in c for c in hub.stopped) == 1
    assert hub.leftover_processes == []
    assert hub.leftover_ports == []
    assert hub.listening and {ip for ip, _ in hub.listening} == {LOOPBACK}
    assert time.monotonic() - began < BUDGET
