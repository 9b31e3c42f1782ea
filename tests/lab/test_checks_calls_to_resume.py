"""Chapter 8's `calls_to_resume` check: wrong resume rules get their own hint, right ones written
differently pass with the same lines."""

from collections import Counter, OrderedDict

import pytest

from keel_checks.resume import verify_calls_to_resume

pytestmark = pytest.mark.ch8

OUTCOME = ("tool.finished", "tool.failed")


def by_call_id(events):
    done = {e.ref for e in events if e.kind in OUTCOME}
    out = []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in out:
            out.append(e.ref)
    return out


def by_last_state(events):
    state = {}
    for e in events:
        if e.kind != "model.called":
            state[e.ref] = state.get(e.ref) if state.get(e.ref) in OUTCOME else e.kind
    return (ref for ref, kind in state.items() if kind not in OUTCOME)


def with_sets(events):
    confirmed = [e.ref for e in events if e.kind == "tool.confirmed"]
    left = set(confirmed) - {e.ref for e in events if e.kind in OUTCOME}
    return sorted(left, key=confirmed.index)


def one_pass_with_a_status_table(events):
    status = {}
    for e in events:
        if e.kind == "tool.confirmed":
            status.setdefault(e.ref, "open")
        elif e.kind in OUTCOME:
            status[e.ref] = "done"
    return [ref for ref, state in status.items() if state == "open"]


def everything(events):
    return [e.ref for e in events if e.kind == "tool.confirmed"]


def by_position(events):
    finished = sum(e.kind in OUTCOME for e in events)
    return everything(events)[finished:]


def started_is_done(events):
    touched = {e.ref for e in events if e.kind != "tool.confirmed"}
    return [c for c in everything(events) if c not in touched]


def finished_only(events):
    done = {e.ref for e in events if e.kind == "tool.finished"}
    return [c for c in everything(events) if c not in done]


def by_tool_name(events):
    names = {e.ref: e.name for e in events if e.kind == "tool.confirmed"}
    done = {names[e.ref] for e in events if e.kind in OUTCOME}
    return [c for c in everything(events) if names[c] not in done]


def first_turn_only(events):
    turns = [n for n, e in enumerate(events) if e.kind == "model.called"]
    first = events[:turns[1]] if len(turns) > 1 else events
    return by_call_id(first)


def by_id_tail(events):
    done = {e.ref.rsplit(":", 1)[-1] for e in events if e.kind in OUTCOME}
    return [c for c in everything(events) if c.rsplit(":", 1)[-1] not in done]


def every_open_record(events):
    done = {e.ref for e in events if e.kind in OUTCOME}
    return [e.ref for e in events if e.kind in ("tool.confirmed", "tool.requested")
            and e.ref not in done]


def newest_first(events):
    return by_call_id(events)[::-1]


def a_set(events):
    return set(by_call_id(events))


def the_records(events):
    wanted = by_call_id(events)
    return [e for e in events if e.kind == "tool.confirmed" and e.ref in wanted]


def delegates(events):
    from keel_lab.course._production.store import to_resume
    return to_resume(events)


def returns_nothing(events):
    by_call_id(events)


# --- a fresh reviewer's wrong answers, as written ---


def only_finished(events):
    done = {e.ref for e in events if e.kind == "tool.finished"}
    out = []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in out:
            out.append(e.ref)
    return out


def requested_is_done(events):
    done = {e.ref for e in events if e.kind in ("tool.requested", "tool.finished", "tool.failed")}
    out = []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in out:
            out.append(e.ref)
    return out


def from_requested(events):
    done = {e.ref for e in events if e.kind in OUTCOME}
    out = []
    for e in events:
        if e.kind == "tool.requested" and e.ref not in done and e.ref not in out:
            out.append(e.ref)
    return out


def sorted_ids(events):
    confirmed = {e.ref for e in events if e.kind == "tool.confirmed"}
    return sorted(confirmed - {e.ref for e in events if e.kind in OUTCOME})


