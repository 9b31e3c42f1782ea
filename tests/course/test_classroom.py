"""The classroom's parts without a hub: roster, settings, the hub's config file, handout copy,
collection and the commands' errors. tests/course/test_classroom_hub.py runs the real hub."""

from __future__ import annotations

import json
import os
import runpy
import socket
import stat
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from json_fields import paths, reshape
from traitlets.config import Config

from keel_checks.progress import CHAPTERS
from keel_course import bubblewrap
from keel_course.bubblewrap import NOBODY
from keel_course.checkout import Checkout
from keel_course.classroom.collect import GRADEBOOK, ROSTER, chapters, collect, grade
from keel_course.classroom.driver import Kernel
from keel_course.classroom.hub import (
    SETTINGS_ENV,
    announce_when_listening,
    banner,
    find_proxy,
    hub_config,
    keep_private,
    prepare,
)
from keel_course.classroom.materials import MARKER, give_handout
from keel_course.classroom.roster import MAX_STUDENTS, NAME, parse_roster, read_roster
from keel_course.classroom.settings import (
    LOOPBACK,
    PASSWORD_ENV,
    Classroom,
    free_ports,
    port_is_free,
)
from keel_course.classroom.spawner import ConfinedSpawner, give_to_nobody
from keel_course.cli import main
from keel_course.handout import MANIFEST
from keel_lab._core.errors import LabError

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
CHECKOUT = Checkout.at(ROOT)
AT = ["--checkout", str(ROOT)]  # the checkout a class is started from


def test_roster_names_in_order_without_comments():
    assert parse_roster("# class A\nada\n\n  grace  # row 2\nalan.t\nx_1-y\n") == (
        "ada", "grace", "alan.t", "x_1-y")
    assert parse_roster("") == ()


@pytest.mark.parametrize(("text", "message"), [
    ("ada\nGrace\n", "line 2: 'Grace' is not a student name"),
    ("ada bob\n", "line 1: 'ada bob' is not a student name"),
    ("../etc\n", "line 1: '../etc' is not a student name"),
    ("-rf\n", "line 1: '-rf' is not a student name"),
    ("a" * 33 + "\n", "is not a student name"),
    ("ada\nada\n", "line 2: 'ada' is listed twice"),
    ("instructor\n", "line 1: 'instructor' is the instructor's login"),
    ("\n".join(f"s{i}" for i in range(MAX_STUDENTS + 1)), f"more than {MAX_STUDENTS} students"),
])
def test_a_bad_roster_line_is_named(text, message):
    with pytest.raises(LabError, match=message.replace(".", r"\.")):
        parse_roster(text)


def test_an_unreadable_roster_is_one_line(tmp_path):
    with pytest.raises(LabError, match=r"cannot read the roster .*No such file"):
        read_roster(tmp_path / "missing.txt")
    (tmp_path / "latin1.txt").write_bytes(b"jos\xe9\n")
    with pytest.raises(LabError, match="cannot read the roster"):
        read_roster(tmp_path / "latin1.txt")


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_fuzz_roster_names_or_lab_error(text):
    try:
        names = parse_roster(text)
    except LabError as exc:
        assert "\n" not in str(exc)
        return
    assert all(NAME.fullmatch(n) for n in names) and len(set(names)) == len(names)


def _room(tmp_path: Path, students: tuple[str, ...] = ("ada", "grace")) -> Classroom:
    return Classroom.create(tmp_path / "class", students, free_ports(1, avoid=0)[0],
                            "/usr/bin/true")


def test_settings_round_trip_readable_by_their_owner_only(tmp_path):
    room = _room(tmp_path)
    path = room.save()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert Classroom.load(room.class_dir) == room
    assert room.url == f"http://127.0.0.1:{room.port}"
    assert len({room.port, room.hub_port, room.proxy_api_port}) == 3
    assert len(room.password) >= 8 and len(room.admin_password) >= 32
    assert room.python == sys.executable and room.allow_root == (os.geteuid() == 0)


