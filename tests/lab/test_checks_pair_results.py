"""Chapter 2's `pair_results` check: every wrong answer gets a hint about its own mistake
(issue 22: a zipped or id-sorted answer is told so, not told about prefixes), and right answers
written in other styles pass with the same lines. The lab's policy for bad input: a second
result for one call, or a result whose id matches no call, raises ValueError naming the id (and
no other result's). The second block of answers is a reviewer's (30 wrong, 3 right): a generator
and lists instead of tuples are accepted styles, so those two are right answers here."""

import collections
import random
from collections import Counter
from functools import reduce

import pytest

import keel_lab
from keel_checks.pairing import random_ids, verify_pair_results
from keel_checks.verdict import drawn

# the answer written as `async def` returns a coroutine, which the check reports and never awaits
pytestmark = [pytest.mark.ch2,
              pytest.mark.filterwarnings("ignore:coroutine 'async_def' was never awaited")]

# --- right answers, each in its own style ---


def pair_by_table(calls, results):  # the model answer
    by_id = {}
    for result in results:
        if result.call_id in by_id:
            raise ValueError(f"two results for the call {result.call_id}")
        by_id[result.call_id] = result
    pairs = [(call, by_id.pop(call.id, None)) for call in calls]
    if by_id:
        raise ValueError(f"results for no call: {sorted(by_id)}")
    return pairs


def pair_by_search(calls, results):
    ids = [c.id for c in calls]
    for r in results:
        if r.call_id not in ids:
            raise ValueError("unknown call id " + r.call_id)
        if sum(x.call_id == r.call_id for x in results) > 1:
            raise ValueError("duplicate result id " + r.call_id)
    return [[c, next((r for r in results if r.call_id == c.id), None)] for c in calls]


class PairingError(ValueError):
    pass


def pair_with_a_counter(calls, results):  # its own ValueError subclass, and a generator
    counts = collections.Counter(r.call_id for r in results)
    known = {c.id for c in calls}
    for call_id, n in counts.items():
        if n > 1 or call_id not in known:
            raise PairingError(f"{call_id!r}: {n} result(s), known: {call_id in known}")
    table = {r.call_id: r for r in results}
    yield from ((c, table.get(c.id)) for c in calls)


# --- wrong answers ---


def pair_keeps_the_last(calls, results):  # the old model answer: a dict keeps the last
    table = {r.call_id: r for r in results}
    return [(c, table.get(c.id)) for c in calls]


def pair_keeps_the_first(calls, results):  # refuses strangers, but keeps the first duplicate
    ids = {c.id for c in calls}
    if any(r.call_id not in ids for r in results):
        raise ValueError(f"unknown ids: {[r.call_id for r in results if r.call_id not in ids]}")
    return [(c, next((r for r in results if r.call_id == c.id), None)) for c in calls]


def pair_ignores_strangers(calls, results):  # refuses duplicates, drops unknown ids
    table = {}
    for r in results:
        if r.call_id in table:
            raise ValueError(f"duplicate result for {r.call_id}")
        table[r.call_id] = r
    return [(c, table.get(c.id)) for c in calls]


def pair_raises_a_bare_key_error(calls, results):
    table = {}
    for r in results:
        if r.call_id in table:
            raise KeyError
        table[r.call_id] = r
    if set(table) - {c.id for c in calls}:
        raise KeyError
    return [(c, table.get(c.id)) for c in calls]


def pair_says_duplicate(calls, results):  # the right error, without the id
    ids = [r.call_id for r in results]
    if len(set(ids)) < len(ids) or set(ids) - {c.id for c in calls}:
        raise ValueError("duplicate or unknown result")
    table = dict(zip(ids, results, strict=True))
    return [(c, table.get(c.id)) for c in calls]


def pair_looks_strangers_up(calls, results):  # a stranger's lookup raises KeyError(its id)
    index = {c.id: n for n, c in enumerate(calls)}
    pairs = [(c, None) for c in calls]
    for r in results:
        if pairs[index[r.call_id]][1] is not None:
            raise ValueError(f"second result for {r.call_id}")
        pairs[index[r.call_id]] = (calls[index[r.call_id]], r)
    return pairs


