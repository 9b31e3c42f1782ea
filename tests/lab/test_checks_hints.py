"""Hints never go silent: a function that returns None - always, or on one branch only - gets a
line saying so with the input it was given, and every exercise reports the same number of
checks whatever the answer (a check not reached is shown as not tried)."""

import asyncio
import itertools
import json
import types

import pytest
from test_checks import answer_all_loop, batches_loop, executable
from test_checks_accumulate import with_a_dict
from test_checks_calls_to_resume import by_call_id
from test_checks_capstone import with_gather as loop_with_gather
from test_checks_collect_batch import with_gather
from test_checks_count_in_order import lesson_style
from test_checks_pair_results import pair_by_table
from test_checks_providers import answer_responses
from test_checks_read_turn import with_wait_for
from test_checks_status_history import with_a_loop

from keel_checks import VERIFIERS, check
from keel_checks.verdict import NOT_TRIED, ExerciseNotPassed, Verdict
from keel_lab import ToolMessage

pytestmark = pytest.mark.lab_wide

NONE = "your function returned None - is a `return` missing?"


def named(fn, name):
    """A copy of `fn` under the exercise's name, as a learner's cell defines it."""
    return types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__,
                              fn.__closure__)


# --- one answer per exercise that returns None on one branch only ---


def answer_all_gives_up_on_a_failure(tool_calls, execute):
    try:
        return [ToolMessage(c.id, c.name, execute(c)) for c in tool_calls]
    except Exception:
        pass


def count_skips_one_call(trials, calls, seed):
    if calls > 1:
        return lesson_style(trials, calls, seed)


def pair_only_when_complete(calls, results):
    if len(results) == len(calls):
        return pair_by_table(calls, results)


def batches_stop_at_an_unknown_tool(requests, tools):
    for r in requests:
        if tools.get(r.name) is None:
            return
    return batches_loop(requests, tools)


def executable_when_closed(call):
    if call.closed:
        return executable(call)


def history_without_completed(events):
    statuses = with_a_loop(events)
    if statuses != ["completed"]:
        return statuses


async def collect_two_or_more(batch, run):
    if len(batch) > 1:
        return await with_gather(batch, run)


def resume_unless_all_done(events, idempotent):
    run, ask = by_call_id(events, idempotent)
    if run or ask:
        return run, ask


def accumulate_without_text(events):
    if not any(type(e).__name__ == "TextDelta" for e in events):
        return with_a_dict(events)


async def read_until_a_stall(stream, timeout):
    got = await with_wait_for(stream, timeout)
    if got.finish_reason:
        return got


def responses_after_reasoning(output, run):
    if output[0]["type"] == "reasoning":
        return answer_responses(output, run)


async def loop_unless_cancelled(model, tools, question):
    messages, status = await loop_with_gather(model, tools, question)
    if status != "cancelled":
        return messages, status


ONE_BRANCH = {
    "answer_all": (answer_all_gives_up_on_a_failure,
                   'a business error and a crash beside a success [lookup_incident '
                   '{"incident_id": "INC-999"}, search_logs {"service": "billing"}, '
                   'lookup_incident {"incident_id": "INC-003"}]: ' + NONE),
    "count_in_order": (count_skips_one_call, "count_in_order(50, 1, 0): " + NONE),
    "pair_results": (pair_only_when_complete, "a call the policy skipped (calls ['"),
    "make_batches": (batches_stop_at_an_unknown_tool, "requests [call-0=lookup_runbook, "),
    "is_executable": (executable_when_closed,
                      "one call, fragment by fragment, chunk 1, call 0 (id "
                      "'run-629fd82c07cd:step-0:call-0', name 'l', arguments '', closed "
                      "False): " + NONE),
    "status_history": (history_without_completed, "one lookup, answered [model.called, "
                                                   "tool.requested, tool.finished, model.called]: "
                       + NONE),
    "collect_batch": (collect_two_or_more, "batch 0 (1 call: call_"),
    "answer_responses": (responses_after_reasoning, "[function_call "),
    "calls_to_resume": (resume_unless_all_done,
                        "every call finished, the model not called again yet (return two "
                        "empty lists when no call is left): " + NONE),
    "accumulate": (accumulate_without_text,
                   "text deltas before, between and after the calls: " + NONE),
    "read_turn": (read_until_a_stall, "a stall before any event: stopped after 2 s of "
                                      "silence, nothing to run: " + NONE),
    "agent_loop": (loop_unless_cancelled, "a note, cancelled after its last fragment: " + NONE),
}


def reference(name):
    return named({"answer_all": answer_all_loop, "count_in_order": lesson_style,
                  "pair_results": pair_by_table, "make_batches": batches_loop,
                  "is_executable": executable, "status_history": with_a_loop,
                  "collect_batch": with_gather, "answer_responses": answer_responses,
                  "calls_to_resume": by_call_id, "accumulate": with_a_dict,
                  "read_turn": with_wait_for, "agent_loop": loop_with_gather}[name],
                 name)


ASYNC = ("collect_batch", "read_turn", "agent_loop")  # the exercises the lab awaits


def always_none(name):
    if name in ASYNC:
        async def answer(*args):
            await asyncio.sleep(0)
    else:
        def answer(*args):
            [arg for arg in args]  # works, but forgets to return
    return named(answer, name)


def stub(name):
    def answer(*args):
        raise NotImplementedError
    return named(answer, name)


def wrong(name):
    """A plausible wrong answer: right on the first input, then a wrong kind of value."""
    right = reference(name)
    calls = itertools.count()
    if name in ASYNC:
        async def answer(*args):
            got = await right(*args)
            return got if next(calls) < 1 else got[:-1]
    else:
        def answer(*args):
            got = right(*args)
            return got if next(calls) < 1 else {"wrong": True}
    return named(answer, name)


