"""The lab's data sets (incidents, services, logs, recorded streams), read from the package's
own `keel_lab/data/`, so any install - editable or not - carries them.

A missing file means a broken install, not a failed tool: every read goes through `path`,
which says so with a `LabError`, and the incident tools check their data sets when they are
built, before any call could turn the missing file into a `tool_internal_error`.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from keel_lab.core.errors import LabError

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
DATA_SETS = ("incidents", "services", "logs")


def path(*parts: str) -> Path:
    """`keel_lab/data/<parts>`, a file or a folder that must exist."""
    p = DATA_DIR.joinpath(*parts)
    if not p.exists():
        name = "/".join(("keel_lab/data", *parts))
        raise LabError(f"{name} is missing ({p}): the keel-lab install is incomplete, "
                       "its package data did not travel with it; reinstall keel-lab")
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
