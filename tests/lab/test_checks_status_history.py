"""Chapter 5's `status_history` check: wrong answers get the hint naming their case and rule,
right ones written in other styles pass with the same lines."""

import functools
import itertools
import re

import pytest

from keel_checks.partial_success import CASES, story, verify_status_history

pytestmark = pytest.mark.ch5

FATAL = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}
PAUSE = "tool.awaiting_approval"


def with_a_loop(events, fatal=frozenset(FATAL)):  # the notebook's answer
    statuses, partial = [], False
    for event in events:
        if event.code in fatal:
            return [*statuses, "failed"]
        if event.kind == PAUSE:
            statuses.append("waiting_for_approval")
        elif event.code:
            partial = True
    if events and events[-1].kind == PAUSE:
        return statuses
    return [*statuses, "partial" if partial else "completed"]


def by_segments(events):  # split at the pauses, then judge each part
    parts, current = [], []
    for event in events:
        current.append(event)
        if event.kind == PAUSE:
            parts.append(current)
            current = []
    parts.append(current)
    out, errors = [], set()
    for part in parts:
        codes = {e.code for e in part if e.code}
        if codes & FATAL:
            return [*out, "failed"]
        errors |= codes - {"approval_required"}
        if part and part[-1].kind == PAUSE:
            out.append("waiting_for_approval")
        elif part:
            out.append("partial" if errors else "completed")
    return out


def as_a_generator(events):  # yields; the check takes any iterable
    codes = [e.code for e in events]
    stop = next((i for i, c in enumerate(codes) if c in FATAL), None)
    seen = events if stop is None else events[:stop]
    yield from itertools.repeat("waiting_for_approval",
                                sum(e.kind == PAUSE for e in seen))
    if stop is not None:
        yield "failed"
    elif not events or events[-1].kind != PAUSE:
        yield "partial" if any(c and c != "approval_required" for c in codes) else "completed"


def final_only(events):  # the end's status, as if pauses were not stops
    return with_a_loop([e for e in events if e.kind != PAUSE])


def partial_forgotten_at_a_pause(events):
    statuses, partial = [], False
    for event in events:
        if event.code in FATAL:
            return [*statuses, "failed"]
        if event.kind == PAUSE:
            statuses.append("waiting_for_approval")
            partial = False
        elif event.code:
            partial = True
    if events[-1].kind == PAUSE:
        return statuses
    return [*statuses, "partial" if partial else "completed"]


def denial_fails(events):
    if any(e.code == "approval_denied" for e in events):
        return ["waiting_for_approval"] * sum(e.kind == PAUSE for e in events) + ["failed"]
    return with_a_loop(events)


def denial_ignored(events):
    return with_a_loop([e for e in events if e.code != "approval_denied"])


def pauses_counted_first(events):  # every pause in the trace, then the end
    pauses = ["waiting_for_approval"] * sum(e.kind == PAUSE for e in events)
    if any(e.code in FATAL for e in events):
        return [*pauses, "failed"]
    return with_a_loop(events)


def always_an_end(events):  # a status after the last pause too
    statuses = with_a_loop(events)
    if events[-1].kind == PAUSE and statuses[-1] != "failed":
        statuses.append("completed")
    return statuses


def fail_fast(events):
    if any(e.code and e.code != "approval_required" for e in events):
        return ["waiting_for_approval"] * sum(e.kind == PAUSE for e in events) + ["failed"]
    return with_a_loop(events)


def bad_arguments_fatal(events):
    if any(e.code == "invalid_arguments" for e in events):
        return ["failed"]
    return with_a_loop(events)


def only_crashes_fatal(events):  # forgets unknown_tool and invalid_tool_output
    return with_a_loop(events, {"tool_internal_error"})


def last_status_only(events):
    return with_a_loop(events)[-1]


def short_spelling(events):
    return ["waiting" if s == "waiting_for_approval" else s for s in with_a_loop(events)]


def with_the_labs_rule(events):  # a reviewer's: the lab's run_status on each stop's codes
    from keel_lab import run_status
    return [str(run_status([e.code])) for e in events if e.code] or ["completed"]


def built_name(events):
    import importlib
    rule = getattr(importlib.import_module("keel_lab"), "run_" + "status")
    return [str(rule([e.code for e in events]))]


def returns_nothing(events):
    with_a_loop(events)


# A reviewer's answers, checked under the name status_history: wrong ones first, then right
# ones in three more styles.
def missing_invalid_output(events):
    fatal = {"unknown_tool", "tool_internal_error"}  # forgot invalid_tool_output
    out, partial, paused, failed = [], False, False, False
    for e in events:
        if paused and not failed:
            out.append("waiting_for_approval")
            paused = False
        if e.kind == "tool.awaiting_approval":
            paused = True
        elif e.code in fatal:
            failed = True
        elif e.code is not None:
            partial = True
    if failed:
        out.append("failed")
    elif paused:
        out.append("waiting_for_approval")
    else:
        out.append("partial" if partial else "completed")
    return out


