"""Chapter 2, pairing: by call id, and the lesson's acceptance test.

The ids are random and shaped like real providers' (`call_` + 24 alphanumerics, `toolu_01` +
base62, ...), drawn from the seed and arranged so that in no run do they sort, or end in numbers,
in request order: a strategy that sorts or parses ids cannot pass by luck. A wrong pairing's
hint says what the answer did instead (zipped by position, sorted the ids, paired by places in
id order, matched a prefix or ignored case) only when its pairs show it. Each pair must hold the
very Result given, `.error` and all, and the caller's list of results must be left as it was.

Bad input follows the lab's policy: a second result for one call (even an equal one), or a
result whose id matches no call, raises `ValueError` naming that id and no other result's -
keeping one of two results, or dropping a stranger, would lose a result silently. Each comes
once with no more results than calls (a call skipped), so counting cannot find it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import random
import string
from collections.abc import Callable, Sequence
from typing import Any

from keel_checks.delegation import watched
from keel_checks.verdict import Verdict, describe, guard, listed, seeded
from keel_lab._core.clock import run_coroutine
from keel_lab._core.pairing import STRATEGIES, Result, by_call_id
from keel_lab._core.protocol import ToolCall
from keel_lab._i18n import N_, _

PairResults = Callable[[Sequence[ToolCall], Sequence[Result]], Sequence[Sequence[Any]]]
Case = tuple[Sequence[ToolCall], list[Any], Sequence[Result]]  # (calls, pairs, results)

_ALNUM = string.ascii_letters + string.digits
# (prefix, length of the random part) of the providers' call ids
ID_SHAPES = [("call_", 24),  # OpenAI Chat Completions
             ("toolu_01", 22),  # Anthropic Messages
             ("call_", 22),  # OpenAI Responses (`call_id` of a function_call item)
             ("", 9)]  # Mistral: exactly nine alphanumerics, its API rejects others


def random_ids(n: int, rng: random.Random) -> list[str]:
    """`n` (>= 2) distinct ids of one provider's shape, never sorted in request order (nor, from
    three calls on, in reverse request order)."""
    prefix, length = rng.choice(ID_SHAPES)
    while True:
        ids = [prefix + "".join(rng.choices(_ALNUM, k=length)) for _ in range(n)]
        if len(set(ids)) == n and sorted(ids) != ids and (n < 3 or sorted(ids) != ids[::-1]):
            return ids


def _completion_order(calls: list[ToolCall], rng: random.Random) -> list[Result]:
    """Real `as_completed` on the virtual clock, with random delays of 10-500 ms."""
    delays = {c.id: rng.uniform(0.010, 0.500) for c in calls}

    async def one(call: ToolCall) -> Result:
        await asyncio.sleep(delays[call.id])
        return Result(call.id, f"record {json.loads(call.arguments)['incident_id']}")

    async def collect() -> list[Result]:
        return [await f for f in asyncio.as_completed([one(c) for c in calls])]

    return run_coroutine(collect())


def _turn(rng: random.Random, n: int) -> list[ToolCall]:
    """`n` lookups with random ids; two of them ask for the same incident when n > 2."""
    incidents = [f"INC-{rng.randint(1, 9):03d}" for _ in range(n)]
    if n > 2:
        incidents[-1] = incidents[0]
    return [ToolCall(i, "lookup_incident", json.dumps({"incident_id": inc}))
            for i, inc in zip(random_ids(n, rng), incidents, strict=True)]


def _instead(cases: list[Case]) -> str:
    """What a wrong answer did instead of matching ids, when every wrong (calls, pairs, results)
    case shows it: paired the n-th call with the n-th result as they came, or sorted by id, or
    the k-th call in id order with the k-th result in id order; or paired calls with the
    results of ids that start like theirs, or equal them but for case. "" when there are no
    cases or they show nothing in common."""

    def every(rule: Callable[[list[Any], list[Any], list[Result]], bool]) -> bool:
        return bool(cases) and all(rule(list(calls), pairs, list(results))
                                   for calls, pairs, results in cases)

    def zipped(order: Callable[[list[Result]], list[Result]]) -> bool:
        return every(lambda calls, pairs, results: bool(pairs) and [(c, id(r)) for c, r in pairs]
                     == [(c, id(r)) for c, r in zip(calls, order(results), strict=False)])

    def ranked() -> bool:  # the k-th call in id order with the k-th result in id order
        def rule(calls: list[Any], pairs: list[Any], results: list[Result]) -> bool:
            place = {c.id: n for n, c in enumerate(sorted(calls, key=lambda c: c.id))}
            ordered = sorted(results, key=lambda r: r.call_id)
            return [(c, id(r)) for c, r in pairs] == [(c, id(
                ordered[place[c.id]] if place[c.id] < len(ordered) else None)) for c in calls]
        return every(rule)

    def crossed(alike: Callable[[str, str], bool]) -> bool:  # another id's result, every time
        return every(lambda calls, pairs, results: bool(ids := [
            (getattr(c, "id", ""), r.call_id) for c, r in pairs
            if r is not None and r.call_id != getattr(c, "id", "")]) and all(
            alike(a, b) for a, b in ids))

    if zipped(lambda results: results):
        return _(" - you paired the n-th call with the n-th result, but results come in the "
                 "order they finished and a skipped call has none: look each call's result up "
                 "by its call_id")
    if zipped(lambda results: sorted(results, key=lambda r: r.call_id)):
        return _(" - you paired the calls with the results sorted by id, but ids are random: "
                 "their order says nothing about the calls' order; match call_id == call.id")
    if ranked():
        return _(" - you paired the calls and the results by their places in id order, but a "
                 "skipped call has no result, so every result after it moves up one place: "
                 "match call_id == call.id")
    if crossed(lambda a, b: a.startswith(b) or b.startswith(a)):
        return _(" - one id is the start of another: compare ids with ==")
    if crossed(lambda a, b: a.casefold() == b.casefold()):
        return _(" - ids are compared exactly: two ids that differ only in case belong to two "
                 "calls")
    return ""


def _shape_error(pairs: list[Any]) -> str:
    """The first pair that is not a (call, result) pair, told; "" when all are."""
    for n, pair in enumerate(pairs):
        if isinstance(pair, str | bytes) or not isinstance(pair, Sequence) or len(pair) != 2:
            return _("pair {n} is {value}: each pair is a (call, result) tuple").format(
                n=n, value=describe(pair))
        if isinstance(pair[0], str):
            return _("pair {n} starts with the id {id}, not the call: return (call, result) "
                     "with the ToolCall itself").format(n=n, id=repr(pair[0]))
        if pair[1] is not None and not isinstance(pair[1], Result):
            return _("pair {n} ends with {value}, not a Result (or None)").format(
                n=n, value=describe(pair[1]))
    return ""


def _mispaired(call_id: str, got: Result | None, want: Result | None,
               results: Sequence[Result]) -> str:
    """What pairing the call `call_id` with `got`, not `want` (the very Result given for it, None
    when it was skipped), did."""
    if got is None:
        return _("{id} was paired with nothing").format(id=call_id) + (_(
            ", but its Result has the .error {error}: a call that failed still has its result, "
            "pair it as given").format(error=repr(want.error)) if want and want.error else "")
    if not any(got is r for r in results):
        return (_("{id} was skipped, but you paired it with a Result you made: pair it with None")
                if want is None else _("{id} was paired with a Result you made, not the one given: "
                                       "pair the very Result object from results (a copy can "
                                       "lose its .error)")).format(id=call_id)
    return _("{id} was paired with the result of {other}").format(id=call_id, other=got.call_id) \
        + (_(" (it was skipped: pair it with None)") if want is None else "")


def pairing_errors(pairs: list[Any], calls: Sequence[ToolCall], results: Sequence[Result]) -> str:
    """What is wrong with well-shaped pairs of `results` (at most one per call, none for a call
    skipped), the most basic mistake first; "" when nothing."""
    given = {r.call_id: r for r in results}
    if len(pairs) != len(calls):
        return _("expected {n} pairs (one per call), got {got}").format(
            n=len(calls), got=len(pairs)) + (_(": a skipped call is paired with None")
                                             if len(pairs) < len(calls) > len(given) else "")
    errors = []
    for n, (call, (got_call, got)) in enumerate(zip(calls, pairs, strict=True)):
        if got_call is not call and got_call != call:
            errors.append(_("pair {n} should start with call {id} (keep the calls' order)")
                          .format(n=n, id=call.id))
        elif got is not given.get(call.id):
            errors.append(_mispaired(call.id, got, given.get(call.id), results))
    return "; ".join(errors)


def _shown(calls: Sequence[ToolCall], results: Sequence[Result]) -> str:
    """A run's input, compactly: the calls' ids and which call each result belongs to."""
    position = {c.id: n for n, c in enumerate(calls)}
    return _("calls {ids}, results of calls {positions} in that order").format(
        ids=[c.id for c in calls],
        positions=[position.get(r.call_id, r.call_id) for r in results])


def _refusing(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The answer, its pairs as a list (a generator raises here), or the ValueError it raised."""

    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        try:
            value = fn(*args)
            return value if value is None else list(value)
        except ValueError as exc:
            return exc

    return call


