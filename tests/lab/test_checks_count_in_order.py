"""Chapter 2's `count_in_order` check: wrong answers get their own hint, right ones in other
styles pass. Each answer is a small function, as a learner would write it."""

import ast
import asyncio
import importlib
import inspect
import itertools
import math
import queue
import random
import subprocess
import sys
import threading

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


def reckons_from_the_delays(trials, calls, seed):
    """The exercise's draws compared with their sorted order: the right count, no turn run,
    the clock moved by one sleep so that it looks busy."""
    rng = random.Random(seed)
    count = 0
    longest = 0.0
    for _ in range(trials):
        delays = [rng.uniform(0.010, 0.500) for _ in range(calls)]
        count += delays == sorted(delays)
        longest += max(delays)
    run_coroutine(asyncio.sleep(longest))
    return count


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


# --- answers that do not measure (issue 32): each gives a count near trials/n!, not this one ---


def _tick(trials):
    """The virtual clock moved as if turns had run."""
    run_coroutine(asyncio.sleep(0.011 * trials))


def forged_binomial(trials, calls, seed):
    _tick(trials)
    rng = random.Random(seed * 7919 + calls)
    p = 1 / math.factorial(calls)
    return sum(rng.random() < p for _ in range(trials))  # Binomial(trials, 1/n!), no turn


def lab_trial_loop_own_strategy(trials, calls, seed):
    """The lab's private trial loop (`_run`), with a strategy of its own."""
    lab = importlib.import_module("keel_lab.course._experiments.trials")

    async def zipped(calls_, execute, denied=frozenset()):
        done = [await f for f in asyncio.as_completed([execute(c) for c in calls_])]
        return list(zip(calls_, done, strict=True))  # wrong exactly when out of order

    tallies = run_coroutine(lab._run({"mine": zipped}, trials, lab.TrialSpec(calls), seed,
                                     frozenset(), None))
    return trials - tallies["mine"].trials_with_mismatch


def _edited(module, **names):
    """The module's source with a line added to every function: new bytecode, same behaviour."""
    tree = ast.parse(inspect.getsource(module))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            node.body.insert(0, ast.parse("_edited = 1").body[0])
    ns = {"__name__": module.__name__}
    exec(compile(ast.fix_missing_locations(tree), "<edited>", "exec"), ns)
    ns.update(names)
    return ns


def execs_an_edited_copy(trials, calls, seed):
    core = _edited(importlib.import_module("keel_lab._core.pairing"))
    strategies = {k: core[k] for k in ("position_over_gather", "position_over_completion")}
    lab_trials = _edited(importlib.import_module("keel_lab.course._experiments.trials"),
                         **strategies)
    experiment = _edited(importlib.import_module("keel_lab.course._experiments.pairing"),
                         run_trials=lab_trials["run_trials"], **strategies)
    return experiment["order"](trials, calls, seed).data["in_request_order"]["as_completed"]


_ASKED: queue.Queue = queue.Queue()
_ANSWERED: queue.Queue = queue.Queue()


def _lab_worker():
    from keel_lab.course._experiments.pairing import order
    while True:
        trials, calls, seed = _ASKED.get()
        _ANSWERED.put(order(trials, calls, seed).data["in_request_order"]["as_completed"])


threading.Thread(target=_lab_worker, daemon=True).start()  # before any check watches


def thread_started_before(trials, calls, seed):
    _ASKED.put((trials, calls, seed))
    _tick(trials)
    return _ANSWERED.get()