def pair_by_position(calls, results):
    return list(zip(calls, results, strict=False))


def pair_sorted(calls, results):  # right only if ids sorted like the calls
    return list(zip(calls, sorted(results, key=lambda r: r.call_id), strict=False))


def pair_by_id_number(calls, results):  # parses a counter out of the id
    return [(c, sorted(results, key=lambda r: int(r.call_id.rsplit("-", 1)[-1]))[i])
            for i, c in enumerate(calls)]


def pair_by_places_in_id_order(calls, results):  # the k-th call in id order, the k-th result
    calls_by_id = sorted(calls, key=lambda c: c.id)
    results_by_id = sorted(results, key=lambda r: r.call_id)
    table = {c.id: r for c, r in zip(calls_by_id, results_by_id, strict=False)}
    return [(c, table.get(c.id)) for c in calls]


def pair_by_index(calls, results):  # positional, with None past the last result
    return [(c, results[i] if i < len(results) else None) for i, c in enumerate(calls)]


def pair_ids(calls, results):
    table = {r.call_id: r for r in results}
    return [(c.id, table.get(c.id)) for c in calls]


def pair_as_dict(calls, results):
    return {r.call_id: r for r in results}


def pair_by_delegation(calls, results):
    return keel_lab._core.pairing.by_call_id  # names the lab's strategy


def pair_by_substring(calls, results):  # found by a reviewer: `in` is not equality
    out = []
    for c in calls:
        found = None
        for r in results:
            if r.call_id in c.id or c.id in r.call_id:
                found = r
                break
        out.append((c, found))
    return out


# --- a reviewer's answers: wrong, then right (accepted styles included) ---


def zip_position(calls, results):
    return list(zip(calls, results, strict=False))


def sorted_zip(calls, results):
    # sorts results by id and zips: right only if ids sort in request order and nothing skipped
    return list(zip(calls, sorted(results, key=lambda r: r.call_id), strict=False))


def dict_no_checks(calls, results):
    by_id = {r.call_id: r for r in results}
    return [(c, by_id.get(c.id)) for c in calls]


def last_wins(calls, results):
    # checks strangers, but a duplicate silently overwrites (last one wins)
    ids = {c.id for c in calls}
    by_id = {}
    for r in results:
        if r.call_id not in ids:
            raise ValueError(f"result for unknown call {r.call_id}")
        by_id[r.call_id] = r
    return [(c, by_id.get(c.id)) for c in calls]


def first_wins(calls, results):
    ids = {c.id for c in calls}
    by_id = {}
    for r in results:
        if r.call_id not in ids:
            raise ValueError(f"result for unknown call {r.call_id}")
        by_id.setdefault(r.call_id, r)
    return [(c, by_id.get(c.id)) for c in calls]


def drop_stranger(calls, results):
    # duplicates raise; a result for no call is dropped silently
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        by_id[r.call_id] = r
    return [(c, by_id.get(c.id)) for c in calls]


def msg_without_id(calls, results):
    ids = {c.id for c in calls}
    seen = set()
    for r in results:
        if r.call_id in seen:
            raise ValueError("duplicate result")
        if r.call_id not in ids:
            raise ValueError("result for an unknown call")
        seen.add(r.call_id)
    by_id = {r.call_id: r for r in results}
    return [(c, by_id.get(c.id)) for c in calls]


def keyerror_stranger(calls, results):
    # looks the stranger up in a dict of calls -> KeyError instead of ValueError
    call_by_id = {c.id: c for c in calls}
    by_id = {}
    for r in results:
        call_by_id[r.call_id]  # KeyError for a stranger
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        by_id[r.call_id] = r
    return [(c, by_id.get(c.id)) for c in calls]


def prefix_match(calls, results):
    ids = [c.id for c in calls]
    seen = set()
    for r in results:
        if r.call_id in seen:
            raise ValueError(f"two results for the call {r.call_id}")
        if not any(r.call_id.startswith(i) for i in ids):
            raise ValueError(f"no call for result {r.call_id}")
        seen.add(r.call_id)
    out = []
    for c in calls:
        match = next((r for r in results if r.call_id.startswith(c.id)), None)
        out.append((c, match))
    return out


