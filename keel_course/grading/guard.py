"""Around every call a check makes into the learner's function: what the learner's code did
while it ran that nothing could see afterwards.

The snapshot (`integrity`) is compared after each cell and each check, so a change made during a
check and undone before it ends - a reference function's `__code__` swapped and put back, a
profile hook that removes itself - would slip between. Each call into the learner's function is
therefore watched on its own: before and after it, the code of the lab's functions must be as
snapshotted and the profile and trace hooks as they were; while it runs, the grader's profile
hook sees every Python function called in this thread and in threads started meanwhile (passing
each event on to the hook that was there, such as the delegation check's), and flags a run of
a copy of the lab's own code: a code object with the instructions, constants, names and
variables of one of the lab's named functions (not a lambda or a comprehension), whatever its
name, docstring and lines, that is not that function's - a `__code__` copied and renumbered, a
re-compiled `inspect.getsource`, the lab's function pasted into the exercise cell under the
stub's docstring. Anything found refuses the exercise (`found`); the learner's function being
such a copy itself is said as such (`copy`: "keel_lab's _core.batching.make_batches").

Not seen: threads started before the call, code running below Python, a copy edited enough to
change its bytecode - see docs/grading.md.
"""

from __future__ import annotations

import dis
import functools
import inspect
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import CodeType, FrameType, FunctionType
from typing import Any

from keel_course.grading.integrity import Snapshot

_LAB = str(Path(__file__).resolve().parents[2])  # the folder of the keel_lab package
_SMALLEST = 40  # bytes of bytecode below which two functions may match by chance
_CONSTANTS = frozenset(dis.hasconst)
Shape = tuple[int, tuple[str, ...], tuple[str, ...], int]
Fingerprint = tuple[tuple[Any, ...], tuple[str, ...], tuple[str, ...], int]
Hooks = tuple[Any, Any, Any, Any]


def _shape(code: CodeType) -> Shape:
    """What a copy keeps that is cheap to read: the sieve before `fingerprint`."""
    return len(code.co_code), code.co_names, code.co_varnames, code.co_argcount


def fingerprint(code: CodeType) -> Fingerprint:
    """What a copy of a function's code keeps whatever its name, docstring, file and line
    numbers: each instruction and its argument - a constant by its type and value, a nested
    function by its own fingerprint (a docstring is a constant no instruction loads, whose
    removal renumbers the others) -, its names, variables and arguments."""
    def constant(value: Any) -> Any:
        return fingerprint(value) if isinstance(value, CodeType) else (type(value), value)

    steps = tuple((i.opcode, constant(i.argval) if i.opcode in _CONSTANTS else i.arg)
                  for i in dis.get_instructions(code))
    return steps, code.co_names, code.co_varnames, code.co_argcount


def lab_name(code: CodeType) -> str:
    """"keel_lab's _core.batching.make_batches": a lab function's package, module and name."""
    package, *module = Path(code.co_filename).relative_to(_LAB).with_suffix("").parts
    dotted = ".".join(m for m in module if m != "__init__")
    return f"{package}'s {dotted + '.' if dotted else ''}{code.co_qualname}"


def _nested(code: CodeType) -> Iterator[CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _nested(const)


# The hooks' own doors, kept at import (before any learner code runs): the delegation watch
# makes `sys.setprofile` a no-op while the learner's function runs.
_SET_PROFILE, _SET_TRACE = sys.setprofile, sys.settrace


def _hooks() -> Hooks:
    return sys.getprofile(), sys.gettrace(), threading.getprofile(), threading.gettrace()


def _set_hooks(hooks: Hooks) -> None:
    _SET_PROFILE(hooks[0])
    _SET_TRACE(hooks[1])
    threading.setprofile(hooks[2])
    threading.settrace(hooks[3])


class Guard:
    """Wraps the learner's function for the checks; `found` lists what its calls did, in words."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.found: list[str] = []
        self.copy: str | None = None  # the lab function the served function itself copies
        self._served: CodeType | None = None
        self._lab: dict[Shape, list[CodeType]] = {}
        self._own: set[int] = set()
        for top in snapshot.codes():
            for code in _nested(top):
                self._own.add(id(code))
                if (code.co_filename.startswith(_LAB) and not code.co_name.startswith("<")
                        and len(code.co_code) >= _SMALLEST):
                    self._lab.setdefault(_shape(code), []).append(code)
        self._looked: dict[int, CodeType] = {}  # kept, so an id is not reused while looked up

    def copied(self, code: CodeType) -> CodeType | None:
        """The lab function whose code `code` is, under another name (None: none, or the lab's
        own code object). Only identical code matches: a learner's own answer never does."""
        if id(code) in self._own:
            return None
        mark = None
        for lab in self._lab.get(_shape(code), ()):
            mark = mark or fingerprint(code)
            if fingerprint(lab) == mark:
                return lab
        return None

    def _look(self, code: CodeType) -> None:
        if id(code) in self._looked:
            return
        self._looked[id(code)] = code
        lab = self.copied(code)
        if lab is not None and code is self._served:
            self.copy = lab_name(lab)
        elif lab is not None:
            self._say(f"ran a copy of the lab's own {lab.co_qualname} (its code under another "
                      "name)")

    def _say(self, what: str) -> None:
        if what not in self.found:
            self.found.append(what)

    def _profile(self, previous: Any) -> Callable[[FrameType, str, Any], None]:
        def hook(frame: FrameType, event: str, arg: Any) -> None:
            if event == "call":
                self._look(frame.f_code)
            if previous is not None:
                previous(frame, event, arg)

        return hook

    def _enter(self) -> tuple[Hooks, Hooks]:
        self._compare("before")
        before = _hooks()
        mine = self._profile(before[0])
        _SET_PROFILE(mine)
        threading.setprofile(mine)
        return before, (mine, before[1], mine, before[3])

    def _leave(self, before: Hooks, installed: Hooks) -> None:
        now = _hooks()
        _set_hooks(before)
        if any(a is not b for a, b in zip(now, installed, strict=True)):
            self._say("changed a profile or trace hook (sys.setprofile, sys.settrace, "
                      "threading.setprofile or threading.settrace) in a call to the function")
        self._compare("after")

    def _compare(self, when: str) -> None:
        changed = self.snapshot.code_changes()
        if changed:
            self._say(f"changed the lab's code {when} a call to the function: {changed[0]}")
            self.snapshot.restore()

    def wrap(self, fn: Any) -> Callable[..., Any]:
        """`fn` for the checks: called, awaited (a coroutine function) as it would be, under
        watch. It keeps `fn`'s name, module and `__wrapped__`, so the checks read it as `fn`.
        A run of `fn`'s own code (a partial's function's) that is the lab's sets `copy`."""
        served = fn.func if isinstance(fn, functools.partial) else fn
        self._served = served.__code__ if isinstance(served, FunctionType) else None
        if inspect.iscoroutinefunction(fn):
            async def awaited(*args: Any, **kwargs: Any) -> Any:
                hooks = self._enter()
                try:
                    return await fn(*args, **kwargs)
                finally:
                    self._leave(*hooks)

            return functools.wraps(fn)(awaited)

        def called(*args: Any, **kwargs: Any) -> Any:
            hooks = self._enter()
            try:
                return fn(*args, **kwargs)
            finally:
                self._leave(*hooks)

        return functools.wraps(fn)(called)
