"""A verdict on a learner's function: lines that are the same for every right answer, and a
failure that every grader sees as one.

Every exercise has a fixed list of named checks, and every verdict reports all of them: a check
not reached because an earlier one failed is shown as not tried, so `NOT YET (k/N checks)` has
the same N whatever the answer. `guard` is the one door through which a check calls the
learner's code: an exception inside it becomes a hint naming that exception at its line in the
learner's cell, and a `None` (a forgotten `return`) a hint saying so, never a crash or silence.
"""

from __future__ import annotations

import asyncio
import contextlib
import dis
import functools
import inspect
import linecache
import traceback
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from keel_checks.exercises import EXERCISES
from keel_checks.origin import lab_module
from keel_lab._i18n import N_, _


class ExerciseNotPassed(AssertionError):
    """Raised by `check` when an answer is not right yet; its text is the hints, one a line. An
    `AssertionError`, so pytest, nbval, nbgrader and otter all count the cell as failed."""


class Delegated(Exception):
    """The learner's function handed the exercise to the lab's own implementation."""


class ReturnedNone(Exception):
    """The learner's function returned None where the lab's own code called it (a real run)."""


class NotAwaitable(Exception):
    """An exercise the lab awaits returned a plain value: it was written with `def`, not
    `async def`. Its text is what it returned, described."""


NOT_TRIED = N_("not tried (fix the first failure first)")
# What each exercise is worth, whole and by check line (`Exercise.parts`): plain dicts, as the
# grader reads them.
_WORTH: dict[str, tuple[int, dict[str, int]]] = {
    x.name: (x.points, dict(x.parts)) for x in EXERCISES}


@dataclass
class Verdict:
    """`checks` names every check of the exercise, in order; each `add` settles the next one.
    Constant texts come marked `N_` and are translated here; built ones come translated."""

    exercise: str
    checks: Sequence[str] = ()
    results: list[tuple[bool, str]] = field(default_factory=list)

    def add(self, ok: bool, passed: str, hint: str) -> None:
        self.results.append((ok, _(passed if ok else hint)))

    def first(self, passed: str, problems: Iterable[str]) -> bool:
        """Settle one check by its first problem (none: passed); whether it passed. The
        problems are looked at lazily, so later cases are not judged after a failure."""
        hint = next((p for p in problems if p), "")
        self.add(not hint, passed, hint)
        return not hint

    @property
    def total(self) -> int:
        return max(len(self.checks), len(self.results))

    @property
    def passed(self) -> bool:
        return (bool(self.results) and len(self.results) >= len(self.checks)
                and all(ok for ok, _ in self.results))

    @property
    def points(self) -> int:
        """The points it earns: all of its exercise's when it passed; else those its exercise's
        `parts` give the lines that passed before the first failure, so a check that stopped
        early (a crash) earns only the lines before it, and a line is worth nothing after a
        failure, whatever it says."""
        whole, parts = _WORTH.get(self.exercise, (0, {}))
        if self.passed:
            return whole
        earned = 0
        for label, (ok, _text) in zip(self.checks, self.results, strict=False):
            if not ok:
                break
            earned += parts.get(label, 0)
        return min(earned, whole)

    @property
    def hints(self) -> list[str]:
        return [text for ok, text in self.results if not ok]

    def lines(self) -> list[str]:
        done = sum(ok for ok, _ in self.results)
        word = _("PASSED") if self.passed else _("NOT YET")
        return ([(_("[pass] {text}") if ok else _("[FAIL] {text}")).format(text=text)
                 for ok, text in self.results]
                + [_("[----] {check}: {reason}").format(check=_(label), reason=_(NOT_TRIED))
                   for label in self.checks[len(self.results):]]
                + [_("{exercise}: {word} ({done}/{total} checks)").format(
                    exercise=self.exercise, word=word, done=done, total=self.total)])

    def __str__(self) -> str:
        return "\n".join(self.lines())


_DRAWN: ContextVar[int | None] = ContextVar("keel_lab_drawn", default=None)


def seeded(seed: int) -> int:
    """The seed of a check's random inputs: `seed`, the notebook's fixed inputs; or, while a
    grader judges (`drawn`), one mixed with the seed it drew for this run, so that a table of
    the answers to the fixed inputs is worth nothing."""
    run = _DRAWN.get()
    return seed if run is None else (run * 1_000_003 + seed) % 2**32


@contextmanager
def drawn(run: int | None) -> Iterator[None]:
    """Every check in this block draws its inputs from `run` (None: the fixed inputs)."""
    token = _DRAWN.set(run)
    try:
        yield
    finally:
        _DRAWN.reset(token)


class Hint(str):
    """A case's problem, read as a check's line shows it: the case (with its input), then the
    problem. `advice_first` leads with the problem instead, for a one-line summary that a
    terminal cuts (`make check`): what to do survives the cut, the long input does not."""

    case: str
    problem: str
    advice: str  # what to do, when the problem's own text does not start with it

    def __new__(cls, case: str, problem: str, advice: str = "") -> Hint:
        said = _("{first} - {then}").format(first=problem, then=advice) if advice else problem
        hint = super().__new__(cls, _("{label}: {problem}").format(label=case, problem=said))
        hint.case, hint.problem, hint.advice = case, problem, advice
        return hint

    @property
    def advice_first(self) -> str:
        lead = _("{first} - {then}").format(first=self.advice, then=self.problem) \
            if self.advice else self.problem
        return _("{problem} (case: {label})").format(problem=lead, label=self.case)