def _lost(pairs: list[Any], bad: str, results: Sequence[Result]) -> str:
    """What an answer that returned pairs did with the results of the id `bad`."""
    paired = [p for p in pairs if isinstance(p, Sequence) and len(p) == 2
              and getattr(p[1], "call_id", None) == bad]
    mine = [r for r in results if r.call_id == bad]
    if len(mine) == 2:
        return (_("{id} has two results, 'first' and 'second'; your pairs hold {kept} of them, "
                  "and no error says so") if mine[0] != mine[1] else _(
            "{id} has two results, both {value}; your pairs hold {kept} of them, and no error "
            "says so - a second result equal to the first is still a second result")).format(
                id=bad, kept=[getattr(p[1], "value", "") for p in paired],
                value=repr(mine[0].value))
    return _("you paired the result of {id}, which matches no call, with the call {call}"
             ).format(id=bad, call=getattr(paired[0][0], "id", "?")) if paired else _(
        "you returned {n} pairs and dropped the result of {id} silently").format(
            n=len(pairs), id=bad)


def _refuses(v: Verdict, fn: PairResults, name: str, bad: str,
             cases: list[tuple[list[ToolCall], list[Result]]]) -> None:
    """Settle the check `name`: does `fn` raise a ValueError naming the id `bad`, and no other
    result's id, for both (calls, results) `cases`? The first has no more results than calls
    (a call was skipped), the second more: an answer refusing only the second is told so."""
    policy, problem = _(" - the lab's policy is a ValueError that names the id {id}").format(
        id=bad), ""
    for n, (calls, results) in enumerate(cases):
        label = f"{_(name)} ({_shown(calls, results)})"
        got = guard(v, label, _refusing(fn), calls, results, explain=lambda _exc: policy)
        if got is None:
            return
        others = sorted({r.call_id for r in results} - {bad})
        if isinstance(got, list):
            problem = _lost(got, bad, results) + _(
                ": by the lab's policy, raise ValueError naming {id}").format(id=bad)
            if n == 0 and isinstance(guard(Verdict(name), label, _refusing(fn), *cases[1]),
                                     ValueError):  # a scratch verdict: does it refuse that one?
                problem += _(COUNTED)
        elif bad not in str(got):
            problem = _("your function raised {error}, which does not name the id {id}: name it, "
                        "so the error leads to the call").format(error=repr(got), id=bad)
        elif named := [i for i in others if i in str(got)]:
            problem = _("your function raised {error}, which names {id} but also the ids of "
                        "other results, {others}: by the lab's policy it names the offending id "
                        "alone - a list of every id does not lead to the call").format(
                            error=repr(got), id=bad, others=named)
        if problem:
            break
    v.add(not problem, _(REFUSED).format(label=_(name)), f"{label}: {problem}")