def by_name(events):
    names = {e.ref: e.name for e in events if e.kind == "tool.confirmed"}
    done_names = {names.get(e.ref) for e in events if e.kind in OUTCOME}
    out = []
    for e in events:
        if e.kind == "tool.confirmed" and e.name not in done_names and e.ref not in out:
            out.append(e.ref)
    return out


def tail(ref):
    return ref.rsplit(":", 1)[-1]


def short_ids(events):
    done = {tail(e.ref) for e in events if e.kind in OUTCOME}
    out = []
    for e in events:
        if e.kind == "tool.confirmed" and tail(e.ref) not in done and tail(e.ref) not in out:
            out.append(tail(e.ref))
    return out


def tail_collision(events):
    done = {tail(e.ref) for e in events if e.kind in OUTCOME}
    out = []
    for e in events:
        if e.kind == "tool.confirmed" and tail(e.ref) not in done and e.ref not in out:
            out.append(e.ref)
    return out


def records_not_ids(events):
    done = {e.ref for e in events if e.kind in OUTCOME}
    out, seen = [], set()
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in seen:
            seen.add(e.ref)
            out.append(e)
    return out


def positional(events):
    confirmed = []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in confirmed:
            confirmed.append(e.ref)
    return confirmed[sum(1 for e in events if e.kind in OUTCOME):]


def reversed_order(events):
    done = {e.ref for e in events if e.kind in OUTCOME}
    out = []
    for e in reversed(events):
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in out:
            out.append(e.ref)
    return out


def step_0_only(events):
    out, done, steps = [], set(), 0
    for e in events:
        if e.kind == "model.called":
            steps += 1
            if steps > 1:
                break
        if e.kind in OUTCOME:
            done.add(e.ref)
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in out:
            out.append(e.ref)
            if e.ref.split(":")[1] != "step-0":
                out.pop()
    return out


def off_by_one(events):
    confirmed, done = [], set()
    for i in range(len(events) - 1):
        e = events[i]
        if e.kind == "tool.confirmed" and e.ref not in confirmed:
            confirmed.append(e.ref)
        elif e.kind in OUTCOME:
            done.add(e.ref)
    return [r for r in confirmed if r not in done]


def failure_stops(events):
    done = set()
    for e in events:
        if e.kind == "tool.failed":
            break
        if e.kind == "tool.finished":
            done.add(e.ref)
    return [c for c in dict.fromkeys(everything(events)) if c not in done]


def last_state(events):
    last = OrderedDict()
    for e in events:
        if e.kind.startswith("tool."):
            last[e.ref] = e.kind
    return [ref for ref, kind in last.items() if kind == "tool.confirmed"]


def set_result(events):
    confirmed = {e.ref for e in events if e.kind == "tool.confirmed"}
    return confirmed - {e.ref for e in events if e.kind in OUTCOME}


def none_when_empty(events):
    return by_call_id(events) or None


def start_order(events):
    done = {e.ref for e in events if e.kind in OUTCOME}
    started = [e.ref for e in events if e.kind == "tool.requested"]
    confirmed = list(dict.fromkeys(everything(events)))
    order = list(dict.fromkeys(started + confirmed))
    return [r for r in order if r in confirmed and r not in done]


def by_time_desc(events):
    done = {e.ref for e in events if e.kind in OUTCOME}
    conf = {}
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done:
            conf.setdefault(e.ref, e)
    return [r for r, e in sorted(conf.items(), key=lambda kv: (kv[1].time, kv[0]), reverse=True)]


def started_if_any(events):
    done = {e.ref for e in events if e.kind in OUTCOME}
    started = [e.ref for e in events if e.kind == "tool.requested"]
    pool = started or everything(events)
    return [r for r in dict.fromkeys(pool) if r not in done]


def union_twice(events):
    done = {e.ref for e in events if e.kind in OUTCOME}
    started = {e.ref for e in events if e.kind == "tool.requested"}
    never = [e.ref for e in events if e.kind == "tool.confirmed" and e.ref not in started]
    running = [e.ref for e in events if e.kind == "tool.requested" and e.ref not in done]
    return never + running


