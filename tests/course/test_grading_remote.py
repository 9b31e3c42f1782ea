"""The grader's verdict is the notebook's: every answer of the checks' tables (wrong and right),
judged by the grader across the process boundary (`Remote`, `serve`, plain data both ways), gets
the verdict and the first hint that the check gives it in one process.

The two sides run here in two threads over real pipes, with the child's own `offer` (its watch
and its snapshot) and the grader's own `judged`; the sandbox tests run them as processes."""

from __future__ import annotations

import os
import re
import threading
from copy import deepcopy
from pathlib import Path
from types import FunctionType, SimpleNamespace
from typing import Any

import pytest

from keel_checks.check import VERIFIERS
from keel_checks.verdict import Verdict
from keel_course.checkout import Checkout
from keel_course.grading.child import Channel, offer
from keel_course.grading.integrity import Snapshot, import_lab
from keel_course.grading.plain import Foreign, from_plain, to_plain
from keel_course.grading.remote import Requests, judged, verify
from keel_course.grading.sandbox import _Link
from keel_course.guide import fresh, wrong_answers
from keel_lab._core.protocol import ToolCall

pytestmark = pytest.mark.lab_wide

TABLES = Path(__file__).resolve().parents[1] / "lab"
RIGHT = {"answer_all": "ANSWER_ALL_RIGHT", "make_batches": "BATCH_RIGHT",
         "is_executable": "EXECUTABLE_RIGHT"}
SEED = 20_26
# answers that block or poll real time: what they do depends on how fast the machine runs them
REAL_TIME = {"blocks_with_time_sleep", "polls_the_wall_clock"}


def answers() -> list[Any]:
    out = []
    for exercise, (module, table) in wrong_answers(Checkout.at(TABLES.parents[1])).items():
        loaded = fresh(TABLES, module)
        right = getattr(loaded, RIGHT.get(exercise, "RIGHT"), [])
        for fn in [*(fn for fn, _ in getattr(loaded, table)), *right]:
            out.append(pytest.param(exercise, fn, id=f"{exercise}-{fn.__name__}"))
    return out


def named(fn: Any, name: str) -> Any:
    """The answer as a learner writes it: a function called like the exercise."""
    if not isinstance(fn, FunctionType):
        return fn
    copy = FunctionType(fn.__code__, fn.__globals__, name, deepcopy(fn.__defaults__),
                        fn.__closure__)  # its own defaults: an answer that keeps state in one
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy


def across(name: str, fn: Any) -> tuple[bool, str | None]:
    """`judged` in this thread, `offer` in another, over two pipes."""
    import_lab()
    from_grader, to_child = os.pipe()
    from_child, to_grader = os.pipe()
    channel = Channel(to_grader)
    child = threading.Thread(target=offer, args=(
        name, {name: fn}, [], Snapshot(), channel, Requests(from_grader, channel.send)))
    child.start()
    proc = SimpleNamespace(stdin=os.fdopen(to_child, "wb"), stdout=os.fdopen(from_child, "rb"),
                           poll=lambda: None)
    try:
        link = _Link(proc, float("inf"), 0)  # type: ignore[arg-type]
        verdict = judged(name, link.message(), link, SEED, {})
        link.send(("done",))
        child.join(30)
    finally:
        proc.stdin.close()
        proc.stdout.close()
        for fd in (from_grader, to_grader):
            os.close(fd)
    return verdict


@pytest.mark.parametrize(("exercise", "fn"), answers())
def test_the_grader_gives_every_answer_the_checks_verdict(exercise, fn):
    remote = named(fn, exercise)  # before the check here changes what its defaults hold
    here = verify(VERIFIERS[exercise], Verdict, fn, drawn_from=SEED)
    there = across(exercise, remote)
    if there.hint and " is a copy of keel_lab's " in there.hint:  # the lab's own code: the
        assert not here.passed and (there.passed, there.points) == (False, 0)  # grader alone
        return  # refuses it (docs/grading.md, Copies), a wrong answer here
    if exercise == "count_in_order":  # an answer that ignores its seed counts anew each time
        here, there = (tuple(re.sub(r"\d+", "N", str(x)) for x in v) for v in (here, there))
    if fn.__name__ in REAL_TIME:
        here, there = here[:1], there[:1]
    assert there == here


def test_plain_data_keeps_values_and_never_a_pretender():
    class Always(str):
        def __eq__(self, other):
            return True

        __hash__ = str.__hash__

    call = ToolCall("call_1", "search_logs", "{\"q\": \"x\"}")
    value = [call, (1, 2.5, None), {"a": {1, 2}}, float("inf"), True]
    assert from_plain(to_plain(value)) == value
    pretender = from_plain(to_plain(Always("call_1")))
    assert isinstance(pretender, Foreign) and type(pretender).__name__ == "Always"
    assert pretender != "call_1" and repr(pretender) == "'call_1'"
    assert list(from_plain(to_plain(x for x in (1, 2)))) == [1, 2]