def timeout_fatal(events):
    fatal = FATAL | {"tool_timeout"}  # a timeout "is a broken tool"
    out, partial, paused, failed = [], False, False, False
    for e in events:
        if paused and not failed:
            out.append("waiting_for_approval")
            paused = False
        if e.kind == "tool.awaiting_approval":
            paused = True
        elif e.code in fatal:
            failed = True
        elif e.code is not None:
            partial = True
    if failed:
        out.append("failed")
    elif paused:
        out.append("waiting_for_approval")
    else:
        out.append("partial" if partial else "completed")
    return out


def pause_despite_fatal(events):
    # every pause is a stop, even one in the turn a crash already failed
    out, partial, failed = [], False, False
    for e in events:
        if e.kind == "tool.awaiting_approval":
            out.append("waiting_for_approval")
        elif e.code in FATAL:
            failed = True
        elif e.code is not None:
            partial = True
    if failed:
        out.append("failed")
    elif not (events and events[-1].kind == "tool.awaiting_approval"):
        out.append("partial" if partial else "completed")
    return out


def denied_not_partial(events):
    # approval codes are "about approval", not errors: approval_denied not counted as partial
    out, partial, paused, failed = [], False, False, False
    for e in events:
        if paused and not failed:
            out.append("waiting_for_approval")
            paused = False
        if e.kind == "tool.awaiting_approval":
            paused = True
        elif e.code in FATAL:
            failed = True
        elif e.code is not None and not str(e.code).startswith("approval"):
            partial = True
    if failed:
        out.append("failed")
    elif paused:
        out.append("waiting_for_approval")
    else:
        out.append("partial" if partial else "completed")
    return out


def any_code_partial(events):
    # approval_required also makes the end partial
    out, partial, paused, failed = [], False, False, False
    for e in events:
        if paused and not failed:
            out.append("waiting_for_approval")
            paused = False
        if e.code in FATAL:
            failed = True
        elif e.code is not None:
            partial = True
        if e.kind == "tool.awaiting_approval":
            paused = True
    if failed:
        out.append("failed")
    elif paused:
        out.append("waiting_for_approval")
    else:
        out.append("partial" if partial else "completed")
    return out


def partial_reset_at_pause(events):
    # partial forgotten at each stop: only errors after the last resume count
    out, partial, paused, failed = [], False, False, False
    for e in events:
        if paused and not failed:
            out.append("waiting_for_approval")
            paused = False
            partial = False
        if e.kind == "tool.awaiting_approval":
            paused = True
        elif e.code in FATAL:
            failed = True
        elif e.code is not None:
            partial = True
    if failed:
        out.append("failed")
    elif paused:
        out.append("waiting_for_approval")
    else:
        out.append("partial" if partial else "completed")
    return out


def end_even_when_paused(events):
    # always appends an end, even when the trace stops at a pause
    out, partial, failed = [], False, False
    for e in events:
        if e.kind == "tool.awaiting_approval" and not failed:
            out.append("waiting_for_approval")
        elif e.code in FATAL:
            failed = True
        elif e.code is not None and e.code != "approval_required":
            partial = True
    out.append("failed" if failed else "partial" if partial else "completed")
    return out


def one_pause_only(events):
    # "was there a pause?" - at most one waiting_for_approval
    kinds = [e.kind for e in events]
    codes = [e.code for e in events]
    out = []
    failed = any(c in FATAL for c in codes)
    if "tool.awaiting_approval" in kinds and not (failed and kinds[-1] == "tool.awaiting_approval"):
        out.append("waiting_for_approval")
    if kinds and kinds[-1] == "tool.awaiting_approval" and not failed:
        return out
    if failed:
        out.append("failed")
    elif any(c is not None and c != "approval_required" for c in codes):
        out.append("partial")
    else:
        out.append("completed")
    return out


def last_event_decides(events):
    # the end is read from the last event only
    out, paused = [], False
    for e in events:
        if paused:
            out.append("waiting_for_approval")
            paused = False
        if e.kind == "tool.awaiting_approval":
            paused = True
    if paused:
        return [*out, "waiting_for_approval"]
    last = events[-1]
    if last.code in FATAL:
        out.append("failed")
    elif last.code is not None:
        out.append("partial")
    else:
        out.append("completed")
    return out


