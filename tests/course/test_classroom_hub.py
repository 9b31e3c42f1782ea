"""A class on a real JupyterHub: real processes, loopback only, bounded in time.

The instructor starts the hub with `keel-course classroom start`, creates three students through
the REST API with the service token and starts their servers; each student sees the handout and
runs chapter 3's exercise and check through the kernel API with their own token (one solved,
one wrong, one untouched); the instructor collects and grades; the gradebook says who passed.
A wrong password is refused. Stopping the hub leaves no process and no listening port.

Each student's kernel also tries what a student after the solutions would try (`PROBE`): the
checkout's solutions, the checkout the venv's editable install names in `direct_url.json`,
another student's folder, the class's settings and tokens, the host's processes. Where
bubblewrap runs, all of it fails; keel_lab comes from the class's read-only lab; the student's
own folder is writable.
"""

from __future__ import annotations

import csv
import json
import stat
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests

from keel_course.bubblewrap import NOBODY, unavailable
from keel_course.checkout import Checkout
from keel_course.classroom.collect import GRADEBOOK, collect, grade
from keel_course.classroom.driver import Student, login, open_lab, running_class
from keel_course.classroom.hub import find_proxy, local_proxy
from keel_course.classroom.settings import LOOPBACK, Classroom, free_ports
from keel_course.classroom.spawner import LAB
from keel_course.grading.grade import NOT_STARTED

pytestmark = [pytest.mark.lab_wide, pytest.mark.slow]

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
CONFINED = unavailable() is None
ANSWERS = {"ada": SOLVED, "grace": WRONG, "alan": None}  # None: the student changes nothing


def _proxy() -> str:
    """The Makefile's install step, when the proxy is not installed yet."""
    proxy = local_proxy(CHECKOUT)
    if not proxy.exists():
        subprocess.run(["make", "-s", str(proxy.relative_to(CHECKOUT.root))],
                       cwd=CHECKOUT.root, check=True, timeout=300)
    return find_proxy(CHECKOUT)


# Run in a student's kernel, formatted with the host's paths: what each attempt met, as JSON.
PROBE = """
import errno, json, os, pathlib, urllib.parse
from importlib.metadata import distribution
import keel_lab, keel_lab.course._data as data

def tried(path):
    try:
        os.listdir(path) if os.path.isdir(path) else pathlib.Path(path).read_bytes()
    except OSError as exc:
        return errno.errorcode[exc.errno]
    return "read"

installed = distribution("keel-lab").read_text("direct_url.json")
checkout = urllib.parse.urlparse(json.loads(installed)["url"]).path
home = pathlib.Path(os.environ["HOME"])
(home / "mine.txt").write_text("{name}")
try:
    (pathlib.Path(keel_lab.__file__).parent / "patched.py").write_text("x = 1")
    lab_write = "written"
except OSError as exc:
    lab_write = errno.errorcode[exc.errno]
processes = [pathlib.Path(f"/proc/{{p}}/cmdline").read_bytes().replace(b"\\0", b" ").decode()
             for p in os.listdir("/proc") if p.isdigit()]
print(json.dumps({{
    "solutions": tried({solutions!r}),
    "installed solutions": tried(os.path.join(checkout, "notebooks", "solutions")),
    "installed package": tried(os.path.join(checkout, "keel_lab", "__init__.py")),
    "checkout holds": sorted(os.listdir(checkout)),
    "other student": tried({other!r}),
    "settings": tried({settings!r}),
    "database": tried({database!r}),
    "pid 1": pathlib.Path("/proc/1/cmdline").read_bytes().split(b"\\0")[0].decode(),
    "processes": processes,
    "uid": os.getuid(),
    "keel_lab": keel_lab.__file__,
    "data": str(data.root()),
    "incidents": len(data.load("incidents")),
    "lab write": lab_write,
}}))
"""


def _probe(room: Classroom, name: str) -> str:
    other = next(n for n in ANSWERS if n != name)
    return PROBE.format(name=name, solutions=str(CHECKOUT.solutions),
                        other=str(room.homes / other), settings=str(room.path),
                        database=str(room.class_dir / "jupyterhub.sqlite"))


