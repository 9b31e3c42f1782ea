"""The lab's data sets (incidents, services, logs, recorded streams), read once from the
package's own `keel_lab/data/`, so any install - editable or not - carries them."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parents[1] / "data"


@cache
def load(name: str) -> Any:
    """Parsed `data/<name>.json`; cached because tools read it on every call."""
    with (DATA_DIR / f"{name}.json").open(encoding="utf-8") as f:
        return json.load(f)


@cache
def incidents() -> dict[str, dict[str, Any]]:
    return {i["id"]: i for i in load("incidents")}


@cache
def services() -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in load("services")}


def logs() -> dict[str, list[str]]:
    result: dict[str, list[str]] = load("logs")
    return result
