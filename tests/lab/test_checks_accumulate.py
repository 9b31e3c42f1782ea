"""Chapter 1's `accumulate` check: each wrong accumulator gets its own hint, right ones written
in other styles pass with the same lines."""

import contextlib
import json
from collections import defaultdict
from functools import reduce
from itertools import groupby

import pytest

from keel_checks.accumulate import verify_accumulate
from keel_lab._core.streaming import Finish, StreamAssembler, TextDelta, ToolCallDelta

pytestmark = pytest.mark.ch1


def with_a_dict(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            call = calls.setdefault(e.index, {"id": None, "name": "", "arguments": ""})
            call["id"] = call["id"] or e.id or None
            call["name"] += e.name or ""
            call["arguments"] += e.arguments_delta or ""
    return [(c["id"], c["name"], c["arguments"]) for _, c in sorted(calls.items())]


def with_defaultdicts(events):
    ids, names, parts = {}, defaultdict(list), defaultdict(list)
    for e in events:
        if not isinstance(e, ToolCallDelta):
            continue
        if e.id and e.index not in ids:
            ids[e.index] = e.id
        names[e.index].append(e.name or "")
        parts[e.index].append(e.arguments_delta or "")
    return [{"id": ids.get(i), "name": "".join(names[i]), "arguments": "".join(parts[i])}
            for i in sorted(names)]


class Pending:
    def __init__(self):
        self.id, self.name, self.arguments = None, "", ""


def with_a_class(events):
    pending = {}
    for e in events:
        if type(e).__name__ == "ToolCallDelta":
            p = pending.get(e.index) or pending.setdefault(e.index, Pending())
            if e.id and not p.id:
                p.id = e.id
            if e.name:
                p.name += e.name
            if e.arguments_delta:
                p.arguments += e.arguments_delta
    return [pending[i] for i in sorted(pending)]


def keyed_by_id(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.id, [e.id, "", ""])
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(c) for c in calls.values()]


def to_the_latest_call(events):
    """A delta without an id goes to the call opened last (the position fallback)."""
    calls = []
    for e in events:
        if isinstance(e, ToolCallDelta):
            if e.id:
                calls.append([e.id, "", ""])
            calls[-1][1] += e.name or ""
            calls[-1][2] += e.arguments_delta or ""
    return [tuple(c) for c in calls]


def first_piece_only(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", None])
            c[0] = c[0] or e.id
            c[1] += e.name or ""
            if c[2] is None and e.arguments_delta:
                c[2] = e.arguments_delta
    return [(c[0], c[1], c[2] or "") for _, c in sorted(calls.items())]


def overwrites_arguments(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            c[0] = c[0] or e.id
            c[1] += e.name or ""
            c[2] = e.arguments_delta or c[2]
    return [tuple(c) for _, c in sorted(calls.items())]


def text_resets_the_calls(events):
    calls = {}
    for e in events:
        if isinstance(e, TextDelta):
            calls = {}  # "the model is talking again: the calls so far were a draft"
        elif isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            c[0] = c[0] or e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(c) for _, c in sorted(calls.items())]


def stops_at_text_after_calls(events):
    calls = {}
    for e in events:
        if isinstance(e, TextDelta) and calls:
            break  # "text after calls: the calls are done"
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            c[0] = c[0] or e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(c) for _, c in sorted(calls.items())]


def sorted_by_id(events):
    return sorted(with_a_dict(events))


def in_arrival_order(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            c[0] = c[0] or e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(c) for c in calls.values()]


def a_list_by_index(events):
    calls = []
    for e in events:
        if isinstance(e, ToolCallDelta):
            while len(calls) <= e.index:
                calls.append([None, "", ""])
            c = calls[e.index]
            c[0] = c[0] or e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(c) for c in calls]


def a_later_empty_id_renames(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            if e.id is not None:
                c[0] = e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(c) for _, c in sorted(calls.items())]


def returns_the_dict(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            c[0] = c[0] or e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return calls


def delegates(events):
    assembler = StreamAssembler()
    for e in events:
        assembler.feed(e)
    return [(c.id, c.name, c.arguments) for c in assembler.calls()]


# A fresh reviewer's answers: the wrong ones, then ones the check accepts.


def arrival_order(events):
    """Calls in the order their first delta arrived, not in index order."""
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            if e.id and c[0] is None:
                c[0] = e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(c) for c in calls.values()]


def last_id_wins(events):
    """Keeps the id of the LAST delta that has one (overwrites), not the first."""
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            if e.id:
                c[0] = e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(calls[i]) for i in sorted(calls)]


