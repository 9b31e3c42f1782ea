"""Chapter 2's `count_in_order` check: wrong answers get their own hint, right ones in other
styles pass. Each answer is a small function, as a learner would write it."""

import asyncio
import itertools
import random

import pytest

from keel_checks.in_order import verify_count_in_order
from keel_lab import run_coroutine

pytestmark = pytest.mark.ch2


async def _sleep_and_return(index, delay):
    await asyncio.sleep(delay)
    return index


def _as_completed_turn(delays):
    async def turn():
        coros = [_sleep_and_return(i, d) for i, d in enumerate(delays)]
        return [await f for f in asyncio.as_completed(coros)]
    return run_coroutine(turn())


def lesson_style(trials, calls, seed):
    rng = random.Random(seed)
    return sum(_as_completed_turn([rng.uniform(0.01, 0.5) for _ in range(calls)])
               == list(range(calls)) for _ in range(trials))


def one_coroutine_with_callbacks(trials, calls, seed):
    """All trials in one coroutine; completion order recorded by done-callbacks."""
    rng = random.Random(seed)

    async def all_trials():
        hits = 0
        for _ in range(trials):
            finished = []
            tasks = [asyncio.ensure_future(asyncio.sleep(0.01 + 0.49 * rng.random(), i))
                     for i in range(calls)]
            for t in tasks:
                t.add_done_callback(lambda t, out=finished: out.append(t.result()))
            await asyncio.wait(tasks)
            hits += finished == sorted(finished)
        return hits

    return run_coroutine(all_trials())


def with_gather(trials, calls, seed):
    rng = random.Random(seed)

    async def turn():
        return await asyncio.gather(*(_sleep_and_return(i, rng.uniform(0.01, 0.5))
                                      for i in range(calls)))

    return sum(run_coroutine(turn()) == list(range(calls)) for _ in range(trials))


def counts_mismatches(trials, calls, seed):
    return trials - lesson_style(trials, calls, seed)


def delays_once_per_run(trials, calls, seed):
    rng = random.Random(seed)
    delays = [rng.uniform(0.01, 0.5) for _ in range(calls)]
    return sum(_as_completed_turn(delays) == list(range(calls)) for _ in range(trials))


_draws = itertools.count()


def ignores_the_seed(trials, calls, seed):
    return lesson_style(trials, calls, next(_draws))


def always_three_calls(trials, calls, seed):
    return lesson_style(trials, 3, seed)


def returns_a_share(trials, calls, seed):
    return lesson_style(trials, calls, seed) / trials


def first_call_first(trials, calls, seed):
    rng = random.Random(seed)
    return sum(_as_completed_turn([rng.uniform(0.01, 0.5) for _ in range(calls)])[0] == 0
               for _ in range(trials))


def delegates_to_the_lab(trials, calls, seed):
    from keel_lab.course._experiments.pairing import order
    return order(trials, calls, seed).data["in_request_order"]["as_completed"]


def raises(trials, calls, seed):
    return [][calls]


def arithmetic_only(trials, calls, seed):  # found by a reviewer: no clock, no asyncio
    rng = random.Random(seed)
    count = 0
    for _ in range(trials):
        delays = [rng.uniform(0.010, 0.500) for _ in range(calls)]
        count += delays == sorted(delays)
    return count



# --- a tester's answers who had not read the check (issue 22) ---


def new_rng_every_turn(trials, calls, seed):
    async def call(number, delay):
        await asyncio.sleep(delay)
        return number

    async def turn():
        rng = random.Random(seed)
        delays = [rng.uniform(0.010, 0.500) for _ in range(calls)]
        done = [await f for f in asyncio.as_completed([call(i, d) for i, d in enumerate(delays)])]
        return done == list(range(calls))

    return sum(run_coroutine(turn()) for _ in range(trials))


def gather_not_as_completed(trials, calls, seed):
    rng = random.Random(seed)

    async def call(number, delay):
        await asyncio.sleep(delay)
        return number

    async def turn():
        delays = [rng.uniform(0.010, 0.500) for _ in range(calls)]
        done = await asyncio.gather(*(call(i, d) for i, d in enumerate(delays)))
        return list(done) == list(range(calls))

    return sum(run_coroutine(turn()) for _ in range(trials))


