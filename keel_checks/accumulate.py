"""Chapter 1, the index-keyed accumulator: a turn's streamed events in, its calls out.

The expected calls come from the lab's own assembly (`assemble`), never typed here: the
generated provider streams in data/streams, then built turns that each bend one thing a
shortcut gets wrong (interleaved indexes, id and name only in a call's first delta, sparse
indexes, arguments in many pieces, text between calls, ids empty, repeated, late or changed on
later deltas, indexes past 9). Each turn's ids are random, so sorting by id does not give index
order.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import cache
from itertools import pairwise
from typing import Any

from keel_checks.delegation import watched
from keel_checks.verdict import Verdict, describe, labelled, listed, seeded
from keel_lab._core.streaming import (
    Finish,
    Notice,
    StreamAssembler,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    assemble,
    snapshots,
)
from keel_lab._i18n import N_, _
from keel_lab.course._experiments.providers import STREAMS, stream_names
from keel_lab.course._experiments.streaming import chunk_rows
from keel_lab.providers._diagnosis import read_stream, to_events

Call = tuple[str | None, str, str]
FIELDS = ("id", "name", "arguments")
STREAMED = N_("{n} generated provider streams in data/streams: the calls the lab assembles")


@cache
def generated() -> tuple[tuple[str, tuple[StreamEvent, ...]], ...]:
    """The lab's stream files whose deltas alone make their calls: a converter's notices left
    out; left out, a stream whose converter refused a call or rewrote its arguments (its calls
    are more than its deltas say), one cut before its finish, and one the lab refuses (an id
    reused or changed: no rule of accumulation makes it right)."""
    out = []
    for name in stream_names():
        fmt, records = read_stream(STREAMS / name)
        events = [e for e in to_events(records, fmt) if not isinstance(e, Notice)]
        if all(isinstance(e, ToolCallDelta | TextDelta | Finish) for e in events) \
                and isinstance(events[-1], Finish) and not assemble(events).refused:
            out.append((name, tuple(events)))
    return tuple(out)


def _pieces(rng: random.Random, text: str) -> list[str]:
    """`text` cut into pieces of 1-4 characters."""
    cuts = [0]
    while cuts[-1] < len(text):
        cuts.append(min(len(text), cuts[-1] + rng.randint(1, 4)))
    return [text[a:b] for a, b in pairwise(cuts)]


def _id(rng: random.Random) -> str:
    return "call_" + "".join(rng.choice("abcdefghjkmnpqrstuvwxyz0123456789") for _ in range(8))


def built(rng: random.Random, calls: Mapping[int, str], opened: Sequence[int],
          text: bool = False, change: Callable[[ToolCallDelta, int, str], ToolCallDelta]
          = lambda d, n, i: d) -> list[StreamEvent]:
    """A turn of `lookup_incident` calls at the given indexes, opened in `opened` order (id and
    name in a call's first delta), their argument pieces interleaved at random; with `text`, one
    call after another with a text delta before, between and after them. `change(d, n, id)`
    rewrites a call's n-th delta d, for the ids and names other servers send."""
    queues: dict[int, list[ToolCallDelta]] = {}
    for i, a in calls.items():
        cid = _id(rng)
        deltas = [ToolCallDelta(i, cid, "lookup_incident"),
                  *(ToolCallDelta(i, arguments_delta=p) for p in _pieces(rng, a))]
        queues[i] = [change(d, n, cid) for n, d in enumerate(deltas)]
    events: list[StreamEvent] = []
    for i in opened:
        events += [TextDelta(f"Looking up call {i}. "), *queues.pop(i)] if text else [
            queues[i].pop(0), queues[i].pop(0)]
    while any(queues.values()):
        i = rng.choice([k for k, q in queues.items() if q])
        events.append(queues[i].pop(0))
    return [*events, *([TextDelta("Done.")] if text else []), Finish("tool_calls")]


def cases() -> list[tuple[str, list[StreamEvent]]]:
    rng = random.Random(seeded(1))
    args = {i: f'{{"incident_id": "INC-{i + 1:03}"}}' for i in range(12)}
    two = {0: args[0], 1: args[1]}
    return [
        (N_("one call, its arguments in many deltas"), built(rng, {0: args[0]}, [0])),
        (N_("three calls, opened as 0, 2, 1, their deltas interleaved"),
         built(rng, {i: args[i] for i in range(3)}, [0, 2, 1])),
        (N_("sparse indexes 0, 2, 5"), built(rng, {i: args[i] for i in (0, 2, 5)}, [0, 2, 5])),
        (N_("text deltas before, between and after the calls"), built(rng, two, [0, 1], True)),
        (N_("later deltas with an empty id and name"), built(
            rng, two, [0, 1], change=lambda d, n, i: replace(d, id="", name="") if n else d)),
        (N_("the id repeated in every delta (as some servers send it)"),
         built(rng, two, [0, 1], change=lambda d, n, i: replace(d, id=i))),
        (N_('the id only in a second delta (the first has None, or ""), a call without one'),
         built(rng, {i: args[i] for i in range(3)}, [0, 1, 2], change=lambda d, n, i: replace(
             d, id=i if n == 1 and d.index < 2 else "" if (n, d.index) == (0, 1) else None))),
        (N_("a second, different id for the same index"), built(rng, {0: args[0]}, [0], change=
            lambda d, n, i: replace(d, id=_id(rng)) if n == 1 else d)),
        (N_("twelve calls, indexes 0 to 11"), built(rng, args, range(12))),
    ]


def _as_call(item: Any) -> Call | None:
    """A returned call as (id, name, arguments): any 3-sequence (a tuple or a list), a dict or
    an object with them."""
    if isinstance(item, Mapping):
        item = tuple(item.get(f) for f in FIELDS)
    elif not isinstance(item, Sequence) or isinstance(item, str):
        item = tuple(getattr(item, f, None) for f in FIELDS)
    return tuple(item) if len(item) == 3 and all(x is not None for x in item[1:]) else None


def _problem(events: list[StreamEvent], got: list[Any], want: list[Call], indexes: list[int],
             fed: set[str]) -> str:
    """What is wrong with the calls returned, in the words of the mistake it most likely is. A
    call that never got an id may be returned with None (as the lab does) or "". `fed`: the ids
    of every turn the check feeds, to tell state kept from an earlier call of the function."""
    calls = [_as_call(c) for c in got]
    if None in calls:
        return _("a call you returned is {value}: return each as (id, name, arguments)").format(
            value=describe(got[calls.index(None)]))
    raw = [c for c in calls if c]
    norm = [(c[0] or None, c[1], c[2]) for c in raw]
    owner = {d.id: d.index for d in events if isinstance(d, ToolCallDelta) and d.id}
    stray = [c[0] for c in raw if isinstance(c[0], str) and c[0] in fed and c[0] not in owner]
    if stray:
        return _("a call has id {id}, which no delta of this turn carries: a second turn got "
                 "pieces of the previous turn - start empty every time your function is called "
                 "(no mutable default, no global)").format(id=repr(stray[0]))
    if norm == want:
        return ""
    if len(norm) != len(want):
        missing = [(i, w) for i, w in zip(indexes, want, strict=True) if w not in norm]
        kinds = [type(e) for e in events]
        return _("you returned {got}, the stream has {want} calls (at indexes {indexes})").format(
            got=len(norm), want=len(want), indexes=", ".join(map(str, indexes))) + (
            _(": an empty call - indexes need not be 0, 1, 2...; keep one call per index that "
              "arrived") if any(not any(c) for c in raw) else
            _(": a call without an id - only a call's first delta carries its id; key the calls "
              "by index, not by id") if sum(not c[0] for c in norm) > sum(not w[0] for w in want)
            else _(": keep one call per index that arrived") if not missing else
            _(": the call at index {index} is missing - {why}").format(index=missing[0][0], why=_(
                'a call without arguments is still a call (its arguments are "")')
                if missing[0][1][2] == "" else _("only the finish ends the turn, a text delta "
                "does not") if TextDelta in kinds[kinds.index(ToolCallDelta):] else
                _("keep one call per index that arrived")))
    if sorted(map(str, norm)) == sorted(map(str, want)):
        return (_("the right calls in another order: sort the indexes as numbers (10 comes "
                  "after 9, not after 1)") if norm == [w for _, w in sorted(
                      zip(map(str, indexes), want, strict=True))] else
                _("the right calls in another order: return them in index order (not by id, "
                  "not by arrival)"))
    whys = [_why(events, owner, i, c, w) for i, c, n, w
            in zip(indexes, raw, norm, want, strict=True) if n != w]
    return min(whys, key=lambda x: not x[0])[1]


def _why(events: list[StreamEvent], owner: Mapping[str, int], index: int, c: Call, w: Call
         ) -> tuple[bool, str]:
    """The hint for one wrong call, and whether another call's id or pieces are in it (that
    mistake is named first: it explains what else is wrong)."""
    deltas = [d for d in events if isinstance(d, ToolCallDelta) and d.index == index]
    k = next(k for k, (x, y) in enumerate(zip((c[0] or None, *c[1:]), w, strict=True)) if x != y)
    got: Any = c[k]
    want = w[k] or ""
    values = [getattr(d, ("id", "name", "arguments_delta")[k]) for d in deltas]
    whole, ids = [v for v in values if v] or [""], [d.id for d in deltas if d.id]
    other = owner.get(got, index) if k == 0 and isinstance(got, str) else index
    text = isinstance(got, str)
    mixed = other != index or (k == 2 and text and len(set(owner.values())) > 1
                                and got not in (*whole, ""))
    return mixed, _("the call at index {index} has {field} {got}, expected {want}").format(
        index=index, field=FIELDS[k], got=repr(got), want=repr(w[k])) + (
        _(" - keyed wrongly: that id is call {n}'s; each delta belongs to the call its index "
          "names").format(n=other) if other != index else
        _(" - a second id came for this index: the lab's rule keeps the first (and refuses the "
          "turn)") if k == 0 and got in ids else
        _(" - a later delta's empty {field} replaced it: an empty or missing value adds "
          "nothing").format(field=FIELDS[k]) if not got and "" in values[1:] else
        _(' - take the id from the first delta that carries one (None and "" are no id)')
        if k == 0 else
        _(" - arguments stay raw text (a str), do not parse them") if not text and k == 2 else
        _(" - a missing piece adds nothing (None is not text)")
        if text and "None" in got and "None" not in want else
        _(" - the same id came again: it is still the same call; add its pieces, do not start "
          "it over") if len(ids) > len(set(ids)) == 1 else
        _(" - join the name pieces of every delta, in arrival order (a name need not come "
          "whole, nor first)") if k == 1 else
        _(" - only its first piece: append every arguments piece") if got == whole[0] else
        _(" - only its last piece: append the pieces, do not replace them") if got == whole[-1]
        else _(" - it holds pieces of another call: each delta belongs to the call its index "
               "names") if mixed else _(" - join the pieces unchanged"))


def _judge(v: Verdict, fn: Callable[..., Any], label: str, events: list[StreamEvent],
           fed: set[str]) -> str | None:
    """The first problem of `fn` on one turn ("" when right); None when `listed` already
    reported it (an exception, None, not a list)."""
    assembly = assemble(events)
    want = [(s.id, s.name, s.arguments) for s in assembly.calls]
    got = listed(v, label, N_("a list of (id, name, arguments) calls, in index order"),
                 fn, given := list(events))
    if got is None:
        return None
    return labelled(label, _problem(events, got, want, [s.index for s in assembly.calls], fed)
                    or (_("your function changed the events list it was given: read the "
                          "deltas, do not change them - the stream's other readers get the "
                          "same list") if given != events else ""))


def verify_accumulate(accumulate: Callable[[list[StreamEvent]], Any]) -> Verdict:
    fn = watched(accumulate, (StreamAssembler, assemble, snapshots, chunk_rows))
    streams = generated()
    built_cases = cases()
    streamed = _(STREAMED).format(n=len(streams))
    v = Verdict("accumulate", [label for label, _ in built_cases] + [streamed])
    fed = {d.id for _, turn in [*built_cases, *streams] for d in turn
           if isinstance(d, ToolCallDelta) and d.id}
    for label, events in built_cases:
        problem = _judge(v, fn, _(label), events, fed)
        if problem is None or not v.first(_("{label}: every call right").format(
                label=_(label)), [problem]):
            return v
    for name, stream in streams:
        problem = _judge(v, fn, _("the stream {name}").format(name=name), list(stream), fed)
        if problem is None:
            return v
        if problem:
            v.add(False, "", problem)
            return v
    v.add(True, streamed, "")
    return v
