"""What a submission's process sends the grader: plain data, never an object of its making.

`to_plain` runs in the submission's process and turns a value into JSON with tags, by exact
type: a `str` subclass, an `int` whose `__sub__` lies or an object with an `__eq__` that always
holds crosses as a foreign object (its type's name and its repr), never as the value it pretends
to be. The lab's own dataclasses and enums cross by their fields and names. `from_plain` runs in
the grader and builds only builtins, the lab's classes (already imported, never imported on a
submission's word) and `Foreign` stand-ins, which compare by identity and say what they were.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import itertools
import math
import sys
from typing import Any

from keel_checks.origin import lab_module

MAX_ITEMS = 100_000  # values a result may hold in all; more crosses as a foreign object
# Members of one set or keys of one dict the grader builds: hashing is quadratic when a
# submission sends colliding keys (ints equal modulo 2**61 - 1), so more are refused.
MAX_HASHED = 2_000
MAX_DEPTH = 60
_ATOMS = (type(None), bool, int, str)


class Foreign:
    """A value the submission returned that is not plain data: its type's name, its repr and
    its public attributes (a learner's own call class is read by its `.id`, as in a notebook)."""

    def __init__(self, shown: str, attrs: dict[str, Any]) -> None:
        vars(self).update(attrs)
        self._shown = shown

    def __repr__(self) -> str:
        return self._shown


class ForeignIterable(Foreign):
    """A foreign iterable (a generator, a map): it iterates over the items it held."""

    def __init__(self, shown: str, attrs: dict[str, Any], items: list[Any]) -> None:
        super().__init__(shown, attrs)
        self._items = items

    def __iter__(self) -> Any:
        return iter(self._items)


@functools.cache
def _foreign_type(name: str, iterable: bool) -> type[Foreign]:
    """One type per name: a cache, not a module dict, so the integrity snapshot (which watches
    the grading modules' dicts) does not take a first foreign value for a change of the lab."""
    return type(name, (ForeignIterable if iterable else Foreign,), {})


def foreign(name: str, shown: str, items: list[Any] | None,
            attrs: dict[str, Any] | None = None) -> Foreign:
    """A `Foreign` whose type bears the submission's type name, so a hint reads 'a MyStr'."""
    kind = _foreign_type(name if name.isidentifier() else "object", items is not None)
    if items is not None:
        return kind(shown, attrs or {}, items)  # type: ignore[call-arg]
    return kind(shown, attrs or {})


def _lab(cls: type) -> bool:
    return lab_module(getattr(cls, "__module__", ""))


def lab_name(obj: Any) -> str:
    """`module:qualname` of a lab object, or `module:attribute` of a lab module holding it (a
    table such as `STRATEGIES`): how one process names it for the other (`lab_object`)."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str):
        return f"{module}:{qualname}"
    for name, held in list(sys.modules.items()):
        if lab_module(name):
            found = next((a for a, v in vars(held).items() if v is obj), None)
            if found is not None:
                return f"{name}:{found}"
    raise LookupError(f"{obj!r:.60} is not held by a lab module")


def _repr(value: Any) -> str:
    try:
        return repr(value)[:200]
    except BaseException:
        return f"<{type(value).__name__}>"


def given(args: Any) -> list[Any]:
    """Every frozen lab dataclass reachable from a call's arguments through lists, tuples, dicts
    and the lab's dataclasses, in one order both processes compute alike: one the learner
    returns crosses as a reference to it (the very `Result` it was given). Mutable values are
    not referred to: what the learner's code did to them must cross."""
    out: list[Any] = []
    seen: set[int] = set()

    def walk(value: Any, depth: int) -> None:
        if type(value) in _ATOMS or type(value) is float or id(value) in seen or depth > MAX_DEPTH:
            return
        seen.add(id(value))
        params = getattr(type(value), "__dataclass_params__", None)
        if _lab(type(value)) and params is not None and params.frozen:
            out.append(value)
        if type(value) in (list, tuple):
            for item in value:
                walk(item, depth + 1)
        elif type(value) is dict:
            for item in value.values():
                walk(item, depth + 1)
        elif _lab(type(value)) and dataclasses.is_dataclass(value):
            for f in dataclasses.fields(value):
                walk(getattr(value, f.name, None), depth + 1)

    walk(args, 0)
    return out


def to_plain(value: Any, known: list[Any] | None = None) -> Any:
    """`value` as tagged JSON (see the module's note); an object of `known` (`given`) as a
    reference to it."""
    budget = itertools.count()
    refs = {id(v): n for n, v in enumerate(known or [])}
    return _plain(value, 0, budget, refs)


def _plain(value: Any, depth: int, budget: Any, refs: dict[int, int]) -> Any:
    if next(budget) > MAX_ITEMS or depth > MAX_DEPTH:
        return {"$other": "object", "repr": "<too large to grade>"}
    kind = type(value)
    if kind in _ATOMS:
        return value
    if id(value) in refs and depth > 0:
        return {"$ref": refs[id(value)]}
    if kind is float:
        return value if math.isfinite(value) else {"$float": repr(value)}
    if kind in (list, tuple, set, frozenset):
        items = [_plain(v, depth + 1, budget, refs) for v in value]
        return items if kind is list else {"$" + kind.__name__: items}
    if kind is dict:
        return {"$dict": [[_plain(k, depth + 1, budget, refs), _plain(v, depth + 1, budget, refs)]
                          for k, v in value.items()]}
    if _lab(kind) and dataclasses.is_dataclass(value):
        return {"$data": lab_name(kind), "fields": {
            f.name: _plain(getattr(value, f.name), depth + 1, budget, refs)
            for f in dataclasses.fields(value)}}
    if _lab(kind) and isinstance(value, enum.Enum):
        return {"$enum": lab_name(kind), "name": value.name}
    return _other(value, depth, budget, refs)


def _other(value: Any, depth: int, budget: Any, refs: dict[int, int]) -> Any:
    out: dict[str, Any] = {"$other": type(value).__name__, "repr": _repr(value)}
    fields = getattr(type(value), "_fields", None)  # a namedtuple's
    names = fields if isinstance(fields, tuple) else getattr(value, "__dict__", None)
    if isinstance(names, dict | tuple):
        out["attrs"] = {k: _plain(getattr(value, k, None), depth + 1, budget, refs)
                        for k in names if isinstance(k, str) and k.isidentifier()
                        and not k.startswith("_")}
    close = getattr(value, "close", None) if type(value).__name__ == "coroutine" else None
    if close is not None:  # an `async def` answer: never awaited, closed quietly
        close()
    elif (hasattr(type(value), "__iter__") and not isinstance(value, str | bytes)
          and not inspect.isawaitable(value)):  # a Future's __iter__ is its __await__
        items = []
        for item in itertools.islice(value, MAX_ITEMS):
            items.append(_plain(item, depth + 1, budget, refs))
        out["items"] = items
    return out


def from_plain(tree: Any, known: list[Any] | None = None) -> Any:
    """A value `to_plain` made, built from builtins, the lab's classes, `Foreign`s and the
    objects of `known` it refers to."""
    known = known or []
    if isinstance(tree, list):
        return [from_plain(v, known) for v in tree]
    if not isinstance(tree, dict):
        return tree
    ref = tree.get("$ref")
    if type(ref) is int and 0 <= ref < len(known):
        return known[ref]
    for tag, kind in (("$tuple", tuple), ("$set", set), ("$frozenset", frozenset)):
        if tag in tree:
            return _built(kind, [from_plain(v, known) for v in tree[tag]])
    if "$dict" in tree:
        pairs = [(from_plain(k, known), from_plain(v, known)) for k, v in tree["$dict"]]
        return _built(dict, pairs)
    if "$float" in tree:
        return float(tree["$float"])
    if "$data" in tree:
        return _data(tree, known)
    if "$enum" in tree:
        cls = lab_class(tree["$enum"])
        if isinstance(cls, type) and issubclass(cls, enum.Enum) and tree["name"] in cls.__members__:
            return cls[tree["name"]]
    items, attrs = tree.get("items"), tree.get("attrs")
    return foreign(str(tree.get("$other", "object")), str(tree.get("repr", "")),
                   [from_plain(v, known) for v in items] if isinstance(items, list) else None,
                   {str(k): from_plain(v, known) for k, v in attrs.items()
                    if str(k).isidentifier() and not str(k).startswith("_")}
                   if isinstance(attrs, dict) else None)


def _built(kind: type, items: list[Any]) -> Any:
    if kind is not tuple and len(items) > MAX_HASHED:
        return foreign(kind.__name__, f"<a {kind.__name__} of {len(items)} items>", None)
    try:
        return kind(items)
    except TypeError:  # an unhashable key or member: the submission's value cannot be one
        return foreign(kind.__name__, f"<a {kind.__name__} with unhashable items>", None)


def lab_object(name: Any) -> Any:
    """The lab object `lab_name` named, only from modules already imported (never one imported
    on the other process's word); None when there is none."""
    if not isinstance(name, str) or ":" not in name:
        return None
    module, _, qualname = name.partition(":")
    found: Any = sys.modules.get(module) if lab_module(module) else None
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found


def lab_class(name: Any) -> Any:
    """A lab class by `lab_name`, or None."""
    found = lab_object(name)
    return found if isinstance(found, type) and _lab(found) else None


def _data(tree: dict[str, Any], known: list[Any]) -> Any:
    cls = lab_class(tree["$data"])
    fields = tree.get("fields")
    if cls is not None and dataclasses.is_dataclass(cls) and isinstance(fields, dict):
        values = {k: from_plain(v, known) for k, v in fields.items()}
        try:
            return cls(**values)  # type: ignore[operator]
        except Exception:  # fields the class refuses: what the submission sent is not one
            pass
    return foreign(str(tree["$data"]).rpartition(".")[2], f"<{tree['$data']}>", None)