def sorted_delays_no_asyncio(trials, calls, seed):
    rng = random.Random(seed)
    count = 0
    for _ in range(trials):
        delays = [rng.uniform(0.010, 0.500) for _ in range(calls)]
        if delays == sorted(delays):
            count += 1
    return count


def off_by_one_trials(trials, calls, seed):
    rng = random.Random(seed)

    async def call(number, delay):
        await asyncio.sleep(delay)
        return number

    async def turn():
        delays = [rng.uniform(0.010, 0.500) for _ in range(calls)]
        done = [await f for f in asyncio.as_completed([call(i, d) for i, d in enumerate(delays)])]
        return done == list(range(calls))

    return sum(run_coroutine(turn()) for _ in range(1, trials))


def returns_fraction(trials, calls, seed):
    rng = random.Random(seed)

    async def call(number, delay):
        await asyncio.sleep(delay)
        return number

    async def turn():
        delays = [rng.uniform(0.010, 0.500) for _ in range(calls)]
        done = [await f for f in asyncio.as_completed([call(i, d) for i, d in enumerate(delays)])]
        return done == list(range(calls))

    return sum(run_coroutine(turn()) for _ in range(trials)) / trials


def counts_out_of_order(trials, calls, seed):
    rng = random.Random(seed)

    async def call(number, delay):
        await asyncio.sleep(delay)
        return number

    async def turn():
        delays = [rng.uniform(0.010, 0.500) for _ in range(calls)]
        done = [await f for f in asyncio.as_completed([call(i, d) for i, d in enumerate(delays)])]
        return done != list(range(calls))

    return sum(run_coroutine(turn()) for _ in range(trials))


def one_delay_per_turn(trials, calls, seed):
    rng = random.Random(seed)

    async def call(number, delay):
        await asyncio.sleep(delay)
        return number

    async def turn():
        delay = rng.uniform(0.010, 0.500)
        done = [await f for f in asyncio.as_completed([call(i, delay) for i in range(calls)])]
        return done == list(range(calls))

    return sum(run_coroutine(turn()) for _ in range(trials))


def awaits_one_by_one(trials, calls, seed):
    rng = random.Random(seed)

    async def call(number, delay):
        await asyncio.sleep(delay)
        return number

    async def turn():
        done = []
        for i in range(calls):
            done.append(await call(i, rng.uniform(0.010, 0.500)))
        return done == list(range(calls))

    return sum(run_coroutine(turn()) for _ in range(trials))


def forgets_await_on_futures(trials, calls, seed):
    rng = random.Random(seed)

    async def call(number, delay):
        await asyncio.sleep(delay)
        return number

    async def turn():
        delays = [rng.uniform(0.010, 0.500) for _ in range(calls)]
        done = [f for f in asyncio.as_completed([call(i, d) for i, d in enumerate(delays)])]
        return done == list(range(calls))

    return sum(run_coroutine(turn()) for _ in range(trials))


def prints_count(trials, calls, seed):
    rng = random.Random(seed)

    async def call(number, delay):
        await asyncio.sleep(delay)
        return number

    async def turn():
        delays = [rng.uniform(0.010, 0.500) for _ in range(calls)]
        done = [await f for f in asyncio.as_completed([call(i, d) for i, d in enumerate(delays)])]
        return done == list(range(calls))

    print(sum(run_coroutine(turn()) for _ in range(trials)))


def first_finisher_only(trials, calls, seed):
    rng = random.Random(seed)

    async def call(number, delay):
        await asyncio.sleep(delay)
        return number

    async def turn():
        delays = [rng.uniform(0.010, 0.500) for _ in range(calls)]
        for f in asyncio.as_completed([call(i, d) for i, d in enumerate(delays)]):
            return await f == 0

    return sum(run_coroutine(turn()) for _ in range(trials))


def shared_rng_seeded_with_trials(trials, calls, seed):
    async def call(number, delay):
        await asyncio.sleep(delay)
        return number

    async def turn(rng):
        delays = [rng.uniform(0.010, 0.500) for _ in range(calls)]
        done = [await f for f in asyncio.as_completed([call(i, d) for i, d in enumerate(delays)])]
        return done == list(range(calls))

    return sum(run_coroutine(turn(random.Random(seed + t))) for t in range(trials))