def invalid_arguments_fatal(events):
    # bad arguments = broken call = fatal
    fatal = FATAL | {"invalid_arguments"}
    out, partial, paused, failed = [], False, False, False
    for e in events:
        if paused and not failed:
            out.append("waiting_for_approval")
            paused = False
        if e.kind == "tool.awaiting_approval":
            paused = True
        elif e.code in fatal:
            failed = True
        elif e.code is not None:
            partial = True
    if failed:
        out.append("failed")
    elif paused:
        out.append("waiting_for_approval")
    else:
        out.append("partial" if partial else "completed")
    return out


def returns_final_only(events):
    # returns the final status as a string (misread: "the run's status")
    failed = any(e.code in FATAL for e in events)
    if failed:
        return "failed"
    if events and events[-1].kind == "tool.awaiting_approval":
        return "waiting_for_approval"
    if any(e.code not in (None, "approval_required") for e in events):
        return "partial"
    return "completed"


def never_partial(events):
    # partial is a flag on a completed run, so the status is "completed"
    out, paused, failed = [], False, False
    for e in events:
        if paused and not failed:
            out.append("waiting_for_approval")
            paused = False
        if e.kind == "tool.awaiting_approval":
            paused = True
        elif e.code in FATAL:
            failed = True
    if failed:
        out.append("failed")
    elif paused:
        out.append("waiting_for_approval")
    else:
        out.append("completed")
    return out


def fatal_drops_pauses(events):
    # a failed run is just ["failed"]: earlier pauses forgotten
    if any(e.code in FATAL for e in events):
        return ["failed"]
    out, partial, paused = [], False, False
    for e in events:
        if paused:
            out.append("waiting_for_approval")
            paused = False
        if e.kind == "tool.awaiting_approval":
            paused = True
        elif e.code is not None:
            partial = True
    out.append("waiting_for_approval" if paused else "partial" if partial else "completed")
    return out


def dedupe_statuses(events):
    # builds the list without repeats ("the statuses it went through")
    out, partial, paused, failed = [], False, False, False
    def add(s):
        if s not in out:
            out.append(s)
    for e in events:
        if paused and not failed:
            add("waiting_for_approval")
            paused = False
        if e.kind == "tool.awaiting_approval":
            paused = True
        elif e.code in FATAL:
            failed = True
        elif e.code is not None:
            partial = True
    if failed:
        add("failed")
    elif paused:
        add("waiting_for_approval")
    else:
        add("partial" if partial else "completed")
    return out


def partial_last_turn_only(events):
    # partial only if an error is in the last model turn (since the second-to-last model.called)
    out, paused, failed = [], False, False
    turn_codes = []
    prev_turn_codes = []
    for e in events:
        if paused and not failed:
            out.append("waiting_for_approval")
            paused = False
        if e.kind == "model.called":
            prev_turn_codes, turn_codes = turn_codes, []
            continue
        turn_codes.append(e.code)
        if e.kind == "tool.awaiting_approval":
            paused = True
        elif e.code in FATAL:
            failed = True
    if failed:
        out.append("failed")
    elif paused:
        out.append("waiting_for_approval")
    else:
        codes = prev_turn_codes + turn_codes
        out.append("partial" if any(c not in (None, "approval_required") for c in codes)
                   else "completed")
    return out


def crash_wipes_pauses(events):
    # fatal outranks a pause only when the crash is *recorded before* the pause
    # (and a crash after the resume also un-does the pause)
    out, partial, failed = [], False, False
    pauses = 0
    for e in events:
        if e.kind == "tool.awaiting_approval" and not failed:
            pauses += 1
        elif e.code in FATAL:
            failed = True
            pauses = 0  # the crash outranks the pause(s)
        elif e.code not in (None, "approval_required"):
            partial = True
    out += ["waiting_for_approval"] * pauses
    if failed:
        out.append("failed")
    elif not (events and events[-1].kind == "tool.awaiting_approval"):
        out.append("partial" if partial else "completed")
    return out


def kind_only(events):
    # reads kinds only: tool.failed = fatal, ignoring the code
    out, paused, failed = [], False, False
    for e in events:
        if paused and not failed:
            out.append("waiting_for_approval")
            paused = False
        if e.kind == "tool.awaiting_approval":
            paused = True
        elif e.kind == "tool.failed":
            failed = True
    if failed:
        out.append("failed")
    elif paused:
        out.append("waiting_for_approval")
    else:
        out.append("completed")
    return out


def crash_must_be_last(events):
    # "a crash stops the run", so the run failed only if the trace ends on the crash
    # (forgets that the crash's siblings still run and are recorded after it)
    out, partial, paused = [], False, False
    for e in events:
        if paused:
            out.append("waiting_for_approval")
            paused = False
        if e.kind == "tool.awaiting_approval":
            paused = True
        elif e.code is not None and e.code not in FATAL:
            partial = True
    if events and events[-1].code in FATAL:
        out.append("failed")
    elif paused:
        out.append("waiting_for_approval")
    else:
        out.append("partial" if partial else "completed")
    return out