def _work(student: Student, path: str, answer: str | None,
          probe: str | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """What the student does in JupyterLab: edit the exercise, run the chapter's imports, the
    exercise and its check, save; then what a cheat would try (only when confined: the probe
    writes into the package it imports). The outputs of the check cell, and what the probe
    found."""
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
        found = kernel.execute(probe) if probe else []
    student.save(path, notebook)
    # one print, but the kernel flushes stdout on a timer: under load its line and its newline
    # can arrive as two stream outputs
    assert {o["output_type"] for o in found} == ({"stream"} if probe else set()), found
    return list(check["outputs"]), json.loads("".join(o["text"] for o in found)) if probe else {}


def _confined(room: Classroom, name: str, found: dict[str, Any]) -> None:
    """Everything a student's kernel must not reach, it did not; what it needs, it has."""
    missing = {"solutions", "installed solutions", "installed package", "other student",
               "settings", "database"}
    assert {k: found[k] for k in missing} == dict.fromkeys(missing, "ENOENT"), found
    # the venv lives in the checkout, so the checkout's folder is there: holding the venv alone
    assert found["checkout holds"] == [".venv"]
    # its own PID namespace: PID 1 is bubblewrap's, no process of the hub or the host is seen
    host = Path("/proc/1/cmdline").read_bytes().split(b"\0")[0].decode()
    assert found["pid 1"] == "bwrap" != host
    assert not any("jupyterhub_config" in c or "configurable-http-proxy" in c or
                   str(CHECKOUT.root / "keel_course") in c for c in found["processes"])
    assert found["uid"] == NOBODY
    assert found["keel_lab"] == f"{LAB}/keel_lab/__init__.py"
    assert (found["data"], found["lab write"]) == (f"{LAB}/keel_lab/data", "EROFS")
    assert found["incidents"] > 0
    assert (room.homes / name / "mine.txt").read_text() == name  # its own folder: writable
    assert not (room.lab / "keel_lab" / "patched.py").exists()


def test_a_class_on_one_hub(tmp_path: Path) -> None:
    began = time.monotonic()
    roster = tmp_path / "roster.txt"
    roster.write_text("dana  # on the roster, logs in with the class password\n")
    class_dir = tmp_path / "class"
    (port,) = free_ports(1, avoid=0)
    log = tmp_path / "hub.log"
    with running_class(CHECKOUT, roster, class_dir, port, _proxy(), log) as hub:
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
        # a browser's way in (docs/classroom.md): the form login, then the lab once - JupyterHub's
        # OAuth step gives the server's own cookie; before it, the server's API answers 403
        browser = requests.Session()
        assert login(room.url, "ada", room.password, browser)
        contents = f"{room.url}/user/ada/api/contents"
        assert browser.get(contents, timeout=30).status_code == 403
        open_lab(room.url, "ada", browser)
        assert browser.get(contents, timeout=30).status_code == 200
        handout = {p.name for p in room.handout.iterdir()}
        chapter = next(p.relative_to(room.handout).as_posix() for p in room.handout.rglob(CHAPTER))
        given = [_text(c) for c in json.loads((room.handout / chapter).read_text())["cells"]]
        for student in students.values():
            assert handout <= set(student.listing())
            assert [_text(c) for c in student.notebook(chapter)["cells"]] == given
        # the instructor's token reaches a student's notebooks through the hub (docs/classroom.md)
        notebooks = Path(chapter).parent.as_posix()
        assert chapter in [m["path"] for m in hub.instructor.call(
            "GET", f"/user/ada/api/contents/{notebooks}?content=1")["content"]]

        with ThreadPoolExecutor(len(names)) as pool:
            done = dict(zip(names, pool.map(
                lambda n: _work(students[n], chapter, ANSWERS[n],
                                _probe(room, n) if CONFINED else None), names),
                strict=True))
        checks = {name: outputs for name, (outputs, _) in done.items()}
        if CONFINED:
            for name, (_, found) in done.items():
                _confined(room, name, found)
        else:
            assert "the students' servers run unconfined" in log.read_text()
        assert f"{EXERCISE}: PASSED" in "".join(o.get("text", "") for o in checks["ada"])
        for name, shown in (("grace", "NOT YET"), ("alan", "not implemented yet")):
            assert shown in "".join(o.get("text", "") for o in checks[name])
            # in a student's own kernel a check that does not pass runs on (Run All ends)
            assert not [o for o in checks[name] if o["output_type"] == "error"]

        folder = collect(room.homes, class_dir / "collected", [CHAPTER.removesuffix(".ipynb")])
        for name, answer in ANSWERS.items():  # what each student saved, not the handout
            assert _exercise(folder / name / chapter) == (
                answer or _exercise(room.handout / chapter))
        assert grade(folder, jobs=2) == 0
        with (folder / GRADEBOOK).open(newline="") as f:
            read = list(csv.DictReader(f))
        rows = {row["student"]: row for row in read if row["chapter"] != "total"}
        assert sorted(rows) == sorted(names)
        assert {r["student"]: (r["points"], r["max_points"])
                for r in read if r["chapter"] == "total"} == {
            "ada": ("2", "2"), "grace": ("0", "2"), "alan": ("0", "2")}
        assert {n: (r[EXERCISE], r["points"], r["max_points"], r["error"])
                for n, r in rows.items()} == {"ada": ("2", "2", "2", ""),
                                              "grace": ("0", "0", "2", ""),
                                              "alan": ("0", "0", "2", NOT_STARTED)}

        # no other account of the machine reads a student's work or the hub's database
        assert {n: stat.S_IMODE((room.homes / n).stat().st_mode) for n in names} == {
            n: 0o700 for n in names}
        assert stat.S_IMODE(room.database.stat().st_mode) == 0o600
        students["alan"].start_kernel()  # still running when the class ends
        hub.stop()
    assert sum("ipykernel_launcher" in c for c in hub.stopped) == 1
    servers = [c for c in hub.stopped if "jupyterhub.singleuser" in c]
    assert sum(c.startswith(f"{sys.executable} -m") for c in servers) == len(names)
    # around each server when confined: bubblewrap, and its PID 1 in the server's namespace
    assert sum(c.startswith("bwrap ") for c in servers) == (2 * len(names) if CONFINED else 0)
    assert sum("configurable-http-proxy" in c for c in hub.stopped) == 1
    assert hub.leftover_processes == []
    said = log.read_text()  # the banner once the hub listens: its address answers by then
    assert said.index("JupyterHub is now running at") < said.index("students open ")
    assert said.count("students open ") == 1
    assert hub.leftover_ports == []
    assert hub.listening and {ip for ip, _ in hub.listening} == {LOOPBACK}
    assert time.monotonic() - began < BUDGET
