"""The exercise checks must discriminate: reasonable right answers pass, known-wrong ones fail."""

import json

import pytest

from keel_lab import ToolMessage, make_batches, run_status
from keel_lab.course.checks import (
    check,
    verify_answer_all,
    verify_is_executable,
    verify_make_batches,
    verify_pair_results,
    verify_run_status,
)

# --- answer_all ---


def answer_all_loop(calls, execute):
    out = []
    for c in calls:
        try:
            content = execute(c)
        except Exception as exc:
            content = f"Tool error: {exc}"
        out.append(ToolMessage(c.id, c.name, content))
    return out


def answer_all_dict(calls, execute):
    def one(c):
        try:
            return execute(c)
        except Exception as exc:
            return json.dumps({"ok": False, "error": type(exc).__name__, "message": str(exc)})
    return [ToolMessage(tool_call_id=c.id, name=c.name, content=one(c)) for c in calls]


def drops_failed(calls, execute):
    out = []
    for c in calls:
        try:
            out.append(ToolMessage(c.id, c.name, execute(c)))
        except Exception:
            continue
    return out


def swaps_ids(calls, execute):
    msgs = answer_all_loop(calls, execute)
    ids = [m.tool_call_id for m in msgs][::-1]
    return [ToolMessage(i, m.name, m.content) for i, m in zip(ids, msgs, strict=True)]


def stops_at_first_error(calls, execute):
    out = []
    for c in calls:
        try:
            out.append(ToolMessage(c.id, c.name, execute(c)))
        except Exception as exc:
            out.append(ToolMessage(c.id, c.name, str(exc)))
            break
    return out


def silent_errors(calls, execute):
    out = []
    for c in calls:
        try:
            out.append(ToolMessage(c.id, c.name, execute(c)))
        except Exception:
            out.append(ToolMessage(c.id, c.name, "error"))
    return out


# --- pair_results ---


def pair_by_table(calls, results):
    table = {r.call_id: r for r in results}
    return [(c, table.get(c.id)) for c in calls]


def pair_by_search(calls, results):
    return [[c, next((r for r in results if r.call_id == c.id), None)] for c in calls]


def pair_by_position(calls, results):
    return list(zip(calls, results, strict=False))


def pair_by_name(calls, results):
    return [(c, next((r for r in results if r.value == c.arguments), None)) for c in calls]


def pair_sorted(calls, results):  # sorts results by id: right only when ids sort like calls
    return list(zip(calls, sorted(results, key=lambda r: r.call_id), strict=False))

def test_passing_output_does_not_depend_on_the_implementation():
    assert str(verify_pair_results(pair_by_table)) == str(verify_pair_results(pair_by_search))


# --- make_batches ---


def grouped(requests, is_safe):
    out, current = [], []
    for r in requests:
        if is_safe(r):
            current.append(r)
            continue
        if current:
            out.append(current)
            current = []
        out.append([r])
    if current:
        out.append(current)
    return out


def batches_loop(requests, tools):
    def safe(r):
        t = tools.get(r.name)
        return t is not None and t.may_run_together
    return grouped(requests, safe)


def all_safe_together(requests, tools):  # ignores declarations
    return [list(requests)]


def safe_first(requests, tools):  # reorders: safe calls pulled ahead of a write
    def safe(r):
        t = tools.get(r.name)
        return bool(t and t.concurrency_safe)
    reads = [r for r in requests if safe(r)]
    return ([reads] if reads else []) + [[r] for r in requests if not safe(r)]


def ignores_approval(requests, tools):
    def safe(r):
        t = tools.get(r.name)
        return t is not None and (t.concurrency_safe or t.requires_approval)
    return grouped(requests, safe)


def one_by_one(requests, tools):
    return [[r] for r in requests]


# --- is_executable ---


def executable(view):
    if not view.closed or not view.id or not view.name:
        return False
    if view.arguments == "":  # a parameterless tool
        return True
    try:
        return isinstance(json.loads(view.arguments), dict)
    except json.JSONDecodeError:
        return False


def executable_terse(v):
    try:
        return bool(v.closed and v.id and v.name
                    and type(json.loads(v.arguments or "{}")) is dict)
    except ValueError:
        return False


def at_first_parse(view):
    try:
        return bool(view.id and view.name) and isinstance(json.loads(view.arguments), dict)
    except ValueError:
        return False


def json_only(view):
    """Right but for a parameterless tool: empty arguments are not JSON."""
    if not (view.closed and view.id and view.name):
        return False
    try:
        return isinstance(json.loads(view.arguments), dict)
    except ValueError:
        return False