def count_diff(events):
    req, out = Counter(), Counter()
    for e in events:
        if e.kind == "tool.requested":
            req[e.ref] += 1
        elif e.kind in OUTCOME:
            out[e.ref] += 1
    return [c for c in dict.fromkeys(everything(events))
            if req[c] == 0 or req[c] - out[c] == 1]


def by_content(events):
    content = {e.ref: (e.name, e.arguments) for e in events if e.kind == "tool.confirmed"}
    done = {content.get(e.ref) for e in events if e.kind in OUTCOME}
    res, seen = [], set()
    for e in events:
        if e.kind == "tool.confirmed":
            key = (e.name, e.arguments)
            if key not in done and key not in seen:
                seen.add(key)
                res.append(e.ref)
    return res


def last_started_only(events):
    done = {e.ref for e in events if e.kind in OUTCOME}
    started = [e.ref for e in events if e.kind == "tool.requested"]
    res = [c for c in everything(events) if c not in started]
    if started and started[-1] not in done:
        res.append(started[-1])
    return list(dict.fromkeys(res))


# --- and right ones ---


def with_dict_fromkeys(events):
    outcome = {e.ref for e in events if e.kind in {"tool.finished", "tool.failed"}}
    return [ref for ref in dict.fromkeys(e.ref for e in events if e.kind == "tool.confirmed")
            if ref not in outcome]


def sorted_by_seq_with_a_counter(events):
    evs = sorted(events, key=lambda e: e.seq)
    outcomes = Counter(e.ref for e in evs if e.kind in OUTCOME)
    first = {}
    for e in evs:
        if e.kind == "tool.confirmed":
            first.setdefault(e.ref, e.seq)
    return [ref for ref, _ in sorted(first.items(), key=lambda kv: kv[1]) if not outcomes[ref]]


def a_state_machine(events):
    state, order = {}, []
    for e in events:
        if e.kind == "tool.confirmed":
            if e.ref not in state:
                order.append(e.ref)
                state[e.ref] = "pending"
        elif e.kind in OUTCOME:
            state[e.ref] = "done"
    return list(filter(lambda r: state[r] != "done", order))


PENDING = "started (tool.requested) but has no outcome record"
ORDER = "the right calls in another order: return them in request order"
ELEVEN = "eleven lookups, four at a time: call-1 finished, three running, seven never started: "



# --- a tester's answers who had not read the check (issue 22) ---


def started_not_finished_only(events):
    done = {e.ref for e in events if e.kind in ("tool.finished", "tool.failed")}
    todo = []
    for e in events:
        if e.kind == "tool.requested" and e.ref not in done and e.ref not in todo:
            todo.append(e.ref)
    return todo


def failed_runs_again(events):
    done = {e.ref for e in events if e.kind == "tool.finished"}
    todo = []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in todo:
            todo.append(e.ref)
    return todo


def set_difference(events):
    confirmed = {e.ref for e in events if e.kind == "tool.confirmed"}
    done = {e.ref for e in events if e.kind in ("tool.finished", "tool.failed")}
    return list(confirmed - done)


def sorted_refs(events):
    confirmed = {e.ref for e in events if e.kind == "tool.confirmed"}
    done = {e.ref for e in events if e.kind in ("tool.finished", "tool.failed")}
    return sorted(confirmed - done)


def same_request_already_answered(events):
    asked = {e.ref: (e.name, e.arguments) for e in events if e.kind == "tool.confirmed"}
    answered = {asked[e.ref] for e in events
                if e.kind in ("tool.finished", "tool.failed") and e.ref in asked}
    todo = []
    for e in events:
        if (e.kind == "tool.confirmed" and (e.name, e.arguments) not in answered
                and e.ref not in todo):
            todo.append(e.ref)
    return todo


def returns_records(events):
    done = {e.ref for e in events if e.kind in ("tool.finished", "tool.failed")}
    todo, seen = [], set()
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in seen:
            seen.add(e.ref)
            todo.append(e)
    return todo


