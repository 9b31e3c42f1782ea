"""The handout's pyproject.toml: the repository's without keel_course - its packages, its
`keel-course` command and the instructors' extras - so `pip install .` in a handout installs the
learners' package and `keel-lab` alone. Edited with tomlkit, so the file keeps its comments."""

from __future__ import annotations

import re
from typing import Any

import tomlkit

COURSE = "keel_course"
COURSE_EXTRAS = ("classroom", "nbgrader", "instructor")  # what only keel-course's commands import


def learner_pyproject(text: str) -> str:
    """`text`, a pyproject.toml naming both packages, with keel_course's entries left out."""
    project = tomlkit.parse(text)
    setuptools: Any = project.get("tool", {}).get("setuptools", {})
    if "packages" in setuptools:
        for package in [p for p in setuptools["packages"] if _course(p)]:
            setuptools["packages"].remove(package)
    for key in ("package-dir", "package-data"):
        _drop(setuptools.get(key, {}), _course)
    metadata: Any = project["project"]
    _drop(metadata.get("scripts", {}), lambda name: _course(metadata["scripts"][name]))
    _drop(metadata.get("optional-dependencies", {}), lambda name: name in COURSE_EXTRAS)
    return tomlkit.dumps(project)


def _course(name: str) -> bool:
    """A package, module or entry point (`module:function`) of keel_course."""
    return re.split(r"[.:]", str(name))[0] == COURSE


def _drop(table: Any, course: Any) -> None:
    """Leave out of `table` the keys `course` names."""
    for key in [k for k in table if course(k)]:
        del table[key]