def turn_fatal_cancels_pauses(events):
    # "a fatal code outranks a pause in the same turn", with turns cut at model.called:
    # a pause resumed and then followed by a crash in the same model turn is dropped too
    turns = []
    for e in events:
        if e.kind == "model.called" or not turns:
            turns.append([])
        turns[-1].append(e)
    out, partial = [], False
    for turn in turns:
        fatal = any(e.code in FATAL for e in turn)
        partial |= any(e.code not in (None, "approval_required") and e.code not in FATAL
                       for e in turn)
        if fatal:
            return [*out, "failed"]
        out += ["waiting_for_approval" for e in turn if e.kind == "tool.awaiting_approval"]
    if events and events[-1].kind == "tool.awaiting_approval":
        return out
    return [*out, "partial" if partial else "completed"]


def failed_then_keeps_going(events):
    # appends each status as it happens; "failed" at the crash, and keeps reading
    out, partial = [], False
    for e in events:
        if e.kind == "tool.awaiting_approval":
            out.append("waiting_for_approval")
        elif e.code in FATAL:
            out.append("failed")
        elif e.code is not None:
            partial = True
    if "failed" not in out and not (events and events[-1].kind == "tool.awaiting_approval"):
        out.append("partial" if partial else "completed")
    return out


def folded(events):
    """A fold over (statuses, partial, paused, failed)."""
    def step(state, e):
        out, partial, paused, failed = state
        if paused and not failed:
            out = (*out, "waiting_for_approval")
            paused = False
        if e.kind == "tool.awaiting_approval":
            paused = True
        elif e.code in FATAL:
            failed = True
        elif e.code is not None:
            partial = True
        return out, partial, paused, failed

    out, partial, paused, failed = functools.reduce(step, events, ((), False, False, False))
    if failed:
        return [*out, "failed"]
    if paused:
        return [*out, "waiting_for_approval"]
    return [*out, "partial" if partial else "completed"]


def by_regex(events):
    """Encode the trace as letters and read the stops with regexes."""
    def letter(e):
        if e.kind == "tool.awaiting_approval":
            return "P"
        if e.code in FATAL:
            return "F"
        if e.code is not None:
            return "B"
        return "."
    s = "".join(map(letter, events))
    crash = re.search(r"F", s)
    if crash:  # a pause is a stop only if resumed before the crash
        return ["waiting_for_approval"] * len(re.findall(r"P", s[:crash.start()])) + ["failed"]
    stops = ["waiting_for_approval"] * len(re.findall(r"P(?=.)", s))
    if re.search(r"P$", s):
        return [*stops, "waiting_for_approval"]
    return [*stops, "partial" if re.search(r"B", s) else "completed"]


class _Run:
    def __init__(self):
        self.stops, self.partial, self.pending, self.dead = [], False, False, False

    def feed(self, e):
        if self.dead:
            return  # siblings of the crash: nothing they do changes the end
        if self.pending:
            self.stops.append("waiting_for_approval")
            self.pending = False
        handler = getattr(self, "on_" + e.kind.replace(".", "_"))
        handler(e)

    def on_model_called(self, e):
        pass

    def on_tool_requested(self, e):
        pass

    def on_tool_finished(self, e):
        self._code(e.code)

    def on_tool_failed(self, e):
        self._code(e.code)

    def on_tool_awaiting_approval(self, e):
        self.pending = True

    def _code(self, code):
        if code is None:
            return
        if str(code) in FATAL:
            self.dead = True
            self.stops.append("failed")
        else:
            self.partial = True

    def result(self):
        if self.dead:
            return list(self.stops)
        if self.pending:
            return [*self.stops, "waiting_for_approval"]
        return [*self.stops, "partial" if self.partial else "completed"]


def by_handlers(events):
    """A little state object with one handler per event kind."""
    run = _Run()
    for e in events:
        run.feed(e)
    return run.result()


RIGHT = [with_a_loop, by_segments, as_a_generator, folded, by_regex, by_handlers]

# --- a tester's answers who had not read the check (issue 22) ---


def ignores_pauses(events):
    fatal = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}
    codes = [e.code for e in events if e.code and e.code != "approval_required"]
    if any(c in fatal for c in codes):
        return ["failed"]
    return ["partial" if codes else "completed"]


def any_code_fails(events):
    statuses = []
    for e in events:
        if e.kind == "tool.awaiting_approval":
            statuses.append("waiting_for_approval")
        elif e.code:
            return statuses + ["failed"]  # noqa: RUF005
    if events and events[-1].kind == "tool.awaiting_approval":
        return statuses
    return statuses + ["completed"]  # noqa: RUF005