_LAB_PROCESS = subprocess.Popen(  # a process of its own, started before the check
    [sys.executable, "-c", "import sys\n"
     "from keel_lab.course._experiments.pairing import order\n"
     "for line in sys.stdin:\n"
     "    t, c, s = map(int, line.split())\n"
     "    print(order(t, c, s).data['in_request_order']['as_completed'], flush=True)\n"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def from_a_subprocess(trials, calls, seed):
    _LAB_PROCESS.stdin.write(f"{trials} {calls} {seed}\n")
    _LAB_PROCESS.stdin.flush()
    _tick(trials)
    return int(_LAB_PROCESS.stdout.readline())


def draws_inside_each_call(trials, calls, seed):
    """Each coroutine draws its own delay when it starts: as_completed starts them in no fixed
    order, so the draws are not in call order."""
    rng = random.Random(seed)

    async def call(index):
        await asyncio.sleep(rng.uniform(0.010, 0.500))
        return index

    async def turn():
        return [await f for f in asyncio.as_completed([call(i) for i in range(calls)])]

    return sum(run_coroutine(turn()) == list(range(calls)) for _ in range(trials))


def calls_the_checks_count(trials, calls, seed):
    _tick(trials)
    return getattr(importlib.import_module("keel_checks.in_" + "order"), "_drawn_" + "count")(
        trials, calls, seed)


def calls_the_pairing_checks_turn(trials, calls, seed):
    from keel_checks.pairing import _completion_order
    from keel_lab import ToolCall
    rng = random.Random(seed)
    turn = [ToolCall(f"call-{i}", "lookup_incident", '{"incident_id": "INC-001"}')
            for i in range(calls)]
    return sum([r.call_id for r in _completion_order(turn, rng)] == [c.id for c in turn]
               for _ in range(trials))


def draws_a_delay_too_many(trials, calls, seed):
    rng = random.Random(seed)
    return sum(_as_completed_turn([rng.uniform(0.01, 0.5) for _ in range(calls + 1)][:calls])
               == list(range(calls)) for _ in range(trials))


# --- right answers in other styles ---


def draws_every_turn_first(trials, calls, seed):
    """All the turns' delays drawn up front, turn by turn: the same draws in the same order."""
    rng = random.Random(seed)
    turns = [[rng.uniform(0.010, 0.500) for _ in range(calls)] for _ in range(trials)]
    return sum(_as_completed_turn(delays) == list(range(calls)) for delays in turns)


def tasks_and_asyncio_wait(trials, calls, seed):
    rng = random.Random(seed)

    async def turn():
        delays = [rng.uniform(0.010, 0.500) for _ in range(calls)]
        tasks = [asyncio.create_task(_sleep_and_return(i, d)) for i, d in enumerate(delays)]
        finished = []
        pending = set(tasks)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            finished += sorted(t.result() for t in done)
        return finished == list(range(calls))

    hits = 0
    for _ in range(trials):
        hits += run_coroutine(turn())
    return hits


def with_a_task_group(trials, calls, seed):
    """Tasks in a TaskGroup, the finish order written down by each task as it ends."""
    rng = random.Random(seed)

    async def turn(delays):
        finished = []

        async def one(index, delay):
            await asyncio.sleep(delay)
            finished.append(index)

        async with asyncio.TaskGroup() as group:
            for index, delay in enumerate(delays):
                group.create_task(one(index, delay))
        return finished == sorted(finished)

    return sum(run_coroutine(turn([rng.uniform(0.010, 0.500) for _ in range(calls)]))
               for _ in range(trials))


RIGHT = [lesson_style, one_coroutine_with_callbacks, draws_every_turn_first,
         tasks_and_asyncio_wait, with_a_task_group]


NEAR = "near the expected rate but not the count these draws give"  # the hint's words
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
    (first_finisher_only, "count_in_order(200, 2, 1): the virtual clock moved forward 200 times "
                          "for 200 turns of 2 calls - a turn that runs its calls wakes once per "
                          "call"),
    (reckons_from_the_delays, "the virtual clock moved forward 1 times for 200 turns of 2 calls"),
    (shared_rng_seeded_with_trials, "every seed gave 113: the seed must change the delays "
                                    "(random.Random(seed))"),
    (real_clock_asyncio_run, "turn with run_coroutine(...), its calls awaiting "
                             "asyncio.sleep(delay), and watch the order they finish in"),
    (forged_binomial, NEAR),
    (lab_trial_loop_own_strategy, NEAR),
    (execs_an_edited_copy, NEAR),
    (thread_started_before, NEAR),
    (from_a_subprocess, NEAR),
    (draws_a_delay_too_many, NEAR + " (seed 1 differs). The check replays the same draws "
                                    "and wants that very count: draw every delay of a turn from "
                                    "random.Random(seed), in call order, before running that "
                                    "turn"),
    (calls_the_checks_count, "hands the exercise to the lab's own "
                             "keel_checks.in_order._drawn_count"),
    (calls_the_pairing_checks_turn, "hands the exercise to the lab's own "
                                    "keel_checks.pairing._completion_order"),
]

# this module's tables of known-wrong answers, by exercise (the instructor's guide shows them)
WRONG_ANSWERS = {"count_in_order": WRONG}


@pytest.mark.parametrize(("answer", "hint"), WRONG, ids=[a.__name__ for a, _ in WRONG])
def test_wrong_answers_get_their_hint(answer, hint):
    v = verify_count_in_order(answer)
    assert not v.passed
    assert hint in v.hints[0]


@pytest.mark.parametrize("answer", RIGHT, ids=[a.__name__ for a in RIGHT])
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
                                           "in request order, expected about", NEAR,
                                           "the seed must change the delays",
                                           "each seed gave all or none")), hint


def test_draws_in_no_fixed_order_are_told_to_draw_in_call_order_before_the_turn():
    """`as_completed` starts its coroutines in no fixed order: delays drawn inside them come
    from the stream in an order that may change from run to run (the same seed, two counts) or
    not (a count near the rate, not this one); either hint says how to draw."""
    verdict = verify_count_in_order(draws_inside_each_call)
    assert not verdict.passed
    assert "in call order, before running that turn" in verdict.hints[0], verdict.hints[0]


def test_a_call_into_the_checks_count_from_a_thread_it_starts_is_delegation():
    def answer(trials, calls, seed):
        box = []
        worker = threading.Thread(target=lambda: box.append(calls_the_checks_count(
            trials, calls, seed)))
        worker.start()
        worker.join()
        return box[0]

    assert "keel_checks.in_order._drawn_count" in verify_count_in_order(answer).hints[0]
