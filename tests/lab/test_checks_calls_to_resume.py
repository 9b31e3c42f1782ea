"""Chapter 8's `calls_to_resume` check: wrong resume rules get their own hint, right ones written
differently pass with the same lines."""

from collections import Counter, OrderedDict

import pytest

from keel_checks.resume import verify_calls_to_resume

pytestmark = pytest.mark.ch8

OUTCOME = ("tool.finished", "tool.failed")


def by_call_id(events, idempotent):
    done = {e.ref for e in events if e.kind in OUTCOME}
    started = {e.ref for e in events if e.kind == "tool.requested"}
    run, ask = [], []
    for e in events:
        if e.kind != "tool.confirmed" or e.ref in done or e.ref in run + ask:
            continue
        if e.ref not in started or e.name in idempotent:
            run.append(e.ref)
        else:
            ask.append(e.ref)
    return run, ask


def by_last_state(events, idempotent):
    state, name = {}, {}
    for e in events:
        if e.kind == "tool.confirmed":
            name[e.ref] = e.name
        if e.kind not in ("model.called", "tool.awaiting_approval"):  # a pause changes nothing
            state[e.ref] = state.get(e.ref) if state.get(e.ref) in OUTCOME else e.kind
    open_calls = [(ref, kind) for ref, kind in state.items() if kind not in OUTCOME]
    return ((ref for ref, kind in open_calls
             if kind == "tool.confirmed" or name[ref] in idempotent),
            (ref for ref, kind in open_calls
             if kind == "tool.requested" and name[ref] not in idempotent))


def with_sets(events, idempotent):
    confirmed = [e.ref for e in events if e.kind == "tool.confirmed"]
    left = set(confirmed) - {e.ref for e in events if e.kind in OUTCOME}
    risky = {e.ref for e in events if e.kind == "tool.requested"} - {
        e.ref for e in events if e.kind == "tool.confirmed" and e.name in idempotent}
    return (sorted(left - risky, key=confirmed.index),
            sorted(left & risky, key=confirmed.index))


def one_pass_with_a_status_table(events, idempotent):
    status, tool = {}, {}
    for e in events:
        if e.kind == "tool.confirmed":
            status.setdefault(e.ref, "waiting")
            tool[e.ref] = e.name
        elif e.kind == "tool.requested" and status[e.ref] != "done":
            status[e.ref] = "started"
        elif e.kind in OUTCOME:
            status[e.ref] = "done"
    run = [ref for ref, s in status.items()
           if s == "waiting" or (s == "started" and tool[ref] in idempotent)]
    ask = [ref for ref, s in status.items() if s == "started" and tool[ref] not in idempotent]
    return run, ask


# --- helpers the wrong answers below share: the old rule's first half (every confirmed call
# without an outcome) and its second half done right ---


def confirmed_ids(events):
    return [e.ref for e in events if e.kind == "tool.confirmed"]


def outstanding(events):
    done = {e.ref for e in events if e.kind in OUTCOME}
    out = []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in out:
            out.append(e.ref)
    return out


def split(events, idempotent, calls):
    """`calls` as (run, ask): a call that started with a tool not in `idempotent` waits for a
    person."""
    names = {e.ref: e.name for e in events if e.kind == "tool.confirmed"}
    started = {e.ref for e in events if e.kind == "tool.requested"}
    risky = [c for c in calls if c in started and names.get(c) not in idempotent]
    return [c for c in calls if c not in risky], risky


def everything(events, idempotent):
    return split(events, idempotent, [e.ref for e in events if e.kind == "tool.confirmed"])


def by_position(events, idempotent):
    finished = sum(e.kind in OUTCOME for e in events)
    return split(events, idempotent, confirmed_ids(events)[finished:])


def started_is_done(events, idempotent):
    touched = {e.ref for e in events if e.kind != "tool.confirmed"}
    return split(events, idempotent, [c for c in confirmed_ids(events) if c not in touched])


def finished_only(events, idempotent):
    done = {e.ref for e in events if e.kind == "tool.finished"}
    return split(events, idempotent, [c for c in confirmed_ids(events) if c not in done])


def by_tool_name(events, idempotent):
    names = {e.ref: e.name for e in events if e.kind == "tool.confirmed"}
    done = {names[e.ref] for e in events if e.kind in OUTCOME}
    return split(events, idempotent, [c for c in confirmed_ids(events) if names[c] not in done])


def first_turn_only(events, idempotent):
    turns = [n for n, e in enumerate(events) if e.kind == "model.called"]
    first = events[:turns[1]] if len(turns) > 1 else events
    return by_call_id(first, idempotent)


def by_id_tail(events, idempotent):
    done = {e.ref.rsplit(":", 1)[-1] for e in events if e.kind in OUTCOME}
    todo = [c for c in confirmed_ids(events) if c.rsplit(":", 1)[-1] not in done]
    return split(events, idempotent, todo)


