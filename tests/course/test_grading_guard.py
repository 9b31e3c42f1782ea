"""Each call into the learner's function, watched: what the tester's submissions did inside a
check (a copied or re-compiled lab function, a lab function's code swapped during the call, a
profile hook left behind, a thread) is found; a fair function is not."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import sys
import threading
from typing import Any

import pytest

from keel_checks.partial_success import CRASH, OK, RESTART, story
from keel_course.grading.guard import Guard
from keel_course.grading.integrity import Snapshot, import_lab
from keel_lab._core import partial_success
from keel_lab._core.clock import run_coroutine
from keel_lab._core.events import Event

pytestmark = pytest.mark.lab_wide

import_lab()
LAB = partial_success.run_status  # the lab's rule, which status_history must not hand work to
ANSWERED, _ = story([[OK]], [])  # traces as the check hands them to status_history
PAUSED, _ = story([[RESTART]], [])
CRASHED, _ = story([[OK, CRASH]], [])
FATAL = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}


@pytest.fixture
def guard() -> Guard:
    return Guard(Snapshot())


def fair(events: list[Event]) -> list[str]:  # the notebook's answer
    statuses: list[str] = []
    partial = False
    for event in events:
        if event.code in FATAL:
            return [*statuses, "failed"]
        if event.kind == "tool.awaiting_approval":
            statuses.append("waiting_for_approval")
        elif event.code:
            partial = True
    if events and events[-1].kind == "tool.awaiting_approval":
        return statuses
    return [*statuses, "partial" if partial else "completed"]


def mine(codes: list[str | None]) -> Any:
    raise NotImplementedError


mine.__code__ = LAB.__code__.replace(co_firstlineno=1, co_name="mine",
                                     co_qualname="mine")  # x04c


def copied_code(events: list[Event]) -> Any:  # the lab's rule, copied, on the trace's codes
    return [str(mine([e.code for e in events]))]


def source_exec(events: list[Event]) -> Any:  # x04d
    namespace = dict(vars(partial_success))
    exec(inspect.getsource(LAB), namespace)
    return [str(namespace["run_status"]([e.code for e in events]))]


def swaps_the_lab(events: list[Event]) -> Any:  # x03: the runner's rule is wrong from now on
    LAB.__code__ = (lambda codes: "completed").__code__
    return ["completed"]


def leaves_a_hook(events: list[Event]) -> Any:
    sys.setprofile(lambda *args: None)
    return fair(events)


def in_a_thread(events: list[Event]) -> Any:  # x04b, with a copy
    out: list[Any] = []

    def run() -> None:
        with contextlib.suppress(NameError):
            out.append(copied_code(events))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return out


@pytest.mark.parametrize(("fn", "found"), [
    (copied_code, "ran a copy of the lab's own run_status"),
    (source_exec, "ran a copy of the lab's own run_status"),
    (swaps_the_lab, "changed the lab's code after a call to the function: "
                    "keel_lab._core.partial_success.run_status.__code__"),
    (leaves_a_hook, "changed a profile or trace hook"),
    (in_a_thread, "ran a copy of the lab's own run_status"),
])
def test_what_a_call_did_is_found_and_undone(guard, fn, found):
    before = sys.getprofile()
    with contextlib.suppress(NameError):  # a copy runs without the lab's globals
        guard.wrap(fn)(CRASHED)
    assert guard.found and found in guard.found[0]
    assert sys.getprofile() is before and LAB(["unknown_tool"]) == "failed"
    assert guard.snapshot.changes() == []


def test_a_fair_function_is_called_as_it_is_and_passes_unseen(guard):
    wrapped = guard.wrap(fair)
    assert wrapped(PAUSED) == ["waiting_for_approval"]
    assert wrapped.__name__ == "fair" and wrapped.__wrapped__ is fair  # type: ignore[attr-defined]
    assert wrapped.__module__ == fair.__module__
    assert guard.found == []


def test_a_coroutine_function_stays_one(guard):
    async def collect(items: list[int]) -> list[int]:
        await asyncio.sleep(0)
        return items

    wrapped = guard.wrap(collect)
    assert inspect.iscoroutinefunction(wrapped)
    # a fresh loop in a thread of its own: another test in this worker may leave one running
    assert run_coroutine(wrapped([1]), virtual=False) == [1] and guard.found == []


def test_a_callable_instance_and_a_lambda_are_wrapped(guard):
    class Status:
        def __call__(self, events: list[Event]) -> list[str]:
            return fair(events)

    assert guard.wrap(Status())(ANSWERED) == ["completed"]
    assert guard.wrap(lambda events: fair(events))(CRASHED) == ["failed"]
    assert guard.found == []
