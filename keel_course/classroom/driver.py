"""Driving a running class from Python, through the hub's REST API and the students' servers:
what the integration test and the benchmark do, with the real processes.

Acting as a student means holding a token the hub issued for that student; a kernel is run
through the Jupyter server's kernel API and its websocket, the way JupyterLab runs a cell.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from keel_course.checkout import Checkout
from keel_course.classroom.settings import Classroom, port_is_free

Json = Any  # what the REST API answers


class HubClient:
    """One identity's HTTP session with the hub: the instructor's service token or a student's."""

    def __init__(self, url: str, token: str, timeout: float = 30) -> None:
        self.url = url
        self.token = token
        self.timeout = timeout
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"token {token}"

    def call(self, method: str, path: str, body: Json = None, ok: tuple[int, ...] = (200,)) -> Json:
        response = self.http.request(method, self.url + path, json=body, timeout=self.timeout)
        if response.status_code not in ok:
            raise RuntimeError(f"{method} {path}: HTTP {response.status_code} "
                               f"{response.text[:200]}")
        return response.json() if response.content else None

    # the instructor's side
    def create_students(self, names: list[str]) -> None:
        self.call("POST", "/hub/api/users", {"usernames": names}, ok=(201,))

    def start_server(self, name: str) -> None:
        self.call("POST", f"/hub/api/users/{name}/server", ok=(201, 202))

    def server(self, name: str) -> Json:
        """The student's default server as the hub reports it (None when not running)."""
        return self.call("GET", f"/hub/api/users/{name}")["servers"].get("")

    def wait_ready(self, name: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not (self.server(name) or {}).get("ready"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name}'s server is not ready after {timeout} s")
            time.sleep(0.2)

    def as_student(self, name: str) -> Student:
        token = self.call("POST", f"/hub/api/users/{name}/tokens",
                          {"note": "keel-course classroom driver", "expires_in": 3600},
                          ok=(200, 201))["token"]
        return Student(name, HubClient(self.url, token, self.timeout))


@dataclass
class Kernel:
    """A kernel of a student's server, with its websocket open."""

    id: str
    socket: Any  # websocket.WebSocket
    session: str = field(default_factory=lambda: uuid.uuid4().hex)

    def execute(self, code: str, timeout: float = 120) -> list[dict[str, Any]]:
        """Run one cell; its outputs in notebook form, once the kernel is idle again."""
        msg_id = uuid.uuid4().hex
        self.socket.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "session": self.session,
                       "username": "", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True,
                        "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}}))
        outputs: list[dict[str, Any]] = []
        replied = idle = False
        deadline = time.monotonic() + timeout
        while not (replied and idle):
            self.socket.settimeout(max(0.1, deadline - time.monotonic()))
            msg = json.loads(self.socket.recv())
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                outputs.append({"output_type": "stream", "name": content["name"],
                                "text": content["text"]})
            elif kind in ("display_data", "execute_result"):
                outputs.append({"output_type": kind, "data": content["data"],
                                "metadata": content.get("metadata", {})}
                               | ({"execution_count": content["execution_count"]}
                                  if kind == "execute_result" else {}))
            elif kind == "error":
                outputs.append({"output_type": "error", "ename": content["ename"],
                                "evalue": content["evalue"], "traceback": content["traceback"]})
            elif kind == "execute_reply":
                replied = True
            elif kind == "status":
                idle = content["execution_state"] == "idle"
        return outputs


@dataclass
class Student:
    """What a student does through their own server, with their own token."""

    name: str
    client: HubClient

    @property
    def api(self) -> str:
        return f"/user/{self.name}/api"

    def notebook(self, path: str) -> dict[str, Any]:
        model = self.client.call("GET", f"{self.api}/contents/{path}?content=1")
        return dict(model["content"])

    def listing(self, path: str = "") -> list[str]:
        model = self.client.call("GET", f"{self.api}/contents/{path}?content=1")
        return sorted(item["path"] for item in model["content"])

    def save(self, path: str, notebook: dict[str, Any]) -> None:
        self.client.call("PUT", f"{self.api}/contents/{path}",
                         {"type": "notebook", "format": "json", "content": notebook}, ok=(200, 201))

    def start_kernel(self) -> str:
        """A new kernel of the student's server (the notebooks' `python3`); its id."""
        return str(self.client.call("POST", f"{self.api}/kernels", {"name": "python3"},
                                    ok=(201,))["id"])

    @contextmanager
    def kernel(self) -> Iterator[Kernel]:
        import websocket

        kernel_id = self.start_kernel()
        ws_url = (self.client.url.replace("http", "ws", 1)
                  + f"{self.api}/kernels/{kernel_id}/channels")
        socket = websocket.create_connection(
            ws_url, header=[f"Authorization: token {self.client.token}"], timeout=60)
        try:
            yield Kernel(kernel_id, socket)
        finally:
            socket.close()
            self.client.call("DELETE", f"{self.api}/kernels/{kernel_id}", ok=(204,))


def login(url: str, name: str, password: str, http: requests.Session | None = None) -> bool:
    """Whether the hub's login form lets `name` in with `password` (`http` keeps the hub's
    cookie, as a browser does)."""
    http = http or requests.Session()
    http.get(f"{url}/hub/login", timeout=30)
    response = http.post(f"{url}/hub/login", timeout=30, allow_redirects=False, data={
        "username": name, "password": password, "_xsrf": http.cookies.get("_xsrf", "")})
    return response.status_code == 302


def open_lab(url: str, name: str, http: requests.Session) -> None:
    """Open the student's lab once after the form login, as a browser does: JupyterHub's OAuth
    step (the hub's authorize page, then the server's callback) sets the server's own cookie,
    without which its API (`/user/<name>/api/...`) answers 403."""
    response = http.get(f"{url}/user/{name}/lab", timeout=60)
    if response.status_code != 200 or not response.url.startswith(f"{url}/user/{name}/lab"):
        raise RuntimeError(f"{name}'s lab did not open: HTTP {response.status_code} at "
                           f"{response.url}")


@dataclass
class RunningClass:
    """A hub started by `keel-course classroom start`, and what it left behind once stopped."""

    room: Classroom
    process: subprocess.Popen[bytes]
    instructor: HubClient
    stopped: list[str] = field(default_factory=list)  # the command lines `stop` ended
    leftover_processes: list[str] = field(default_factory=list)
    leftover_ports: list[int] = field(default_factory=list)
    listening: set[tuple[str, int]] = field(default_factory=set)

    def processes(self) -> list[Any]:
        """The hub and everything it started: proxy, students' servers, their kernels."""
        import psutil

        try:
            hub = psutil.Process(self.process.pid)
            return [hub, *hub.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def listening_sockets(self) -> set[tuple[str, int]]:
        found: set[tuple[str, int]] = set()
        for proc in self.processes():
            try:
                found |= {(c.laddr.ip, c.laddr.port) for c in proc.net_connections("inet")
                          if c.status == "LISTEN"}
            except Exception:  # a process that just ended has no sockets to report
                continue
        return found

    def stop(self, timeout: float = 30) -> None:
        """Stop the hub as Ctrl-C would; whatever survives it is recorded, then killed."""
        import psutil

        tree = self.processes()
        self.stopped = [" ".join(p.cmdline()) for p in tree]
        self.listening = self.listening_sockets()
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        _, alive = psutil.wait_procs(tree, timeout=5)
        self.leftover_processes = [" ".join(p.cmdline()[:3]) for p in alive if p.is_running()]
        for proc in alive:
            proc.kill()
        ports = {port for _, port in self.listening} | {
            self.room.port, self.room.hub_port, self.room.proxy_api_port}
        self.leftover_ports = sorted(p for p in ports if not port_is_free(p))


@contextmanager
def running_class(checkout: Checkout, roster: Path, class_dir: Path, port: int, proxy: str,
                  log: Path, timeout: float = 60) -> Iterator[RunningClass]:
    """Start a class of `checkout` with the real command; stop it on leaving, whatever
    happened."""
    env = os.environ | {"PYTHONUNBUFFERED": "1"}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "keel_course.cli", "--checkout", str(checkout.root),
             "classroom", "start", str(roster), str(class_dir), "--port", str(port),
             "--proxy", proxy],
            stdout=out, stderr=subprocess.STDOUT, env=env)
    running: RunningClass | None = None
    try:
        deadline = time.monotonic() + timeout
        while running is None:
            if process.poll() is not None:
                raise RuntimeError(f"the hub exited with {process.returncode}: see {log}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"the hub did not answer within {timeout} s: see {log}")
            running = _answering(class_dir, process)
            time.sleep(0.2)
        yield running
    finally:
        if running is None:
            process.kill()
            process.wait()
        elif running.process.returncode is None:
            running.stop()


def _answering(class_dir: Path, process: subprocess.Popen[bytes]) -> RunningClass | None:
    try:
        room = Classroom.load(class_dir)
        requests.get(f"{room.url}/hub/api/", timeout=2).raise_for_status()
    except Exception:  # not up yet: no settings, no listener, or the proxy not routing
        return None
    return RunningClass(room, process, HubClient(room.url, room.instructor_token))