def every_open_record(events, idempotent):
    done = {e.ref for e in events if e.kind in OUTCOME}
    todo = [e.ref for e in events if e.kind in ("tool.confirmed", "tool.requested")
            and e.ref not in done]
    return split(events, idempotent, todo)


def newest_first(events, idempotent):
    run, ask = by_call_id(events, idempotent)
    return run[::-1], ask[::-1]


def a_set(events, idempotent):
    run, ask = by_call_id(events, idempotent)
    return set(run), set(ask)


def the_records(events, idempotent):
    run, ask = by_call_id(events, idempotent)
    return ([e for e in events if e.kind == "tool.confirmed" and e.ref in run],
            [e for e in events if e.kind == "tool.confirmed" and e.ref in ask])


def delegates(events, idempotent):
    from keel_lab.course._production.store import to_resume
    return split(events, idempotent, to_resume(events))


def returns_nothing(events, idempotent):
    by_call_id(events, idempotent)


# --- a fresh reviewer's wrong answers, as written ---


def only_finished(events, idempotent):
    done = {e.ref for e in events if e.kind == "tool.finished"}
    out = []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in out:
            out.append(e.ref)
    return split(events, idempotent, out)


def requested_is_done(events, idempotent):
    done = {e.ref for e in events if e.kind in ("tool.requested", "tool.finished", "tool.failed")}
    out = []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in out:
            out.append(e.ref)
    return split(events, idempotent, out)


def from_requested(events, idempotent):
    done = {e.ref for e in events if e.kind in OUTCOME}
    out = []
    for e in events:
        if e.kind == "tool.requested" and e.ref not in done and e.ref not in out:
            out.append(e.ref)
    return split(events, idempotent, out)


def sorted_ids(events, idempotent):
    confirmed = {e.ref for e in events if e.kind == "tool.confirmed"}
    todo = sorted(confirmed - {e.ref for e in events if e.kind in OUTCOME})
    return split(events, idempotent, todo)


def by_name(events, idempotent):
    names = {e.ref: e.name for e in events if e.kind == "tool.confirmed"}
    done_names = {names.get(e.ref) for e in events if e.kind in OUTCOME}
    out = []
    for e in events:
        if e.kind == "tool.confirmed" and e.name not in done_names and e.ref not in out:
            out.append(e.ref)
    return split(events, idempotent, out)


def tail(ref):
    return ref.rsplit(":", 1)[-1]


def short_ids(events, idempotent):
    done = {tail(e.ref) for e in events if e.kind in OUTCOME}
    out = []
    for e in events:
        if e.kind == "tool.confirmed" and tail(e.ref) not in done and tail(e.ref) not in out:
            out.append(tail(e.ref))
    return split(events, idempotent, out)


def tail_collision(events, idempotent):
    done = {tail(e.ref) for e in events if e.kind in OUTCOME}
    out = []
    for e in events:
        if e.kind == "tool.confirmed" and tail(e.ref) not in done and e.ref not in out:
            out.append(e.ref)
    return split(events, idempotent, out)


def records_not_ids(events, idempotent):
    done = {e.ref for e in events if e.kind in OUTCOME}
    out, seen = [], set()
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in seen:
            seen.add(e.ref)
            out.append(e)
    return split(events, idempotent, out)


def positional(events, idempotent):
    confirmed = []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in confirmed:
            confirmed.append(e.ref)
    return split(events, idempotent, confirmed[sum(1 for e in events if e.kind in OUTCOME):])


def reversed_order(events, idempotent):
    done = {e.ref for e in events if e.kind in OUTCOME}
    out = []
    for e in reversed(events):
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in out:
            out.append(e.ref)
    return split(events, idempotent, out)


def step_0_only(events, idempotent):
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
    return split(events, idempotent, out)


def off_by_one(events, idempotent):
    confirmed, done = [], set()
    for i in range(len(events) - 1):
        e = events[i]
        if e.kind == "tool.confirmed" and e.ref not in confirmed:
            confirmed.append(e.ref)
        elif e.kind in OUTCOME:
            done.add(e.ref)
    return split(events, idempotent, [r for r in confirmed if r not in done])


def failure_stops(events, idempotent):
    done = set()
    for e in events:
        if e.kind == "tool.failed":
            break
        if e.kind == "tool.finished":
            done.add(e.ref)
    todo = [c for c in dict.fromkeys(confirmed_ids(events)) if c not in done]
    return split(events, idempotent, todo)


def last_state(events, idempotent):
    last = OrderedDict()
    for e in events:
        if e.kind.startswith("tool."):
            last[e.ref] = e.kind
    todo = [ref for ref, kind in last.items() if kind == "tool.confirmed"]
    return split(events, idempotent, todo)