def name_complete(view):
    return view.name == "lookup_incident"


def closed_only(view):
    return view.closed


def any_json(view):
    try:
        json.loads(view.arguments)
        return view.closed and bool(view.id and view.name)
    except ValueError:
        return False


# --- run_status ---

FATAL = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}


def status_sets(codes):
    if FATAL & set(codes):
        return "failed"
    return "waiting_for_approval" if "approval_required" in codes else "completed"


def status_loop(codes):
    status = "completed"
    for code in codes:
        if code in FATAL:
            return "failed"
        if code == "approval_required":
            status = "waiting_for_approval"
    return status


def fails_on_any_error(codes):
    return "failed" if any(codes) else "completed"


def approval_fails(codes):
    return "failed" if any(c in FATAL | {"approval_required"} for c in codes) else "completed"


def ignores_errors(codes):
    return "completed"


def timeout_fatal(codes):
    return "failed" if any(c in FATAL | {"tool_timeout"} for c in codes) else status_sets(codes)


# --- every exercise: the right answers pass, each wrong one fails with its hint ---

RIGHT = [
    (verify_answer_all, answer_all_loop),
    (verify_answer_all, answer_all_dict),
    (verify_pair_results, pair_by_table),
    (verify_pair_results, pair_by_search),
    (verify_make_batches, batches_loop),
    (verify_make_batches, make_batches),
    (verify_is_executable, executable),
    (verify_is_executable, executable_terse),
    (verify_run_status, status_sets),
    (verify_run_status, status_loop),
    (verify_run_status, run_status),
]

WRONG = [
    (verify_answer_all, drops_failed, "did not have response messages: call_x, call_y"),
    (verify_answer_all, swaps_ids, "carry another call's result"),
    (verify_answer_all, stops_at_first_error, "did not have response messages: call_y, call_z"),
    (verify_answer_all, silent_errors, "should say what went wrong"),
    (verify_pair_results, pair_by_position, "was paired with the result of"),
    (verify_pair_results, pair_by_name, "a skipped call"),
    (verify_pair_results, pair_sorted, "a skipped call"),
    (verify_make_batches, all_safe_together, "must run alone"),
    (verify_make_batches, safe_first, "every call exactly once, in request order"),
    (verify_make_batches, ignores_approval, "restart_service) shares a batch"),
    (verify_make_batches, one_by_one, "consecutive safe calls should share one batch"),
    (verify_is_executable, at_first_parse, "the stream has not closed this call yet"),
    (verify_is_executable, name_complete, "the stream has not closed this call yet"),
    (verify_is_executable, closed_only, "arguments are not valid JSON"),
    (verify_is_executable, any_json, "arguments must be a JSON object"),
    (verify_is_executable, json_only, 'a parameterless tool: arguments "" or {}, chunk 3'),
    (verify_run_status, fails_on_any_error,
     "a business error beside a success [None, 'incident_not_found']: expected 'completed'"),
    (verify_run_status, approval_fails, "expected 'waiting_for_approval', got 'failed'"),
    (verify_run_status, ignores_errors, "expected 'failed', got 'completed'"),
    (verify_run_status, timeout_fatal, "a timeout, which the model can explain"),
]


@pytest.mark.parametrize(("verify", "fn"), RIGHT, ids=lambda x: x.__name__)
def test_right_answers_pass(verify, fn):
    assert verify(fn).passed


@pytest.mark.parametrize(("verify", "fn", "hint"), WRONG,
                         ids=lambda x: getattr(x, "__name__", "hint"))
def test_wrong_answers_fail_with_a_hint(verify, fn, hint):
    verdict = verify(fn)
    assert not verdict.passed and hint in str(verdict)


def test_unimplemented_exercises_say_so(capsys):
    def todo(*args):
        raise NotImplementedError

    for name in ("answer_all", "pair_results", "make_batches", "is_executable",
                 "run_status"):
        todo.__name__ = name
        check(todo)
    out = capsys.readouterr().out
    assert out.count("not implemented yet") == 5
    assert out.count("NOT YET (0/1 checks)") == 5


def test_check_prints_the_verdict_and_returns_nothing(capsys):
    assert check(run_status) is None
    assert capsys.readouterr().out.endswith("run_status: PASSED (11/11 checks)\n")


def test_check_names_the_exercises_for_an_unknown_function(capsys):
    def pair(calls, results):
        return []
    check(pair)
    assert capsys.readouterr().out == (
        "no exercise is called 'pair'; exercises: answer_all, pair_results, make_batches, "
        "is_executable, run_status\n")