def test_a_restart_keeps_logins_and_token(tmp_path, monkeypatch):
    monkeypatch.delenv(PASSWORD_ENV, raising=False)
    first = _room(tmp_path)
    first.save()
    again = _room(tmp_path, ("ada", "grace", "alan"))
    assert (again.password, again.admin_password, again.instructor_token) == (
        first.password, first.admin_password, first.instructor_token)
    assert again.students == ("ada", "grace", "alan")
    other = _room(tmp_path / "other")
    assert other.password != first.password and other.instructor_token != first.instructor_token


def test_the_class_password_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(PASSWORD_ENV, "correct horse")
    assert _room(tmp_path).password == "correct horse"
    monkeypatch.setenv(PASSWORD_ENV, "short")
    with pytest.raises(LabError, match=f"{PASSWORD_ENV} must be at least 8 characters"):
        _room(tmp_path)


def test_a_port_in_use_is_refused(tmp_path):
    with socket.socket() as busy:
        busy.bind((LOOPBACK, 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert not port_is_free(port)
        with pytest.raises(LabError, match=f"port {port} on 127.0.0.1 is in use"):
            Classroom.create(tmp_path, (), port, "/usr/bin/true")
    assert port_is_free(port)


def test_free_ports_are_distinct_and_avoid_the_public_one():
    ports = free_ports(5, avoid=8000)
    assert len(set(ports)) == 5 and 8000 not in ports


def test_no_settings_is_not_a_class_folder(tmp_path):
    with pytest.raises(LabError, match="is not a class folder"):
        Classroom.load(tmp_path)


DEEP = "[" * 100_000 + "]" * 100_000
REPLACEMENTS: list[Any] = [None, True, 0, -1, 70000, 10**40, 1.5, "", "x", [], {}, ["Ada"], [1]]


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.data())
def test_fuzz_settings_file_loads_or_lab_error(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("fuzz")
    saved = json.loads(_room(folder).save().read_text())
    kind = data.draw(st.sampled_from(["drop", "retype", "renest", "truncate", "deep", "text"]))
    where = data.draw(st.sampled_from(list(paths(saved))))
    parent = saved
    for key in where[:-1]:
        parent = parent[key]
    text = None
    if kind == "drop":
        del parent[where[-1]]
    elif kind == "deep":
        parent[where[-1]] = "\u2603"
        text = json.dumps(saved).replace('"\\u2603"', DEEP)
    elif kind == "text":
        text = data.draw(st.sampled_from(["", "[]", "null", "{", '{"port": NaN}', "\ud800"]))
    else:
        reshape(parent, where[-1], kind, data.draw(st.sampled_from(REPLACEMENTS)),
                data.draw(st.integers(0, 9)))
    (folder / "class" / "classroom.json").write_text(
        text if text is not None else json.dumps(saved), errors="surrogatepass")
    try:
        room = Classroom.load(folder / "class")
    except LabError as exc:
        assert "\n" not in str(exc)
        return
    assert all(isinstance(getattr(room, f), int) for f in ("port", "hub_port", "proxy_api_port"))
    assert all(isinstance(n, str) for n in room.students)


def _config(room: Classroom, monkeypatch) -> Config:
    """What JupyterHub reads from classroom/jupyterhub_config.py for this class."""
    room.save()
    monkeypatch.setenv(SETTINGS_ENV, str(room.class_dir))
    config = Config()
    runpy.run_path(str(hub_config(CHECKOUT)), {"get_config": lambda: config})
    return config


def test_the_hub_config_loopback_logins_spawner_and_token(tmp_path, monkeypatch):
    room = _room(tmp_path)
    c = _config(room, monkeypatch)
    assert c.JupyterHub.bind_url == room.url
    assert c.JupyterHub.hub_bind_url == f"http://127.0.0.1:{room.hub_port}"
    assert c.ConfigurableHTTPProxy.api_url == f"http://127.0.0.1:{room.proxy_api_port}"
    assert c.ConfigurableHTTPProxy.command == [room.proxy]
    assert c.JupyterHub.authenticator_class == "shared-password"
    assert c.SharedPasswordAuthenticator.user_password == room.password
    assert c.SharedPasswordAuthenticator.admin_password == room.admin_password
    assert c.Authenticator.allowed_users == {"ada", "grace"}
    assert c.SimpleLocalProcessSpawner.home_dir_template == str(room.homes / "{username}")
    [service] = c.JupyterHub.services
    assert service["api_token"] == room.instructor_token
    assert c.JupyterHub.load_roles[0]["services"] == [service["name"]]


SERVER = [sys.executable, "-m", "jupyterhub.singleuser"]


@pytest.mark.parametrize("why", [None, "bubblewrap is not installed"])
def test_the_hub_config_confines_each_server_where_bubblewrap_runs(tmp_path, monkeypatch, why):
    monkeypatch.setattr(bubblewrap, "unavailable", lambda: why)
    room = _room(tmp_path)
    c = _config(room, monkeypatch)
    if why is None:
        assert c.JupyterHub.spawner_class is ConfinedSpawner
        assert (c.ConfinedSpawner.singleuser, c.ConfinedSpawner.lab) == (SERVER, str(room.lab))
        assert "cmd" not in c.Spawner and "--allow-root" not in c.Spawner.args  # as nobody
    else:  # as today: the simple spawner, the hub's user
        assert c.JupyterHub.spawner_class == "simple"
        assert c.Spawner.cmd == SERVER
        assert ("--allow-root" in c.Spawner.args) == (os.geteuid() == 0)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands a folder to nobody")
def test_a_students_folder_goes_to_nobody_but_not_what_its_links_name(tmp_path):
    home = tmp_path / "ada"
    (home / "notebooks").mkdir(parents=True)
    (home / "notebooks" / "01_history.ipynb").write_text("{}")
    outside = tmp_path / "system-file"
    outside.write_text("root's")
    (home / "link").symlink_to(outside)
    give_to_nobody(home)
    for path in (home, home / "notebooks", home / "notebooks" / "01_history.ipynb",
                 home / "link"):
        assert (path.lstat().st_uid, path.lstat().st_gid) == (NOBODY, NOBODY)
    assert outside.stat().st_uid == 0


def test_start_says_in_one_line_when_the_servers_run_unconfined(tmp_path, monkeypatch, capsys):
    from keel_course.classroom import command

    room = _room(tmp_path)
    (tmp_path / "roster.txt").write_text("ada\n")
    monkeypatch.setattr(command, "find_proxy", lambda checkout, given: "/usr/bin/true")
    monkeypatch.setattr(command, "prepare", lambda *args: room)

    def run_hub(checkout, room):  # the hub replaces the process: it never returns
        raise SystemExit(0)

    monkeypatch.setattr(command, "run_hub", run_hub)
    for why in (None, "bubblewrap is not installed (Debian: apt-get install bubblewrap)"):
        monkeypatch.setattr(command, "unavailable", lambda why=why: why)
        with pytest.raises(SystemExit):
            main([*AT, "classroom", "start", str(tmp_path / "roster.txt"), str(room.class_dir)])
        out, err = capsys.readouterr()
        assert out == ""  # the banner comes once the hub listens (run_hub prints it)
        assert err == ("" if why is None else
                       "keel-course: warning: the students' servers run unconfined, each able to "
                       "read the solutions and the other students' work (docs/classroom.md): "
                       f"{why}\n")


def test_the_hub_config_copies_the_handout_on_first_start(tmp_path, monkeypatch):
    room = _room(tmp_path)
    (room.handout / "notebooks").mkdir(parents=True)
    (room.handout / "notebooks" / "03_batching.ipynb").write_text("{}")
    c = _config(room, monkeypatch)

    class Spawner:
        home_dir = str(room.homes / "ada")

    c.Spawner.pre_spawn_hook(Spawner())
    assert (room.homes / "ada" / "notebooks" / "03_batching.ipynb").read_text() == "{}"


def test_the_handout_is_copied_once_never_over_a_students_work(tmp_path):
    handout, home = tmp_path / "handout", tmp_path / "students" / "ada"
    (handout / "notebooks").mkdir(parents=True)
    (handout / "notebooks" / "01.ipynb").write_text("handout")
    assert give_handout(handout, home)
    assert (home / MARKER).is_file()
    (home / "notebooks" / "01.ipynb").write_text("my work")
    (home / "notebooks" / "mine.py").write_text("x = 1")
    assert not give_handout(handout, home)
    assert (home / "notebooks" / "01.ipynb").read_text() == "my work"
    with pytest.raises(LabError, match=r"handout .* is missing"):
        give_handout(tmp_path / "nowhere", tmp_path / "students" / "grace")


def test_a_students_folder_is_closed_to_other_accounts_at_every_start(tmp_path):
    """Any account of the machine could read a 0755 folder: each start closes it again (a class
    started before kept its folders open)."""
    handout, home = tmp_path / "handout", tmp_path / "students" / "ada"
    (handout / "notebooks").mkdir(parents=True)
    handout.chmod(0o755)  # copytree gives the folder its source's mode
    assert give_handout(handout, home)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    home.chmod(0o755)
    assert not give_handout(handout, home)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700


def test_the_hubs_database_is_its_owners_only(tmp_path):
    """JupyterHub creates jupyterhub.sqlite 0644 under the usual umask; made 0600 before the hub
    opens it (SQLite gives its journal the database's mode), and an old one closed too."""
    room = _room(tmp_path)
    room.save()
    assert room.database == room.class_dir / "jupyterhub.sqlite"
    keep_private(room.database)
    assert stat.S_IMODE(room.database.stat().st_mode) == 0o600
    assert room.database.read_bytes() == b""  # SQLite takes an empty file as an empty database
    room.database.chmod(0o644)
    room.database.write_bytes(b"SQLite format 3\x00")
    keep_private(room.database)
    assert stat.S_IMODE(room.database.stat().st_mode) == 0o600
    assert room.database.read_bytes() == b"SQLite format 3\x00"


def test_the_banner_is_printed_once_the_hub_answers(capsys):
    """Printed before the hub listened, its address answered nothing for seconds: the banner
    now waits for the hub's API through the students' address."""
    import http.server
    import threading

    (port,) = free_ports(1, avoid=0)
    url = f"http://{LOOPBACK}:{port}/hub/api/"
    printed = threading.Thread(target=announce_when_listening,
                               args=(url, "the banner", lambda: True, 0.05))
    printed.start()
    printed.join(0.5)
    assert printed.is_alive() and capsys.readouterr().out == ""

    class Hub(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    with http.server.HTTPServer((LOOPBACK, port), Hub) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        printed.join(10)
        server.shutdown()
    assert not printed.is_alive() and capsys.readouterr().out == "the banner\n"
    # a hub that ended before it listened: nothing printed, and the wait ends
    announce_when_listening(url, "the banner", lambda: False, 0.05)
    assert capsys.readouterr().out == ""


def test_prepare_writes_settings_and_the_real_handout(tmp_path, monkeypatch):
    room = prepare(CHECKOUT, ("ada",), tmp_path / "class", free_ports(1, avoid=0)[0], "en",
                   "/bin/true")
    assert Classroom.load(tmp_path / "class") == room
    assert json.loads((room.handout / MANIFEST).read_text())["language"] == "en"
    assert (room.handout / "notebooks" / "03_batching.ipynb").is_file()
    assert not (room.handout / "notebooks" / "solutions").exists()
    # the lab the kernels import: the handout's package, its data where an install puts it
    assert (room.lab / "keel_checks" / "progress.py").read_bytes() == (
        room.handout / "keel_checks" / "progress.py").read_bytes()
    assert (room.lab / "keel_lab" / "data" / "incidents.json").is_file()
    assert {p.name for p in room.lab.iterdir()} == {"keel_checks", "keel_cli", "keel_lab"}
    assert stat.S_IMODE(room.database.stat().st_mode) == 0o600
    text = banner(room)
    assert room.url in text and room.password in text
    assert f"keel-course classroom collect {room.class_dir}" in text
    with pytest.raises(LabError, match="no handout in language 'xx'"):
        prepare(CHECKOUT, ("ada",), tmp_path / "class", free_ports(1, avoid=0)[0], "xx",
                "/bin/true")


def test_no_jupyterhub_is_one_line(tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "jupyterhub" else real(name, *a))
    with pytest.raises(LabError, match=r"not installed: pip install 'keel-lab\[classroom\]'"):
        prepare(CHECKOUT, ("ada",), tmp_path / "class", free_ports(1, avoid=0)[0], "en",
                "/bin/true")


def test_the_proxy_must_be_executable(tmp_path):
    plain = tmp_path / "configurable-http-proxy"
    plain.write_text("#!/bin/sh\n")
    with pytest.raises(LabError, match=r"configurable-http-proxy not found at .*make classroom"):
        find_proxy(CHECKOUT, plain)
    plain.chmod(0o755)
    assert find_proxy(CHECKOUT, plain) == str(plain.resolve())
    with pytest.raises(LabError, match="configurable-http-proxy not found"):
        find_proxy(CHECKOUT, tmp_path)  # a folder is searchable, not executable


def _class(tmp_path: Path) -> Path:
    homes = tmp_path / "students"
    for name in ("ada", "grace"):
        notebooks = homes / name / "notebooks"
        (notebooks / ".ipynb_checkpoints").mkdir(parents=True)
        (notebooks / "03_batching.ipynb").write_text(name)
        (notebooks / "01_history.ipynb").write_text(name)
        (notebooks / "08a_screen_frames.ipynb").write_text(name)  # optional: no exercise
        (notebooks / ".ipynb_checkpoints" / "03_batching-checkpoint.ipynb").write_text("old")
        (homes / name / ".local").mkdir()
        (homes / name / ".local" / "x.ipynb").write_text("hidden")
    (homes / "grace" / "notebooks" / "02_pairing.ipynb").symlink_to(
        homes / "ada" / "notebooks" / "03_batching.ipynb")
    return homes


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_collect_copies_every_students_saved_notebooks(tmp_path):
    homes = _class(tmp_path)
    when = datetime(2026, 11, 30, 14, 5, 9, tzinfo=UTC)
    folder = collect(homes, tmp_path / "collected", now=when)
    assert folder == tmp_path / "collected" / "20261130-140509"
    assert _files(folder) == [
        "ada/notebooks/01_history.ipynb", "ada/notebooks/03_batching.ipynb",
        "grace/notebooks/01_history.ipynb", "grace/notebooks/03_batching.ipynb", ROSTER]
    assert (folder / "grace" / "notebooks" / "03_batching.ipynb").read_text() == "grace"
    again = collect(homes, tmp_path / "collected", ["03_batching"], now=when)
    assert again.name == "20261130-140509-1"
    assert _files(again) == ["ada/notebooks/03_batching.ipynb",
                             "grace/notebooks/03_batching.ipynb", ROSTER]
    by_number = collect(homes, tmp_path / "collected", ["01"], now=when)
    assert _files(by_number) == ["ada/notebooks/01_history.ipynb",
                                 "grace/notebooks/01_history.ipynb", ROSTER]


def test_collect_takes_several_chapters_and_writes_who_should_have_handed_in(tmp_path):
    homes = _class(tmp_path)
    folder = collect(homes, tmp_path / "collected", ["03", "01"], roster=("alan", "grace"))
    assert _files(folder) == [
        "ada/notebooks/01_history.ipynb", "ada/notebooks/03_batching.ipynb",
        "grace/notebooks/01_history.ipynb", "grace/notebooks/03_batching.ipynb", ROSTER]
    # the class's roster, then any student the hub added later (a folder of their own)
    assert read_roster(folder / ROSTER) == ("alan", "grace", "ada")


def test_the_chapters_collected_are_those_with_exercises():
    assert chapters() == tuple(dict.fromkeys(CHAPTERS.values()))
    assert "08_production" in chapters() and "08a_screen_frames" not in chapters()
    assert chapters(["08"]) == ("08_production",) == chapters(["08_production"])
    # several: repeated or a comma list, in course order, each once
    assert chapters(["03", "02"]) == ("02_pairing", "03_batching") == chapters(["02,03"])
    assert chapters(["03_batching,02", "03"]) == ("02_pairing", "03_batching")
    for odd in ("08a", "08a_screen_frames", "00", "8", "../x", "", "02,", "02;03"):
        with pytest.raises(LabError, match="is not a chapter's name or number"):
            chapters([odd])


def test_a_folder_that_cannot_be_written_is_one_line(tmp_path):
    homes = _class(tmp_path)
    (tmp_path / "collected").write_text("a file, not a folder")
    with pytest.raises(LabError, match=r"cannot collect into .*collected/2"):
        collect(homes, tmp_path / "collected")
    room = Classroom.create(tmp_path / "collected" / "class", (), free_ports(1, avoid=0)[0], "x")
    with pytest.raises(LabError, match=r"cannot write .*classroom\.json"):
        room.save()


def test_collect_refuses_a_missing_class_and_an_odd_chapter(tmp_path):
    with pytest.raises(LabError, match="no students' folders"):
        collect(tmp_path / "students", tmp_path / "collected")
    with pytest.raises(LabError, match=r"'\.\./x' is not a chapter's name or number"):
        collect(_class(tmp_path), tmp_path / "collected", ["../x"])


def test_grade_runs_keel_lab_grade_with_the_gradebook_beside_the_notebooks(tmp_path, monkeypatch):
    seen: list[list[str]] = []

    class Done:
        returncode = 0

    def run(argv, check):
        seen.append(argv)
        return Done()

    monkeypatch.setattr(subprocess, "run", run)
    assert grade(tmp_path, timeout=30, jobs=2) == 0
    assert seen == [[sys.executable, "-m", "keel_course.cli", "grade", str(tmp_path), "--csv",
                     str(tmp_path / GRADEBOOK), "--timeout", "30", "--jobs", "2"]]
    (tmp_path / ROSTER).write_text("ada\n")
    assert grade(tmp_path, only=("02_pairing", "03_batching")) == 0
    assert seen[1][4:] == [str(tmp_path), "--csv", str(tmp_path / GRADEBOOK),
                           "--chapter", "02_pairing,03_batching", "--roster",
                           str(tmp_path / ROSTER)]


@pytest.mark.parametrize(("argv", "message"), [
    (["start", "{tmp}/missing.txt", "{tmp}/class"], "cannot read the roster"),
    (["collect", "{tmp}/class"], "no students' folders"),
    (["collect", "{tmp}", "--chapter", "a/b"], "is not a chapter's name"),
])
def test_commands_say_what_is_wrong_in_one_line(tmp_path, capsys, argv, message):
    (tmp_path / "students").mkdir(exist_ok=True)
    assert main([*AT, "classroom", *(a.format(tmp=tmp_path) for a in argv)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("keel-course: error: ") and message in err and err.count("\n") == 1


def test_a_port_out_of_range_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["classroom", "start", "r.txt", str(tmp_path), "--port", "70000"])
    assert exit_.value.code == 2
    assert "'70000' is not a port" in capsys.readouterr().err


class FakeSocket:
    """The kernel's websocket: the messages it will send, and what was sent to it."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies, self.sent = replies, []

    def send(self, text: str) -> None:
        self.sent.append(json.loads(text))
        parent = {"msg_id": self.sent[-1]["header"]["msg_id"]}
        self.replies = [r | {"parent_header": r.get("parent_header", parent)}
                        for r in self.replies]

    def settimeout(self, seconds: float) -> None:
        assert seconds > 0

    def recv(self) -> str:
        return json.dumps(self.replies.pop(0))


def test_a_cell_s_outputs_in_notebook_form_once_the_kernel_is_idle():
    socket_ = FakeSocket([
        {"msg_type": "stream", "content": {"name": "stdout", "text": "other"},
         "parent_header": {"msg_id": "someone else's"}},
        {"msg_type": "status", "content": {"execution_state": "busy"}},
        {"msg_type": "stream", "content": {"name": "stdout", "text": "hi\n"}},
        {"msg_type": "execute_result", "content": {"data": {"text/plain": "2"},
                                                   "execution_count": 1}},
        {"msg_type": "error", "content": {"ename": "E", "evalue": "v", "traceback": []}},
        {"msg_type": "execute_reply", "content": {"status": "error"}},
        {"msg_type": "status", "content": {"execution_state": "idle"}},
    ])
    outputs = Kernel("k", socket_).execute("print('hi'); 1 + 1")
    assert socket_.sent[0]["content"]["code"] == "print('hi'); 1 + 1"
    assert outputs == [
        {"output_type": "stream", "name": "stdout", "text": "hi\n"},
        {"output_type": "execute_result", "data": {"text/plain": "2"}, "metadata": {},
         "execution_count": 1},
        {"output_type": "error", "ename": "E", "evalue": "v", "traceback": []}]
    assert socket_.replies == []


def test_the_kubernetes_files_agree_with_the_local_class(tmp_path, monkeypatch):
    """classroom/'s files for Zero-to-JupyterHub cannot run here; they must at least say what
    the local class says: the login, the instructor's role, the marker file, the entry point."""
    import yaml

    local = _config(_room(tmp_path), monkeypatch)
    classroom = CHECKOUT.classroom
    values = yaml.safe_load((classroom / "z2jh-values.yaml").read_text())
    hub = Config(values["hub"]["config"])
    assert hub.JupyterHub.authenticator_class == local.JupyterHub.authenticator_class
    assert set(hub.SharedPasswordAuthenticator.admin_users) == set(
        local.SharedPasswordAuthenticator.admin_users)
    [role] = local.JupyterHub.load_roles
    assert values["hub"]["loadRoles"] == {role["name"]: {"scopes": role["scopes"],
                                                         "services": role["services"]}}
    assert list(values["hub"]["services"]) == [s["name"] for s in local.JupyterHub.services]
    entrypoint = classroom / "handout-entrypoint.sh"
    assert f'"$HOME/{MARKER}"' in entrypoint.read_text() and os.access(entrypoint, os.X_OK)
    dockerfile = (classroom / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["/usr/local/bin/handout-entrypoint.sh"]' in dockerfile
    assert "keel-course handout /srv/keel-lab/handout" in dockerfile


def test_a_moved_class_folder_is_still_a_class(tmp_path):
    room = _room(tmp_path)
    room.save()
    moved = room.class_dir.rename(tmp_path / "moved")
    assert Classroom.load(moved).class_dir == moved.resolve()
    assert Classroom.load(moved).instructor_token == room.instructor_token


def test_collect_command_grades_the_collection(tmp_path, monkeypatch, capsys):
    _class(tmp_path)

    class Done:
        returncode = 0

    def run(argv, check):  # keel-course grade, as the grading tests run it for real
        Path(argv[argv.index("--csv") + 1]).write_text("path,chapter\n")
        return Done()

    monkeypatch.setattr(subprocess, "run", run)
    assert main(["classroom", "collect", str(tmp_path), "--chapter", "03_batching"]) == 0
    collected, gradebook = capsys.readouterr().out.splitlines()
    folder = Path(collected.removeprefix("collected: "))
    assert folder.parent == tmp_path / "collected"
    assert gradebook == f"gradebook: {folder / GRADEBOOK}"
    assert _files(folder) == ["ada/notebooks/03_batching.ipynb",
                              "grace/notebooks/03_batching.ipynb", GRADEBOOK, ROSTER]


def test_collect_command_grades_several_chapters_against_the_classs_roster(tmp_path,
                                                                           monkeypatch, capsys):
    _class(tmp_path)
    Classroom.create(tmp_path, ("ada", "alan"), free_ports(1, avoid=0)[0], "x").save()
    seen: list[list[str]] = []

    class Done:
        returncode = 0

    def run(argv, check):
        seen.append(argv)
        return Done()

    monkeypatch.setattr(subprocess, "run", run)
    assert main(["classroom", "collect", str(tmp_path), "--chapter", "03",
                 "--chapter", "01"]) == 0
    folder = Path(capsys.readouterr().out.splitlines()[0].removeprefix("collected: "))
    assert seen[0][seen[0].index("--chapter") + 1] == "01_history,03_batching"
    assert read_roster(folder / ROSTER) == ("ada", "alan", "grace")


def test_collect_help_names_the_command_it_runs(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["classroom", "collect", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert exit_.value.code == 0 and "keel-lab grade" not in said
    assert "run keel-course grade over them" in said