def set_result(events, idempotent):
    confirmed = {e.ref for e in events if e.kind == "tool.confirmed"}
    run, ask = split(events, idempotent, confirmed - {e.ref for e in events if e.kind in OUTCOME})
    return set(run), set(ask)


def none_when_empty(events, idempotent):
    run, ask = by_call_id(events, idempotent)
    return (run, ask) if run or ask else None


def start_order(events, idempotent):
    done = {e.ref for e in events if e.kind in OUTCOME}
    started = [e.ref for e in events if e.kind == "tool.requested"]
    confirmed = list(dict.fromkeys(confirmed_ids(events)))
    order = list(dict.fromkeys(started + confirmed))
    return split(events, idempotent, [r for r in order if r in confirmed and r not in done])


def by_time_desc(events, idempotent):
    done = {e.ref for e in events if e.kind in OUTCOME}
    conf = {}
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done:
            conf.setdefault(e.ref, e)
    todo = [r for r, e in sorted(conf.items(), key=lambda kv: (kv[1].time, kv[0]), reverse=True)]
    return split(events, idempotent, todo)


def started_if_any(events, idempotent):
    done = {e.ref for e in events if e.kind in OUTCOME}
    started = [e.ref for e in events if e.kind == "tool.requested"]
    pool = started or confirmed_ids(events)
    return split(events, idempotent, [r for r in dict.fromkeys(pool) if r not in done])


def union_twice(events, idempotent):
    done = {e.ref for e in events if e.kind in OUTCOME}
    started = {e.ref for e in events if e.kind == "tool.requested"}
    never = [e.ref for e in events if e.kind == "tool.confirmed" and e.ref not in started]
    running = [e.ref for e in events if e.kind == "tool.requested" and e.ref not in done]
    return split(events, idempotent, never + running)


def count_diff(events, idempotent):
    req, out = Counter(), Counter()
    for e in events:
        if e.kind == "tool.requested":
            req[e.ref] += 1
        elif e.kind in OUTCOME:
            out[e.ref] += 1
    todo = [c for c in dict.fromkeys(confirmed_ids(events))
            if req[c] == 0 or req[c] - out[c] == 1]
    return split(events, idempotent, todo)


def by_content(events, idempotent):
    content = {e.ref: (e.name, e.arguments) for e in events if e.kind == "tool.confirmed"}
    done = {content.get(e.ref) for e in events if e.kind in OUTCOME}
    res, seen = [], set()
    for e in events:
        if e.kind == "tool.confirmed":
            key = (e.name, e.arguments)
            if key not in done and key not in seen:
                seen.add(key)
                res.append(e.ref)
    return split(events, idempotent, res)


def last_started_only(events, idempotent):
    done = {e.ref for e in events if e.kind in OUTCOME}
    started = [e.ref for e in events if e.kind == "tool.requested"]
    res = [c for c in confirmed_ids(events) if c not in started]
    if started and started[-1] not in done:
        res.append(started[-1])
    return split(events, idempotent, list(dict.fromkeys(res)))


# --- and right ones ---


def with_dict_fromkeys(events, idempotent):
    outcome = {e.ref for e in events if e.kind in {"tool.finished", "tool.failed"}}
    started = {e.ref for e in events if e.kind == "tool.requested"}
    tool = {e.ref: e.name for e in events if e.kind == "tool.confirmed"}
    left = [ref for ref in dict.fromkeys(tool) if ref not in outcome]
    unsafe = {ref for ref in left if ref in started and tool[ref] not in idempotent}
    return [r for r in left if r not in unsafe], [r for r in left if r in unsafe]


def sorted_by_seq_with_a_counter(events, idempotent):
    evs = sorted(events, key=lambda e: e.seq)
    outcomes = Counter(e.ref for e in evs if e.kind in OUTCOME)
    first = {}
    for e in evs:
        if e.kind == "tool.confirmed":
            first.setdefault(e.ref, (e.seq, e.name))
    requested = Counter(e.ref for e in evs if e.kind == "tool.requested")
    plan = ([], [])
    for ref, (_, name) in sorted(first.items(), key=lambda kv: kv[1][0]):
        if not outcomes[ref]:
            plan[bool(requested[ref]) and name not in idempotent].append(ref)
    return plan


def a_state_machine(events, idempotent):
    state, order, safe = {}, [], set()
    for e in events:
        if e.kind == "tool.confirmed":
            if e.ref not in state:
                order.append(e.ref)
                state[e.ref] = "pending"
            if e.name in idempotent:
                safe.add(e.ref)
        elif e.kind == "tool.requested" and state[e.ref] == "pending":
            state[e.ref] = "running"
        elif e.kind in OUTCOME:
            state[e.ref] = "done"
    run = list(filter(lambda r: state[r] == "pending" or (state[r] == "running" and r in safe),
                      order))
    return run, [r for r in order if state[r] == "running" and r not in safe]


