"""The exercise checks must discriminate: right answers in any style pass, each known-wrong
answer fails with the hint that names its mistake. One table per exercise."""

import functools
import itertools
import json

import pytest
from test_checks_status_history import with_a_loop

import keel_lab
from keel_checks import ExerciseNotPassed, check
from keel_checks.batching import verify_make_batches
from keel_checks.delegation import references, watched
from keel_checks.history import verify_answer_all
from keel_checks.streaming import verify_is_executable
from keel_checks.verdict import Delegated
from keel_lab import ToolMessage, make_batches, run_status

pytestmark = pytest.mark.lab_wide

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


def answer_all_envelope(calls, execute):  # its own JSON envelope, errors named by type only
    def one(c):
        try:
            return json.dumps({"ok": True, "result": execute(c)})
        except Exception as exc:
            return json.dumps({"ok": False, "kind": type(exc).__name__})
    return [ToolMessage(tool_call_id=c.id, name=c.name, content=one(c)) for c in calls]


def answer_all_generator(calls, execute):  # a generator, parsed results re-wrapped
    for c in calls:
        try:
            body = {"data": json.loads(execute(c))}
        except Exception as exc:
            body = {"failed": getattr(exc, "code", str(exc))}
        yield ToolMessage(c.id, c.name, json.dumps(body))


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


def silent_errors(calls, execute):
    out = []
    for c in calls:
        try:
            out.append(ToolMessage(c.id, c.name, execute(c)))
        except Exception:
            out.append(ToolMessage(c.id, c.name, "error"))
    return out


def reversed_order(calls, execute):
    return answer_all_loop(calls, execute)[::-1]


def executes_twice(calls, execute):  # "checks" a call first: its side effects happen twice
    out = []
    for c in calls:
        try:
            execute(c)
            out.append(ToolMessage(c.id, c.name, execute(c)))
        except Exception as exc:
            out.append(ToolMessage(c.id, c.name, str(exc)))
    return out


def returns_dicts(calls, execute):
    return [{"role": "tool", "tool_call_id": c.id, "content": execute(c)} for c in calls]


def lets_errors_escape(calls, execute):
    return [ToolMessage(c.id, c.name, execute(c)) for c in calls]


def forgets_return(calls, execute):
    [ToolMessage(c.id, c.name, "x") for c in calls]


def content_as_dict(calls, execute):  # found by a reviewer: the check used to crash on it
    out = []
    for c in calls:
        try:
            content = {"result": execute(c)}
        except Exception as exc:
            content = {"error": str(exc)}
        out.append(ToolMessage(c.id, c.name, content))
    return out


ANSWER_ALL_RIGHT = [answer_all_loop, answer_all_envelope, answer_all_generator]

# --- a tester's answers who had not read the check (issue 22) ---


def skips_failures(tool_calls, execute):
    messages = []
    for call in tool_calls:
        try:
            messages.append(ToolMessage(call.id, call.name, execute(call)))
        except Exception:
            continue
    return messages


def exception_object_as_content(tool_calls, execute):
    messages = []
    for call in tool_calls:
        try:
            content = execute(call)
        except Exception as exc:
            content = exc
        messages.append(ToolMessage(call.id, call.name, content))
    return messages


def executes_twice_fresh(tool_calls, execute):
    messages = []
    for call in tool_calls:
        try:
            execute(call)  # see whether it raises
            content = execute(call)
        except Exception as exc:
            content = f"error: {exc}"
        messages.append(ToolMessage(call.id, call.name, content))
    return messages


def catches_only_business_errors(tool_calls, execute):
    messages = []
    for call in tool_calls:
        try:
            content = execute(call)
        except (KeyError, ValueError, LookupError) as exc:
            content = json.dumps({"error": getattr(exc, "code", None) or str(exc)})
        messages.append(ToolMessage(call.id, call.name, content))
    return messages


def name_as_call_id(tool_calls, execute):
    messages = []
    for call in tool_calls:
        try:
            content = execute(call)
        except Exception as exc:
            content = json.dumps({"error": f"{type(exc).__name__}: {exc}"})
        messages.append(ToolMessage(call.name, call.name, content))
    return messages


def empty_content_on_failure(tool_calls, execute):
    messages = []
    for call in tool_calls:
        try:
            content = execute(call)
        except Exception:
            content = ""
        messages.append(ToolMessage(call.id, call.name, content))
    return messages


def returns_dict_by_id(tool_calls, execute):
    answers = {}
    for call in tool_calls:
        try:
            answers[call.id] = execute(call)
        except Exception as exc:
            answers[call.id] = f"{type(exc).__name__}: {exc}"
    return answers


def sorted_by_tool_name(tool_calls, execute):
    messages = []
    for call in sorted(tool_calls, key=lambda c: c.name):
        try:
            content = execute(call)
        except Exception as exc:
            content = json.dumps({"error": f"{type(exc).__name__}: {exc}"})
        messages.append(ToolMessage(call.id, call.name, content))
    return messages


