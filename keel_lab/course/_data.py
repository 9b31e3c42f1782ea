"""The lab's data sets (incidents, services, logs, scripted turns, recorded streams, the plots'
font): the package `keel_lab.data`, which pyproject.toml maps to the repository's data/ folder.
A wheel carries it as keel_lab/data/, an editable install reads the checkout's data/; asking
importlib.resources for the package finds either.

The Chinese edition has its own copies of the data sets whose texts are prose for people
(`data/zh/incidents.json`, `data/zh/services.json`: same ids, severities, statuses, numbers and
versions, Chinese titles and summaries); `load` reads them when `keel_lab._i18n.language()` is
"zh", and the English set for a data set without a Chinese copy (the logs are machine output and
stay English). Each language's sets are cached on their own.

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

from keel_lab._core.errors import LabError
from keel_lab._i18n import N_, language

PACKAGE = "keel_lab.data"
DATA_SETS = ("incidents", "services", "logs")


@cache
def root() -> Path:
    """The data's folder, wherever the install put it."""
    try:
        return Path(str(resources.files(PACKAGE)))
    except ModuleNotFoundError as exc:
        raise LabError("no_data_package", N_("the package {package} is missing: the keel-lab "
                                             "install is incomplete, its package data did not "
                                             "travel with it; reinstall keel-lab"),
                       package=PACKAGE) from exc


def path(*parts: str) -> Path:
    """`keel_lab/data/<parts>`, a file or a folder that must exist."""
    p = root().joinpath(*parts)
    if not p.exists():
        name = "/".join(("keel_lab/data", *parts))
        raise LabError("data_missing", N_("{name} is missing ({path}): the keel-lab install is "
                                          "incomplete, its package data did not travel with it; "
                                          "reinstall keel-lab"), name=name, path=p)
    return p


TRANSLATED = {"zh": ("incidents", "services")}  # language -> its data sets in data/<language>/


def load(name: str) -> Any:
    """Parsed `data/<name>.json`, or the current language's copy `data/<lang>/<name>.json`."""
    return _load(name, language())


@cache
def _load(name: str, lang: str) -> Any:
    """Cached per language because tools read it on every call."""
    parts = (lang, f"{name}.json") if name in TRANSLATED.get(lang, ()) else (f"{name}.json",)
    with path(*parts).open(encoding="utf-8") as f:
        return json.load(f)


def require() -> None:
    """Read every data set now, so a missing one is reported before anything runs."""
    for name in DATA_SETS:
        load(name)


def incidents() -> dict[str, dict[str, Any]]:
    return _keyed("incidents", "id", language())


def services() -> dict[str, dict[str, Any]]:
    return _keyed("services", "name", language())


@cache
def _keyed(name: str, key: str, lang: str) -> dict[str, dict[str, Any]]:
    """A data set's entries by their `key`, cached per language like the set itself."""
    return {entry[key]: entry for entry in _load(name, lang)}


def logs() -> dict[str, list[str]]:
    result: dict[str, list[str]] = load("logs")
    return result


def cache_clear() -> None:
    """Forget every data set read so far, in every language (tests swap the data's folder)."""
    for cached in (_load, _keyed):
        cached.cache_clear()