# --- a tester's answers who had not read the check (issue 22) ---


def started_not_finished_only(events, idempotent):
    done = {e.ref for e in events if e.kind in ("tool.finished", "tool.failed")}
    todo = []
    for e in events:
        if e.kind == "tool.requested" and e.ref not in done and e.ref not in todo:
            todo.append(e.ref)
    return split(events, idempotent, todo)


def failed_runs_again(events, idempotent):
    done = {e.ref for e in events if e.kind == "tool.finished"}
    todo = []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in todo:
            todo.append(e.ref)
    return split(events, idempotent, todo)


def set_difference(events, idempotent):
    confirmed = {e.ref for e in events if e.kind == "tool.confirmed"}
    done = {e.ref for e in events if e.kind in ("tool.finished", "tool.failed")}
    return split(events, idempotent, list(confirmed - done))


def sorted_refs(events, idempotent):
    confirmed = {e.ref for e in events if e.kind == "tool.confirmed"}
    done = {e.ref for e in events if e.kind in ("tool.finished", "tool.failed")}
    return split(events, idempotent, sorted(confirmed - done))


def same_request_already_answered(events, idempotent):
    asked = {e.ref: (e.name, e.arguments) for e in events if e.kind == "tool.confirmed"}
    answered = {asked[e.ref] for e in events
                if e.kind in ("tool.finished", "tool.failed") and e.ref in asked}
    todo = []
    for e in events:
        if (e.kind == "tool.confirmed" and (e.name, e.arguments) not in answered
                and e.ref not in todo):
            todo.append(e.ref)
    return split(events, idempotent, todo)


def returns_records(events, idempotent):
    done = {e.ref for e in events if e.kind in ("tool.finished", "tool.failed")}
    todo, seen = [], set()
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in seen:
            seen.add(e.ref)
            todo.append(e)
    return split(events, idempotent, todo)


def started_counts_as_done(events, idempotent):
    started = {e.ref for e in events
               if e.kind in ("tool.requested", "tool.finished", "tool.failed")}
    todo = []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in started and e.ref not in todo:
            todo.append(e.ref)
    return split(events, idempotent, todo)


def drops_last_record(events, idempotent):
    events = events[:-1]  # the last record may be torn by the crash
    done = {e.ref for e in events if e.kind in ("tool.finished", "tool.failed")}
    todo = []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in todo:
            todo.append(e.ref)
    return split(events, idempotent, todo)


def short_ids_fresh(events, idempotent):
    done = {e.ref for e in events if e.kind in ("tool.finished", "tool.failed")}
    todo = []
    for e in events:
        short = e.ref.split(":", 1)[-1]
        if e.kind == "tool.confirmed" and e.ref not in done and short not in todo:
            todo.append(short)
    return split(events, idempotent, todo)


def none_when_nothing_left(events, idempotent):
    done = {e.ref for e in events if e.kind in ("tool.finished", "tool.failed")}
    todo = []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in todo:
            todo.append(e.ref)
    return split(events, idempotent, todo) if todo else None


def reversed_order_fresh(events, idempotent):
    done = set()
    todo = []
    for e in reversed(events):
        if e.kind in ("tool.finished", "tool.failed"):
            done.add(e.ref)
        elif e.kind == "tool.confirmed" and e.ref not in done and e.ref not in todo:
            todo.append(e.ref)
    return split(events, idempotent, todo)


def finished_only_by_name(events, idempotent):
    done_names = {e.name for e in events if e.kind in ("tool.finished", "tool.failed")}
    names = {e.ref: e.name for e in events if e.kind == "tool.confirmed"}
    todo = []
    for e in events:
        if e.kind == "tool.confirmed" and names[e.ref] not in done_names and e.ref not in todo:
            todo.append(e.ref)
    return split(events, idempotent, todo)


def requested_without_outcome_by_count(events, idempotent):
    confirmed = [e.ref for e in events if e.kind == "tool.confirmed"]
    outcomes = sum(1 for e in events if e.kind in ("tool.finished", "tool.failed"))
    todo = []
    for ref in confirmed[outcomes:]:
        if ref not in todo:
            todo.append(ref)
    return split(events, idempotent, todo)



# --- rules that get the outcome records right but not which started call may run again ---


def reruns_every_started_call(events, idempotent):
    done = {e.ref for e in events if e.kind in ("tool.finished", "tool.failed")}
    run = []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in run:
            run.append(e.ref)
    return run, []


def asks_about_every_started_call(events, idempotent):
    done = {e.ref for e in events if e.kind in OUTCOME}
    started = {e.ref for e in events if e.kind == "tool.requested"}
    left = [r for r in dict.fromkeys(confirmed_ids(events)) if r not in done]
    return [r for r in left if r not in started], [r for r in left if r in started]


