"""Chapter 2, pairing: by call id, and the lesson's acceptance test."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable, Sequence
from typing import Any

from keel_lab.core.clock import run_coroutine
from keel_lab.core.pairing import Result
from keel_lab.core.protocol import ToolCall
from keel_lab.course.checks.verdict import Verdict, calls_of, guard

PairResults = Callable[[Sequence[ToolCall], Sequence[Result]], Sequence[Sequence[Any]]]


def _completion_order(calls: list[ToolCall], rng: random.Random) -> list[Result]:
    """Real `as_completed` on the virtual clock, with random delays of 10-500 ms."""
    delays = {c.id: rng.uniform(0.010, 0.500) for c in calls}

    async def one(call: ToolCall) -> Result:
        await asyncio.sleep(delays[call.id])
        return Result(call.id, call.arguments)

    async def collect() -> list[Result]:
        return [await f for f in asyncio.as_completed([one(c) for c in calls])]

    return run_coroutine(collect())


def _pairing_errors(pairs: Any, calls: Sequence[ToolCall],
                    skipped: frozenset[str] = frozenset()) -> list[str]:
    pairs = list(pairs)
    if len(pairs) != len(calls):
        return [f"expected {len(calls)} pairs (one per call), got {len(pairs)}"]
    errors = []
    for n, (call, pair) in enumerate(zip(calls, pairs, strict=True)):
        got_call, got = pair[0], pair[1]
        want = None if call.id in skipped else call.id
        if got_call is not call and got_call != call:
            errors.append(f"pair {n} should start with call {call.id} (keep the calls' order)")
        elif (got.call_id if got is not None else None) != want:
            errors.append(f"{call.id} was paired with "
                          f"{'nothing' if got is None else 'the result of ' + got.call_id}"
                          + (" (it was skipped: pair it with None)" if want is None else ""))
    return errors


def verify_pair_results(pair_results: PairResults, runs: int = 10, seed: int = 8) -> Verdict:
    """The lesson's acceptance test, and two cases that break positional pairing."""
    v = Verdict("pair_results")
    rng = random.Random(seed)
    wrong_zip = right_yours = 0
    first_error = ""
    for run in range(runs):
        calls = [ToolCall(f"run{run}-call-{i}", "lookup_incident",
                          json.dumps({"incident_id": f"INC-{i + 1:03d}"})) for i in range(3)]
        results = _completion_order(calls, rng)
        wrong_zip += bool(_pairing_errors(zip(calls, results, strict=True), calls))
        pairs = guard(v, f"run {run}", pair_results, calls, list(results))
        if pairs is None:
            return v
        errors = _pairing_errors(pairs, calls)
        right_yours += not errors
        first_error = first_error or (errors[0] if errors else "")
    v.add(wrong_zip >= 1, f"positional pairing was wrong in {wrong_zip} of {runs} runs",
          f"the delays did not reorder anything in {runs} runs: no lesson here (seed {seed})")
    v.add(right_yours == runs, f"your pairing was right in all {runs} runs",
          f"your pairing was right in {right_yours} of {runs} runs; first problem: "
          f"{first_error}")
    calls = calls_of(("call_a", "lookup_incident", {}), ("call_b", "restart_service", {}),
                  ("call_c", "lookup_incident", {}))
    results = [Result("call_c", ""), Result("call_a", "")]  # call_b was denied by policy
    pairs = guard(v, "a skipped call", pair_results, calls, results)
    if pairs is not None:
        errors = _pairing_errors(pairs, calls, frozenset({"call_b"}))
        v.add(not errors, "a call the policy skipped gets None, not its neighbour's result",
              "a skipped call: " + "; ".join(errors))
    return v
