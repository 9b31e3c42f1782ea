"""The exercise checks must discriminate: reasonable right answers pass, known-wrong ones fail."""

import json

import pytest

from keel_lab import ToolMessage, make_batches, run_status
from keel_lab.checks import (
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


@pytest.mark.parametrize("fn", [answer_all_loop, answer_all_dict])
def test_answer_all_right(fn):
    assert verify_answer_all(fn).passed


@pytest.mark.parametrize(("fn", "hint"), [
    (drops_failed, "did not have response messages: call_x, call_y"),
    (swaps_ids, "carry another call's result"),
    (stops_at_first_error, "did not have response messages: call_y, call_z"),
    (silent_errors, "should say what went wrong"),
])
def test_answer_all_wrong(fn, hint):
    verdict = verify_answer_all(fn)
    assert not verdict.passed and hint in str(verdict)


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


@pytest.mark.parametrize("fn", [pair_by_table, pair_by_search])
def test_pair_results_right(fn):
    out = str(verify_pair_results(fn))
    assert "positional pairing was wrong in" in out and "right in all 10 runs" in out
    assert out.endswith("pair_results: PASSED (3/3 checks)")


@pytest.mark.parametrize(("fn", "hint"), [
    (pair_by_position, "was paired with the result of"),
    (pair_by_name, "a skipped call"),
    (pair_sorted, "a skipped call"),
])
def test_pair_results_wrong(fn, hint):
    verdict = verify_pair_results(fn)
    assert not verdict.passed and hint in str(verdict)


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
        return t is not None and t.concurrency_safe and not t.requires_approval
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


@pytest.mark.parametrize("fn", [batches_loop, make_batches])
def test_make_batches_right(fn):
    assert verify_make_batches(fn).passed


@pytest.mark.parametrize(("fn", "hint"), [
    (all_safe_together, "must run alone"),
    (safe_first, "every call exactly once, in request order"),
    (ignores_approval, "restart_service) shares a batch"),
    (one_by_one, "consecutive safe calls should share one batch"),
])
def test_make_batches_wrong(fn, hint):
    verdict = verify_make_batches(fn)
    assert not verdict.passed and hint in str(verdict)


# --- is_executable ---


def executable(view):
    if not view.closed or not view.id or not view.name:
        return False
    try:
        return isinstance(json.loads(view.arguments), dict)
    except json.JSONDecodeError:
        return False


def executable_terse(v):
    try:
        return bool(v.closed and v.id and v.name and type(json.loads(v.arguments)) is dict)
    except ValueError:
        return False


def at_first_parse(view):
    try:
        return bool(view.id and view.name) and isinstance(json.loads(view.arguments), dict)
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


@pytest.mark.parametrize("fn", [executable, executable_terse])
def test_is_executable_right(fn):
    assert verify_is_executable(fn).passed


@pytest.mark.parametrize(("fn", "hint"), [
    (at_first_parse, "the stream has not closed this call yet"),
    (name_complete, "the stream has not closed this call yet"),
    (closed_only, "its arguments are not valid JSON"),
    (any_json, "its arguments must be a JSON object"),
])
def test_is_executable_wrong(fn, hint):
    verdict = verify_is_executable(fn)
    assert not verdict.passed and hint in str(verdict)


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


@pytest.mark.parametrize("fn", [status_sets, status_loop, run_status])
def test_run_status_right(fn):
    assert verify_run_status(fn).passed


@pytest.mark.parametrize(("fn", "hint"), [
    (fails_on_any_error, "a business error beside a success [None, 'incident_not_found']: "
                         "expected 'completed', got 'failed'"),
    (approval_fails, "expected 'waiting_for_approval', got 'failed'"),
    (ignores_errors, "expected 'failed', got 'completed'"),
    (timeout_fatal, "a timeout, which the model can explain"),
])
def test_run_status_wrong(fn, hint):
    verdict = verify_run_status(fn)
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
