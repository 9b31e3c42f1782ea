"""The lab's data sets (incidents, services, logs, scripted turns, recorded streams, the plots'
font): the package `keel_lab.data`, which pyproject.toml maps to the repository's data/ folder.
A wheel carries it as keel_lab/data/, an editable install reads the checkout's data/; asking
importlib.resources for the package finds either.

A missing file means a broken install, not a failed tool: every read of the data goes through
`path`, which says so with a `LabError`, and the incident tools check their data sets when they
are built, before any call could turn the missing file into a `tool_internal_error`.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from keel_lab.core.errors import LabError

PACKAGE = "keel_lab.data"
DATA_SETS = ("incidents", "services", "logs")
INCOMPLETE = ("the keel-lab install is incomplete, its package data did not travel with it; "
              "reinstall keel-lab")


@cache
def root() -> Path:
    """The data's folder, wherever the install put it."""
    try:
        return Path(str(resources.files(PACKAGE)))
    except ModuleNotFoundError as exc:
        raise LabError(f"the package {PACKAGE} is missing: {INCOMPLETE}") from exc


def path(*parts: str) -> Path:
    """`keel_lab/data/<parts>`, a file or a folder that must exist."""
    p = root().joinpath(*parts)
    if not p.exists():
        name = "/".join(("keel_lab/data", *parts))
        raise LabError(f"{name} is missing ({p}): {INCOMPLETE}")
    return p


@cache
def load(name: str) -> Any:
    """Parsed `data/<name>.json`; cached because tools read it on every call."""
    with path(f"{name}.json").open(encoding="utf-8") as f:
        return json.load(f)


def require() -> None:
    """Read every data set now, so a missing one is reported before anything runs."""
    for name in DATA_SETS:
        load(name)


@cache
def incidents() -> dict[str, dict[str, Any]]:
    return {i["id"]: i for i in load("incidents")}


@cache
def services() -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in load("services")}


def logs() -> dict[str, list[str]]:
    result: dict[str, list[str]] = load("logs")
    return result