def generic_error_text(tool_calls, execute):
    messages = []
    for call in tool_calls:
        try:
            content = execute(call)
        except Exception:
            content = "the tool failed"
        messages.append(ToolMessage(call.id, call.name, content))
    return messages


def parsed_dict_content(tool_calls, execute):
    messages = []
    for call in tool_calls:
        try:
            content = json.loads(execute(call))
        except Exception as exc:
            content = {"error": str(exc)}
        messages.append(ToolMessage(call.id, call.name, content))
    return messages


def stops_at_first_failure(tool_calls, execute):
    messages = []
    for call in tool_calls:
        try:
            content = execute(call)
        except Exception as exc:
            messages.append(ToolMessage(call.id, call.name, f"error: {exc}"))
            break
        messages.append(ToolMessage(call.id, call.name, content))
    return messages


def swapped_fields(tool_calls, execute):
    messages = []
    for call in tool_calls:
        try:
            content = execute(call)
        except Exception as exc:
            content = f"{type(exc).__name__}: {exc}"
        messages.append(ToolMessage(call.name, call.id, content))
    return messages


def pops_callers_list(tool_calls, execute):
    messages = []
    while tool_calls:
        call = tool_calls.pop(0)
        try:
            content = execute(call)
        except Exception as exc:
            content = f"{type(exc).__name__}: {exc}"
        messages.append(ToolMessage(call.id, call.name, content))
    return messages


def prints_messages(tool_calls, execute):
    for call in tool_calls:
        try:
            content = execute(call)
        except Exception as exc:
            content = f"{type(exc).__name__}: {exc}"
        print(ToolMessage(call.id, call.name, content))


def cache_by_tool_name(tool_calls, execute):
    cache = {}
    messages = []
    for call in tool_calls:
        if call.name not in cache:
            try:
                cache[call.name] = execute(call)
            except Exception as exc:
                cache[call.name] = f"{type(exc).__name__}: {exc}"
        messages.append(ToolMessage(call.id, call.name, cache[call.name]))
    return messages


def error_only_code(tool_calls, execute):
    messages = []
    for call in tool_calls:
        try:
            content = execute(call)
        except Exception as exc:
            content = json.dumps({"error": getattr(exc, "code", None)})
        messages.append(ToolMessage(call.id, call.name, content))
    return messages


ANSWER_ALL_WRONG = [
    (content_as_dict, "a tool message carries text"),
    (drops_failed, "did not have response messages: toolu_01Wd8fKq2NzR5vXy7TbLmJ3h"),
    (swaps_ids, "call_Qm4TzX8bLw2RkN7dYp0sJv1c's message carries the result of "
                "call_L0pSn7JdYb4CtRw8EaVk1XgF"),
    (silent_errors, "message 'error' does not say what went wrong"),
    (reversed_order, "the messages answer the calls in another order"),
    (executes_twice, "call_Qm4TzX8bLw2RkN7dYp0sJv1c was executed 2 times"),
    (returns_dicts, "returned a dict where a ToolMessage belongs"),
    (lets_errors_escape, "your function raised ToolError: there is no incident INC-999 at line"),
    (forgets_return, "returned None - is a `return` missing?"),
    (skips_failures, "tool_call_ids did not have response messages: "
                     "toolu_01Wd8fKq2NzR5vXy7TbLmJ3h, toolu_01Ab6PcE9sGu1YoHn4VxQw2D"),
    (exception_object_as_content, "message is a ToolError: a tool message carries text - "
                                  "json.dumps(...) a structure you want to send"),
    (executes_twice_fresh, "was executed 2 times: run each call exactly once (a second run "
                           "repeats its side effects)"),
    (catches_only_business_errors, "any failure with `try: ... except Exception as exc:` and "
                                   "answer that call with what went wrong, e.g. str(exc)"),
    (name_as_call_id, "messages: call_Qm4TzX8bLw2RkN7dYp0sJv1c, call_3HfGvA9eUo6WiKc2MxZr5TqB, "
                      "call_L0pSn7JdYb4CtRw8EaVk1XgF"),
    (empty_content_on_failure, "(str(exc): 'log index for billing is unreachable') or its type "
                               "(type(exc).__name__: 'ConnectionError')"),
    (returns_dict_by_id, "get_service_status {\"service\": \"auth-api\"}]: your function "
                         "returned a dict, expected a list of ToolMessage"),
    (sorted_by_tool_name, "the exercise asks for the calls' order, so the history reads like "
                          "the request"),
    (generic_error_text, "(str(exc): 'log index for billing is unreachable') or its type "
                         "(type(exc).__name__: 'ConnectionError')"),
    (parsed_dict_content, "message is a dict: a tool message carries text - json.dumps(...) a "
                          "structure you want to send"),
    (stops_at_first_failure, "tool_call_ids did not have response messages: "
                             "toolu_01Ab6PcE9sGu1YoHn4VxQw2D, toolu_01Kt3MiZ5jRe8LfWb0CsNy7U"),
    (swapped_fields, "messages: call_Qm4TzX8bLw2RkN7dYp0sJv1c, call_3HfGvA9eUo6WiKc2MxZr5TqB, "
                     "call_L0pSn7JdYb4CtRw8EaVk1XgF"),
    (pops_callers_list, "read it, do not change it - the caller's history still needs its calls"),
    (prints_messages, "\"INC-002\"}, get_service_status {\"service\": \"auth-api\"}]: your "
                      "function returned None - is a `return` missing?"),
    (cache_by_tool_name, "was executed 0 times: run each call exactly once (execute(call) is "
                         "what runs it)"),
    (error_only_code, "does not say what went wrong: include the exception's message"),
]