def real_clock_asyncio_run(trials, calls, seed):
    rng = random.Random(seed)

    async def call(number, delay):
        await asyncio.sleep(delay)
        return number

    async def turn():
        delays = [rng.uniform(0.010, 0.500) for _ in range(calls)]
        done = [await f for f in asyncio.as_completed([call(i, d) for i, d in enumerate(delays)])]
        return done == list(range(calls))

    return sum(asyncio.run(turn()) for _ in range(trials))


WRONG = [
    (arithmetic_only, "never slept their delays on it"),
    (with_gather, "every trial came back in request order"),
    (counts_mismatches, "counting the trials whose order differed"),
    (delays_once_per_run, "draw new delays for every turn"),
    (ignores_the_seed, "count_in_order(200, 3, 1) gave"),
    (always_three_calls, "with 1 call every trial is in request order"),
    (returns_a_share, "returned a float"),
    (first_call_first, "you counted"),
    (delegates_to_the_lab, "hands the exercise to the lab's own"),
    (raises, "raised IndexError: list index out of range at line"),
    (new_rng_every_turn, "or your comparison never succeeds (compare the order the calls "
                         "finished in with the order they were made)"),
    (gather_not_as_completed, "draw a random delay for every call, collect with "
                              "`asyncio.as_completed`, and compare the order as it finished"),
    (sorted_delays_no_asyncio, "turn with run_coroutine(...), its calls awaiting "
                               "asyncio.sleep(delay), and watch the order they finish in"),
    (off_by_one_trials, "is in request order: expected 50 of 50, you counted 49 - does your "
                        "loop run every one of the `trials` turns?"),
    (returns_fraction, "return how many of the 5 trials came back in request order, an int from "
                       "0 to trials"),
    (counts_out_of_order, "is in request order: expected 50 of 50, you counted 0 - are you "
                          "counting the trials whose order differed?"),
    (awaits_one_by_one, "draw a random delay for every call, collect with "
                        "`asyncio.as_completed`, and compare the order as it finished"),
    (forgets_await_on_futures, "turn with run_coroutine(...), its calls awaiting "
                               "asyncio.sleep(delay), and watch the order they finish in"),
    (prints_count, "your function returned None - is a `return` missing?"),
    (first_finisher_only, "you counted 194 in request order, expected about 100 (trials/3! +- "
                          "41); the lab counted 108"),
    (shared_rng_seeded_with_trials, "every seed gave 113: the seed must change the delays "
                                    "(random.Random(seed))"),
    (real_clock_asyncio_run, "turn with run_coroutine(...), its calls awaiting "
                             "asyncio.sleep(delay), and watch the order they finish in"),
]

# this module's tables of known-wrong answers, by exercise (the instructor's guide shows them)
WRONG_ANSWERS = {"count_in_order": WRONG}


@pytest.mark.parametrize(("answer", "hint"), WRONG, ids=[a.__name__ for a, _ in WRONG])
def test_wrong_answers_get_their_hint(answer, hint):
    v = verify_count_in_order(answer)
    assert not v.passed
    assert hint in v.hints[0]


@pytest.mark.parametrize("answer", [lesson_style, one_coroutine_with_callbacks])
def test_right_answers_in_other_styles_pass_with_the_same_lines(answer):
    v = verify_count_in_order(answer)
    assert v.passed, v.hints
    assert v.lines() == verify_count_in_order(lesson_style).lines()


def test_one_delay_per_turn_fails_however_its_ties_fall():
    """Equal delays tie, and as_completed hands out ties in an order that changes from run to
    run: the answer is not in the table (its first hint is not always the same one), but it
    never passes, and when the same seed gives two counts it is told to draw a delay per call
    (when every seed happens to give the same count, that the seed must change the delays)."""
    verdict = verify_count_in_order(one_delay_per_turn)
    hint = verdict.hints[0]
    assert not verdict.passed
    assert any(words in hint for words in ("give every call its own delay",
                                           "in request order, expected about",
                                           "the seed must change the delays")), hint