def approval_required_is_partial(events):
    fatal = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}
    statuses, partial = [], False
    for e in events:
        if e.code in fatal:
            return statuses + ["failed"]  # noqa: RUF005
        if e.kind == "tool.awaiting_approval":
            statuses.append("waiting_for_approval")
        if e.code:
            partial = True
    if events and events[-1].kind == "tool.awaiting_approval":
        return statuses
    return statuses + ["partial" if partial else "completed"]  # noqa: RUF005


def end_after_pause_too(events):
    fatal = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}
    statuses, partial = [], False
    for e in events:
        if e.code in fatal:
            return statuses + ["failed"]  # noqa: RUF005
        if e.kind == "tool.awaiting_approval":
            statuses.append("waiting_for_approval")
        elif e.code:
            partial = True
    return statuses + ["partial" if partial else "completed"]  # noqa: RUF005


def stops_at_first_pause(events):
    fatal = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}
    partial = False
    for e in events:
        if e.code in fatal:
            return ["failed"]
        if e.kind == "tool.awaiting_approval":
            return ["waiting_for_approval"]
        if e.code:
            partial = True
    return ["partial" if partial else "completed"]


def pauses_deduplicated(events):
    fatal = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}
    statuses, partial = [], False
    for e in events:
        if e.code in fatal:
            return statuses + ["failed"]  # noqa: RUF005
        if e.kind == "tool.awaiting_approval":
            if "waiting_for_approval" not in statuses:
                statuses.append("waiting_for_approval")
        elif e.code:
            partial = True
    if events and events[-1].kind == "tool.awaiting_approval":
        return statuses
    return statuses + ["partial" if partial else "completed"]  # noqa: RUF005


def pause_counted_before_fatal(events):
    fatal = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}
    statuses = ["waiting_for_approval" for e in events if e.kind == "tool.awaiting_approval"]
    if any(e.code in fatal for e in events):
        return statuses + ["failed"]  # noqa: RUF005
    if events and events[-1].kind == "tool.awaiting_approval":
        return statuses
    partial = any(e.code and e.code != "approval_required" for e in events)
    return statuses + ["partial" if partial else "completed"]  # noqa: RUF005


def partial_reset_each_turn(events):
    fatal = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}
    statuses, partial = [], False
    for e in events:
        if e.kind == "model.called":
            partial = False
        if e.code in fatal:
            return statuses + ["failed"]  # noqa: RUF005
        if e.kind == "tool.awaiting_approval":
            statuses.append("waiting_for_approval")
        elif e.code:
            partial = True
    if events and events[-1].kind == "tool.awaiting_approval":
        return statuses
    return statuses + ["partial" if partial else "completed"]  # noqa: RUF005


def denial_is_fatal(events):
    fatal = {"unknown_tool", "tool_internal_error", "invalid_tool_output", "approval_denied"}
    statuses, partial = [], False
    for e in events:
        if e.code in fatal:
            return statuses + ["failed"]  # noqa: RUF005
        if e.kind == "tool.awaiting_approval":
            statuses.append("waiting_for_approval")
        elif e.code:
            partial = True
    if events and events[-1].kind == "tool.awaiting_approval":
        return statuses
    return statuses + ["partial" if partial else "completed"]  # noqa: RUF005


def end_only_after_model_called(events):
    fatal = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}
    statuses, partial = [], False
    for e in events:
        if e.kind == "tool.awaiting_approval":
            statuses.append("waiting_for_approval")
        elif e.code:
            partial = True
    if not events or events[-1].kind != "model.called":
        return statuses
    if any(e.code in fatal for e in events):
        return statuses + ["failed"]  # noqa: RUF005
    return statuses + ["partial" if partial else "completed"]  # noqa: RUF005


def returns_string_when_one(events):
    fatal = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}
    statuses, partial = [], False
    for e in events:
        if e.code in fatal:
            statuses.append("failed")
            break
        if e.kind == "tool.awaiting_approval":
            statuses.append("waiting_for_approval")
        elif e.code:
            partial = True
    else:
        if not (events and events[-1].kind == "tool.awaiting_approval"):
            statuses.append("partial" if partial else "completed")
    return statuses[0] if len(statuses) == 1 else statuses


def forgets_invalid_tool_output(events):
    fatal = {"unknown_tool", "tool_internal_error"}
    statuses, partial = [], False
    for e in events:
        if e.code in fatal:
            return statuses + ["failed"]  # noqa: RUF005
        if e.kind == "tool.awaiting_approval":
            statuses.append("waiting_for_approval")
        elif e.code:
            partial = True
    if events and events[-1].kind == "tool.awaiting_approval":
        return statuses
    return statuses + ["partial" if partial else "completed"]  # noqa: RUF005