def asks_about_every_write(events, idempotent):
    done = {e.ref for e in events if e.kind in OUTCOME}
    run, ask = [], []
    for e in events:
        if e.kind == "tool.confirmed" and e.ref not in done and e.ref not in run + ask:
            (run if e.name in idempotent else ask).append(e.ref)
    return run, ask


def idempotent_by_heart(events, idempotent):
    reads = {"lookup_incident", "get_service_status", "search_logs"}
    return by_call_id(events, reads)


def concurrency_safe_means_idempotent(events, idempotent):
    from keel_lab.course import incident_tools
    tools = incident_tools()
    safe = {e.name for e in events if e.kind == "tool.confirmed"
            and tools.get(e.name).concurrency_safe}
    return by_call_id(events, safe)


def name_from_the_requested_record(events, idempotent):
    done = {e.ref for e in events if e.kind in OUTCOME}
    risky = {e.ref for e in events if e.kind == "tool.requested" and e.name not in idempotent}
    left = [r for r in dict.fromkeys(confirmed_ids(events)) if r not in done]
    return [r for r in left if r not in risky], [r for r in left if r in risky]


def drops_the_risky_calls(events, idempotent):
    run, _ask = by_call_id(events, idempotent)
    return run, []


def lists_swapped(events, idempotent):
    run, ask = by_call_id(events, idempotent)
    return ask, run


def one_list(events, idempotent):
    run, ask = by_call_id(events, idempotent)
    return run + ask


def risky_in_both(events, idempotent):
    run, ask = by_call_id(events, idempotent)
    return run + ask, ask


def a_dict(events, idempotent):
    run, ask = by_call_id(events, idempotent)
    return {"run": run, "ask": ask}


# --- rules that misread what a person decided (restarts that wait for approval) ---

PAUSE = "tool.awaiting_approval"


def pause_is_an_outcome(events, idempotent):
    done = {e.ref for e in events if e.kind in (*OUTCOME, PAUSE)}
    return split(events, idempotent,
                 [c for c in dict.fromkeys(confirmed_ids(events)) if c not in done])


def paused_in_neither_list(events, idempotent):
    """The right answers' last-state rule before it let a pause leave a call's state alone."""
    state, name = {}, {}
    for e in events:
        if e.kind == "tool.confirmed":
            name[e.ref] = e.name
        if e.kind != "model.called":
            state[e.ref] = state.get(e.ref) if state.get(e.ref) in OUTCOME else e.kind
    open_calls = [(ref, kind) for ref, kind in state.items() if kind not in OUTCOME]
    return ([ref for ref, kind in open_calls
             if kind == "tool.confirmed" or name[ref] in idempotent],
            [ref for ref, kind in open_calls
             if kind == "tool.requested" and name[ref] not in idempotent])


def denied_runs_again(events, idempotent):
    # a denied call never ran, so it is still to do
    done = {e.ref for e in events if e.kind in OUTCOME and e.code != "approval_denied"}
    return split(events, idempotent,
                 [c for c in dict.fromkeys(confirmed_ids(events)) if c not in done])


def gated(events):
    return {e.ref for e in events if e.kind == PAUSE}


def approved_asked_again(events, idempotent):
    # a call that needed a person's approval needs it again after a restart
    run, ask = by_call_id(events, idempotent)
    calls = list(dict.fromkeys(confirmed_ids(events)))
    return ([c for c in run if c not in gated(events)],
            [c for c in calls if c in gated(events) or c in ask])


def paused_call_asked(events, idempotent):
    run, ask = by_call_id(events, idempotent)
    return ([c for c in run if c not in gated(events)],
            [c for c in dict.fromkeys(confirmed_ids(events))
             if c in ask or (c in run and c in gated(events))])


def approval_allows_a_rerun(events, idempotent):
    run, ask = by_call_id(events, idempotent)
    return ([c for c in dict.fromkeys(confirmed_ids(events))
             if c in run or (c in ask and c in gated(events))],
            [c for c in ask if c not in gated(events)])


def hands_to_the_policy(events, idempotent):
    from keel_lab.course._production.store import resume_plan
    return resume_plan(events, idempotent)