def substring_match(calls, results):
    ids = {c.id for c in calls}
    seen = set()
    for r in results:
        if r.call_id in seen:
            raise ValueError(f"two results for the call {r.call_id}")
        if r.call_id not in ids:
            raise ValueError(f"no call for result {r.call_id}")
        seen.add(r.call_id)
    return [(c, next((r for r in results if c.id in r.call_id), None)) for c in calls]


def omit_skipped(calls, results):
    ids = {c.id for c in calls}
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        if r.call_id not in ids:
            raise ValueError(f"no call for result {r.call_id}")
        by_id[r.call_id] = r
    return [(c, by_id[c.id]) for c in calls if c.id in by_id]


def results_order(calls, results):
    # pairs right, but in the order results arrived, skipped calls appended at the end
    call_by_id = {c.id: c for c in calls}
    seen = set()
    out = []
    for r in results:
        if r.call_id in seen:
            raise ValueError(f"two results for the call {r.call_id}")
        if r.call_id not in call_by_id:
            raise ValueError(f"no call for result {r.call_id}")
        seen.add(r.call_id)
        out.append((call_by_id[r.call_id], r))
    out += [(c, None) for c in calls if c.id not in seen]
    return out


def error_as_missing(calls, results):
    # a result carrying an error is treated as "no result"
    ids = {c.id for c in calls}
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        if r.call_id not in ids:
            raise ValueError(f"no call for result {r.call_id}")
        by_id[r.call_id] = r
    return [(c, by_id[c.id] if c.id in by_id and by_id[c.id].error is None else None)
            for c in calls]


def placeholder_for_skipped(calls, results):
    from keel_lab._core.pairing import Result
    ids = {c.id for c in calls}
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        if r.call_id not in ids:
            raise ValueError(f"no call for result {r.call_id}")
        by_id[r.call_id] = r
    return [(c, by_id.get(c.id, Result(c.id, "", "skipped"))) for c in calls]


def swapped_tuple(calls, results):
    ids = {c.id for c in calls}
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        if r.call_id not in ids:
            raise ValueError(f"no call for result {r.call_id}")
        by_id[r.call_id] = r
    return [(by_id.get(c.id), c) for c in calls]


def returns_dict(calls, results):
    ids = {c.id for c in calls}
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        if r.call_id not in ids:
            raise ValueError(f"no call for result {r.call_id}")
        by_id[r.call_id] = r
    return {c.id: by_id.get(c.id) for c in calls}


def adjacent_dup_only(calls, results):
    # duplicate check compares each result with the previous one only
    ids = {c.id for c in calls}
    for prev, cur in zip(results, results[1:], strict=False):  # noqa: RUF007
        if prev.call_id == cur.call_id:
            raise ValueError(f"two results for the call {cur.call_id}")
    for r in results:
        if r.call_id not in ids:
            raise ValueError(f"no call for result {r.call_id}")
    by_id = {r.call_id: r for r in results}
    return [(c, by_id.get(c.id)) for c in calls]


def count_check(calls, results):
    # "bad input" detected by counting: more results than calls
    if len(results) > len(calls):
        raise ValueError(f"too many results: {[r.call_id for r in results]}")
    by_id = {r.call_id: r for r in results}
    return [(c, by_id.get(c.id)) for c in calls]


def generator(calls, results):
    ids = {c.id for c in calls}
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        if r.call_id not in ids:
            raise ValueError(f"no call for result {r.call_id}")
        by_id[r.call_id] = r
    return ((c, by_id.get(c.id)) for c in calls)


def lists_not_tuples(calls, results):
    ids = {c.id for c in calls}
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        if r.call_id not in ids:
            raise ValueError(f"no call for result {r.call_id}")
        by_id[r.call_id] = r
    return [[c, by_id.get(c.id)] for c in calls]


