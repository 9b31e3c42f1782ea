"""The learner's function across the process boundary: the grader's verifier calls `Remote`,
the submission's process `serve`s.

The verifier - the lab's own, unchanged - runs in the grader with fresh inputs, and so does every
comparison it makes: the submission's process only runs the learner's function on the arguments
it is sent and returns plain data (`plain`). A callback in the arguments (a tool runner) stays
in the grader: the submission's process gets a stand-in that asks the grader to call it. What the
submission's process observes of its own calls - the virtual clock moving, the lab's code called
in its place (delegation), the lab changed under it - comes back beside each result, so a
submission that silences it gets no hint, never points: a right result is still needed.

Messages from the grader are pickled (the submission trusts the grader), messages to it are JSON
lines (the grader trusts nothing).
"""

from __future__ import annotations

import builtins
import functools
import inspect
import io
import os
import pickle
import struct
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from keel_course.grading.hints import MAX_HINT, described, moved, refusal, short
from keel_course.grading.plain import from_plain, given, lab_class, lab_name, to_plain

if TYPE_CHECKING:
    from keel_checks.verdict import Verdict

_HEADER = struct.Struct(">I")
MAX_REQUEST = 64 * 1024 * 1024


class Stopped(BaseException):  # not the learner's error: the checks' guards let it pass
    """The submission's process ended, timed out or broke the protocol while being asked."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Judgement(NamedTuple):
    """The grader's verdict on one exercise: whether it passed, its first hint, and the points
    it earned (`Verdict.points`: all of them when it passed, else its passing lines' parts)."""

    passed: bool
    hint: str | None
    points: int = 0


class Link(Protocol):
    def send(self, message: tuple[Any, ...], handles: dict[int, Any] | None = None) -> None: ...
    def message(self) -> dict[str, Any]: ...


def pickled(message: tuple[Any, ...], handles: dict[int, Any]) -> bytes:
    """A request for the submission's process; each function in it becomes a handle the grader
    keeps in `handles`, called back when the learner's code calls it."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)

    def persistent_id(obj: Any) -> Any:
        if callable(obj) and not isinstance(obj, type):  # a function, a tool runner object
            handles[id(obj)] = obj
            return ("callback", id(obj))
        return None

    pickler.persistent_id = persistent_id  # type: ignore[method-assign]
    pickler.dump(message)
    data = out.getvalue()
    return _HEADER.pack(len(data)) + data


def _raised(error: dict[str, Any]) -> BaseException:
    """The learner's exception rebuilt in the grader: its builtin or lab class (already imported)
    with the same arguments and public attributes, else an exception of its name under its
    nearest builtin ancestor; `where_in_cell` says where in the learner's cell it was raised
    (`verdict.where` reads it)."""
    name, module = str(error.get("type", "Exception")), str(error.get("module"))
    cls: Any = getattr(builtins, name, None) if module == "builtins" else \
        lab_class(f"{module}:{error.get('qualname', name)}")
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        base = getattr(builtins, str(error.get("base")), Exception)
        base = base if isinstance(base, type) and issubclass(base, Exception) else Exception
        cls = type(name if name.isidentifier() else "Exception", (base,), {})
    exc: BaseException = cls.__new__(cls)
    args = from_plain(error.get("args", []))
    exc.args = tuple(args) if isinstance(args, list) else (str(error.get("message", "")),)
    attrs = error.get("attrs")
    for key, value in (attrs.items() if isinstance(attrs, dict) else ()):
        if isinstance(key, str) and key.isidentifier() and not key.startswith("_"):
            try:
                setattr(exc, key, from_plain(value))
            except (AttributeError, TypeError):
                continue
    exc.where_in_cell = str(error.get("where", ""))  # type: ignore[attr-defined]
    exc.raised_in = str(error.get("raised_in", ""))  # type: ignore[attr-defined]
    return exc


def _mutated(args: tuple[Any, ...], after: Any, known: list[Any]) -> None:
    """What the learner's code did to the list and dict arguments it was given, done to the
    grader's own (a check asks whether the input is as it was)."""
    if not isinstance(after, list) or len(after) != len(args):
        return
    for arg, now in zip(args, after, strict=True):
        if now is None:
            continue
        value = from_plain(now, known)
        if type(arg) is list and isinstance(value, list):
            arg[:] = value
        elif type(arg) is dict and isinstance(value, dict):
            arg.clear()
            arg.update(value)


class Remote:
    """The learner's function as the grader's verifier sees it (see the module's note)."""

    def __init__(self, link: Link, name: str, lab: tuple[Any, ...] = ()) -> None:
        self.__name__ = self.__qualname__ = name
        self.__module__ = "__main__"
        self._link, self._lab = link, lab
        self.clock_moved: float | None = None  # virtual seconds its last call moved the clock
        self.clock_woke = 0  # how many times its last call moved the clock forward
        # What a check's calls learnt, kept by the function the grader made (`_root`) for
        # every watched copy of it: what the submission's process saw its calls do, whether it
        # failed the grader while asked, and the exceptions callbacks raised, by id.
        self._root = self
        self.found: list[str] = []
        self.copy: str | None = None  # the lab function the learner's function is a copy of
        self.stopped: Stopped | None = None
        self.sent: dict[int, BaseException] = {}

    def watching(self, lab: tuple[Any, ...]) -> Remote:
        """This function, its calls watched for the lab's own `lab` objects where it runs
        (what `delegation.watched` does in one process)."""
        other = Remote(self._link, self.__name__, lab)
        other._root = self._root
        return other

    def __call__(self, *args: Any) -> Any:
        return self._ask(None, args)

    def driving(self, driver: Callable[..., Any]) -> Callable[..., Any]:
        """`driver(fn, *args)` run in the submission's process with the learner's function
        there (`verdict.driven`): the record it returns comes back as plain data."""
        return lambda *args: self._ask(lab_name(driver), args)

    def _ask(self, driver: str | None, args: tuple[Any, ...]) -> Any:
        try:
            return self._call(driver, args)
        except Stopped as exc:  # a verifier may catch everything: the grader must still know
            self._root.stopped = exc
            raise

    def _call(self, driver: str | None, args: tuple[Any, ...]) -> Any:
        names = [lab_name(o) for o in self._lab]
        handles: dict[int, Any] = {}
        self._link.send(("call", args, names, driver), handles)
        while True:
            message = self._link.message()
            if "callback" in message:
                self._call_back(handles, message)
                continue
            if "return" not in message and "raise" not in message:
                continue  # anything else the submission wrote on the channel meanwhile
            moved = message.get("moved")
            self.clock_moved = float(moved) if isinstance(moved, int | float) else 0.0
            woke = message.get("woke")
            self.clock_woke = woke if isinstance(woke, int) and not isinstance(woke, bool) else 0
            found = message.get("found")
            if isinstance(found, str) and found not in self._root.found:
                self._root.found.append(found[:500])
            copy = message.get("copy")
            if isinstance(copy, str):
                self._root.copy = copy[:200]
            known = given(args)
            _mutated(args, message.get("after"), known)
            if "raise" in message:
                error = message["raise"] if isinstance(message["raise"], dict) else {}
                sent = self._root.sent.get(error.get("sent"))  # type: ignore[arg-type]
                if sent is not None:  # the very exception a callback raised, passed through
                    sent.where_in_cell = str(error.get("where", ""))  # type: ignore[attr-defined]
                    raise sent
                raise _raised(error)
            return from_plain(message["return"], known)

    def _call_back(self, handles: dict[int, Any], message: dict[str, Any]) -> None:
        callback = handles.get(message["callback"]) if isinstance(message["callback"], int) \
            else None
        if callback is None:
            raise Stopped("the grading process asked for a callback the grader never sent")
        args = from_plain(message.get("args", []))
        try:
            reply: tuple[Any, ...] = ("returned", callback(*args))
        except Exception as exc:  # the tool's own failure: raised again in the learner's code
            self._root.sent[id(exc)] = exc
            reply = ("raised", exc, id(exc))
        try:
            self._link.send(reply, handles)
        except (pickle.PicklingError, TypeError, AttributeError):
            self._link.send(("raised", RuntimeError(str(reply[1]))), handles)


def judged(name: str, offer: dict[str, Any], link: Link, seed: int,
           elsewhere: dict[str, int]) -> Judgement:
    """The grader's own verdict on the learner's function `name`, served by the child: the
    lab's verifier runs here on inputs drawn from `seed` (`elsewhere`: names other cells set
    with code the grader does not run, for a NameError's hint)."""
    from keel_checks.check import VERIFIERS, misnamed
    from keel_checks.verdict import Verdict

    if offer.get("defined") is not True:
        return Judgement(False, f"{name} was not defined when its check cell ran (see the "
                         "submission's error)")
    wrong = misnamed(offer.get("name"))
    if wrong:
        return Judgement(False, short(wrong))
    if isinstance(offer.get("refused"), str):
        return Judgement(False, short(offer["refused"]))
    fn = Remote(link, name)
    passed, hint, points = verify(VERIFIERS[name], Verdict, fn, drawn_from=seed)
    for exc in fn.sent.values():  # the tools' own exceptions, which may outlive this check
        vars(exc).pop("where_in_cell", None)
    if fn.stopped is not None:
        raise fn.stopped
    if fn.copy is not None:
        return Judgement(False, short(refusal(
            f"{name} is a copy of {fn.copy} (the lab's own code under another name)",
            "a copy of the lab's code is not an answer")))
    if fn.found:
        return Judgement(False, short(refusal(f"checking {name} {fn.found[0]}")))
    return Judgement(passed, short(hint + moved(hint, elsewhere), MAX_HINT) if hint else None,
                     points)


def verify(verifier: Callable[..., Verdict], verdict_type: type[Verdict], fn: Any,
           **given: Any) -> Judgement:
    """The verdict on one exercise function: passed, the first hint, the points earned. `given`
    goes to the verifiers that take it (the inputs drawn for this run); a check that could not
    run earns nothing."""
    from keel_checks.verdict import drawn

    accepted = inspect.signature(verifier).parameters
    try:
        with drawn(given.get("drawn_from")):  # every check's random inputs, drawn for this run
            verdict = verifier(fn, **{k: v for k, v in given.items() if k in accepted})
    except Stopped:
        raise
    except BaseException as exc:
        return Judgement(False, short(f"the check could not run your function: {described(exc)}"))
    if type(verdict) is not verdict_type:
        return Judgement(False, "the check returned no verdict")
    if verdict.passed:
        return Judgement(True, None, verdict.points)
    return Judgement(False, short(verdict.hints[0] if verdict.hints else "no check ran", MAX_HINT),
                     verdict.points)


# -- in the submission's process ---------------------------------------------------------------

class Requests:
    """The grader's requests, read from a pipe the learner's code was not given."""

    def __init__(self, fd: int, send: Callable[..., None]) -> None:
        self.fd, self.send = fd, send

    def _read(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = os.read(self.fd, size - len(data))
            if not chunk:
                raise EOFError("the grader closed the request pipe")
            data += chunk
        return data

    def next(self) -> tuple[Any, ...]:
        (size,) = _HEADER.unpack(self._read(_HEADER.size))
        if size > MAX_REQUEST:
            raise EOFError("a request larger than the grader sends")
        message: tuple[Any, ...] = _Unpickler(io.BytesIO(self._read(size)), self).load()
        return message


class _Unpickler(pickle.Unpickler):
    """A request as the grader pickled it, each of its handles a stand-in calling back."""

    def __init__(self, data: io.BytesIO, requests: Requests) -> None:
        super().__init__(data)
        self.requests = requests

    def persistent_load(self, pid: Any) -> Any:
        return functools.partial(_call_grader, self.requests, pid[1])


def _call_grader(requests: Requests, handle: int, *args: Any) -> Any:
    """A callback the grader kept: called there, its result or exception returned here."""
    requests.send(callback=handle, args=to_plain(list(args)))
    reply = requests.next()
    if reply[0] == "raised":
        with suppress(AttributeError, TypeError):
            reply[1].keel_sent = reply[2]  # named again if it escapes the learner's function
        raise reply[1]
    return reply[1]


Run = Callable[[Callable[..., Any], tuple[Any, ...], list[str], "str | None"], dict[str, Any]]


def serve(requests: Requests, fn: Callable[..., Any], run: Run) -> None:
    """Answer each ("call", args, lab names, driver) until ("done",): `run` calls the learner's
    function (or the named driver with it) as watched and returns the reply (result or
    exception, what was seen)."""
    while (request := requests.next())[0] != "done":
        _, args, lab, driver = request
        requests.send(**run(fn, args, lab, driver))