PAIRS = N_("a list of (call, result) pairs")
CHECKS = [N_("positional pairing is wrong at least once in the runs"),
          N_("your pairing is right in every run"), N_("a call the policy skipped"),
          N_("the first and last of four calls skipped"), N_("every call skipped"),
          N_("a call that failed (its Result has an .error)"),
          N_("ids that start like one another"), N_("ids that differ only in case"),
          N_("two results for one call"), N_("a result whose id matches no call")]
SKIPPED = N_("{label}: None for it, not a neighbour's result")
LEGAL = [SKIPPED, SKIPPED, N_("every call skipped: None for each, and no error"),
         N_("a call that failed: its very Result, .error and all"),
         N_("ids that start like one another: matched whole"),
         N_("ids that differ only in case: compared exactly")]  # CHECKS[2:8] passed
REFUSED = N_("{label}: ValueError naming the id, nothing lost silently")
EMPTY = N_(" - results == [] is legal: the policy skipped every call, so pair each call with "
           "None")
COUNTED = N_(" - you refused the input with more results than calls, but here a call was "
             "skipped and the counts match: look at each result's call_id, not at how many "
             "there are")


def _paired(v: Verdict, fn: PairResults, label: str, calls: Sequence[ToolCall],
            results: Sequence[Result], explain: Callable[[Exception], str] | None = None
            ) -> tuple[str, list[Case]] | None:
    """`fn` on a legal input: (what is wrong - with its pairs, or with the copy of `results` it
    got, after the call - and [the case] when it is the pairing itself), ("", []) when nothing;
    None after a failed check (it raised, or returned no list)."""
    pairs = listed(v, label, PAIRS, fn, calls, given := list(results), explain=explain)
    if pairs is None:
        return None
    shape = _shape_error(pairs)
    error = shape or pairing_errors(pairs, calls, results)
    changed = _("your function changed the results list it was given ({n} results before, "
                "{m} after): leave the caller's list as it was").format(
        n=len(results), m=len(given)) if list(map(id, given)) != list(map(id, results)) else ""
    return "; ".join(filter(None, [changed, error])), [] if shape or not error else [
        (calls, pairs, results)]


