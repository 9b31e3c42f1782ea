"""Chapter 2, pairing: by call id, and the lesson's acceptance test.

The ids are random and shaped like real providers' (`call_` + 24 alphanumerics, `toolu_01` +
base62, ...), drawn from the seed and arranged so that in no run do they sort, or end in numbers,
in request order: a strategy that sorts or parses ids cannot pass by luck.
"""

from __future__ import annotations

import asyncio
import json
import random
import string
from collections.abc import Callable, Sequence
from typing import Any

from keel_lab.core.clock import run_coroutine
from keel_lab.core.pairing import STRATEGIES, Result, by_call_id
from keel_lab.core.protocol import ToolCall
from keel_lab.course.checks.delegation import watched
from keel_lab.course.checks.verdict import Verdict, describe, listed
from keel_lab.course.i18n import N_, _

PairResults = Callable[[Sequence[ToolCall], Sequence[Result]], Sequence[Sequence[Any]]]

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


def pairing_errors(pairs: list[Any], calls: Sequence[ToolCall],
                   skipped: frozenset[str] = frozenset()) -> list[str]:
    """What is wrong with the pairs, the most basic mistake first."""
    if len(pairs) != len(calls):
        return [_("expected {n} pairs (one per call), got {got}").format(n=len(calls),
                                                                       got=len(pairs))]
    errors = []
    for n, (call, pair) in enumerate(zip(calls, pairs, strict=True)):
        if isinstance(pair, str | bytes) or not isinstance(pair, Sequence) or len(pair) != 2:
            return [_("pair {n} is {value}: each pair is a (call, result) tuple").format(
                n=n, value=describe(pair))]
        got_call, got = pair
        if isinstance(got_call, str):
            return [_("pair {n} starts with the id {id}, not the call: return "
                      "(call, result) with the ToolCall itself").format(n=n, id=repr(got_call))]
        if got is not None and not isinstance(got, Result):
            return [_("pair {n} ends with {value}, not a Result (or None)").format(
                n=n, value=describe(got))]
        want = None if call.id in skipped else call.id
        if got_call is not call and got_call != call:
            errors.append(_("pair {n} should start with call {id} (keep the calls' order)")
                          .format(n=n, id=call.id))
        elif (got.call_id if got is not None else None) != want:
            paired = (_("{id} was paired with nothing") if got is None
                      else _("{id} was paired with the result of {other}"))
            errors.append(paired.format(id=call.id, other=got.call_id if got else "")
                          + (_(" (it was skipped: pair it with None)") if want is None else ""))
    return errors


def _shown(calls: Sequence[ToolCall], results: Sequence[Result]) -> str:
    """A run's input, compactly: the calls' ids and which call each result belongs to."""
    position = {c.id: n for n, c in enumerate(calls)}
    return _("calls {ids}, results of calls {positions} in that order").format(
        ids=[c.id for c in calls],
        positions=[position.get(r.call_id, r.call_id) for r in results])


PAIRS = N_("a list of (call, result) pairs")
CHECKS = [N_("positional pairing is wrong at least once in the runs"),
          N_("your pairing is right in every run"), N_("a call the policy skipped"),
          N_("the first and last of four calls skipped"), N_("ids that start like one another")]


def verify_pair_results(pair_results: PairResults, runs: int = 10, seed: int = 8) -> Verdict:
    """The lesson's acceptance test, and two turns with calls the policy skipped."""
    v = Verdict("pair_results", CHECKS)
    pair_results = watched(pair_results, (by_call_id, STRATEGIES))
    rng = random.Random(seed)
    turns = []
    for run in range(runs):
        calls = _turn(rng, 2 + run % 4)
        turns.append((calls, _completion_order(calls, rng)))
    wrong_zip = sum(bool(pairing_errors(list(zip(c, r, strict=True)), c)) for c, r in turns)
    v.add(wrong_zip >= 1, _("positional pairing was wrong in {n} of {runs} runs").format(
        n=wrong_zip, runs=runs), _("the delays did not reorder anything in {runs} runs: no "
                                   "lesson here (seed {seed})").format(runs=runs, seed=seed))
    right_yours = 0
    first_error = ""
    for run, (calls, results) in enumerate(turns):
        label = _("run {run} ({shown})").format(run=run, shown=_shown(calls, results))
        pairs = listed(v, label, PAIRS, pair_results, calls, list(results))
        if pairs is None:
            return v
        errors = pairing_errors(pairs, calls)
        right_yours += not errors
        first_error = first_error or (f"{label}: {errors[0]}" if errors else "")
    v.add(right_yours == runs, _("your pairing was right in all {runs} runs").format(runs=runs),
          _("your pairing was right in {n} of {runs} runs; first problem, in {problem}")
          .format(n=right_yours, runs=runs, problem=first_error))
    for label, n, skipped in [(_(CHECKS[2]), 3, [1]), (_(CHECKS[3]), 4, [0, 3])]:
        calls = _turn(rng, n)
        kept = [c for i, c in enumerate(calls) if i not in skipped]
        results = [Result(c.id, "ok") for c in reversed(kept)]
        pairs = listed(v, f"{label} ({_shown(calls, results)})", PAIRS, pair_results, calls,
                       results)
        if pairs is None:
            return v
        errors = pairing_errors(pairs, calls, frozenset(calls[i].id for i in skipped))
        v.add(not errors, _("{label}: None for it, not a neighbour's result").format(label=label),
              f"{label} ({_shown(calls, results)}): " + "; ".join(errors))
    stem = random_ids(2, rng)[0]  # ids one of which starts another: equality, not `in`
    calls = [ToolCall(i, "lookup_incident", "{}") for i in (stem + "7", stem, stem + "71")]
    results = [Result(c.id, "ok") for c in reversed(calls)]
    label = f"{_(CHECKS[4])} ({_shown(calls, results)})"
    pairs = listed(v, label, PAIRS, pair_results, calls, results)
    if pairs is not None:
        errors = pairing_errors(pairs, calls)
        v.add(not errors, N_("ids that start like one another: matched whole"),
              f"{label}: " + "; ".join(errors)
              + _(" - one id is the start of another: compare ids with =="))
    return v