def name_overwritten(events):
    """Name is assigned (last non-empty piece wins) instead of joined from pieces."""
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            if e.id and c[0] is None:
                c[0] = e.id
            if e.name:
                c[1] = e.name
            c[2] += e.arguments_delta or ""
    return [tuple(calls[i]) for i in sorted(calls)]


def name_from_first_delta(events):
    """Takes the name only from the call's first delta (like the id), ignoring later name pieces."""
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            if e.index not in calls:
                calls[e.index] = [e.id or None, e.name or "", ""]
            elif e.id and calls[e.index][0] is None:
                calls[e.index][0] = e.id
            calls[e.index][2] += e.arguments_delta or ""
    return [tuple(calls[i]) for i in sorted(calls)]


def empty_id_overwrites(events):
    """Tests `is not None`, not truthiness: a later "" id replaces the real one."""
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            if e.id is not None:
                c[0] = e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(calls[i]) for i in sorted(calls)]


def id_from_first_delta(events):
    """Id taken from the call's very first delta; if that one has none, a later id is ignored."""
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            if e.index not in calls:
                calls[e.index] = [e.id, "", ""]
            c = calls[e.index]
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(calls[i]) for i in sorted(calls)]


def index_as_position(events):
    """Assumes indexes are 0, 1, 2: a new call is appended when index == len(list)."""
    calls = []
    for e in events:
        if isinstance(e, ToolCallDelta):
            if e.index >= len(calls):
                calls.append([None, "", ""])
                pos = len(calls) - 1
            else:
                pos = e.index
            c = calls[pos]
            if e.id and c[0] is None:
                c[0] = e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(c) for c in calls]


def stop_at_text(events):
    """Treats a TextDelta as the end of the tool calls: stops reading there."""
    calls = {}
    for e in events:
        if isinstance(e, (TextDelta, Finish)):
            if calls:
                break
            continue
        c = calls.setdefault(e.index, [None, "", ""])
        if e.id and c[0] is None:
            c[0] = e.id
        c[1] += e.name or ""
        c[2] += e.arguments_delta or ""
    return [tuple(calls[i]) for i in sorted(calls)]


def no_type_check(events):
    """Reads .index on every event (forgets TextDelta), skipping only the Finish."""
    calls = {}
    for e in events:
        if isinstance(e, Finish):
            break
        c = calls.setdefault(e.index, [None, "", ""])
        if e.id and c[0] is None:
            c[0] = e.id
        c[1] += e.name or ""
        c[2] += e.arguments_delta or ""
    return [tuple(calls[i]) for i in sorted(calls)]


def new_call_on_index_change(events):
    """Sequential assumption: a change of index starts a new call (breaks interleaving)."""
    calls = []
    last = None
    for e in events:
        if isinstance(e, ToolCallDelta):
            if e.index != last:
                if not any(c[3] == e.index for c in calls) or e.id:
                    calls.append([None, "", "", e.index])
                last = e.index
            c = calls[-1]
            if e.id and c[0] is None:
                c[0] = e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(c[:3]) for c in calls]


def keyed_by_last_id(events):
    """Groups by id: fragments without an id go to the call whose id was seen last."""
    calls = {}
    current = None
    for e in events:
        if isinstance(e, ToolCallDelta):
            if e.id:
                current = e.id
                calls.setdefault(current, ["", ""])
            if current is None:
                continue
            calls[current][0] += e.name or ""
            calls[current][1] += e.arguments_delta or ""
    return [(cid, n, a) for cid, (n, a) in calls.items()]


def dict_by_index(events):
    """Returns {index: (id, name, arguments)} instead of a list."""
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            if e.id and c[0] is None:
                c[0] = e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return {i: tuple(calls[i]) for i in sorted(calls)}


def as_lists(events):
    """Returns lists [id, name, arguments] instead of tuples."""
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            if e.id and c[0] is None:
                c[0] = e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [calls[i] for i in sorted(calls)]


def none_as_text(events):
    """Joins pieces with an f-string: a None arguments_delta/name becomes the text 'None'."""
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            if e.id and c[0] is None:
                c[0] = e.id
            if e.name is not None or c[1] == "":
                c[1] = f"{c[1]}{e.name}" if e.name is not None else c[1]
            c[2] = f"{c[2]}{e.arguments_delta}"
    return [tuple(calls[i]) for i in sorted(calls)]