def mutates_results(calls, results):
    # pops each matched result out of the caller's list (destroys the input)
    ids = {c.id for c in calls}
    seen = set()
    for r in results:
        if r.call_id in seen:
            raise ValueError(f"two results for the call {r.call_id}")
        if r.call_id not in ids:
            raise ValueError(f"no call for result {r.call_id}")
        seen.add(r.call_id)
    out = []
    for c in calls:
        match = None
        for i, r in enumerate(results):
            if r.call_id == c.id:
                match = results.pop(i)
                break
        out.append((c, match))
    return out


def dup_calls_not_results(calls, results):
    # checks the CALLS for duplicate ids instead of the results
    ids = [c.id for c in calls]
    for i in ids:
        if ids.count(i) > 1:
            raise ValueError(f"two calls with id {i}")
    for r in results:
        if r.call_id not in ids:
            raise ValueError(f"no call for result {r.call_id}")
    by_id = {r.call_id: r for r in results}
    return [(c, by_id.get(c.id)) for c in calls]


def stranger_names_all(calls, results):
    # unknown-id message names the known calls, not the stranger
    ids = [c.id for c in calls]
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        if r.call_id not in ids:
            raise ValueError(f"result matches none of the calls {ids}")
        by_id[r.call_id] = r
    return [(c, by_id.get(c.id)) for c in calls]


def stranger_only_if_room(calls, results):
    # a stranger is only noticed when it would take a skipped call's place... checks
    # unknown ids only when every call already has a result
    ids = {c.id for c in calls}
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        by_id[r.call_id] = r
    if len(by_id) > len(calls):
        extra = [i for i in by_id if i not in ids]
        raise ValueError(f"no call for result {extra[0]}")
    return [(c, by_id.get(c.id)) for c in calls]


def strip_lower(calls, results):
    # normalises ids (case/whitespace) before matching
    norm = lambda s: s.strip().lower()  # noqa: E731
    ids = {norm(c.id) for c in calls}
    by_id = {}
    for r in results:
        k = norm(r.call_id)
        if k in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        if k not in ids:
            raise ValueError(f"no call for result {r.call_id}")
        by_id[k] = r
    return [(c, by_id.get(norm(c.id))) for c in calls]


async def async_def(calls, results):
    by_id = {}
    ids = {c.id for c in calls}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        if r.call_id not in ids:
            raise ValueError(f"no call for result {r.call_id}")
        by_id[r.call_id] = r
    return [(c, by_id.get(c.id)) for c in calls]


def empty_results_raises(calls, results):
    # treats "no results at all" as bad input (every call skipped is legal)
    if not results:
        raise ValueError("no results to pair")
    ids = {c.id for c in calls}
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        if r.call_id not in ids:
            raise ValueError(f"no call for result {r.call_id}")
        by_id[r.call_id] = r
    return [(c, by_id.get(c.id)) for c in calls]


def rebuild_result(calls, results):
    # copies each result into a fresh Result(call_id, value) - the .error is lost
    from keel_lab._core.pairing import Result
    ids = {c.id for c in calls}
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        if r.call_id not in ids:
            raise ValueError(f"no call for result {r.call_id}")
        by_id[r.call_id] = Result(r.call_id, r.value)
    return [(c, by_id.get(c.id)) for c in calls]


def dedupe_identical(calls, results):
    # a repeated result equal to the first is "harmless" and dropped; only differing ones raise
    ids = {c.id for c in calls}
    by_id = {}
    for r in results:
        if r.call_id not in ids:
            raise ValueError(f"no call for result {r.call_id}")
        if r.call_id in by_id:
            if by_id[r.call_id] == r:
                continue
            raise ValueError(f"two results for the call {r.call_id}")
        by_id[r.call_id] = r
    return [(c, by_id.get(c.id)) for c in calls]


def lists_every_id(calls, results):
    # on any problem, one generic error that dumps every result id
    ids = [c.id for c in calls]
    got = [r.call_id for r in results]
    if len(set(got)) != len(got) or not set(got) <= set(ids):
        raise ValueError(f"bad results for calls {ids}: {got}")
    by_id = {r.call_id: r for r in results}
    return [(c, by_id.get(c.id)) for c in calls]