@pytest.mark.parametrize("fn", ANSWER_ALL_RIGHT, ids=lambda f: f.__name__)
def test_answer_all_right(fn):
    assert verify_answer_all(fn).passed


@pytest.mark.parametrize(("fn", "hint"), ANSWER_ALL_WRONG, ids=lambda x: getattr(x, "__name__", ""))
def test_answer_all_wrong(fn, hint):
    verdict = verify_answer_all(fn)
    assert not verdict.passed and hint in verdict.hints[0]


def test_an_exception_is_shown_at_its_line_in_the_learners_code():
    hint = verify_answer_all(lets_errors_escape).hints[0]
    assert (": return [ToolMessage(c.id, c.name, execute(c)) for c in calls] - execute(call) "
            "raised it for toolu_01Wd8fKq2NzR5vXy7TbLmJ3h") in hint


# --- pair_results: tests/lab/test_checks_pair_results.py ---


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


def batches_generator(requests, tools):  # a generator of tuples, written with may_run_together
    batch = ()
    for r in requests:
        tool = tools.get(r.name)
        if tool and tool.may_run_together:
            batch += (r,)
            continue
        if batch:
            yield batch
        batch = ()
        yield (r,)
    if batch:
        yield batch


def all_safe_together(requests, tools):  # ignores declarations
    return [list(requests)]


def safe_first(requests, tools):  # reorders: safe calls pulled ahead of a write
    def safe(r):
        t = tools.get(r.name)
        return bool(t and t.concurrency_safe and not t.requires_approval)
    reads = [r for r in requests if safe(r)]
    return ([reads] if reads else []) + [[r] for r in requests if not safe(r)]


def concurrency_only(requests, tools):  # forgets that an approval-gated tool runs alone
    return grouped(requests, lambda r: bool(tools.get(r.name) and
                                            tools.get(r.name).concurrency_safe))


def one_by_one(requests, tools):
    return [[r] for r in requests]


def batch_ids(requests, tools):
    return [[r.call_id for r in b] for b in batches_loop(requests, tools)]


def flat(requests, tools):
    return list(requests)


PAIRS_OF_LAB = make_batches


def lab_alias(requests, tools):
    return PAIRS_OF_LAB(requests, tools)


def batches_consuming(requests, tools):  # right batches, but it empties its input
    out, together = [], False
    while requests:
        r = requests.pop(0)
        t = tools.get(r.name)
        safe = t is not None and t.may_run_together
        if safe and together:
            out[-1].append(r)
        else:
            out.append([r])
        together = safe
    return out


def batches_groupby(requests, tools):  # runs of equal verdicts, the safe runs kept whole
    def shares(r):
        tool = tools.get(r.name)
        return tool is not None and tool.concurrency_safe and not tool.requires_approval
    out = []
    for together, run in itertools.groupby(requests, key=shares):
        calls = list(run)
        out += [calls] if together else [[r] for r in calls]
    return out


BATCH_RIGHT = [batches_loop, batches_generator, batches_groupby]

# --- a tester's answers who had not read the check (issue 22) ---


def all_safe_together_fresh(requests, tools):
    safe, alone = [], []
    for r in requests:
        tool = tools.get(r.name)
        if tool is not None and tool.concurrency_safe and not tool.requires_approval:
            safe.append(r)
        else:
            alone.append([r])
    return ([safe] if safe else []) + alone


def ignores_approval(requests, tools):
    batches, prev = [], False
    for r in requests:
        tool = tools.get(r.name)
        safe = tool is not None and tool.concurrency_safe
        if safe and prev:
            batches[-1].append(r)
        else:
            batches.append([r])
        prev = safe
    return batches


def unknown_tool_crashes(requests, tools):
    batches, prev = [], False
    for r in requests:
        tool = tools.get(r.name)
        safe = tool.concurrency_safe and not tool.requires_approval
        if safe and prev:
            batches[-1].append(r)
        else:
            batches.append([r])
        prev = safe
    return batches