def parsed_arguments(events):
    """Returns parsed JSON (dict) as arguments instead of the raw text (falls back to text)."""
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            if e.id and c[0] is None:
                c[0] = e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    out = []
    for i in sorted(calls):
        cid, name, args = calls[i]
        with contextlib.suppress(ValueError):
            args = json.loads(args) if args else {}
        out.append((cid, name, args))
    return out


def strip_pieces(events):
    """Strips whitespace from every argument piece (changes the raw text)."""
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            if e.id and c[0] is None:
                c[0] = e.id
            c[1] += (e.name or "").strip()
            c[2] += (e.arguments_delta or "").strip()
    return [tuple(calls[i]) for i in sorted(calls)]


def string_sort(events):
    """Sorts indexes as strings ("10" < "2"): right for < 10 calls only."""
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(str(e.index), [None, "", ""])
            if e.id and c[0] is None:
                c[0] = e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(calls[k]) for k in sorted(calls)]


def sort_by_id(events):
    """Sorts the calls by their id instead of their index."""
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            if e.id and c[0] is None:
                c[0] = e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return sorted((tuple(c) for c in calls.values()), key=lambda t: t[0] or "")


def reset_on_id(events):
    """Starts a fresh buffer whenever a delta carries an id (loses pieces if the id is repeated)."""
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            if e.id:
                calls[e.index] = [e.id, "", ""]
            c = calls.setdefault(e.index, [None, "", ""])
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(calls[i]) for i in sorted(calls)]


def drops_no_arguments(events):
    """Filters out calls whose arguments text is empty ("nothing to run")."""
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            if e.id and c[0] is None:
                c[0] = e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(calls[i]) for i in sorted(calls) if calls[i][2]]


def state_across_calls(events, _buffers={}):  # noqa: B006 - the mistake itself
    """Mutable default: buffers survive between turns, so a second turn repeats/merges old calls."""
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = _buffers.setdefault(e.index, [None, "", ""])
            if e.id and c[0] is None:
                c[0] = e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(_buffers[i]) for i in sorted(_buffers)]


def empty_id_is_kept(events):
    """Treats "" as an id: first delta with id not None wins, so an "" id blocks the real one."""
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            if e.id is not None and c[0] is None:
                c[0] = e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(calls[i]) for i in sorted(calls)]


def empty_for_no_id(events):
    """A call that never got an id is reported with id "" instead of None."""
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, ["", "", ""])
            if e.id and not c[0]:
                c[0] = e.id
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(calls[i]) for i in sorted(calls)]


def sort_then_groupby(events):
    """Stable sort of the deltas by index, then groupby: arrival order is kept within a call."""
    deltas = sorted((e for e in events if isinstance(e, ToolCallDelta)), key=lambda d: d.index)
    out = []
    for _, group in groupby(deltas, key=lambda d: d.index):
        group = list(group)
        out.append((
            next((d.id for d in group if d.id), None),
            "".join(d.name or "" for d in group),
            "".join(d.arguments_delta or "" for d in group),
        ))
    return out


def with_reduce(events):
    """functools.reduce over the events into an immutable-tuple dict."""

    def step(acc, e):
        if not isinstance(e, ToolCallDelta):
            return acc
        cid, name, args = acc.get(e.index, (None, "", ""))
        return {**acc, e.index: (cid or e.id or None, name + (e.name or ""),
                                 args + (e.arguments_delta or ""))}

    acc = reduce(step, events, {})
    return [acc[i] for i in sorted(acc)]


def with_match(events):
    """Structural pattern matching, lists of parts joined at the end."""
    ids, names, args = {}, defaultdict(list), defaultdict(list)
    order = set()
    for event in events:
        match event:
            case ToolCallDelta(index=i, id=cid, name=nm, arguments_delta=piece):
                order.add(i)
                if cid and i not in ids:
                    ids[i] = cid
                if nm:
                    names[i].append(nm)
                if piece:
                    args[i].append(piece)
            case Finish():
                break
            case _:
                pass
    return [(ids.get(i), "".join(names[i]), "".join(args[i])) for i in sorted(order)]



# --- a tester's answers who had not read the check (issue 22) ---


def first_seen_order(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            c[0] = c[0] or e.id or None
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(c) for c in calls.values()]


def list_grows_by_append(events):
    calls = []
    for e in events:
        if isinstance(e, ToolCallDelta):
            if e.index == len(calls):
                calls.append([None, "", ""])
            c = calls[e.index]
            c[0] = c[0] or e.id or None
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(c) for c in calls]


def last_id_wins_fresh(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            c[0] = e.id or c[0]
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(calls[i]) for i in sorted(calls)]