def counter_comprehension(calls, results):
    counts = Counter(r.call_id for r in results)
    known = {c.id for c in calls}
    for cid, n in counts.items():
        if n > 1:
            raise ValueError(f"two results for the call {cid}")
        if cid not in known:
            raise ValueError(f"a result for no call: {cid}")
    lookup = {r.call_id: r for r in results}
    return [(c, lookup.get(c.id)) for c in calls]


def sort_by_position(calls, results):
    pos = {c.id: i for i, c in enumerate(calls)}
    for r in results:
        if r.call_id not in pos:
            raise ValueError(f"{r.call_id!r} matches no call")
    ordered = sorted(results, key=lambda r: pos[r.call_id])
    for a, b in zip(ordered, ordered[1:], strict=False):  # noqa: RUF007
        if a.call_id == b.call_id:
            raise ValueError(f"{a.call_id!r} has two results")
    slots = [None] * len(calls)
    for r in ordered:
        slots[pos[r.call_id]] = r
    return list(zip(calls, slots, strict=True))


def reduce_nested(calls, results):
    def add(acc, r):
        if any(x.call_id == r.call_id for x in acc):
            raise ValueError("duplicate id " + r.call_id)
        if all(c.id != r.call_id for c in calls):
            raise ValueError("unknown id " + r.call_id)
        return acc + (r,)  # noqa: RUF005
    table = reduce(add, results, ())
    return [tuple([c, next(iter([r for r in table if r.call_id == c.id]), None)])
            for c in calls]


RIGHT = [pair_by_table, pair_by_search, pair_with_a_counter, generator, lists_not_tuples,
         counter_comprehension, sort_by_position, reduce_nested]

# --- a tester's answers who had not read the check (issue 22) ---


def zip_by_position(calls, results):
    return list(zip(calls, results))  # noqa: B905


def dict_keeps_last_duplicate(calls, results):
    by_id = {r.call_id: r for r in results}
    return [(call, by_id.get(call.id)) for call in calls]


def duplicates_only(calls, results):
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        by_id[r.call_id] = r
    return [(call, by_id.get(call.id)) for call in calls]


def strangers_only(calls, results):
    ids = {call.id for call in calls}
    by_id = {}
    for r in results:
        if r.call_id not in ids:
            raise ValueError(f"no call has the id {r.call_id}")
        by_id[r.call_id] = r
    return [(call, by_id.get(call.id)) for call in calls]


def error_lists_every_id(calls, results):
    ids = [r.call_id for r in results]
    if len(set(ids)) != len(ids) or not set(ids) <= {c.id for c in calls}:
        raise ValueError(f"bad results: {ids}")
    by_id = {r.call_id: r for r in results}
    return [(call, by_id.get(call.id)) for call in calls]


def case_insensitive(calls, results):
    by_id = {}
    for r in results:
        key = r.call_id.lower()
        if key in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        by_id[key] = r
    pairs = [(call, by_id.pop(call.id.lower(), None)) for call in calls]
    for key, r in by_id.items():  # noqa: B007
        raise ValueError(f"a result for no call: {r.call_id}")
    return pairs


def prefix_match_fresh(calls, results):
    seen = set()
    for r in results:
        if r.call_id in seen:
            raise ValueError(f"two results for the call {r.call_id}")
        seen.add(r.call_id)
        if not any(r.call_id.startswith(c.id) for c in calls):
            raise ValueError(f"a result for no call: {r.call_id}")
    pairs = []
    for call in calls:
        match = next((r for r in results if r.call_id.startswith(call.id)), None)
        pairs.append((call, match))
    return pairs


def skipped_calls_left_out(calls, results):
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        by_id[r.call_id] = r
    pairs = [(call, by_id.pop(call.id)) for call in calls if call.id in by_id]
    if by_id:
        raise ValueError(f"a result for no call: {next(iter(by_id))}")
    return pairs