def unknown_tool_is_safe(requests, tools):
    batches, prev = [], False
    for r in requests:
        tool = tools.get(r.name)
        safe = (getattr(tool, "concurrency_safe", True)
                and not getattr(tool, "requires_approval", False))
        if safe and prev:
            batches[-1].append(r)
        else:
            batches.append([r])
        prev = safe
    return batches


def names_not_requests(requests, tools):
    batches, prev = [], False
    for r in requests:
        tool = tools.get(r.name)
        safe = tool is not None and tool.concurrency_safe and not tool.requires_approval
        if safe and prev:
            batches[-1].append(r.name)
        else:
            batches.append([r.name])
        prev = safe
    return batches


def lone_call_not_in_list(requests, tools):
    batches, current = [], []
    for r in requests:
        tool = tools.get(r.name)
        if tool is not None and tool.concurrency_safe and not tool.requires_approval:
            current.append(r)
        else:
            if current:
                batches.append(current)
                current = []
            batches.append(r)
    if current:
        batches.append(current)
    return batches


def unsafe_closes_batch(requests, tools):
    batches, current = [], []
    for r in requests:
        tool = tools.get(r.name)
        current.append(r)
        if not (tool is not None and tool.concurrency_safe and not tool.requires_approval):
            batches.append(current)
            current = []
    if current:
        batches.append(current)
    return batches


def pops_requests(requests, tools):
    batches, prev = [], False
    while requests:
        r = requests.pop(0)
        tool = tools.get(r.name)
        safe = tool is not None and tool.concurrency_safe and not tool.requires_approval
        if safe and prev:
            batches[-1].append(r)
        else:
            batches.append([r])
        prev = safe
    return batches


def safe_joins_any_previous(requests, tools):
    batches = []
    for r in requests:
        tool = tools.get(r.name)
        safe = tool is not None and tool.concurrency_safe and not tool.requires_approval
        if safe and batches:
            batches[-1].append(r)
        else:
            batches.append([r])
    return batches


def forgets_last_batch(requests, tools):
    batches, current = [], []
    for r in requests:
        tool = tools.get(r.name)
        if tool is not None and tool.concurrency_safe and not tool.requires_approval:
            current.append(r)
        else:
            if current:
                batches.append(current)
            current = []
            batches.append([r])
    return batches


def empty_batches(requests, tools):
    batches, current = [], []
    for r in requests:
        tool = tools.get(r.name)
        if tool is not None and tool.concurrency_safe and not tool.requires_approval:
            current.append(r)
        else:
            batches.append(current)
            batches.append([r])
            current = []
    batches.append(current)
    return batches


def stable_sort_by_safety(requests, tools):
    def safe(r):
        tool = tools.get(r.name)
        return tool is not None and tool.concurrency_safe and not tool.requires_approval
    ordered = sorted(requests, key=lambda r: not safe(r))
    batches, prev = [], False
    for r in ordered:
        if safe(r) and prev:
            batches[-1].append(r)
        else:
            batches.append([r])
        prev = safe(r)
    return batches


def every_call_alone(requests, tools):
    return [[r] for r in requests]


def or_instead_of_and(requests, tools):
    batches, prev = [], False
    for r in requests:
        tool = tools.get(r.name)
        safe = tool is not None and (tool.concurrency_safe or not tool.requires_approval)
        if safe and prev:
            batches[-1].append(r)
        else:
            batches.append([r])
        prev = safe
    return batches


def one_batch_of_everything(requests, tools):
    return [list(requests)]


# --- answers that skip the step the exercise leaves to the learner (issue 31) ---

CHAPTER_READS = {"lookup_incident", "get_service_status", "search_logs"}


def hard_coded_reads(requests, tools):  # the chapter's three reads by name
    return grouped(requests, lambda r: r.name in CHAPTER_READS)


def hard_coded_writes(requests, tools):  # the chapter's write and restart by name, the rest safe
    return grouped(requests, lambda r: r.name not in {"add_incident_note", "restart_service"})


def read_like_names(requests, tools):  # judges a tool by its name's verb
    verbs = ("lookup_", "get_", "search_", "fetch_", "list_", "read_", "count_", "export_")
    return grouped(requests, lambda r: r.name.startswith(verbs))


def safe_wins_over_approval(requests, tools):  # a safe tool never reaches the approval test
    def shares(r):
        tool = tools.get(r.name)
        if tool is None:
            return False
        if tool.concurrency_safe:
            return True
        if tool.requires_approval:
            return False
        return False
    return grouped(requests, shares)


def unknown_is_harmless(requests, tools):  # no declaration read as "no objection"
    def shares(r):
        tool = tools.get(r.name)
        return tool is None or (tool.concurrency_safe and not tool.requires_approval)
    return grouped(requests, shares)


