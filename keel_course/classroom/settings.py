"""One class's settings: written by `keel-course classroom start`, read by the hub's config file.

They live in the class folder (`classroom.json`, readable by its owner only) so that a restart
keeps the students' logins and the instructor's token.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from keel_course.classroom.roster import NAME
from keel_lab._core.errors import LabError
from keel_lab._i18n import N_
from keel_lab.providers._fields import json_type, shown

LOOPBACK = "127.0.0.1"  # the hub, its proxy and every student's server listen here only
PASSWORD_ENV = "KEEL_LAB_CLASS_PASSWORD"
MIN_PASSWORD = 8  # SharedPasswordAuthenticator refuses a shorter user password
SETTINGS = "classroom.json"


@dataclass(frozen=True)
class Classroom:
    """Where the class lives, who is in it, its ports and its secrets."""

    class_dir: Path
    students: tuple[str, ...]
    port: int  # the address students open: http://127.0.0.1:<port>
    hub_port: int  # the hub's own API, behind the proxy
    proxy_api_port: int  # the proxy's REST API, which the hub drives
    password: str  # the class's shared password (SharedPasswordAuthenticator.user_password)
    admin_password: str  # the instructor's login to the admin page (32 characters or more)
    instructor_token: str  # the instructor's service token for the hub's REST API
    proxy: str  # the configurable-http-proxy executable
    python: str  # the project's interpreter: the hub, every student's server and kernel
    allow_root: bool  # Jupyter refuses to run as root without --allow-root
    language: str

    @property
    def handout(self) -> Path:
        return self.class_dir / "handout"

    @property
    def lab(self) -> Path:
        """The handout's package laid out for the students' kernels to import read-only."""
        return self.class_dir / "lab"

    @property
    def homes(self) -> Path:
        """One folder per student, named by their login."""
        return self.class_dir / "students"

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def path(self) -> Path:
        return self.class_dir / SETTINGS

    @property
    def database(self) -> Path:
        """The hub's database: the students, their tokens and servers (its owner's only)."""
        return self.class_dir / "jupyterhub.sqlite"

    def save(self) -> Path:
        data = asdict(self) | {"students": list(self.students)}
        del data["class_dir"]  # the folder is where the file is, wherever it is moved
        try:
            self.class_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1)
        except OSError as exc:
            raise LabError("cannot_write", N_("cannot write {path}: {reason}"),
                           path=self.path, reason=exc.strerror or exc) from exc
        return self.path

    @classmethod
    def load(cls, class_dir: Path) -> Classroom:
        """The settings `save` wrote; anything else in the file is a `LabError`."""
        path = class_dir / SETTINGS
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise LabError("not_a_class_folder", N_("{folder} is not a class folder ({file}: "
                                                    "{reason}); start one with keel-course "
                                                    "classroom start"),
                           folder=class_dir, file=SETTINGS, reason=exc.strerror) from exc
        except (ValueError, RecursionError) as exc:
            raise LabError("settings_not_json", N_("{path} is not JSON ({error})"),
                           path=path, error=type(exc).__name__) from exc
        if not isinstance(data, dict) or set(data) != set(_TYPES):
            raise LabError("not_class_settings", N_("{path} is not a class's settings file: "
                                                    "start the class again"), path=path)
        for name, kind in _TYPES.items():
            if type(data[name]) is not kind:
                raise LabError("setting_wrong_type", N_("{path}: {name} must be {expected}, "
                                                        "got {got}"), path=path, name=name,
                               expected=json_type(kind()), got=json_type(data[name]))
        for name in ("port", "hub_port", "proxy_api_port"):
            if not 0 < data[name] < 65536:
                raise LabError("setting_not_a_port", N_("{path}: {name} {value} is not a port"),
                               path=path, name=name, value=shown(data[name]))
        if not all(isinstance(n, str) and NAME.fullmatch(n) for n in data["students"]):
            raise LabError("setting_bad_students", N_("{path}: students must be a list of "
                                                      "student names"), path=path)
        return cls(**(data | {"class_dir": class_dir.resolve(),
                              "students": tuple(data["students"])}))

    @classmethod
    def create(cls, class_dir: Path, students: tuple[str, ...], port: int, proxy: str,
               language: str = "en") -> Classroom:
        """New settings, keeping the secrets of a class already started in `class_dir`; the
        hub's two internal ports are free ones, picked now."""
        class_dir = class_dir.resolve()
        try:
            previous: Classroom | None = cls.load(class_dir)
        except LabError:
            previous = None
        password = os.environ.get(PASSWORD_ENV) or (
            previous.password if previous else secrets.token_urlsafe(9))
        if len(password) < MIN_PASSWORD:
            raise LabError("password_too_short", N_("{variable} must be at least {least} "
                                                    "characters"),
                           variable=PASSWORD_ENV, least=MIN_PASSWORD)
        if not port_is_free(port):
            raise LabError("port_in_use", N_("port {port} on {host} is in use: pass another "
                                             "--port"), port=port, host=LOOPBACK)
        hub_port, proxy_api_port = free_ports(2, avoid=port)
        fresh = cls(class_dir, students, port, hub_port, proxy_api_port, password,
                    secrets.token_urlsafe(32), secrets.token_hex(32), proxy, sys.executable,
                    os.geteuid() == 0, language)
        if previous is None:
            return fresh
        return replace(fresh, admin_password=previous.admin_password,
                       instructor_token=previous.instructor_token)


# The JSON type of each field in the settings file.
_TYPES: dict[str, type] = {
    "students": list, "port": int, "hub_port": int, "proxy_api_port": int,
    "password": str, "admin_password": str, "instructor_token": str, "proxy": str, "python": str,
    "allow_root": bool, "language": str}


def free_ports(count: int, avoid: int) -> list[int]:
    """Distinct ports nobody listens on now (the kernel picks them), none equal to `avoid`."""
    ports: list[int] = []
    while len(ports) < count:
        with socket.socket() as s:
            s.bind((LOOPBACK, 0))
            port = int(s.getsockname()[1])
        if port != avoid and port not in ports:
            ports.append(port)
    return ports


def port_is_free(port: int) -> bool:
    """Whether nothing listens on the port (connections of the past, in TIME_WAIT, do not
    count: the hub and its proxy can bind it all the same)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((LOOPBACK, port))
        except OSError:
            return False
    return True