def removes_from_results(calls, results):
    ids = [r.call_id for r in results]
    for i in ids:
        if ids.count(i) > 1:
            raise ValueError(f"two results for the call {i}")
    pairs = []
    for call in calls:
        match = next((r for r in results if r.call_id == call.id), None)
        if match is not None:
            results.remove(match)
        pairs.append((call, match))
    if results:
        raise ValueError(f"a result for no call: {results[0].call_id}")
    return pairs


def value_not_result(calls, results):
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        by_id[r.call_id] = r
    pairs = []
    for call in calls:
        r = by_id.pop(call.id, None)
        pairs.append((call, r.value if r is not None else None))
    if by_id:
        raise ValueError(f"a result for no call: {next(iter(by_id))}")
    return pairs


def equal_duplicates_allowed(calls, results):
    by_id = {}
    for r in results:
        if r.call_id in by_id and by_id[r.call_id] != r:
            raise ValueError(f"two different results for the call {r.call_id}")
        by_id[r.call_id] = r
    pairs = [(call, by_id.pop(call.id, None)) for call in calls]
    if by_id:
        raise ValueError(f"a result for no call: {next(iter(by_id))}")
    return pairs


def keyerror_for_stranger(calls, results):
    index = {call.id: i for i, call in enumerate(calls)}
    paired = [None] * len(calls)
    for r in results:
        i = index[r.call_id]
        if paired[i] is not None:
            raise ValueError(f"two results for the call {r.call_id}")
        paired[i] = r
    return list(zip(calls, paired))  # noqa: B905


def returns_dict_fresh(calls, results):
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        by_id[r.call_id] = r
    pairs = {call.id: by_id.pop(call.id, None) for call in calls}
    if by_id:
        raise ValueError(f"a result for no call: {next(iter(by_id))}")
    return pairs


def sort_then_zip(calls, results):
    ids = [r.call_id for r in results]
    if len(set(ids)) != len(ids):
        raise ValueError("two results for one call")
    ordered = sorted(results, key=lambda r: r.call_id)
    return list(zip(sorted(calls, key=lambda c: c.id), ordered))  # noqa: B905


def stranger_message_without_id(calls, results):
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        by_id[r.call_id] = r
    pairs = [(call, by_id.pop(call.id, None)) for call in calls]
    if by_id:
        raise ValueError("a result matches no call")
    return pairs


def tuple_order_swapped(calls, results):
    by_id = {}
    for r in results:
        if r.call_id in by_id:
            raise ValueError(f"two results for the call {r.call_id}")
        by_id[r.call_id] = r
    pairs = [(by_id.pop(call.id, None), call) for call in calls]
    if by_id:
        raise ValueError(f"a result for no call: {next(iter(by_id))}")
    return pairs


