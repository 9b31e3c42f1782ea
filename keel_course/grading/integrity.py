"""Has a submission changed the lab's own code? A snapshot of what the checks rely on, compared
after each piece of the learner's code has run, and put back when it changed.

The grader calls the checks itself (never the notebook's `check`), so rebinding names in the
notebook's namespace changes nothing; what could change a verdict is code that reaches into
the lab. Watched, by identity: every attribute of every `keel_lab` module (and of
`keel_course.grading`'s, the grading process's own) and the module object `sys.modules` holds
under its name; the attributes of every class the lab defines; the code,
defaults and keyword defaults of every function and method the lab defines; the items of the
lab's module-level dicts, lists and sets; the builtins; and the hooks through which code runs
unseen inside the checks - the profile and trace functions of this thread and of new threads,
and the garbage collector's callbacks. Not watched: other libraries and the standard library,
audit hooks (they cannot be listed), and anything done below Python (ctypes) - see the
threat model in docs/grading.md.
"""

from __future__ import annotations

import builtins
import gc
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FunctionType, ModuleType
from typing import Any

from keel_checks.origin import lab_module

_GONE = object()  # what an attribute that was deleted reads as
_FUNCTION_PARTS = ("__code__", "__defaults__", "__kwdefaults__")


@dataclass(frozen=True)
class _Watch:
    """One watched place: where it is, how to read and write it, and what it held."""

    where: str
    read: Callable[[], Any]
    write: Callable[[Any], None]
    value: Any
    by_identity: bool = True  # False: `read` gives a tuple of identities, compared with ==

    def changed(self) -> bool:
        try:
            now = self.read()
        except Exception:  # a container replaced by something that cannot be read: changed
            return True
        return now is not self.value if self.by_identity else bool(now != self.value)


def _attribute(owner: Any, name: str, where: str) -> _Watch:
    """A module's or class's attribute as stored (`vars`: no descriptor runs, so a classmethod
    or `__dict__` reads as the same object every time), or a function's code or defaults."""
    stored = isinstance(owner, ModuleType | type)

    def read() -> Any:
        return vars(owner).get(name, _GONE) if stored else getattr(owner, name, _GONE)

    def write(value: Any) -> None:
        if value is _GONE:
            delattr(owner, name)
        elif isinstance(owner, type):
            type.__setattr__(owner, name, value)
        else:
            setattr(owner, name, value)

    return _Watch(where, read, write, read())


def _items(container: Any) -> tuple[Any, ...]:
    """A container's items as identities, comparable with `==` without calling their `__eq__`."""
    if isinstance(container, dict):
        return tuple((id(k), id(v)) for k, v in container.items())
    if isinstance(container, set):
        return tuple(sorted(map(id, container)))
    return tuple(map(id, container))


def _contents(container: dict[Any, Any] | list[Any] | set[Any], where: str) -> _Watch:
    kept = container.copy()

    def write(_: Any) -> None:
        container.clear()
        if isinstance(container, list):
            container.extend(kept)
        else:
            container.update(kept)  # a dict from its copy, a set from its copy

    return _Watch(where, lambda: _items(container), write, _items(container), by_identity=False)


def _is_lab(name: str) -> bool:
    """The lab's modules, and the grading process's own (it looks up the checks' drivers)."""
    return lab_module(name) or name.startswith("keel_course.grading")


def _functions(value: Any) -> Iterator[FunctionType]:
    """The Python functions behind a class attribute or module attribute."""
    if isinstance(value, staticmethod | classmethod):
        value = value.__func__
    if isinstance(value, property):
        yield from (f for f in (value.fget, value.fset, value.fdel) if isinstance(f, FunctionType))
    elif isinstance(value, FunctionType):
        yield value


def _module_watches(name: str, module: ModuleType) -> Iterator[_Watch]:
    modules = sys.modules
    yield _Watch(f"sys.modules[{name!r}]", lambda: modules.get(name, _GONE),
                 lambda v: modules.__setitem__(name, v), module)
    for attr, value in list(vars(module).items()):
        if attr == "__warningregistry__":  # the warnings module's own notes, written whenever a
            continue  # warning (a coroutine never awaited) is raised in this module's frames
        where = f"{name}.{attr}"
        yield _attribute(module, attr, where)
        if type(value) in (dict, list, set) and attr != "__builtins__":  # builtins: below
            yield _contents(value, where)


def _owned(value: Any) -> bool:
    return _is_lab(str(getattr(value, "__module__", "") or ""))


def _watches() -> Iterator[_Watch]:
    seen: set[int] = set()
    lab = [(n, m) for n, m in list(sys.modules.items()) if _is_lab(n) and isinstance(m, ModuleType)]
    for name, module in lab:
        yield from _module_watches(name, module)
        for value in list(vars(module).values()):
            if id(value) in seen or not _owned(value):
                continue
            seen.add(id(value))
            if isinstance(value, type):
                for attr, member in list(vars(value).items()):
                    yield _attribute(value, attr, f"{value.__module__}.{value.__qualname__}.{attr}")
                    for fn in _functions(member):
                        yield from _function_watches(fn)
            for fn in _functions(value):
                yield from _function_watches(fn)
    for attr in list(vars(builtins)):
        yield _attribute(builtins, attr, f"builtins.{attr}")
    yield from _hook_watches()


def _hook_watches() -> Iterator[_Watch]:
    yield _Watch("sys.getprofile()", sys.getprofile, sys.setprofile, sys.getprofile())
    yield _Watch("sys.gettrace()", sys.gettrace, sys.settrace, sys.gettrace())
    yield _Watch("threading.getprofile()", threading.getprofile, threading.setprofile,
                 threading.getprofile())
    yield _Watch("threading.gettrace()", threading.gettrace, threading.settrace,
                 threading.gettrace())
    yield _contents(gc.callbacks, "gc.callbacks")


def _function_watches(fn: FunctionType) -> Iterator[_Watch]:
    for part in _FUNCTION_PARTS:
        yield _attribute(fn, part, f"{fn.__module__}.{fn.__qualname__}.{part}")


class Snapshot:
    """The lab's code as it is now; `changes()` names what differs later, `restore()` puts it
    back. Take it after importing every lab module the checks use (`import_lab`)."""

    def __init__(self) -> None:
        self._watches = list(_watches())
        self._codes = [w for w in self._watches if w.where.endswith(".__code__")]

    def changes(self) -> list[str]:
        return [w.where for w in self._watches if w.changed()]

    def code_changes(self) -> list[str]:
        """Only the code of the lab's functions: cheap enough to compare around every call
        into the learner's code."""
        return [w.where for w in self._codes if w.changed()]

    def codes(self) -> list[Any]:
        """The code objects of the lab's functions, as the snapshot holds them."""
        return [w.value for w in self._codes]

    def restore(self) -> list[str]:
        """Put every changed place back; what is still changed afterwards (none, normally)."""
        for w in self._watches:
            if w.changed():
                try:
                    w.write(w.value)
                except Exception:
                    continue
        return self.changes()


def import_lab() -> None:
    """Import every lab module the checks use (the checks, the experiments they run, the core
    below them), so the snapshot holds them all: a module first imported by the learner's code
    could otherwise be changed before anyone looked. The lab's other modules (plots, widgets,
    provider clients, classroom tools) are not imported by the checks, so not watched."""
    from keel_checks.check import VERIFIERS
    from keel_lab.course._experiments.registry import EXPERIMENTS

    dict(VERIFIERS)  # loads every exercise's verifier module

    for experiment in EXPERIMENTS.values():
        experiment.function  # noqa: B018 - loads the experiment's module
