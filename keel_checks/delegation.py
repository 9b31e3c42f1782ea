"""Is the learner's answer their own, or the lab's implementation under another name?

An exercise asks the learner to write a rule the lab already has (`run_status`, `make_batches`,
`readiness`...). Calling it passes every behaviour check, so it is reported as delegation
instead. Two looks, so that neither an alias nor a dynamic lookup hides it:

1. Static: every global, closure variable, default, in-function import (`from keel_lab import
   run_status as rs`) and chain of attributes read from it in the learner's code objects is
   resolved to the object it names; the learner's own helpers, classes and `functools.partial`s
   are followed, the lab's code is not entered. Naming one of the exercise's lab objects is
   delegation.
2. Dynamic: while the learner's function runs, a profile hook watches for a call into the code
   of those objects (their functions, methods and properties), which catches what static
   reading cannot see (`getattr(importlib.import_module(...), name)`).

Using the lab's data types (`ToolMessage`, `Result`, `Status`, `Toolset.get`...) is not
delegation: each exercise lists only the objects that would solve it.
"""

from __future__ import annotations

import contextlib
import dis
import functools
import inspect
import sys
import threading
from collections.abc import Callable, Iterator
from types import CodeType, FrameType, FunctionType, MethodType, ModuleType
from typing import Any

from keel_checks.origin import lab_module
from keel_checks.verdict import Delegated
from keel_lab._i18n import _

_LOADS = {"LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF",
          "LOAD_FROM_DICT_OR_DEREF"}
_LOCALS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_CLOSURE"}
_ATTRS = {"LOAD_ATTR", "LOAD_METHOD"}
_KEEP = {"SWAP", "COPY", "POP_TOP", "PRECALL", "CACHE", "PUSH_NULL", "NOP"}  # stack shuffles
_STORES = {"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF"}


def _is_lab(obj: Any) -> bool:
    return lab_module(obj.__name__ if isinstance(obj, ModuleType)
                      else getattr(obj, "__module__", ""))


def _codes(code: CodeType) -> Iterator[CodeType]:
    """A code object and every code object nested in it (functions, lambdas, comprehensions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _codes(const)


def _attribute(obj: Any, name: str) -> Any:
    """`obj.name` without running a property or `__getattr__` of an arbitrary object."""
    if not isinstance(obj, ModuleType | type):
        return None
    try:
        return inspect.getattr_static(obj, name)
    except AttributeError:
        return sys.modules.get(f"{obj.__name__}.{name}") if isinstance(obj, ModuleType) else None


def _named(fn: FunctionType) -> Iterator[Any]:
    """Every object the function's code names: globals, closures, imports, attribute chains."""
    scope: dict[str, Any] = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__, strict=True):
            with contextlib.suppress(ValueError):  # an empty cell is not bound yet
                scope[name] = cell.cell_contents
    for code in _codes(fn.__code__):
        current: Any = None
        imported: list[ModuleType] = []
        for ins in dis.get_instructions(code):
            name = ins.argval if isinstance(ins.argval, str) else ""
            found: list[Any] = []
            if ins.opname in _LOCALS:
                found = [scope.get(name)]
            elif ins.opname in _LOADS:
                found = [scope.get(name, fn.__globals__.get(name))]
            elif ins.opname == "IMPORT_NAME":
                parts = name.split(".")
                imported += [m for m in (sys.modules.get(".".join(parts[:n]))
                                         for n in range(1, len(parts) + 1)) if m]
                found = imported[-1:]
            elif ins.opname == "IMPORT_FROM":
                found = [_attribute(m, name) for m in [current, *imported]]
            elif ins.opname in _ATTRS:
                found = [_attribute(current, name)]
            elif ins.opname in _STORES:
                scope[name] = current
                continue
            elif ins.opname in _KEEP:
                continue
            found = [x for x in found if x is not None]
            yield from found
            current = found[0] if found else None