def labelled(label: str, problem: str, advice: str = "") -> str:
    """A case's problem under the case's label (with its input); "" when there is none.
    `advice`: what to do, led with in a one-line summary when the problem ends with it."""
    return Hint(label, problem, advice) if problem else ""


def advice_first(hint: str) -> str:
    """A hint with its advice before its case, where the hint knows the two apart."""
    return hint.advice_first if isinstance(hint, Hint) else hint


def returned_none(what: str) -> str:
    return labelled(what, _("your function returned None - is a `return` missing?"))


def guard(verdict: Verdict, what: str, fn: Callable[..., Any], *args: Any,
          explain: Callable[[Exception], str] | None = None) -> Any:
    """Call the learner's code; an exception, or a forgotten `return` (None), is a failed check
    with a hint (`explain` adds what the check knows of an exception) and None is returned."""
    try:
        value = fn(*args)
        if value is None:
            verdict.add(False, "", returned_none(what))
        return value
    except NotImplementedError:
        verdict.add(False, "", labelled(what, _("not implemented yet - replace the "
                                                "`raise NotImplementedError` with your code")))
    except Delegated as exc:
        verdict.add(False, "", str(exc))
    except ReturnedNone as exc:
        verdict.add(False, "", returned_none(f"{what}, {exc}" if str(exc) else what))
    except NotAwaitable as exc:
        verdict.add(False, "", labelled(what, _(
            "your function returned {value} at once, with nothing to await: write it as "
            "`async def {name}(...)`, so that the lab can await it, and `await` the calls "
            "inside").format(value=exc, name=verdict.exercise)))
    except Exception as exc:
        verdict.add(False, "", labelled(what, _("your function raised {error}: {message}").format(
            error=type(exc).__name__, message=exc) + where(exc, fn)
            + (explain(exc) if explain else "")))
        traceback.clear_frames(exc.__traceback__)  # what its frames held (a coroutine it never
        # awaited) goes now, its warning with it, not at some later garbage collection
    return None


def driven(driver: Callable[..., Any], fn: Callable[..., Any]) -> Callable[..., Any]:
    """`driver(fn, *args)` as a function of `args`: what a check does with the learner's
    coroutine (a stream fed on the virtual clock, a batch run). It runs where `fn` runs: a
    function the grader runs in a submission's process says `driving`, and the record the driver
    returns comes back as plain data for the check to judge here."""
    drive = getattr(fn, "driving", None)
    if drive is not None:
        return drive(driver)  # type: ignore[no-any-return]
    return functools.partial(driver, fn)


def awaitable(value: Any) -> Awaitable[Any]:
    """What the learner's coroutine function returned, for the check's driver to await;
    `NotAwaitable` when it is a plain value (a `def` where the exercise says `async def`), so
    the hint says that rather than "object list can't be used in 'await' expression". The
    coroutines it holds (the calls it never awaited, as pairs or alone) are closed, so Python
    does not warn about the lab's own `run`."""
    if not inspect.isawaitable(value):
        for item in value if isinstance(value, list | tuple) else ():
            for part in item if isinstance(item, list | tuple) else (item,):
                if isinstance(part, Coroutine):
                    part.close()
        raise NotAwaitable(describe(value))
    return value


def in_a_loop(exc: Exception) -> str:
    """What the check knows of an exception of an exercise the lab awaits, written as if it ran
    alone: asyncio.run or run_until_complete inside the lab's running loop, or the mistake
    `misuse_marked` found: a `for` over an async stream, a coroutine used where its value
    belongs (an `await` forgotten). "" for any other exception."""
    nested = (asyncio.run, asyncio.BaseEventLoop._check_running)  # type: ignore[attr-defined]
    if isinstance(exc, RuntimeError) and any(raised_by(exc, f) for f in nested):
        return _(" - the lab already runs your function in its event loop, and no second loop "
                 "can start inside it: write `async def` and `await` the calls instead")
    misuse = getattr(exc, MISUSE, None)
    if misuse == "sync_iteration":
        return _(" - the stream is asynchronous: read it with `async for` inside an "
                 "`async def`")
    if misuse == "unawaited":
        return _(" - a coroutine was used where its value belongs: an `await` is missing "
                 "(value = await ...)")
    return ""


# The attribute `misuse_marked` sets on a learner's exception: a public one, so the grader
# carries it to the checking process with the exception's other attributes (frames stay behind).
MISUSE = "keel_misuse"