def compares_event_to_string(events):
    fatal = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}
    statuses, partial = [], False
    for e in events:
        if e.code in fatal:
            return statuses + ["failed"]  # noqa: RUF005
        if e == "tool.awaiting_approval":
            statuses.append("waiting_for_approval")
        elif e.code and e.code != "approval_required":
            partial = True
    if events and events[-1] == "tool.awaiting_approval":
        return statuses
    return statuses + ["partial" if partial else "completed"]  # noqa: RUF005


def tool_failed_kind_means_failed(events):
    statuses, partial = [], False
    for e in events:
        if e.kind == "tool.failed" and e.code != "approval_denied":
            return statuses + ["failed"]  # noqa: RUF005
        if e.kind == "tool.awaiting_approval":
            statuses.append("waiting_for_approval")
        elif e.code:
            partial = True
    if events and events[-1].kind == "tool.awaiting_approval":
        return statuses
    return statuses + ["partial" if partial else "completed"]  # noqa: RUF005


def last_event_only(events):
    fatal = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}
    statuses = ["waiting_for_approval" for e in events if e.kind == "tool.awaiting_approval"]
    last = events[-1]
    if last.kind == "tool.awaiting_approval":
        return statuses
    if last.code in fatal:
        return statuses + ["failed"]  # noqa: RUF005
    if any(e.code and e.code != "approval_required" for e in events):
        return statuses + ["partial"]  # noqa: RUF005
    return statuses + ["completed"]  # noqa: RUF005


def mutates_events(events):
    fatal = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}
    statuses, partial = [], False
    waiting_at_end = bool(events) and events[-1].kind == "tool.awaiting_approval"
    while events:
        e = events.pop(0)
        if e.code in fatal:
            return statuses + ["failed"]  # noqa: RUF005
        if e.kind == "tool.awaiting_approval":
            statuses.append("waiting_for_approval")
        elif e.code:
            partial = True
    if waiting_at_end:
        return statuses
    return statuses + ["partial" if partial else "completed"]  # noqa: RUF005


