"""Shared by the fuzz tests: every field of a JSON value, to mutate one at a time."""

from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

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


def damage(value: Any, data: Any, replacements: list[Any]) -> None:
    """Drop, retype, renest or truncate one field of `value` in place, drawn with hypothesis'
    `data`: the damaged-notebook fuzz tests share it."""
    every = list(paths(value))
    path = every[data.draw(st.integers(0, len(every) - 1))]
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    kind = data.draw(st.sampled_from(["drop", "retype", "renest", "truncate"]))
    pick = data.draw(st.integers(0, 100))
    if kind == "drop":
        del parent[path[-1]]
    else:
        reshape(parent, path[-1], kind, replacements[pick % len(replacements)], pick)
