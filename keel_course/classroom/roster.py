"""The class list: one student per line, each a JupyterHub user name."""

from __future__ import annotations

import re
from pathlib import Path

from keel_lab._core.errors import LabError
from keel_lab._i18n import N_

# Lower case because JupyterHub lower-cases names at login; no '/' or spaces because a name is a
# folder and a URL path segment.
NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,31}")
INSTRUCTOR = "instructor"  # the hub's admin login: not a student name
MAX_STUDENTS = 500  # far past one machine's capacity: a longer list is the wrong file


def parse_roster(text: str, source: str = "roster") -> tuple[str, ...]:
    """Student names in file order; blank lines and `#` comments are skipped."""
    names: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        name = raw.split("#", 1)[0].strip()
        if not name:
            continue
        if not NAME.fullmatch(name):
            raise LabError("bad_student_name", N_("{source}, line {line}: {name!r} is not a "
                                                  "student name (1-32 of a-z 0-9 . _ -, starting "
                                                  "with a letter or digit)"),
                           source=source, line=number, name=name[:40])
        if name == INSTRUCTOR:
            raise LabError("instructor_as_student", N_("{source}, line {line}: {name!r} is the "
                                                       "instructor's login"),
                           source=source, line=number, name=INSTRUCTOR)
        if name in names:
            raise LabError("student_listed_twice", N_("{source}, line {line}: {name!r} is "
                                                      "listed twice"),
                           source=source, line=number, name=name)
        names.append(name)
        if len(names) > MAX_STUDENTS:
            raise LabError("too_many_students", N_("{source}: more than {most} students"),
                           source=source, most=MAX_STUDENTS)
    return tuple(names)


def read_roster(path: Path) -> tuple[str, ...]:
    """The names in a roster file; an unreadable file is a `LabError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LabError("roster_unreadable", N_("cannot read the roster {path}: {reason}"),
                       path=path, reason=getattr(exc, "strerror", None) or exc) from exc
    return parse_roster(text, str(path))
