"""Shared by the fuzz tests: every field of a JSON value, to mutate one at a time."""

from collections.abc import Iterator
from typing import Any

MARK = "\u2603MARK\u2603"  # replaced in the text by raw JSON no Python value serialises to


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every field and item of a JSON value, as a path of keys and indexes."""
    if isinstance(value, dict):
        items: Iterator[tuple[Any, Any]] = iter(value.items())
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for key, child in items:
        yield (*prefix, key)
        yield from paths(child, (*prefix, key))


def reshape(parent: Any, key: Any, kind: str, replacement: Any, pick: int) -> bool:
    """Mutate `parent[key]` in place for the kinds both fuzz tests share (retype, renest,
    truncate); False for any other kind, which the caller handles."""
    if kind == "retype":
        parent[key] = replacement
    elif kind == "renest":
        parent[key] = [parent[key]] if pick % 2 else {"value": parent[key]}
    elif kind == "truncate":
        old = parent[key]
        parent[key] = old[: len(old) // 2] if isinstance(old, str | list) else old
    else:
        return False
    return True