def joins_the_first_safe_batch(requests, tools):  # safe calls gather, neighbours or not
    out, reads = [], None
    for r in requests:
        tool = tools.get(r.name)
        if tool is not None and tool.may_run_together:
            if reads is None:
                reads = []
                out.append(reads)
            reads.append(r)
        else:
            out.append([r])
    return out


BATCH_WRONG = [
    (batches_consuming, "changed the list of requests it was given"),
    (all_safe_together, "call-3 (add_incident_note) is not concurrency_safe and shares a batch "
                        "with ['run-629fd82c07cd:step-0:call-0'"),
    (safe_first, "call-4 (search_logs) runs before run-629fd82c07cd:step-0:call-3 "
                 "(add_incident_note), which the model asked for earlier: the lab's executor "
                 "moves no call past another"),
    (concurrency_only, "call-4 (read_payroll) requires approval and shares a batch with "
                       "['call-5', 'call-6']: a person decides before it runs (the table's "
                       "approval row)"),
    (one_by_one, "call-0 (lookup_incident) and run-629fd82c07cd:step-0:call-1 "
                 "(lookup_incident) are neighbours, both concurrency_safe without approval, yet "
                 "in different batches: independent read-only lookups run together (the "
                 "table's first row)"),
    (batch_ids, "holds strings ('"),
    (flat, "batch 0 is a ToolRequest, not a list of requests"),
    (make_batches, "hands the exercise to the lab's own keel_lab.make_batches"),
    (lab_alias, "hands the exercise to the lab's own keel_lab.make_batches"),
    (all_safe_together_fresh, "call-4 (search_logs) runs before "
                              "run-629fd82c07cd:step-0:call-3 (add_incident_note)"),
    (ignores_approval, "call-4 (read_payroll) requires approval and shares a batch with "
                       "['call-5', 'call-6']"),
    (unknown_tool_crashes, "your function raised AttributeError: 'NoneType' object has no "
                           "attribute 'concurrency_safe'"),
    (unknown_tool_is_safe, "call-2 (lookup_runbook) shares a batch with ['call-3', 'call-4', "
                           "'call-5'], but no tool has that name: no declaration says it is safe "
                           "beside others"),
    (names_not_requests, "0 holds strings ('lookup_incident'), not the requests: put the "
                         "ToolRequest objects themselves in the batches"),
    (lone_call_not_in_list, "batch 1 is a ToolRequest, not a list of requests: return a list of "
                            "batches, each a list (even a batch of one)"),
    (unsafe_closes_batch, "'run-629fd82c07cd:step-0:call-2']: it may change what they read "
                          "(the table's rows on a shared resource and an irreversible action)"),
    (pops_requests, "read it, leave it as it is"),
    (safe_joins_any_previous, "call-3 (add_incident_note) is not concurrency_safe and shares a "
                              "batch with ['run-629fd82c07cd:step-0:call-4', "
                              "'run-629fd82c07cd:step-0:call-5']"),
    (forgets_last_batch, "'run-629fd82c07cd:step-0:call-3']: every call exactly once, in "
                         "request order"),
    (empty_batches, "call-4=lookup_runbook, call-5=lookup_incident]: an empty batch"),
    (stable_sort_by_safety, "which the model asked for earlier: the lab's executor moves no "
                            "call past another (\"Whose order is it?\")"),
    (every_call_alone, "are neighbours, both concurrency_safe without approval, yet in "
                       "different batches"),
    (or_instead_of_and, "'run-629fd82c07cd:step-0:call-5']: it may change what they read (the "
                        "table's rows on a shared resource and an irreversible action)"),
    (one_batch_of_everything, "call-3 (add_incident_note) is not concurrency_safe and shares a "
                              "batch with"),
    # the step the exercise leaves to the learner (issue 31): a fresh tester's answers
    (hard_coded_reads, "call-6 (search_logs) and call-7 (fetch_metrics) are neighbours, both "
                       "concurrency_safe without approval, yet in different batches"),
    # a declared tool's rule broken: judged before a name no tool has (a later line)
    (hard_coded_writes, "call-1 (search_and_tag_logs) is not concurrency_safe and shares a "
                        "batch with ['call-0', 'call-2', 'call-3', 'call-4', 'call-5']"),
    (read_like_names, "call-1 (search_and_tag_logs) is not concurrency_safe and shares a "
                      "batch with ['call-0', 'call-2', 'call-3', 'call-4', 'call-5']"),
    (safe_wins_over_approval, "call-4 (read_payroll) requires approval and shares a batch with "
                              "['call-5', 'call-6']: a person decides before it runs (the "
                              "table's approval row)"),
    (unknown_is_harmless, "call-2 (lookup_runbook) shares a batch with ['call-3', 'call-4', "
                          "'call-5'], but no tool has that name"),
    (joins_the_first_safe_batch, "call-4 (search_logs) runs before "
                                 "run-629fd82c07cd:step-0:call-3 (add_incident_note), which the "
                                 "model asked for earlier"),
]