def started_counts_as_done(events):
    started = {e.ref for e in events
               if e.kind in ("tool.requested", "tool.finished", "tool.failed")}
    todo = []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in started and e.ref not in todo:
            todo.append(e.ref)
    return todo


def drops_last_record(events):
    events = events[:-1]  # the last record may be torn by the crash
    done = {e.ref for e in events if e.kind in ("tool.finished", "tool.failed")}
    todo = []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in todo:
            todo.append(e.ref)
    return todo


def short_ids_fresh(events):
    done = {e.ref for e in events if e.kind in ("tool.finished", "tool.failed")}
    todo = []
    for e in events:
        short = e.ref.split(":", 1)[-1]
        if e.kind == "tool.confirmed" and e.ref not in done and short not in todo:
            todo.append(short)
    return todo


def none_when_nothing_left(events):
    done = {e.ref for e in events if e.kind in ("tool.finished", "tool.failed")}
    todo = []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in todo:
            todo.append(e.ref)
    return todo or None


def reversed_order_fresh(events):
    done = set()
    todo = []
    for e in reversed(events):
        if e.kind in ("tool.finished", "tool.failed"):
            done.add(e.ref)
        elif e.kind == "tool.confirmed" and e.ref not in done and e.ref not in todo:
            todo.append(e.ref)
    return todo


def finished_only_by_name(events):
    done_names = {e.name for e in events if e.kind in ("tool.finished", "tool.failed")}
    names = {e.ref: e.name for e in events if e.kind == "tool.confirmed"}
    todo = []
    for e in events:
        if e.kind == "tool.confirmed" and names[e.ref] not in done_names and e.ref not in todo:
            todo.append(e.ref)
    return todo


def requested_without_outcome_by_count(events):
    confirmed = [e.ref for e in events if e.kind == "tool.confirmed"]
    outcomes = sum(1 for e in events if e.kind in ("tool.finished", "tool.failed"))
    todo = []
    for ref in confirmed[outcomes:]:
        if ref not in todo:
            todo.append(ref)
    return todo


