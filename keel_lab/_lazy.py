"""Names a face offers before their modules load: `import keel_lab` loads the lesson's rules,
and the course's plots or a provider's SDK load only when one of their names is first used."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from types import ModuleType
from typing import Any


class _Face(ModuleType):
    """A face keeps its names: the import system binds a module it loads to its package by its
    last name, and an old path's module (`keel_lab.course.scenarios`) must not hide the name the
    face offers (the `scenarios` function)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if not (isinstance(value, ModuleType) and name in self.__dict__.get("_offered", ())):
            super().__setattr__(name, value)


def lazy(face: str, names: Mapping[str, tuple[str, ...]], modules: Mapping[str, str] | None = None
         ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The face's `__getattr__` and `__dir__`: each name of `names` (module -> its names) is
    read from its module on first use, each of `modules` (name -> module) is that module; once
    read, a name is kept on the face, so it is looked up here only once."""
    where = {name: module for module, listed in names.items() for name in listed}
    whole = dict(modules or {})
    sys.modules[face].__class__ = _Face
    vars(sys.modules[face])["_offered"] = frozenset(where)

    def __getattr__(name: str) -> Any:
        if name in whole:
            value = import_module(whole[name])
        elif name in where:
            value = getattr(import_module(where[name]), name)
        else:
            raise AttributeError(f"module {face!r} has no attribute {name!r}")
        setattr(sys.modules[face], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[face]), *where, *whole})

    return __getattr__, __dir__