@pytest.mark.parametrize("name", list(VERIFIERS))
def test_an_answer_that_always_returns_none_is_told_so(name):
    verdict = VERIFIERS[name](always_none(name))
    assert not verdict.passed
    assert verdict.hints[0].endswith(NONE), verdict.hints[0]
    failed = next(n for n, (ok, _) in enumerate(verdict.results) if not ok)
    assert verdict.lines()[failed + 1:-1] == [f"[----] {label}: {NOT_TRIED}"
                                              for label in verdict.checks[failed + 1:]]


@pytest.mark.parametrize("name", list(VERIFIERS))
def test_an_answer_that_returns_none_on_one_branch_is_told_so_with_that_input(name):
    fn, hint = ONE_BRANCH[name]
    verdict = VERIFIERS[name](named(fn, name))
    assert not verdict.passed
    assert len(verdict.hints) == 1, verdict.hints
    assert hint in verdict.hints[0] and verdict.hints[0].endswith(NONE), verdict.hints[0]


def test_a_hint_on_a_case_shows_that_cases_input():
    hints = {name: VERIFIERS[name](named(fn, name)).hints[0]
             for name, (fn, _) in ONE_BRANCH.items()}
    assert "requests [call-0=" in hints["make_batches"]
    assert "results of calls [" in hints["pair_results"]
    assert " 500 ms)" in hints["collect_batch"]
    assert "[reasoning, " not in hints["answer_responses"].split(":")[0]


def test_none_inside_the_real_run_is_told_so_with_its_input():
    """Right on every case, None only once the lab's runner calls it: the check still says so."""
    right = reference("collect_batch")

    async def answer(batch, run):
        if batch[0].call_id.startswith("call_"):  # only the check's own ids
            return await right(batch, run)
    verdict = VERIFIERS["collect_batch"](named(answer, "collect_batch"))
    assert len(verdict.hints) == 1 and verdict.lines()[-2].startswith("[FAIL] a real run")
    assert verdict.hints[0].startswith("a real run, given the batch ['run-"), verdict.hints[0]
    assert verdict.hints[0].endswith(NONE)


@pytest.mark.parametrize("name", list(VERIFIERS))
def test_every_answer_reports_the_same_number_of_checks(name):
    verdicts = [VERIFIERS[name](make(name))
                for make in (reference, wrong, stub, always_none)]
    verdicts.append(VERIFIERS[name](named(ONE_BRANCH[name][0], name)))
    assert verdicts[0].passed and not any(v.passed for v in verdicts[1:])
    n = len(verdicts[0].checks)
    for v in verdicts:
        assert v.total == n and len(v.lines()) == n + 1, str(v)
        assert v.lines()[-1].endswith(f"/{n} checks)")


def test_not_tried_checks_count_as_not_passed():
    v = Verdict("x", ["first", "second", "third"])
    v.add(True, "first: fine", "")
    assert not v.passed
    v.add(False, "", "second: wrong")
    assert v.lines() == ["[pass] first: fine", "[FAIL] second: wrong",
                         f"[----] third: {NOT_TRIED}", "x: NOT YET (1/3 checks)"]
    assert v.hints == ["second: wrong"]


def test_check_prints_the_not_tried_checks_and_raises_only_the_hints(capsys, raising):
    with pytest.raises(ExerciseNotPassed) as failure:
        check(named(count_skips_one_call, "count_in_order"))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "[pass] a count from 0 to trials, on the virtual clock"
    assert out[1].startswith("[FAIL] count_in_order(50, 1, 0): ")
    assert [line.split("] ")[0] for line in out[2:-1]] == ["[----"] * 4
    assert out[-1] == "count_in_order: NOT YET (1/6 checks)"
    assert NOT_TRIED not in str(failure.value)


def test_a_tool_failure_that_escapes_is_explained_without_naming_its_class():
    """Chapter 1 imports no exception class: the hint leads to `except Exception`."""
    def answer_all(tool_calls, execute):
        return [ToolMessage(c.id, c.name, execute(c)) for c in tool_calls]

    hint = VERIFIERS["answer_all"](answer_all).hints[0]
    assert "execute(call) raised it for toolu_01Wd8fKq2NzR5vXy7TbLmJ3h" in hint
    assert "except Exception as exc:" in hint and "except ToolError" not in hint


def test_a_helper_without_return_is_named_in_the_hint():
    def answer_all(tool_calls, execute):
        def one(call):
            ToolMessage(call.id, call.name, json.dumps({"result": execute(call)}))
        return [one(c) for c in tool_calls]

    assert "returned None (a helper without `return`?) where a ToolMessage belongs" in \
        VERIFIERS["answer_all"](answer_all).hints[0]


def _nothing(*args):
    """A helper that forgets its `return`."""


@pytest.mark.parametrize(("name", "answer", "hint"), [
    ("pair_results", lambda calls, results: [_nothing(c) for c in calls],
     "pair 0 is None (a helper without `return`?)"),
    ("make_batches", lambda requests, tools: [_nothing(r) for r in requests],
     "batch 0 is None (a helper without `return`?)"),
    ("answer_responses", lambda output, run: [_nothing(i) for i in output],
     "each input item is a dict, got None (a helper without `return`?)"),
], ids=["pair_results", "make_batches", "answer_responses"])
def test_a_helper_without_return_is_named_in_every_exercise_returning_a_list(name, answer, hint):
    verdict = VERIFIERS[name](answer)
    assert hint in verdict.hints[0] and len(verdict.lines()) == len(verdict.checks) + 1