def _followed(obj: Any, home: str) -> Iterator[Any]:
    """What a referenced object brings along: a helper's own references, a class's methods.
    Functions and classes are entered only when written where the answer was (`home`)."""
    mine = getattr(obj, "__module__", None) == home
    if isinstance(obj, functools.partial):
        yield obj.func
        yield from obj.args
        yield from obj.keywords.values()
    elif isinstance(obj, MethodType | staticmethod | classmethod):
        yield obj.__func__
    elif isinstance(obj, property):
        yield from (obj.fget, obj.fset)
    elif isinstance(obj, FunctionType) and mine:
        yield from _named(obj)
        yield from obj.__defaults__ or ()
        yield from (obj.__kwdefaults__ or {}).values()
    elif isinstance(obj, type) and mine:
        yield from vars(obj).values()
    elif callable(obj) and not isinstance(obj, ModuleType | type | FunctionType):
        yield type(obj)  # an instance with __call__: its class's methods


def references(fn: Callable[..., Any], lab: tuple[Any, ...]) -> Any:
    """The first of the `lab` objects the learner's code reaches, or None."""
    home = getattr(fn, "__module__", None) or "__main__"
    seen: set[int] = set()
    stack: list[Any] = [fn]
    while stack:
        obj = stack.pop()
        if obj is None or id(obj) in seen:
            continue
        seen.add(id(obj))
        if any(obj is x for x in lab):
            return obj
        if not _is_lab(obj) or obj is fn:
            stack.extend(_followed(obj, home))
    return None


def _lab_codes(lab: tuple[Any, ...]) -> dict[CodeType, Any]:
    """The code objects of the lab's solution objects, each mapped to the object it belongs to."""
    out: dict[CodeType, Any] = {}
    for obj in lab:
        parts = vars(obj).values() if isinstance(obj, type) else [obj]
        for part in parts:
            funcs = [part.fget] if isinstance(part, property) else [inspect.unwrap(part)] \
                if callable(part) else []
            for f in funcs:
                code = getattr(f, "__code__", None)
                if code is not None:
                    out[code] = obj
    return out


def _hint(obj: Any) -> str:
    return _("your function hands the exercise to the lab's own {name}: write the rule "
             "yourself (the check cannot judge the lab's code as your answer)").format(
                 name=public_name(obj))


def public_name(obj: Any) -> str:
    """The name a learner imports `obj` by: its face's (`keel_lab.make_batches`) when a face
    offers it, else where it is defined."""
    name = getattr(obj, "__name__", None)
    for face in ("keel_lab", "keel_lab.providers", "keel_lab.course"):
        if name and name in getattr(sys.modules.get(face), "__all__", ()) \
                and getattr(sys.modules[face], name) is obj:
            return f"{face}.{name}"
    return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', obj)}"


_SET_PROFILE = sys.setprofile


def _kept(function: Any) -> None:
    """`sys.setprofile` while the learner's function runs: the watch stays on (an answer that
    turned it off to call the lab unseen would pass); a thread it starts still takes the hook
    `threading.setprofile` gave it."""
    if function is not None and function is threading.getprofile():
        _SET_PROFILE(function)


def watched(fn: Callable[..., Any], lab: tuple[Any, ...]) -> Callable[..., Any]:
    """The learner's function, raising `Delegated` when it is, or calls, one of `lab`. A function
    that runs in another process (the grader's `Remote`) is watched there: it says `watching`."""
    if hasattr(fn, "watching"):
        return fn.watching(lab)  # type: ignore[no-any-return]
    found = references(fn, lab)
    codes = _lab_codes(lab)
    own = getattr(inspect.unwrap(fn), "__code__", None)
    if found is None and own in codes:  # the lab's code under a new function object
        found = codes[own]

    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        if found is not None:
            raise Delegated(_hint(found))
        seen: list[Any] = []

        def profile(frame: FrameType, event: str, arg: Any) -> None:
            if event == "call" and frame.f_code in codes and not seen:
                seen.append(codes[frame.f_code])

        previous, threads = sys.getprofile(), threading.getprofile()
        _SET_PROFILE(profile)
        threading.setprofile(profile)  # a thread it starts (run_coroutine's in Jupyter) too
        sys.setprofile = _kept
        try:
            result = fn(*args)
        finally:
            sys.setprofile = _SET_PROFILE
            _SET_PROFILE(previous)
            threading.setprofile(threads)
        if seen:
            raise Delegated(_hint(seen[0]))
        return result

    return call