WRONG = [
    (pair_keeps_the_last, "your pairs hold ['second'] of them, and no error says so: by the "
                          "lab's policy, raise ValueError naming"),
    (pair_keeps_the_first, "your pairs hold ['first'] of them"),
    (pair_ignores_strangers, "you returned 3 pairs and dropped the result of"),
    (pair_raises_a_bare_key_error, ": raise KeyError - the lab's policy is a ValueError that "
                                   "names the id"),
    (pair_says_duplicate, "your function raised ValueError('duplicate or unknown result'), "
                          "which does not name the id"),
    (pair_looks_strangers_up, "your function raised KeyError: "),
    (pair_by_substring, "compare ids with =="),
    (pair_by_position, "you paired the n-th call with the n-th result"),
    (pair_sorted, "you paired the calls with the results sorted by id"),
    (pair_by_places_in_id_order, "you paired the calls and the results by their places in id "
                                 "order, but a skipped call has no result"),
    (pair_by_index, "you paired the n-th call with the n-th result"),
    (pair_by_id_number, "your function raised ValueError: invalid literal for int()"),
    (pair_ids, "starts with the id"),
    (pair_as_dict, "returned a dict, expected a list of (call, result) pairs"),
    (pair_by_delegation, "hands the exercise to the lab's own keel_lab.by_call_id"),
    (zip_position, "you paired the n-th call with the n-th result"),
    (sorted_zip, "you paired the calls with the results sorted by id"),
    (dict_no_checks, "has two results, 'first' and 'second'; your pairs hold ['second']"),
    (last_wins, "your pairs hold ['second'] of them, and no error says so"),
    (first_wins, "your pairs hold ['first'] of them, and no error says so"),
    (drop_stranger, "you returned 3 pairs and dropped the result of"),
    (msg_without_id, "raised ValueError('duplicate result'), which does not name the id"),
    (keyerror_stranger, "KeyError for a stranger - the lab's policy is a ValueError that names "
                        "the id"),
    (prefix_match, "one id is the start of another: compare ids with =="),
    (substring_match, "one id is the start of another: compare ids with =="),
    (omit_skipped, "expected 3 pairs (one per call), got 2: a skipped call is paired with None"),
    (results_order, "pair 0 should start with call"),
    (error_as_missing, "was paired with nothing, but its Result has the .error 'TimeoutError: "
                       "no answer in 30 s': a call that failed still has its result"),
    (placeholder_for_skipped, "was skipped, but you paired it with a Result you made: pair it "
                              "with None"),
    (swapped_tuple, "pair 0 ends with a ToolCall, not a Result (or None)"),
    (returns_dict, "your function returned a dict, expected a list of (call, result) pairs"),
    (adjacent_dup_only, "results of calls [0, 2, 0] in that order): "),
    (count_check, "but here a call was skipped and the counts match: look at each result's "
                  "call_id, not at how many there are"),
    (mutates_results, "your function changed the results list it was given (2 results before, "
                      "0 after): leave the caller's list as it was"),
    (dup_calls_not_results, "your pairs hold ['second'] of them"),
    (stranger_names_all, "result matches none of the calls"),
    (stranger_only_if_room, "dropped the result of"),
    (strip_lower, "(it was skipped: pair it with None) - ids are compared exactly"),
    (async_def, "your function returned a coroutine, expected a list of (call, result) pairs"),
    (empty_results_raises, "raise ValueError(\"no results to pair\") - results == [] is legal"),
    (rebuild_result, "was paired with a Result you made, not the one given: pair the very "
                     "Result object from results"),
    (dedupe_identical, "has two results, both 'ok'; your pairs hold ['ok'] of them, and no "
                       "error says so - a second result equal to the first is still a second "
                       "result"),
    (lists_every_id, "but also the ids of other results"),
    (zip_by_position, "come in the order they finished and a skipped call has none: look each "
                      "call's result up by its call_id"),
    (dict_keeps_last_duplicate, "of them, and no error says so: by the lab's policy, raise "
                                "ValueError naming toolu_01rEoIgWHpnKSmE70RJI5Km2"),
    (duplicates_only, "silently: by the lab's policy, raise ValueError naming "
                      "call_FqCQAbjMsK56xaIOEQW6G5hF"),
    (strangers_only, "of them, and no error says so: by the lab's policy, raise ValueError "
                     "naming toolu_01rEoIgWHpnKSmE70RJI5Km2"),
    (error_lists_every_id, "by the lab's policy it names the offending id alone - a list of "
                           "every id does not lead to the call"),
    (case_insensitive, "was paired with nothing - ids are compared exactly: two ids that differ "
                       "only in case belong to two calls"),
    (prefix_match_fresh, "with the result of call_ztEz7teIDw70zi2X5yoGGTi771 - one id is the "
                         "start of another: compare ids with =="),
    (skipped_calls_left_out, "expected 3 pairs (one per call), got 2: a skipped call is paired "
                             "with None"),
    (removes_from_results, "function changed the results list it was given (2 results before, 0 "
                           "after): leave the caller's list as it was"),
    (value_not_result, "pair 0 ends with a str ('record INC-004'), not a Result (or None)"),
    (equal_duplicates_allowed, "first is still a second result: by the lab's policy, raise "
                               "ValueError naming toolu_01rEoIgWHpnKSmE70RJI5Km2"),
    (keyerror_for_stranger, "your function raised KeyError: 'call_FqCQAbjMsK56xaIOEQW6G5hF'"),
    (returns_dict_fresh, "your function returned a dict, expected a list of (call, result) pairs"),
    (sort_then_zip, "with call hRfp9mNCC (keep the calls' order); pair 1 should start with call "
                    "ElZfobqz3 (keep the calls' order)"),
    (stranger_message_without_id, "no call'), which does not name the id "
                                  "call_FqCQAbjMsK56xaIOEQW6G5hF: name it, so the error leads "
                                  "to the call"),
    (tuple_order_swapped, "pair 0 ends with a ToolCall, not a Result (or None)"),
]