@contextmanager
def misuse_marked() -> Iterator[None]:
    """Wrap a check's driver, where the learner's code runs: an exception leaving it is marked
    with the asynchrony mistake its object shows - "sync_iteration" (an async iterable used as a
    plain one: `for event in stream` in a `def`) or "unawaited" (a coroutine used as its value)
    - decided by the object's type, never by Python's wording of the error."""
    try:
        yield
    except (AttributeError, TypeError) as exc:
        found = _involved(exc)
        misuse = ("unawaited" if inspect.iscoroutine(found) else "sync_iteration"
                  if isinstance(exc, TypeError) and hasattr(found, "__aiter__")
                  and not hasattr(found, "__iter__") else None)
        if misuse:
            with contextlib.suppress(AttributeError):  # an exception class with __slots__
                setattr(exc, MISUSE, misuse)
        raise


_LOADS = frozenset({"LOAD_FAST", "LOAD_DEREF", "LOAD_NAME", "LOAD_GLOBAL"})


def _involved(exc: AttributeError | TypeError) -> object:
    """The object a failed operation acted on: an AttributeError's `obj`; else the value of
    the last name the innermost frame loaded before its failing instruction (`stream` in `for
    event in stream`, `list(stream)`, `coro["x"]`), None when there is none."""
    if isinstance(exc, AttributeError) and exc.obj is not None:
        return exc.obj
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return None
    frame, name = tb.tb_frame, None
    for instruction in dis.get_instructions(frame.f_code):
        if instruction.offset >= tb.tb_lasti:
            break
        if instruction.opname in _LOADS:
            name = instruction.argval
        elif instruction.starts_line is not None:
            name = None  # a name loaded on an earlier line is not what this one acts on
    scopes = (frame.f_locals, frame.f_globals)
    return next((scope[name] for scope in scopes if name in scope), None)


def raised_by(exc: BaseException, function: Callable[..., Any]) -> bool:
    """Whether `function`'s own code raised `exc` (its last frame); an exception raised in
    another process (the grader's) names that function as `raised_in`."""
    told = getattr(exc, "raised_in", None)
    if isinstance(told, str):
        return told == f"{function.__module__}:{function.__qualname__}"
    frames = list(traceback.walk_tb(exc.__traceback__))
    return bool(frames) and frames[-1][0].f_code is getattr(function, "__code__", None)


def strict(fn: Callable[..., Any], given: Callable[..., str]) -> Callable[..., Any]:
    """The learner's function for the lab's code to call: a None it returns (awaited) raises
    `ReturnedNone` naming its input (`given(*args)`), for `guard` to report."""

    async def awaited(value: Awaitable[Any], text: str) -> Any:
        out = await value
        if out is None:
            raise ReturnedNone(text)
        return out

    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        value = fn(*args)
        if inspect.isawaitable(value):
            return awaited(value, given(*args))
        if value is None:
            raise ReturnedNone(given(*args))
        return value

    return call


def where(exc: BaseException, fn: Callable[..., Any]) -> str:
    """' at line N: <source>' for the last traceback frame in the learner's own file (the
    notebook cell that defined `fn`; its lines count from 1 as JupyterLab shows them). An
    exception raised in another process (the grader's) carries that text as `where_in_cell`."""
    told = getattr(exc, "where_in_cell", None)
    if isinstance(told, str):
        return told
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    if code is None or lab_module(getattr(fn, "__module__", "")):
        return ""
    lines = [n for frame, n in traceback.walk_tb(exc.__traceback__)
             if frame.f_code.co_filename == code.co_filename]
    if not lines:
        return ""
    text = linecache.getline(code.co_filename, lines[-1]).strip()
    return _(" at line {line}").format(line=lines[-1]) + (f": {text}" if text else "")


def listed(verdict: Verdict, what: str, expected: str, fn: Callable[..., Any],
           *args: Any, explain: Callable[[Exception], str] | None = None,
           unordered: bool = False, said: str | None = None) -> list[Any] | None:
    """Call the learner's function and take what it returned as a list; None after a hint
    saying what went wrong or what it returned instead of `expected` (`said`: the case as that
    hint names it, `what` by default). `unordered`: a set is refused too, where order counts."""
    value = guard(verdict, what, fn, *args, explain=explain)
    if value is None:
        return None
    refused = (str, bytes, dict, set, frozenset) if unordered else (str, bytes, dict)
    if isinstance(value, refused) or not hasattr(value, "__iter__"):
        verdict.add(False, "", labelled(said or what, _(
            "your function returned {value}, expected {expected}").format(
                value=describe(value), expected=_(expected))))
        if isinstance(value, Coroutine):  # an `async def` answer: never awaited, closed quietly
            value.close()
        return None
    out: list[Any] | None = guard(verdict, said or what, list, value)  # a generator runs here
    return out


def describe(value: Any) -> str:
    """'a dict', 'a str ('call_a')': what a value is, for a hint; None is most often a helper's
    forgotten `return`."""
    if value is None:
        return _("None (a helper without `return`?)")
    name = type(value).__name__
    shown = f" ({value!r:.40})" if isinstance(value, str | int | float) else ""
    template = _("an {type}{shown}") if name[:1].lower() in "aeiou" else _("a {type}{shown}")
    return template.format(type=name, shown=shown)