WRONG = [
    (final_only, "a restart nobody has decided yet [model.called, "
                 "tool.awaiting_approval(approval_required)]: expected "
                 "['waiting_for_approval'], got ['completed'] - the trace ends at the pause"),
    (partial_forgotten_at_a_pause,
     "a missing incident, then a restart approved [model.called, tool.requested, "
     "tool.failed(incident_not_found), model.called, tool.awaiting_approval(approval_required), "
     "tool.requested, tool.finished, model.called]: expected ['waiting_for_approval', "
     "'partial'], got ['waiting_for_approval', 'completed'] (return 'partial', not 'completed'"),
    (denial_fails, "a restart, denied [model.called, tool.awaiting_approval(approval_required), "
                   "tool.failed(approval_denied), model.called]: expected ['waiting_for_approval',"
                   " 'partial'], got ['waiting_for_approval', 'failed']"),
    (denial_ignored, "a restart, denied [model.called, "
                     "tool.awaiting_approval(approval_required), tool.failed(approval_denied), "
                     "model.called]: expected ['waiting_for_approval', 'partial'], got "
                     "['waiting_for_approval', 'completed'] (return 'partial', not 'completed': "
                     "a run that completes with an error in it is 'partial') - a person's no"),
    (pauses_counted_first, "a crash, then a restart in the same turn [model.called, "
                           "tool.requested, tool.failed(tool_internal_error), "
                           "tool.awaiting_approval(approval_required)]: expected ['failed'], got"
                           " ['waiting_for_approval', 'failed'] (one status each time the runner"
                           " stopped"),
    (always_an_end, "a restart nobody has decided yet [model.called, "
                    "tool.awaiting_approval(approval_required)]: expected "
                    "['waiting_for_approval'], got ['waiting_for_approval', 'completed'] (one "
                    "status each time the runner stopped: at every pause, and at the end unless "
                    "the trace ends paused)"),
    (fail_fast, "a lookup of a missing incident [model.called, tool.requested, tool.finished, "
                "tool.requested, tool.failed(incident_not_found), model.called]: expected "
                "['partial'], got ['failed'] - a business error goes back to the model"),
    (bad_arguments_fatal, "arguments the model got wrong [model.called, tool.requested, "
                          "tool.failed(invalid_arguments), model.called]: expected ['partial'], "
                          "got ['failed'] - invalid_arguments goes back to the model"),
    (only_crashes_fatal, "a tool that does not exist [model.called, tool.requested, "
                         "tool.failed(unknown_tool)]: expected ['failed'], got ['partial'] - an "
                         "unknown tool fails the run"),
    (last_status_only, "one lookup, answered [model.called, tool.requested, tool.finished, "
                       "model.called]: your function returned a str ('completed'), expected a "
                       "list of statuses"),
    (short_spelling, "a restart nobody has decided yet [model.called, "
                     "tool.awaiting_approval(approval_required)]: expected "
                     "['waiting_for_approval'], got ['waiting']"),
    (with_the_labs_rule, "hands the exercise to the lab's own keel_lab.run_status"),
    (built_name, "hands the exercise to the lab's own keel_lab.run_status"),
    (returns_nothing, "one lookup, answered [model.called, tool.requested, tool.finished, "
                      "model.called]: your function returned None"),
    (missing_invalid_output, "a tool that returns no JSON object [model.called, tool.requested, "
                             "tool.failed(invalid_tool_output)]: expected ['failed'], got "
                             "['partial'] - invalid_tool_output is fatal, like a crash"),
    (timeout_fatal, "a metrics query that times out [model.called, tool.requested, "
                    "tool.failed(tool_timeout), model.called]: expected ['partial'], got "
                    "['failed'] - tool_timeout is not fatal: it goes back to the model"),
    (pause_despite_fatal, "a crash, then a restart in the same turn [model.called, "
                          "tool.requested, tool.failed(tool_internal_error), "
                          "tool.awaiting_approval(approval_required)]: expected ['failed'], got "
                          "['waiting_for_approval', 'failed'] (one status each time"),
    (denied_not_partial, "a restart, denied [model.called, "
                         "tool.awaiting_approval(approval_required), tool.failed(approval_denied),"
                         " model.called]: expected ['waiting_for_approval', 'partial'], got "
                         "['waiting_for_approval', 'completed'] (return 'partial', not "
                         "'completed'"),
    (any_code_partial, "expected ['waiting_for_approval', 'completed'], got "
                       "['waiting_for_approval', 'partial'] - the pause, then the approved run "
                       "completes: approval_required is a pause, not an error"),
    (partial_reset_at_pause, "got ['waiting_for_approval', 'completed'] (return 'partial', not "
                             "'completed': a run that completes with an error in it is "
                             "'partial') - the business error before the pause still makes the "
                             "end partial"),
    (end_even_when_paused, "a restart nobody has decided yet [model.called, "
                           "tool.awaiting_approval(approval_required)]: expected "
                           "['waiting_for_approval'], got ['waiting_for_approval', 'completed'] "
                           "(one status each time"),
    (one_pause_only, "two restarts, the second denied [model.called, "
                     "tool.awaiting_approval(approval_required), tool.requested, tool.finished, "
                     "tool.awaiting_approval(approval_required), tool.failed(approval_denied), "
                     "model.called]: expected ['waiting_for_approval', 'waiting_for_approval', "
                     "'partial'], got ['waiting_for_approval', 'partial'] (one status each time"),
    (last_event_decides, "a lookup of a missing incident [model.called, tool.requested, "
                         "tool.finished, tool.requested, tool.failed(incident_not_found), "
                         "model.called]: expected ['partial'], got ['completed'] (return "
                         "'partial', not 'completed'"),
    (invalid_arguments_fatal, "arguments the model got wrong [model.called, tool.requested, "
                              "tool.failed(invalid_arguments), model.called]: expected "
                              "['partial'], got ['failed'] - invalid_arguments goes back to the "
                              "model"),
    (returns_final_only, "one lookup, answered [model.called, tool.requested, tool.finished, "
                         "model.called]: your function returned a str ('completed'), expected a "
                         "list of statuses"),
    (never_partial, "a lookup of a missing incident [model.called, tool.requested, "
                    "tool.finished, tool.requested, tool.failed(incident_not_found), "
                    "model.called]: expected ['partial'], got ['completed'] (return 'partial', "
                    "not 'completed'"),
    (fatal_drops_pauses, "a restart approved, then a crash in the same turn [model.called, "
                         "tool.awaiting_approval(approval_required), tool.requested, "
                         "tool.finished, tool.requested, tool.failed(tool_internal_error)]: "
                         "expected ['waiting_for_approval', 'failed'], got ['failed'] (one "
                         "status each time"),
    (dedupe_statuses, "two restarts, the second denied [model.called, "
                      "tool.awaiting_approval(approval_required), tool.requested, tool.finished, "
                      "tool.awaiting_approval(approval_required), tool.failed(approval_denied), "
                      "model.called]: expected ['waiting_for_approval', 'waiting_for_approval', "
                      "'partial'], got ['waiting_for_approval', 'partial'] (one status each time"),
    (partial_last_turn_only, "a missing incident, then a clean lookup in the next turn "
                             "[model.called, tool.requested, tool.failed(incident_not_found), "
                             "model.called, tool.requested, tool.finished, model.called]: "
                             "expected ['partial'], got ['completed'] (return 'partial', not "
                             "'completed': a run that completes with an error in it is "
                             "'partial') - an error in an earlier turn still makes the end "
                             "partial"),
    (crash_wipes_pauses, "a restart approved, then a crash in the same turn [model.called, "
                         "tool.awaiting_approval(approval_required), tool.requested, "
                         "tool.finished, tool.requested, tool.failed(tool_internal_error)]: "
                         "expected ['waiting_for_approval', 'failed'], got ['failed'] (one "
                         "status each time"),
    (kind_only, "a lookup of a missing incident [model.called, tool.requested, tool.finished, "
                "tool.requested, tool.failed(incident_not_found), model.called]: expected "
                "['partial'], got ['failed'] - a business error goes back to the model"),
    (crash_must_be_last, "two log searches, call-0 crashes [model.called, tool.requested, "
                         "tool.failed(tool_internal_error), tool.requested, tool.finished]: "
                         "expected ['failed'], got ['completed'] - the crash is not the last "
                         "event: the calls after it in its turn still run and are recorded (the "
                         "lab's policy)"),
    (turn_fatal_cancels_pauses, "a restart approved, then a crash in the same turn "
                                "[model.called, tool.awaiting_approval(approval_required), "
                                "tool.requested, tool.finished, tool.requested, "
                                "tool.failed(tool_internal_error)]: expected "
                                "['waiting_for_approval', 'failed'], got ['failed'] (one status "
                                "each time"),
    (failed_then_keeps_going, "a crash, then a restart in the same turn [model.called, "
                              "tool.requested, tool.failed(tool_internal_error), "
                              "tool.awaiting_approval(approval_required)]: expected ['failed'], "
                              "got ['failed', 'waiting_for_approval'] (one status each time"),
    (ignores_pauses, "got ['completed'] - the trace ends at the pause: the run still waits, no "
                     "status after it"),
    (any_code_fails, "got ['failed'] - a business error goes back to the model, which answers "
                     "with what it has: partial"),
    (approval_required_is_partial, "the approved run completes: approval_required is a pause, "
                                   "not an error, so it does not make the end partial"),
    (end_after_pause_too, "the trace ends at the pause: the run still waits, no status after it"),
    (stops_at_first_pause, "the approved run completes: approval_required is a pause, not an "
                           "error, so it does not make the end partial"),
    (pauses_deduplicated, "each pause is a stop; the denial makes the end partial"),
    (pause_counted_before_fatal, "a crash outranks a pause in its turn: nothing waits on a run "
                                 "that cannot go on"),
    (partial_reset_each_turn, "a business error goes back to the model, which answers with what "
                              "it has: partial"),
    (denial_is_fatal, "['waiting_for_approval', 'failed'] - a person's no (approval_denied) is "
                      "a fact the model can explain: partial"),
    (end_only_after_model_called, "a crashed tool fails the run"),
    (returns_string_when_one, "tool.finished, model.called]: your function returned a str "
                              "('completed'), expected a list of statuses"),
    (forgets_invalid_tool_output, "got ['partial'] - invalid_tool_output is fatal, like a "
                                  "crash: the model cannot repair a broken tool's output"),
    (compares_event_to_string, "got ['completed'] - the trace ends at the pause: the run still "
                               "waits, no status after it"),
    (tool_failed_kind_means_failed, "got ['failed'] - a business error goes back to the model, "
                                    "which answers with what it has: partial"),
    (last_event_only, "last event: the calls after it in its turn still run and are recorded "
                      "(the lab's policy); the run still fails"),
    (mutates_events, "your function changed the events list it was given: read the trace, do "
                     "not change it"),
]