# this module's tables of known-wrong answers, by exercise (the instructor's guide shows them)
WRONG_ANSWERS = {"pair_results": WRONG}


@pytest.mark.parametrize("fn", RIGHT, ids=lambda f: f.__name__)
def test_pair_results_right(fn):
    assert verify_pair_results(fn).passed


def test_right_answers_print_the_same_lines():
    lines = {str(verify_pair_results(fn)) for fn in RIGHT}
    assert len(lines) == 1


@pytest.mark.parametrize(("fn", "hint"), WRONG, ids=lambda x: getattr(x, "__name__", ""))
def test_pair_results_wrong(fn, hint):
    verdict = verify_pair_results(fn)
    assert not verdict.passed and hint in verdict.hints[0], verdict.hints


@pytest.mark.parametrize("fn", [pair_by_position, pair_sorted, pair_by_places_in_id_order,
                                pair_by_index], ids=lambda f: f.__name__)
@pytest.mark.parametrize("run", [None, *range(40)])
def test_a_zipped_or_sorted_answer_is_never_told_about_prefixes(fn, run):
    """Whatever ids a grader draws, an answer that compared no ids is not told how to compare
    them: "start of another" and "only in case" are for answers whose pairs show it."""
    with drawn(run):
        hints = verify_pair_results(fn).hints
    assert not any(hint.endswith(end) for hint in hints
                   for end in ("compare ids with ==", "belong to two calls")), hints


def test_bad_input_hints_name_the_case_and_the_id():
    dup = verify_pair_results(pair_keeps_the_last).hints[0]
    stranger = verify_pair_results(pair_ignores_strangers).hints[0]
    assert dup.startswith("two results for one call (calls [")
    assert "results of calls [0, 2, 0] in that order)" in dup  # a call skipped: counts match
    assert stranger.startswith("a result whose id matches no call (calls [")
    assert "results of calls [2, 'call_" in stranger and "', 0] in that order)" in stranger


@pytest.mark.parametrize("fn", RIGHT + [fn for fn, _hint in WRONG],
                         ids=lambda f: f.__name__)
def test_every_answer_gets_all_ten_checks(fn):
    assert len(verify_pair_results(fn).lines()) == 10 + 1


@pytest.mark.parametrize(("fn", "end"), [
    (omit_skipped, "got 2: a skipped call is paired with None"),
    (results_order, "(keep the calls' order)"),
    (placeholder_for_skipped, "pair it with None"),
    (error_as_missing, "pair it as given"),
], ids=lambda x: getattr(x, "__name__", ""))
def test_no_guessed_diagnosis_unless_the_pairs_show_it(fn, end):
    """A hint adds "zipped", "sorted" or "prefix" only when the answer's pairs are exactly that;
    these answers did none of it and get the direct message alone."""
    assert verify_pair_results(fn).hints[0].endswith(end)


def test_only_an_answer_that_counts_is_told_it_counts():
    counting = {fn for fn, _hint in WRONG
                if "not at how many there are" in verify_pair_results(fn).hints[0]}
    assert counting == {count_check, stranger_only_if_room}


def test_a_rebuilt_result_is_named_where_it_loses_the_error():
    hints = verify_pair_results(rebuild_result).hints
    assert any(h.startswith("a call that failed (its Result has an .error) (calls [")
               and "a copy can lose its .error" in h for h in hints)


def test_random_ids_never_sort_in_request_order():
    rng = random.Random(0)
    for _ in range(200):
        ids = random_ids(3, rng)
        assert sorted(ids) not in (ids, ids[::-1]) and len(set(ids)) == 3