@pytest.mark.parametrize("fn", BATCH_RIGHT, ids=lambda f: f.__name__)
def test_make_batches_right(fn):
    assert verify_make_batches(fn).passed


@pytest.mark.parametrize(("fn", "hint"), BATCH_WRONG, ids=lambda x: getattr(x, "__name__", ""))
def test_make_batches_wrong(fn, hint):
    verdict = verify_make_batches(fn)
    assert not verdict.passed and hint in verdict.hints[0]


def test_the_approval_gated_safe_tool_must_run_alone():
    assert "requires approval and shares a batch" in \
        verify_make_batches(concurrency_only).hints[0]


# --- is_executable ---


def executable(view):
    if not view.closed or not view.id or not view.name:
        return False
    if view.arguments.strip() == "":  # a parameterless tool
        return True
    try:
        return isinstance(json.loads(view.arguments), dict)
    except json.JSONDecodeError:
        return False


def executable_terse(v):
    try:
        return bool(v.closed and v.id and v.name
                    and type(json.loads(v.arguments.strip() or "{}")) is dict)
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


def braces(view):  # looks like an object: starts with { and ends with }
    text = view.arguments.strip() or "{}"
    return bool(view.closed and view.id and view.name and text[0] == "{" and text[-1] == "}")


def closed_only(view):
    return view.closed


def any_json(view):
    try:
        json.loads(view.arguments)
        return view.closed and bool(view.id and view.name)
    except ValueError:
        return False


def via_readiness(view):
    return keel_lab.readiness(view.id, view.name, view.arguments, view.closed).executable


def null_is_no_arguments(view):  # found by a reviewer: `null` is not an object
    if not (view.closed and view.id and view.name):
        return False
    try:
        value = json.loads(view.arguments) if view.arguments.strip() else {}
    except ValueError:
        return False
    return value is None or isinstance(value, dict)


EXECUTABLE_RIGHT = [executable, executable_terse]

# --- a tester's answers who had not read the check (issue 22) ---


def forgets_closed(call):
    if not (call.id and call.name):
        return False
    if call.arguments.strip() == "":
        return True
    try:
        return isinstance(json.loads(call.arguments), dict)
    except json.JSONDecodeError:
        return False


def empty_arguments_rejected(call):
    if not (call.closed and call.id and call.name):
        return False
    try:
        return isinstance(json.loads(call.arguments), dict)
    except json.JSONDecodeError:
        return False


def any_json_accepted(call):
    if not (call.closed and call.id and call.name):
        return False
    if call.arguments.strip() == "":
        return True
    try:
        json.loads(call.arguments)
        return True
    except json.JSONDecodeError:
        return False


def braces_look_like_json(call):
    if not (call.closed and call.id and call.name):
        return False
    text = call.arguments.strip()
    return text == "" or (text.startswith("{") and text.endswith("}"))


def no_try_except(call):
    if not (call.closed and call.id and call.name):
        return False
    if call.arguments.strip() == "":
        return True
    return isinstance(json.loads(call.arguments), dict)


def blank_not_stripped(call):
    if not (call.closed and call.id and call.name):
        return False
    if call.arguments == "":
        return True
    try:
        return isinstance(json.loads(call.arguments), dict)
    except json.JSONDecodeError:
        return False


def null_accepted(call):
    if not (call.closed and call.id and call.name):
        return False
    if call.arguments.strip() == "":
        return True
    try:
        return isinstance(json.loads(call.arguments), (dict, type(None)))
    except json.JSONDecodeError:
        return False


def uses_parses_property(call):
    return bool(call.closed and call.id and call.name and call.parses)


def uses_executable_property(call):
    return call.executable


def truthy_not_bool(call):
    ok = call.closed and call.id and call.name
    if not ok:
        return ok
    if call.arguments.strip() == "":
        return ok
    try:
        return ok and isinstance(json.loads(call.arguments), dict)
    except json.JSONDecodeError:
        return False


def forgets_name(call):
    if not (call.closed and call.id):
        return False
    if call.arguments.strip() == "":
        return True
    try:
        return isinstance(json.loads(call.arguments), dict)
    except json.JSONDecodeError:
        return False


def empty_object_falsy(call):
    if not (call.closed and call.id and call.name):
        return False
    try:
        arguments = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return False
    return isinstance(arguments, dict) and bool(arguments)


def returns_string(call):
    if not (call.closed and call.id and call.name):
        return "False"
    if call.arguments.strip() == "":
        return "True"
    try:
        return str(isinstance(json.loads(call.arguments), dict))
    except json.JSONDecodeError:
        return "False"


def arguments_called(call):
    if not (call.closed and call.id and call.name):
        return False
    text = "".join(call.parts) if call.parts else call.arguments
    if text.strip() == "":
        return True
    try:
        return type(json.loads(text)) is dict
    except ValueError:
        return False