# this module's tables of known-wrong answers, by exercise (the instructor's guide shows them)
WRONG_ANSWERS = {"status_history": WRONG}


@pytest.mark.parametrize("answer", RIGHT, ids=lambda f: f.__name__)
def test_right_answers_in_other_styles_pass_with_the_same_lines(answer):
    v = verify_status_history(answer)
    assert v.passed, v.hints
    assert v.lines() == verify_status_history(with_a_loop).lines()


@pytest.mark.parametrize(("answer", "hint"), WRONG, ids=[a.__name__ for a, _ in WRONG])
def test_wrong_answers_get_their_hint_and_the_same_check_count(answer, hint):
    v = verify_status_history(answer)
    assert not v.passed
    assert hint in v.hints[0]
    assert v.total == len(CASES)


def test_the_cases_hold_an_approved_pause_followed_by_a_crash():
    _, statuses = story([[("restart_service", {"service": "checkout"})],
                         [("search_logs", {"service": "billing"})]], [True])
    assert statuses == ["waiting_for_approval", "failed"]


def test_the_cases_reach_every_fatal_code_and_a_timeout_in_real_runs():
    codes = {e.code for _label, _why, turns, decisions in CASES
             for e in story(turns, decisions)[0]}
    assert codes >= FATAL | {"tool_timeout", "invalid_arguments", "approval_denied"}