WRONG = [
    (everything, "call-1 finished first, call-0 still running: you returned ['step-0:call-0', "
                 "'step-0:call-1'], expected ['step-0:call-0'] - step-0:call-1 already has its "
                 "tool.finished record"),
    (by_position, "you returned ['step-0:call-1'], expected ['step-0:call-0'] - step-0:call-1 "
                  "already has its tool.finished record"),
    (started_is_done, "call-1 finished first, call-0 still running: you returned [], expected "
                      "['step-0:call-0'] - step-0:call-0 started (tool.requested) but has no "
                      "outcome record"),
    (finished_only, "call-1 failed, call-0 still running: you returned ['step-0:call-0', "
                    "'step-0:call-1'], expected ['step-0:call-0'] - step-0:call-1 already has "
                    "its tool.failed record"),
    (by_tool_name, "call-1 finished first, call-0 still running: you returned [], expected "
                   "['step-0:call-0'] - step-0:call-0 started"),
    (first_turn_only, "the second model turn: its call-1 finished, its call-0 still running: "
                      "you returned [], expected ['step-1:call-0'] - step-1:call-0 started"),
    (by_id_tail, "the second model turn: its call-1 finished, its call-0 still running: you "
                 "returned [], expected ['step-1:call-0']"),
    (every_open_record, "step-0:call-0 is listed twice: a restarted turn runs each call once"),
    (newest_first, "a crash before any call started: you returned ['step-0:call-1', "
                   "'step-0:call-0'], expected ['step-0:call-0', 'step-0:call-1'] - the right "
                   "calls in another order"),
    (a_set, "a crash before any call started: your function returned a set"),
    (the_records, "return call ids (each record's `ref`), not a Record"),
    (delegates, "hands the exercise to the lab's own keel_lab.course._production.store.to_resume"),
    (returns_nothing, "returned None"),
    (only_finished, "call-1 failed, call-0 still running: you returned ['step-0:call-0', "
                    "'step-0:call-1'], expected ['step-0:call-0'] - step-0:call-1 already has "
                    "its tool.failed record"),
    (requested_is_done, "call-1 finished first, call-0 still running: you returned [], expected "
                        "['step-0:call-0'] - step-0:call-0 " + PENDING),
    (from_requested, "a crash before any call started: you returned [], expected "
                     "['step-0:call-0', 'step-0:call-1'] - step-0:call-0 was confirmed but never "
                     "started: it must still run"),
    (sorted_ids, (ELEVEN + "you returned ['step-0:call-0', 'step-0:call-10', 'step-0:call-2',",
                  ORDER)),
    (by_name, "call-1 finished first, call-0 still running: you returned [], expected "
              "['step-0:call-0'] - step-0:call-0 " + PENDING),
    (short_ids, "a crash before any call started: you returned ['call-0', 'call-1'], expected "
                "['step-0:call-0', 'step-0:call-1'] - call-0 is only the end of a call id: return "
                "the full call id (the record's `ref`)"),
    (tail_collision, "the second model turn: its call-1 finished, its call-0 still running: you "
                     "returned [], expected ['step-1:call-0'] - step-1:call-0 " + PENDING),
    (records_not_ids, "a crash before any call started: you returned ['a Record', 'a Record'], "
                      "expected ['step-0:call-0', 'step-0:call-1'] - return call ids (each "
                      "record's `ref`), not a Record"),
    (positional, "call-1 finished first, call-0 still running: you returned ['step-0:call-1'], "
                 "expected ['step-0:call-0'] - step-0:call-1 already has its tool.finished "
                 "record: that is its outcome, and running it again could repeat its effect - an "
                 "outcome record belongs to the call its `ref` names: match outcomes to calls by "
                 "call id, not by position"),
    (reversed_order, "a crash before any call started: you returned ['step-0:call-1', "
                     "'step-0:call-0'], expected ['step-0:call-0', 'step-0:call-1'] - " + ORDER),
    (step_0_only, "the second model turn: its call-1 finished, its call-0 still running: you "
                  "returned [], expected ['step-1:call-0'] - step-1:call-0 " + PENDING),
    (off_by_one, "a crash before any call started: you returned ['step-0:call-0'], expected "
                 "['step-0:call-0', 'step-0:call-1'] - step-0:call-1 was confirmed but never "
                 "started"),
    (failure_stops, "call-1 failed, call-0 still running: you returned ['step-0:call-0', "
                    "'step-0:call-1'], expected ['step-0:call-0'] - step-0:call-1 already has "
                    "its tool.failed record"),
    (last_state, "call-1 finished first, call-0 still running: you returned [], expected "
                 "['step-0:call-0'] - step-0:call-0 " + PENDING),
    (set_result, "a crash before any call started: your function returned a set, expected a "
                 "list of call ids in request order"),
    (none_when_empty, "every call finished, the model not called again yet (return an empty "
                      "list when no call is left): your function returned None"),
    (start_order, "section 1's turn on the graph: call-4 started, call-3 still waits for call-0: "
                  "you returned ['step-0:call-0', 'step-0:call-1', 'step-0:call-2', "
                  "'step-0:call-4', 'step-0:call-3', 'step-0:call-5'], expected ['step-0:call-0', "
                  "'step-0:call-1', 'step-0:call-2', 'step-0:call-3', 'step-0:call-4', "
                  "'step-0:call-5'] - " + ORDER),
    (by_time_desc, "a crash before any call started: you returned ['step-0:call-1', "
                   "'step-0:call-0'], expected ['step-0:call-0', 'step-0:call-1'] - " + ORDER),
    (started_if_any, (ELEVEN + "you returned ['step-0:call-0', 'step-0:call-2', "
                      "'step-0:call-3'], expected", "- step-0:call-4 was confirmed but never "
                                                    "started: it must still run")),
    (union_twice, "restarted once, call-0 started again, then a second crash: you returned "
                  "['step-0:call-0', 'step-0:call-0'], expected ['step-0:call-0'] - "
                  "step-0:call-0 is listed twice"),
    (count_diff, "restarted once, call-0 started again, then a second crash: you returned [], "
                 "expected ['step-0:call-0'] - step-0:call-0 " + PENDING),
    (by_content, "the second model turn asks again for auth-api's status, which step-0 already "
                 "got: you returned ['step-1:call-1'], expected ['step-1:call-0', "
                 "'step-1:call-1'] - step-1:call-0 asks for what step-0:call-2 got (same tool, "
                 "same arguments), but it is a call of its own"),
    (last_started_only, "call-1 finished first, call-0 still running: you returned [], expected "
                        "['step-0:call-0'] - step-0:call-0 " + PENDING),
    (started_not_finished_only, "['step-0:call-0', 'step-0:call-1'] - step-0:call-0 was "
                                "confirmed but never started: it must still run"),
    (failed_runs_again, "already has its tool.failed record: that is its outcome, and running "
                        "it again could repeat its effect"),
    (sorted_refs, "- the right calls in another order: return them in request order (the order "
                  "of their tool.confirmed records)"),
    (same_request_already_answered, "(same tool, same arguments), but it is a call of its own: "
                                    "only an outcome record with its own id means it ran"),
    (returns_records, "Record'], expected ['step-0:call-0', 'step-0:call-1'] - return call ids "
                      "(each record's `ref`), not a Record"),
    (started_counts_as_done, "started (tool.requested) but has no outcome record: nothing says "
                             "it ran to the end, so it must run again"),
    (drops_last_record, "['step-0:call-0', 'step-0:call-1'] - step-0:call-1 was confirmed but "
                        "never started: it must still run"),
    (short_ids_fresh, "'step-0:call-1'] - step-0:call-0 is only the end of a call id: return "
                      "the full call id (the record's `ref`)"),
    (none_when_nothing_left, "your function returned None - is a `return` missing?"),
    (reversed_order_fresh, "- the right calls in another order: return them in request order "
                           "(the order of their tool.confirmed records)"),
    (finished_only_by_name, "already has its tool.finished record: that is its outcome, and "
                            "running it again could repeat its effect"),
    (requested_without_outcome_by_count, "- an outcome record belongs to the call its `ref` "
                                         "names: match outcomes to calls by call id, not by "
                                         "position"),
]