def _legal(rng: random.Random) -> list[tuple[list[ToolCall], list[Result]]]:
    """The inputs of CHECKS[2:8], results in reverse request order: calls skipped (no result),
    one failed (a Result with an .error), ids alike. The first call skipped has the smallest
    id, so pairing calls and results by their places in id order fails at once."""
    stem, twin, other = random_ids(3, rng)
    prefixed, cased = ([ToolCall(i, "lookup_incident", "{}") for i in ids]
                       for ids in ((stem + "7", stem, stem + "71"), (twin, twin.swapcase(), other)))
    first = _turn(rng, 3)
    low = min(range(3), key=lambda n: first[n].id)
    first[1], first[low] = first[low], first[1]
    turns = [(first, {1}, -1), (_turn(rng, 4), {0, 3}, -1), (_turn(rng, 2), {0, 1}, -1),
             (_turn(rng, 3), set(), 1), (prefixed, set(), -1), (cased, {0}, -1)]
    return [(calls, [Result(c.id, "", "TimeoutError: no answer in 30 s") if i == failed
                     else Result(c.id, "ok") for i, c in reversed(list(enumerate(calls)))
                     if i not in skipped]) for calls, skipped, failed in turns]


def verify_pair_results(pair_results: PairResults, runs: int = 10, seed: int = 8) -> Verdict:
    """The lesson's acceptance test, then legal turns (calls skipped, every call skipped, a call
    that failed, ids alike) and the two kinds of bad input the policy refuses."""
    v = Verdict("pair_results", CHECKS)
    pair_results = watched(pair_results, (by_call_id, STRATEGIES))
    rng = random.Random(seeded(seed))
    turns = []
    for run in range(runs):
        calls = _turn(rng, 2 + run % 4)
        turns.append((calls, _completion_order(calls, rng)))
    wrong_zip = sum(bool(pairing_errors(list(zip(c, r, strict=True)), c, r)) for c, r in turns)
    v.add(wrong_zip >= 1, _("positional pairing was wrong in {n} of {runs} runs").format(
        n=wrong_zip, runs=runs), _("the delays did not reorder anything in {runs} runs: no "
                                   "lesson here (seed {seed})").format(runs=runs, seed=seed))
    first, right, cases = "", 0, list[Case]()  # the first problem, the runs right, the wrong ones
    for run, (calls, results) in enumerate(turns):
        label = _("run {run} ({shown})").format(run=run, shown=_shown(calls, results))
        if (got := _paired(v, pair_results, label, calls, results)) is None:
            return v
        right += not got[0]
        first, cases = first or (f"{label}: {got[0]}" if got[0] else ""), cases + got[1]
    v.add(right == runs, _("your pairing was right in all {runs} runs").format(runs=runs),
          _("your pairing was right in {n} of {runs} runs; first problem, in {problem}")
          .format(n=right, runs=runs, problem=first + _instead(cases)))
    for name, passed, (calls, results) in zip(CHECKS[2:8], LEGAL, _legal(rng), strict=True):
        label = f"{_(name)} ({_shown(calls, results)})"
        if (got := _paired(v, pair_results, label, calls, results,
                           None if results else lambda _exc: _(EMPTY))) is None:
            return v
        v.add(not got[0], _(passed).format(label=_(name)),
              f"{label}: {got[0]}{_instead(got[1])}")
    calls, ids = _turn(rng, 3), random_ids(3, rng)
    a, b, c, stranger = (Result(i, "ok") for i in [*(call.id for call in calls), ids[2]])
    _refuses(v, pair_results, CHECKS[8], a.call_id, [
        (calls, [Result(a.call_id, "first"), c, Result(a.call_id, "second")]),
        (calls, [c, a, b, Result(a.call_id, "ok")])])
    _refuses(v, pair_results, CHECKS[9], ids[2], [(calls, [c, stranger, a]), (
        [ToolCall(i, "lookup_incident", "{}") for i in ids[:2]],
        [stranger, Result(ids[1], "ok"), Result(ids[0], "ok")])])
    return v