def or_instead_of_and_fresh(call):
    if not call.closed or not call.id or not call.name:
        return False
    if call.arguments.strip() == "":
        return True
    try:
        value = json.loads(call.arguments)
    except json.JSONDecodeError:
        return False
    return not isinstance(value, list)


EXECUTABLE_WRONG = [
    (null_is_no_arguments, "must be a JSON object, got NoneType"),
    (at_first_parse, "the stream has not closed this call yet"),
    (closed_only, "arguments: not valid JSON"),
    (any_json, "arguments must be a JSON object"),
    (json_only, 'a parameterless tool: arguments "", {} or blank (null is no object), chunk 5'),
    (braces, "text in braces that is not JSON"),
    (via_readiness, "hands the exercise to the lab's own keel_lab.readiness"),
    (forgets_closed, "False - the stream has not closed this call yet: the turn may still be "
                     "cancelled, cut off or made invalid"),
    (empty_arguments_rejected, "you returned False, expected True - complete and closed: it may "
                               "run"),
    (any_json_accepted, "you returned True, expected False - arguments must be a JSON object, "
                        "got list"),
    (braces_look_like_json, "you returned True, expected False - arguments: not valid JSON: "
                            "Extra data: line 1 column 27 (char 26)"),
    (no_try_except, "your function raised JSONDecodeError: Unterminated string starting at: "
                    "line 1 column 17 (char 16)"),
    (blank_not_stripped, "you returned False, expected True - complete and closed: it may run"),
    (null_accepted, "you returned True, expected False - arguments must be a JSON object, got "
                    "NoneType"),
    (uses_parses_property, "your function raised AttributeError: 'CallView' object has no "
                           "attribute 'parses'"),
    (uses_executable_property, "your function raised AttributeError: 'CallView' object has no "
                               "attribute 'executable'"),
    (truthy_not_bool, "your function returned None - is a `return` missing?"),
    (forgets_name, "you returned True, expected False - the call has no name"),
    (empty_object_falsy, "you returned False, expected True - complete and closed: it may run"),
    (returns_string, "False - the stream has not closed this call yet: the turn may still be "
                     "cancelled, cut off or made invalid"),
    (arguments_called, "your function raised AttributeError: 'CallView' object has no attribute "
                       "'parts'"),
    (or_instead_of_and_fresh, "you returned True, expected False - arguments must be a JSON "
                              "object, got NoneType"),
]

# this module's tables of known-wrong answers, by exercise (the instructor's guide shows them)
WRONG_ANSWERS = {
    "answer_all": ANSWER_ALL_WRONG,
    "make_batches": BATCH_WRONG,
    "is_executable": EXECUTABLE_WRONG,
}


@pytest.mark.parametrize("fn", EXECUTABLE_RIGHT, ids=lambda f: f.__name__)
def test_is_executable_right(fn):
    assert verify_is_executable(fn).passed


@pytest.mark.parametrize(("fn", "hint"), EXECUTABLE_WRONG,
                         ids=lambda x: getattr(x, "__name__", ""))
def test_is_executable_wrong(fn, hint):
    verdict = verify_is_executable(fn)
    assert not verdict.passed and hint in verdict.hints[0]


# --- delegation: the lab's own rule behind another name (chapter 5's rule, `run_status`) ---

FATAL = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}


def status_sets(codes):
    if FATAL & set(codes):
        return "failed"
    return "waiting_for_approval" if "approval_required" in codes else "completed"


def delegates_by_alias(codes):
    from keel_lab import run_status as rs
    return rs(codes)


# --- delegation: found however the lab's code is reached ---


def dynamic_lookup(codes):
    import importlib
    return getattr(importlib.import_module("keel_lab"), "run_" + "status")(codes)


def via_helper(codes):
    return _helper(codes)


def _helper(codes):
    import keel_lab._core.partial_success as p
    return p.run_status(codes)


def test_delegation_is_found_statically_through_helpers_and_imports():
    assert references(via_helper, (run_status,)) is run_status
    assert references(delegates_by_alias, (run_status,)) is run_status
    assert references(status_sets, (run_status,)) is None


def test_delegation_is_caught_at_run_time_when_the_name_is_built():
    assert references(dynamic_lookup, (run_status,)) is None
    with pytest.raises(Delegated, match="hands the exercise to the lab's own"):
        watched(dynamic_lookup, (run_status,))([None])


# --- check(): prints the verdict, fails the cell unless passed ---


def pauses_only(events):  # a status_history answer that sees only the pauses
    paused = any(e.kind == "tool.awaiting_approval" for e in events)
    return ["waiting_for_approval"] if paused else ["completed"]