# this module's tables of known-wrong answers, by exercise (the instructor's guide shows them)
WRONG_ANSWERS = {"calls_to_resume": WRONG}
RIGHT = [by_last_state, with_sets, one_pass_with_a_status_table, with_dict_fromkeys,
         sorted_by_seq_with_a_counter, a_state_machine]


@pytest.mark.parametrize(("answer", "hint"), WRONG, ids=[a.__name__ for a, _ in WRONG])
def test_wrong_resume_rules_get_their_hint(answer, hint):
    v = verify_calls_to_resume(answer)
    assert not v.passed
    for part in hint if isinstance(hint, tuple) else (hint,):
        assert part in v.hints[0], v.hints
    assert v.total == 9 and len(v.lines()) == 10, str(v)


def test_a_set_difference_is_told_about_the_order_whichever_case_it_fails_first():
    """A set's order changes with the interpreter's hash seed, so the case it fails first (and
    the guide's quoted hint) would too: the answer is not in the table, but it never passes and
    is always told about the order."""
    v = verify_calls_to_resume(set_difference)
    assert not v.passed
    assert ("- the right calls in another order: return them in request order (the order of "
            "their tool.confirmed records)") in v.hints[0], v.hints


@pytest.mark.parametrize("answer", RIGHT)
def test_right_rules_in_other_styles_pass_with_the_same_lines(answer):
    v = verify_calls_to_resume(answer)
    assert v.passed, v.hints
    assert v.lines() == verify_calls_to_resume(by_call_id).lines()
    assert v.total == 9 and len(v.lines()) == 10