def empty_id_overwrites_fresh(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            if e.id is not None and c[0] is None:
                c[0] = e.id
            elif e.id is not None:
                c[0] = e.id if e.id == c[0] else c[0]
            if e.id == "":
                c[0] = ""
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(calls[i]) for i in sorted(calls)]


def name_not_joined(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            c[0] = c[0] or e.id or None
            if e.name:
                c[1] = e.name
            c[2] += e.arguments_delta or ""
    return [tuple(calls[i]) for i in sorted(calls)]


def concat_none(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            c[0] = c[0] or e.id
            c[1] += e.name
            c[2] += e.arguments_delta
    return [tuple(calls[i]) for i in sorted(calls)]


def text_ends_turn(events):
    calls = {}
    for e in events:
        if not isinstance(e, ToolCallDelta):
            if calls:
                break
            continue
        c = calls.setdefault(e.index, [None, "", ""])
        c[0] = c[0] or e.id or None
        c[1] += e.name or ""
        c[2] += e.arguments_delta or ""
    return [tuple(calls[i]) for i in sorted(calls)]


def returns_dict(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            i, n, a = calls.get(e.index, (None, "", ""))
            calls[e.index] = (i or e.id or None, n + (e.name or ""), a + (e.arguments_delta or ""))
    return dict(sorted(calls.items()))


def sorted_by_id_fresh(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            c[0] = c[0] or e.id or None
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return sorted((tuple(c) for c in calls.values()), key=lambda c: c[0] or "")


def keyed_by_id_not_index(events):
    calls = {}
    current = None
    for e in events:
        if isinstance(e, ToolCallDelta):
            if e.id:
                current = e.id
            c = calls.setdefault(current, [current, "", ""])
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(c) for c in calls.values()]


def skips_repeated_pieces(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            c[0] = c[0] or e.id or None
            c[1] += e.name or ""
            piece = e.arguments_delta or ""
            if not c[2].endswith(piece):  # some servers resend a piece: skip duplicates
                c[2] += piece
    return [tuple(calls[i]) for i in sorted(calls)]


def strips_arguments(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            c[0] = c[0] or e.id or None
            c[1] += (e.name or "").strip()
            c[2] += (e.arguments_delta or "").strip()
    return [tuple(calls[i]) for i in sorted(calls)]


def first_name_piece_only(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            c[0] = c[0] or e.id or None
            c[1] = c[1] or e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(calls[i]) for i in sorted(calls)]


def prints_instead_of_return(events):
    calls = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, [None, "", ""])
            c[0] = c[0] or e.id or None
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    for i in sorted(calls):
        print(tuple(calls[i]))


def sorts_callers_list(events):
    events.sort(key=lambda e: getattr(e, "index", 10**9))
    out = []
    for e in events:
        if isinstance(e, ToolCallDelta):
            if not out or out[-1][3] != e.index:
                out.append([None, "", "", e.index])
            c = out[-1]
            c[0] = c[0] or e.id or None
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
    return [tuple(c[:3]) for c in out]


WRONG = [
    (keyed_by_id, "a call without an id - only a call's first delta carries its id"),
    (to_the_latest_call, "keyed wrongly: that id is call 2's"),
    (first_piece_only, "only its first piece: append every arguments piece"),
    (overwrites_arguments, "only its last piece: append the pieces"),
    (text_resets_the_calls, "the call at index 0 is missing - only the finish ends the turn"),
    (stops_at_text_after_calls, "the call at index 1 is missing"),
    (sorted_by_id, "the right calls in another order: return them in index order"),
    (in_arrival_order, "the right calls in another order"),
    (a_list_by_index, "an empty call - indexes need not be 0, 1, 2"),
    (a_later_empty_id_renames, "a later delta's empty id replaced it"),
    (returns_the_dict, "your function returned a dict, expected a list of (id, name"),
    (delegates, "hands the exercise to the lab's own keel_lab.StreamAssembler"),
    (arrival_order, "the right calls in another order: return them in index order"),
    (last_id_wins, "a second id came for this index: the lab's rule keeps the first"),
    (name_overwritten, "has name 'incident', expected 'lookup_incident' - join the name pieces"),
    (name_from_first_delta, "has name '', expected 'lookup_incident' - join the name pieces"),
    (empty_id_overwrites, "a later delta's empty id replaced it"),
    (id_from_first_delta, "take the id from the first delta that carries one (None and"),
    (index_as_position, "keyed wrongly: that id is call 2's"),
    (stop_at_text, "the call at index 1 is missing - only the finish ends the turn"),
    (no_type_check, "raised AttributeError: 'TextDelta' object has no attribute 'index'"),
    (new_call_on_index_change, "keyed wrongly: that id is call 2's"),
    (keyed_by_last_id, "keyed wrongly: that id is call 2's"),
    (dict_by_index, "your function returned a dict, expected a list"),
    (none_as_text, "a missing piece adds nothing (None is not text)"),
    (parsed_arguments, "arguments stay raw text (a str), do not parse them"),
    (strip_pieces, "'{\"incident_id\":\"INC-001\"}', expected '{\"incident_id\": "
                   "\"INC-001\"}' - join the pieces unchanged"),
    (string_sort, "twelve calls, indexes 0 to 11: the right calls in another order: sort the "
                  "indexes as numbers"),
    (sort_by_id, "the right calls in another order: return them in index order"),
    (reset_on_id, "the same id came again: it is still the same call"),
    (drops_no_arguments, "the call at index 0 is missing - a call without arguments is still a "
                         "call"),
    (state_across_calls, "a second turn got pieces of the previous turn"),
    (empty_id_is_kept, 'take the id from the first delta that carries one (None and "" are no'),
    (first_seen_order, "deltas interleaved: the right calls in another order: return them in "
                       "index order (not by id, not by arrival)"),
    (list_grows_by_append, "calls, opened as 0, 2, 1, their deltas interleaved: your function "
                           "raised IndexError: list index out of range"),
    (last_id_wins_fresh, "'call_m9qwww0m' - a second id came for this index: the lab's rule "
                         "keeps the first (and refuses the turn)"),
    (empty_id_overwrites_fresh, "'', expected 'call_jmmquy9t' - a later delta's empty id "
                                "replaced it: an empty or missing value adds nothing"),
    (name_not_joined, "- join the name pieces of every delta, in arrival order (a name need not "
                      "come whole, nor first)"),
    (concat_none, "arguments in many deltas: your function raised TypeError: can only "
                  "concatenate str (not \"NoneType\") to str"),
    (text_ends_turn, "the call at index 1 is missing - only the finish ends the turn, a text "
                     "delta does not"),
    (returns_dict, "in many deltas: your function returned a dict, expected a list of (id, "
                   "name, arguments) calls, in index order"),
    (sorted_by_id_fresh, "deltas interleaved: the right calls in another order: return them in "
                         "index order (not by id, not by arrival)"),
    (keyed_by_id_not_index, "expected 'call_9pwv892c' - keyed wrongly: that id is call 2's; "
                            "each delta belongs to the call its index names"),
    (skips_repeated_pieces, "\"INC-002\"}' - it holds pieces of another call: each delta "
                            "belongs to the call its index names"),
    (strips_arguments, "has arguments '{\"incident_id\":\"INC-001\"}', expected "
                       "'{\"incident_id\": \"INC-001\"}' - join the pieces unchanged"),
    (first_name_piece_only, "- join the name pieces of every delta, in arrival order (a name "
                            "need not come whole, nor first)"),
    (prints_instead_of_return, "one call, its arguments in many deltas: your function returned "
                               "None - is a `return` missing?"),
    (sorts_callers_list, "your function changed the events list it was given: read the deltas, "
                         "do not change them"),
]

# this module's tables of known-wrong answers, by exercise (the instructor's guide shows them)
WRONG_ANSWERS = {"accumulate": WRONG}
RIGHT = [with_defaultdicts, with_a_class, sort_then_groupby, with_reduce, with_match,
         as_lists, empty_for_no_id]  # lists for tuples, "" for a call without an id: accepted


def fresh(answer):
    """The answer with its mutable default emptied, as a new kernel would define it."""
    for default in answer.__defaults__ or ():
        default.clear()
    return answer


@pytest.mark.parametrize(("answer", "hint"), WRONG, ids=[a.__name__ for a, _ in WRONG])
def test_wrong_accumulators_get_their_hint(answer, hint):
    v = verify_accumulate(fresh(answer))
    assert not v.passed
    assert hint in v.hints[0], v.hints[0]


@pytest.mark.parametrize("answer", RIGHT)
def test_right_accumulators_in_other_styles_pass_with_the_same_lines(answer):
    v = verify_accumulate(answer)
    assert v.passed, v.hints
    assert v.lines() == verify_accumulate(with_a_dict).lines()


def test_the_check_counts_the_same_checks_for_every_answer():
    counts = {verify_accumulate(fresh(a)).total for a, _ in WRONG}
    assert counts == {verify_accumulate(with_a_dict).total} == {10}  # 9 built turns, the streams