WRONG = [
    (everything, "call-1 finished first, call-0 still running: you returned (['step-0:call-0', "
                 "'step-0:call-1'], []), expected (['step-0:call-0'], []) - step-0:call-1 already "
                 "has its tool.finished record"),
    (by_position, "you returned (['step-0:call-1'], []), expected (['step-0:call-0'], []) - "
                  "step-0:call-1 already has its tool.finished record"),
    (started_is_done, "call-1 finished first, call-0 still running: you returned ([], []), "
                      "expected (['step-0:call-0'], []) - step-0:call-0 started (tool.requested) "
                      "but has no outcome record"),
    (finished_only, "call-1 failed, call-0 still running: you returned (['step-0:call-0', "
                    "'step-0:call-1'], []), expected (['step-0:call-0'], []) - step-0:call-1 "
                    "already has its tool.failed record"),
    (by_tool_name, "call-1 finished first, call-0 still running: you returned ([], []), expected "
                   "(['step-0:call-0'], []) - step-0:call-0 started"),
    (first_turn_only, "the second model turn: its call-1 finished, its call-0 still running: you "
                      "returned ([], []), expected (['step-1:call-0'], []) - step-1:call-0 "
                      "started"),
    (by_id_tail, "the second model turn: its call-1 finished, its call-0 still running: you "
                 "returned ([], []), expected (['step-1:call-0'], [])"),
    (every_open_record, "step-0:call-0 is listed twice: a restarted turn runs each call once"),
    (newest_first, "a crash before any call started: you returned (['step-0:call-1', "
                   "'step-0:call-0'], []), expected (['step-0:call-0', 'step-0:call-1'], []) - the "
                   "right calls in another order"),
    (a_set, "a crash before any call started: the calls to run are a set"),
    (the_records, "return call ids (each record's `ref`), not a Record"),
    (delegates, "hands the exercise to the lab's own keel_lab.course._production.store.to_resume"),
    (returns_nothing, "returned None"),
    (only_finished, "call-1 failed, call-0 still running: you returned (['step-0:call-0', "
                    "'step-0:call-1'], []), expected (['step-0:call-0'], []) - step-0:call-1 "
                    "already has its tool.failed record"),
    (requested_is_done, "call-1 finished first, call-0 still running: you returned ([], []), "
                        "expected (['step-0:call-0'], []) - step-0:call-0 started (tool.requested) "
                        "but has no outcome record"),
    (from_requested, "a crash before any call started: you returned ([], []), expected "
                     "(['step-0:call-0', 'step-0:call-1'], []) - step-0:call-0 was confirmed but "
                     "never started: it must still run"),
    (sorted_ids, ("eleven lookups, four at a time: call-1 finished, three running, seven never "
                  "started: you returned (['step-0:call-0', 'step-0:call-10', 'step-0:call-2',",
                  "the right calls in another order: return them in request order")),
    (by_name, "call-1 finished first, call-0 still running: you returned ([], []), expected "
              "(['step-0:call-0'], []) - step-0:call-0 started (tool.requested) but has no outcome "
              "record"),
    (short_ids, "a crash before any call started: you returned (['call-0', 'call-1'], []), "
                "expected (['step-0:call-0', 'step-0:call-1'], []) - call-0 is only the end of a "
                "call id: return the full call id (the record's `ref`)"),
    (tail_collision, "the second model turn: its call-1 finished, its call-0 still running: you "
                     "returned ([], []), expected (['step-1:call-0'], []) - step-1:call-0 started "
                     "(tool.requested) but has no outcome record"),
    (records_not_ids, "a crash before any call started: you returned (['a Record', 'a Record'], "
                      "[]), expected (['step-0:call-0', 'step-0:call-1'], []) - return call ids "
                      "(each record's `ref`), not a Record"),
    (positional, "call-1 finished first, call-0 still running: you returned (['step-0:call-1'], "
                 "[]), expected (['step-0:call-0'], []) - step-0:call-1 already has its "
                 "tool.finished record: that is its outcome, and running it again could repeat its "
                 "effect - an outcome record belongs to the call its `ref` names: match outcomes "
                 "to calls by call id, not by position"),
    (reversed_order, "a crash before any call started: you returned (['step-0:call-1', "
                     "'step-0:call-0'], []), expected (['step-0:call-0', 'step-0:call-1'], []) - "
                     "the right calls in another order: return them in request order"),
    (step_0_only, "the second model turn: its call-1 finished, its call-0 still running: you "
                  "returned ([], []), expected (['step-1:call-0'], []) - step-1:call-0 started "
                  "(tool.requested) but has no outcome record"),
    (off_by_one, "a crash before any call started: you returned (['step-0:call-0'], []), "
                 "expected (['step-0:call-0', 'step-0:call-1'], []) - step-0:call-1 was confirmed "
                 "but never started"),
    (failure_stops, "call-1 failed, call-0 still running: you returned (['step-0:call-0', "
                    "'step-0:call-1'], []), expected (['step-0:call-0'], []) - step-0:call-1 "
                    "already has its tool.failed record"),
    (last_state, "call-1 finished first, call-0 still running: you returned ([], []), expected "
                 "(['step-0:call-0'], []) - step-0:call-0 started (tool.requested) but has no "
                 "outcome record"),
    (set_result, "a crash before any call started: the calls to run are a set, expected a list "
                 "of call ids in request order"),
    (none_when_empty, "every call finished, the model not called again yet (return two empty "
                      "lists when no call is left): your function returned None"),
    (start_order, "section 1's turn on the graph: call-4 started, call-3 still waits for call-0: "
                  "you returned (['step-0:call-0', 'step-0:call-1', 'step-0:call-2', "
                  "'step-0:call-4', 'step-0:call-3', 'step-0:call-5'], []), expected "
                  "(['step-0:call-0', 'step-0:call-1', 'step-0:call-2', 'step-0:call-3', "
                  "'step-0:call-4', 'step-0:call-5'], []) - the right calls in another order: "
                  "return them in request order"),
    (by_time_desc, "a crash before any call started: you returned (['step-0:call-1', "
                   "'step-0:call-0'], []), expected (['step-0:call-0', 'step-0:call-1'], []) - the "
                   "right calls in another order: return them in request order"),
    (started_if_any, ("eleven lookups, four at a time: call-1 finished, three running, seven never "
                      "started: you returned (['step-0:call-0', 'step-0:call-2', 'step-0:call-3'], "
                      "[]), expected",
                      "- step-0:call-4 was confirmed but never started: it must still run")),
    (union_twice, "restarted once, call-0 started again, then a second crash: you returned "
                  "(['step-0:call-0', 'step-0:call-0'], []), expected (['step-0:call-0'], []) - "
                  "step-0:call-0 is listed twice"),
    (count_diff, "restarted once, call-0 started again, then a second crash: you returned ([], "
                 "[]), expected (['step-0:call-0'], []) - step-0:call-0 started (tool.requested) "
                 "but has no outcome record"),
    (by_content, "the second model turn asks again for auth-api's status, which step-0 already "
                 "got: you returned (['step-1:call-1'], []), expected (['step-1:call-0', "
                 "'step-1:call-1'], []) - step-1:call-0 asks for what step-0:call-2 got (same "
                 "tool, same arguments), but it is a call of its own"),
    (last_started_only, "call-1 finished first, call-0 still running: you returned ([], []), "
                        "expected (['step-0:call-0'], []) - step-0:call-0 started (tool.requested) "
                        "but has no outcome record"),
    (started_not_finished_only, "['step-0:call-0', 'step-0:call-1'], []) - step-0:call-0 was "
                                "confirmed but never started: it must still run"),
    (failed_runs_again, "already has its tool.failed record: that is its outcome, and running it "
                        "again could repeat its effect"),
    (sorted_refs, "- the right calls in another order: return them in request order (the order "
                  "of their tool.confirmed records)"),
    (same_request_already_answered, "(same tool, same arguments), but it is a call of its own: "
                                    "only an outcome record with its own id means it ran"),
    (returns_records, "Record'], []), expected (['step-0:call-0', 'step-0:call-1'], []) - return "
                      "call ids (each record's `ref`), not a Record"),
    (started_counts_as_done, "started (tool.requested) but has no outcome record: nothing says "
                             "it ran to the end, so it must run again"),
    (drops_last_record, "['step-0:call-0', 'step-0:call-1'], []) - step-0:call-1 was confirmed "
                        "but never started: it must still run"),
    (short_ids_fresh, "'step-0:call-1'], []) - step-0:call-0 is only the end of a call id: "
                      "return the full call id (the record's `ref`)"),
    (none_when_nothing_left, "your function returned None - is a `return` missing?"),
    (reversed_order_fresh, "- the right calls in another order: return them in request order "
                           "(the order of their tool.confirmed records)"),
    (finished_only_by_name, "already has its tool.finished record: that is its outcome, and "
                            "running it again could repeat its effect"),
    (requested_without_outcome_by_count, "- an outcome record belongs to the call its `ref` "
                                         "names: match outcomes to calls by call id, not by "
                                         "position"),
    (reruns_every_started_call, "section 4's note turn: the note started, no outcome record: "
                                "you returned (['step-0:call-0'], []), expected ([], "
                                "['step-0:call-0']) - step-0:call-0 started (tool.requested) but "
                                "has no outcome record, and add_incident_note is not in "
                                "`idempotent`: its effect may have happened just before the "
                                "crash, and running it again would repeat it"),
    (asks_about_every_started_call, "call-1 finished first, call-0 still running: you returned "
                                    "([], ['step-0:call-0']), expected (['step-0:call-0'], []) - "
                                    "step-0:call-0 started but has no outcome record, and "
                                    "lookup_incident is in `idempotent`: running it twice does "
                                    "no harm, so no one needs to be asked"),
    (asks_about_every_write, ("section 1's turn on the graph: call-4 started, call-3 still "
                              "waits for call-0: you returned (['step-0:call-0', 'step-0:call-1', "
                              "'step-0:call-2', 'step-0:call-4', 'step-0:call-5'], "
                              "['step-0:call-3']), expected",
                              "- step-0:call-3 was confirmed but never started: nothing of it "
                              "can have happened yet, so no one needs to be asked")),
    (idempotent_by_heart, "the same note turn, its note tool de-duplicating on the call id "
                          "(named in `idempotent`): you returned ([], ['step-0:call-0']), "
                          "expected (['step-0:call-0'], []) - step-0:call-0 started but has no "
                          "outcome record, and add_incident_note is in `idempotent`"),
    (concurrency_safe_means_idempotent, "the same note turn, its note tool de-duplicating on the "
                                        "call id (named in `idempotent`): you returned ([], "
                                        "['step-0:call-0'])"),
    (name_from_the_requested_record, "call-1 finished first, call-0 still running: you returned "
                                     "([], ['step-0:call-0']), expected (['step-0:call-0'], []) "
                                     "- step-0:call-0 started but has no outcome record, and "
                                     "lookup_incident is in `idempotent`"),
    (drops_the_risky_calls, "section 4's note turn: the note started, no outcome record: you "
                            "returned ([], []), expected ([], ['step-0:call-0']) - step-0:call-0 "
                            "started (tool.requested) but has no outcome record: nothing says it "
                            "ran to the end, and a person must decide whether add_incident_note, "
                            "which is not in `idempotent`, runs again"),
    (lists_swapped, "a crash before any call started: you returned ([], ['step-0:call-0', "
                    "'step-0:call-1']), expected (['step-0:call-0', 'step-0:call-1'], []) - "
                    "step-0:call-0 was confirmed but never started: nothing of it can have "
                    "happened yet, so no one needs to be asked"),
    (one_list, "a crash before any call started: your function returned one list of call ids, "
               "expected two lists of call ids, each in request order: (the calls to run, the "
               "calls to ask a person about)"),
    (risky_in_both, "section 4's note turn: the note started, no outcome record: you returned "
                    "(['step-0:call-0'], ['step-0:call-0']), expected ([], ['step-0:call-0']) - "
                    "step-0:call-0 is in both lists: a call either runs now or waits for a "
                    "person"),
    (a_dict, "a crash before any call started: your function returned a dict, expected two "
             "lists of call ids"),
    (pause_is_an_outcome, "three restarts: call-0 approved and finished, call-1 denied, call-2 "
                          "waits for approval: you returned ([], []), expected "
                          "(['step-0:call-2'], []) - step-0:call-2 waits for a person's decision "
                          "(tool.awaiting_approval): a pause is no outcome, and the call never "
                          "started, so it must still run"),
    (paused_in_neither_list, "step-0:call-2 waits for a person's decision "
                             "(tool.awaiting_approval): a pause is no outcome"),
    (denied_runs_again, "three restarts: call-0 approved and finished, call-1 denied, call-2 "
                        "waits for approval: you returned (['step-0:call-1', 'step-0:call-2'], "
                        "[]), expected (['step-0:call-2'], []) - step-0:call-1 already has its "
                        "tool.failed record (approval_denied): a person refused it, the refusal "
                        "is its outcome, and running it would do what they refused"),
    (approved_asked_again, "three restarts: call-0 approved and finished, call-1 denied, call-2 "
                           "waits for approval: you returned ([], ['step-0:call-0', "
                           "'step-0:call-1', 'step-0:call-2']), expected (['step-0:call-2'], []) "
                           "- step-0:call-0 already has its tool.finished record: a person "
                           "approved it and it ran; its tool.awaiting_approval record is the "
                           "pause before, not a question still open"),
    (paused_call_asked, "three restarts: call-0 approved and finished, call-1 denied, call-2 "
                        "waits for approval: you returned ([], ['step-0:call-2']), expected "
                        "(['step-0:call-2'], []) - step-0:call-2 paused for approval and never "
                        "started: it goes with the calls to run, and the executor asks the "
                        "person again when it comes to it; `ask` is for calls that may have "
                        "run"),
    (approval_allows_a_rerun, "the same restarts: call-0 approved and started, no outcome "
                              "record: you returned (['step-0:call-0', 'step-0:call-1', "
                              "'step-0:call-2'], []), expected (['step-0:call-1', "
                              "'step-0:call-2'], ['step-0:call-0']) - step-0:call-0 started "
                              "(tool.requested) after a person approved it, but has no outcome "
                              "record, and restart_service is not in `idempotent`: the approval "
                              "was for one run, and its effect may have happened just before "
                              "the crash"),
    (hands_to_the_policy, "hands the exercise to the lab's own "
                          "keel_lab.course._production.store.resume_plan"),
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
    assert v.total == 14 and len(v.lines()) == 15, str(v)


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
    assert v.total == 14 and len(v.lines()) == 15