def test_unimplemented_exercises_say_so_and_fail(capsys, raising):
    def todo(*args):
        raise NotImplementedError

    checks = {"answer_all": 2, "pair_results": 10, "make_batches": 5, "is_executable": 7,
              "status_history": 17}
    for name in checks:
        todo.__name__ = name
        with pytest.raises(ExerciseNotPassed, match="not implemented yet"):
            check(todo)
    out = capsys.readouterr().out
    assert out.count("not implemented yet") == 5
    for name, n in checks.items():
        assert f"{name}: NOT YET ({int(name == 'pair_results')}/{n} checks)" in out


def test_a_failing_check_raises_an_assertion_error_carrying_the_hints(capsys, raising):
    with pytest.raises(AssertionError) as failure:
        check(status_sets.__class__(pauses_only.__code__, globals(), "status_history"))
    assert str(failure.value).startswith("a business error goes back to the model")  # advice
    assert "expected ['partial'], got ['completed']" in str(failure.value)  # then the case
    assert "(case: a lookup of a missing incident [model.called" in str(failure.value)
    out = capsys.readouterr().out  # the verdict's own lines keep the case first
    assert "[FAIL] a lookup of a missing incident" in out
    assert out.endswith("status_history: NOT YET (2/17 checks)\n")


def test_in_a_notebook_a_failing_check_shows_not_yet_and_the_notebook_runs_on(capsys):
    """Run All reaches the end (otter-grader's convention): the verdict and its hints are shown
    where the check stands, once, and nothing is raised."""
    assert check(status_sets.__class__(pauses_only.__code__, globals(), "status_history")) is None
    out = capsys.readouterr().out
    assert out.endswith("status_history: NOT YET (2/17 checks)\n")
    assert out.count("a lookup of a missing incident") == 1

    def pair(calls, results):
        return []
    assert check(pair) is None
    assert capsys.readouterr().out.startswith("no exercise is called 'pair'; exercises: ")


def test_a_passing_check_prints_the_verdict_and_returns_nothing(capsys):
    def status_history(events):
        codes = [e.code for e in events]
        stops = [i for i, e in enumerate(events) if e.kind == "tool.awaiting_approval"]
        if FATAL & set(codes):
            crash = next(i for i, c in enumerate(codes) if c in FATAL)
            return ["waiting_for_approval" for i in stops if i < crash] + ["failed"]
        end = [] if stops and stops[-1] == len(events) - 1 else [
            "partial" if set(codes) - {None, "approval_required"} else "completed"]
        return ["waiting_for_approval"] * len(stops) + end
    assert check(status_history) is None
    assert capsys.readouterr().out.endswith("status_history: PASSED (17/17 checks)\n")


def test_every_fair_spelling_is_judged_as_the_exercise_it_is_bound_to(capsys):
    """A lambda, a partial, a callable object and a function defined under another name and
    assigned: each is checked as the exercise whose name it is bound to where `check` runs, and a
    wrong one gets the exercise's hint, not a complaint about its name."""
    global status_history
    spellings = {"lambda": lambda events: with_a_loop(events),
                 "partial": functools.partial(with_a_loop),
                 "callable object": type("Statuses", (), {"__call__": lambda self, events:
                                                          with_a_loop(events)})(),
                 "renamed": with_a_loop}
    try:
        for spelling, fn in spellings.items():
            status_history = fn
            check(status_history)
            assert capsys.readouterr().out.endswith("status_history: PASSED (17/17 checks)\n"), \
                spelling
        status_history = lambda events: pauses_only(events)  # noqa: E731 - a wrong rule
        check(status_history)
        out = capsys.readouterr().out
        assert "no exercise is called" not in out and out.endswith("NOT YET (2/17 checks)\n")
    finally:
        del status_history


def test_check_names_the_exercises_for_an_unknown_function(raising):
    def pair(calls, results):
        return []
    with pytest.raises(ExerciseNotPassed) as failure:
        check(pair)
    assert str(failure.value).startswith(
        "no exercise is called 'pair'; exercises: accumulate, answer_all, count_in_order, "
        "pair_results, make_batches")  # in course order


def test_a_hint_reads_case_first_in_its_check_and_advice_first_in_a_summary():
    """The check's line shows the case, then the problem; `make check`'s one line, cut at the
    terminal's width, leads with the problem (and the advice, where it is given apart)."""
    from keel_checks.verdict import advice_first, labelled

    hint = labelled("run 1 (calls a, b, c)", "b got a's result")
    assert hint == "run 1 (calls a, b, c): b got a's result"
    assert advice_first(hint) == "b got a's result (case: run 1 (calls a, b, c))"
    told = labelled("a pause", "expected ['waiting'], got ['completed']", "the run still waits")
    assert told == "a pause: expected ['waiting'], got ['completed'] - the run still waits"
    assert advice_first(told) == ("the run still waits - expected ['waiting'], got "
                                  "['completed'] (case: a pause)")
    assert advice_first("a hint without its parts") == "a hint without its parts"
    assert labelled("a case", "") == ""
