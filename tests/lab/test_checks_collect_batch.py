"""Chapter 6's `collect_batch` check: wrong collectors get their own hint, right ones written
differently pass with the same lines."""

import asyncio

import pytest

from keel_checks.collect import verify_collect_batch
from keel_lab import Code, ToolError, ToolOutcome, failure

# `runs_its_own_loop` hands asyncio.run a coroutine that the running loop refuses, never awaited
pytestmark = [pytest.mark.ch6, pytest.mark.filterwarnings(
    "ignore:coroutine 'runs_its_own_loop.<locals>.all_calls' was never awaited")]


async def answered(request, run):
    """One call's outcome, or an error of its own when its run raises."""
    try:
        return await run(request)
    except Exception as error:
        return failure(request, Code.TOOL_INTERNAL_ERROR, repr(error))


async def with_gather(batch, run):
    outcomes = await asyncio.gather(*(answered(r, run) for r in batch))
    return [(o.call_id, o) for o in outcomes]


async def with_tasks_by_id(batch, run):
    tasks = {r.call_id: asyncio.ensure_future(run(r)) for r in batch}
    await asyncio.wait(tasks.values())
    return [(r.call_id, failure(r, Code.TOOL_INTERNAL_ERROR, str(t.exception()))
             if t.exception() else t.result()) for r, t in zip(batch, tasks.values(), strict=True)]


async def as_a_dict_of_tasks(batch, run):  # the executor takes a mapping; the exercise does not
    tasks = {r.call_id: asyncio.ensure_future(run(r)) for r in batch}
    await asyncio.wait(tasks.values())
    return {call_id: task.result() for call_id, task in tasks.items()}


async def drops_the_failures(batch, run):
    return [(o.call_id, o) for o in await asyncio.gather(*(run(r) for r in batch)) if o.ok]


async def retries_the_failures(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in batch))
    again = {o.call_id: await run(r) for r, o in zip(batch, outcomes, strict=True) if not o.ok}
    return [(o.call_id, again.get(o.call_id, o)) for o in outcomes]


async def failures_last(batch, run):
    pairs = await with_gather(batch, run)
    return [p for p in pairs if p[1].ok] + [p for p in pairs if not p[1].ok]


async def failure_as_text(batch, run):
    return [(o.call_id, o if o.ok else o.detail)
            for o in await asyncio.gather(*(run(r) for r in batch))]


async def raises_on_failure(batch, run):
    pairs = await with_gather(batch, run)
    for _, o in pairs:
        if not o.ok:
            raise RuntimeError(o.detail)
    return pairs


async def with_a_task_group(batch, run):
    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(answered(r, run)) for r in batch]
    return [(r.call_id, t.result()) for r, t in zip(batch, tasks, strict=True)]


async def zip_over_completion(batch, run):
    finished = [await f for f in asyncio.as_completed([run(r) for r in batch])]
    return [(r.call_id, o) for r, o in zip(batch, finished, strict=True)]


async def completion_order(batch, run):
    return [(o.call_id, o) for o in
            [await f for f in asyncio.as_completed([run(r) for r in batch])]]


async def one_after_another(batch, run):
    return [(r.call_id, await run(r)) for r in batch]


async def runs_twice(batch, run):
    await asyncio.gather(*(run(r) for r in batch))
    return await with_gather(batch, run)


async def outcomes_only(batch, run):
    return await asyncio.gather(*(run(r) for r in batch))


async def sorted_by_id(batch, run):
    return sorted(await with_gather(batch, run))


async def drops_the_first(batch, run):
    return (await with_gather(batch, run))[1:] if len(batch) > 1 else await with_gather(
        batch, run)


async def delegates(batch, run):
    from keel_lab._core.executor import gather_by_call_id
    return await gather_by_call_id(batch, run)


async def returns_nothing(batch, run):
    await with_gather(batch, run)


# The reviewer's wrong answers (/tmp/review/collect_batch/answers.py), short names.
async def sequential(batch, run):
    pairs = []
    for request in batch:
        outcome = await run(request)
        pairs.append((request.call_id, outcome))
    return pairs


async def coroutines_awaited_in_turn(batch, run):  # building a coroutine does not start it
    coros = [run(request) for request in batch]
    return [(request.call_id, await coro) for request, coro in zip(batch, coros, strict=True)]


async def append_as_completed(batch, run):
    pairs = []
    for fut in asyncio.as_completed([run(r) for r in batch]):
        outcome = await fut
        pairs.append((outcome.call_id, outcome))
    return pairs


async def retries_inside(batch, run):
    async def with_retry(request):
        outcome = await run(request)
        if not outcome.ok:
            outcome = await run(request)
        return outcome

    outcomes = await asyncio.gather(*(with_retry(r) for r in batch))
    return [(r.call_id, o) for r, o in zip(batch, outcomes, strict=True)]


async def dedup_by_arguments(batch, run):  # same arguments share one run and one outcome
    first = {}
    for request in batch:
        first.setdefault(request.raw_arguments, request)
    unique = list(first.values())
    outcomes = await asyncio.gather(*(run(r) for r in unique))
    by_args = {r.raw_arguments: o for r, o in zip(unique, outcomes, strict=True)}
    return [(r.call_id, by_args[r.raw_arguments]) for r in batch]


async def keyed_by_name(batch, run):  # two calls of one tool: the last outcome wins
    outcomes = await asyncio.gather(*(run(r) for r in batch))
    by_name = {o.name: o for o in outcomes}
    return [(r.call_id, by_name[r.name]) for r in batch]


async def off_by_one(batch, run):
    tasks = [asyncio.create_task(run(batch[i])) for i in range(len(batch) - 1)]
    outcomes = await asyncio.gather(*tasks)
    return [(batch[i].call_id, outcomes[i]) for i in range(len(outcomes))]


async def name_as_key(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in batch))
    return [(r.name, o) for r, o in zip(batch, outcomes, strict=True)]


async def tuple_swapped(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in batch))
    return [(o, r.call_id) for r, o in zip(batch, outcomes, strict=True)]


async def content_not_outcome(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in batch))
    return [(r.call_id, o.content) for r, o in zip(batch, outcomes, strict=True)]


async def wait_250_ms(batch, run):
    tasks = {asyncio.create_task(run(r)): r for r in batch}
    done, pending = await asyncio.wait(tasks, timeout=0.25)
    for task in pending:
        task.cancel()
    return [(tasks[t].call_id, t.result()) for t in tasks if t in done]


async def first_completed(batch, run):
    tasks = [asyncio.create_task(run(r)) for r in batch]
    done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    return [(r.call_id, t.result()) for r, t in zip(batch, tasks, strict=True) if t in done]


async def dict_completion_order(batch, run):
    answers = {}

    async def one(request):
        answers[request.call_id] = await run(request)

    await asyncio.gather(*(one(r) for r in batch))
    return answers


async def tasks_then_gather_again(batch, run):
    tasks = [asyncio.create_task(run(r)) for r in batch]  # noqa: F841 - the fault
    outcomes = await asyncio.gather(*(run(r) for r in batch))
    return [(r.call_id, o) for r, o in zip(batch, outcomes, strict=True)]


async def awaits_only_the_last(batch, run):
    tasks = [asyncio.create_task(run(r)) for r in batch]
    await tasks[-1]
    return [(r.call_id, t.result()) for r, t in zip(batch, tasks, strict=True) if t.done()]


async def reversed_order(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in reversed(batch)))
    return [(r.call_id, o) for r, o in zip(reversed(batch), outcomes, strict=True)]


async def pairs_shifted(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in batch))
    n = len(outcomes)
    return [(batch[i].call_id, outcomes[(i + 1) % n]) for i in range(n)]


async def drops_the_code(batch, run):  # rebuilt from the content: a failure looks a success
    outcomes = await asyncio.gather(*(run(r) for r in batch))
    return [(r.call_id, ToolOutcome(r.call_id, r.name, o.content))
            for r, o in zip(batch, outcomes, strict=True)]


async def generic_error(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in batch))
    return [(r.call_id, o if o.ok else ToolOutcome(r.call_id, r.name,
                                                   '{"error": "tool failed"}', "tool_error"))
            for r, o in zip(batch, outcomes, strict=True)]


async def semaphore_of_2(batch, run):
    sem = asyncio.Semaphore(2)

    async def one(r):
        async with sem:
            return await run(r)
    outcomes = await asyncio.gather(*(one(r) for r in batch))
    return [(r.call_id, o) for r, o in zip(batch, outcomes, strict=True)]


async def mutates_the_batch(batch, run):
    pairs = []
    while batch:
        r = batch.pop(0)
        pairs.append((r.call_id, asyncio.create_task(run(r))))
    return [(cid, await t) for cid, t in pairs]


async def timeout_of_1_s(batch, run):  # a "safety" timeout drops the slower calls
    tasks = [asyncio.create_task(run(r)) for r in batch]
    done, pending = await asyncio.wait(tasks, timeout=1.0)
    for t in pending:
        t.cancel()
    return [(r.call_id, t.result()) for r, t in zip(batch, tasks, strict=True) if t in done]


async def first_then_rest(batch, run):
    first = await run(batch[0])
    rest = await asyncio.gather(*(run(r) for r in batch[1:]))
    return list(zip([r.call_id for r in batch], [first, *rest], strict=True))


def plain_def(batch, run):  # `def`, not `async def`: the lab awaits what it returns
    return [(r.call_id, run(r)) for r in batch]


def runs_its_own_loop(batch, run):  # a `def` that starts a loop inside the lab's running one
    async def all_calls():
        return await asyncio.gather(*(run(r) for r in batch))

    outcomes = asyncio.run(all_calls())
    return [(o.call_id, o) for o in outcomes]



# --- a tester's answers who had not read the check (issue 22) ---


async def sequential_fresh(batch, run):
    pairs = []
    for request in batch:
        pairs.append((request.call_id, await run(request)))
    return pairs


async def zip_over_as_completed(batch, run):
    finished = [await f for f in asyncio.as_completed([run(r) for r in batch])]
    return [(r.call_id, o) for r, o in zip(batch, finished)]  # noqa: B905


async def completion_order_fresh(batch, run):
    pairs = []
    for f in asyncio.as_completed([run(r) for r in batch]):
        outcome = await f
        pairs.append((outcome.call_id, outcome))
    return pairs


def def_with_run_coroutine(batch, run):
    from keel_lab import run_coroutine

    async def all_of_them():
        return await asyncio.gather(*(run(r) for r in batch))
    outcomes = run_coroutine(all_of_them())
    return [(r.call_id, o) for r, o in zip(batch, outcomes)]  # noqa: B905


async def forgets_await_gather(batch, run):
    outcomes = asyncio.gather(*(run(r) for r in batch))
    return [(r.call_id, outcomes) for r in batch]


async def runs_twice_fresh(batch, run):
    await asyncio.gather(*(run(r) for r in batch))  # start them all at once
    return [(r.call_id, await run(r)) for r in batch]


async def returns_dict(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in batch))
    return {o.call_id: o for o in outcomes}


async def outcomes_only_fresh(batch, run):
    return list(await asyncio.gather(*(run(r) for r in batch)))


async def position_as_id(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in batch))
    return [(str(i), o) for i, o in enumerate(outcomes)]


async def wait_set_order(batch, run):
    tasks = [asyncio.ensure_future(run(r)) for r in batch]
    done, _ = await asyncio.wait(tasks)
    return [(t.result().call_id, t.result()) for t in done]


async def sorted_by_call_id(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in batch))
    return sorted(((o.call_id, o) for o in outcomes), key=lambda p: p[0])


async def semaphore_of_two(batch, run):
    gate = asyncio.Semaphore(2)
    async def one(r):
        async with gate:
            return await run(r)
    outcomes = await asyncio.gather(*(one(r) for r in batch))
    return [(r.call_id, o) for r, o in zip(batch, outcomes)]  # noqa: B905


async def request_not_id(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in batch))
    return [(r, o) for r, o in zip(batch, outcomes)]  # noqa: B905


async def drops_failed_outcomes(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in batch))
    return [(r.call_id, o) for r, o in zip(batch, outcomes) if o.ok]  # noqa: B905


async def first_completed_only(batch, run):
    tasks = [asyncio.ensure_future(run(r)) for r in batch]
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for t in pending:
        t.cancel()
    by_id = {t.result().call_id: t.result() for t in done}
    return [(r.call_id, by_id[r.call_id]) for r in batch if r.call_id in by_id]


# --- a run that raises (issue 31): one call's exception must not take its siblings with it ---


async def gather_by_id(batch, run):  # the chapter's solution while no run raised
    outcomes = await asyncio.gather(*(run(r) for r in batch))
    by_id = {o.call_id: o for o in outcomes}
    return [(r.call_id, by_id[r.call_id]) for r in batch]


async def task_group_unguarded(batch, run):  # the first exception cancels the others
    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(run(r)) for r in batch]
    return [(r.call_id, t.result()) for r, t in zip(batch, tasks, strict=True)]


async def wait_then_result(batch, run):
    tasks = {r.call_id: asyncio.ensure_future(run(r)) for r in batch}
    await asyncio.wait(tasks.values())
    return [(call_id, task.result()) for call_id, task in tasks.items()]


async def catches_only_tool_errors(batch, run):  # a lost worker raises no ToolError
    async def one(r):
        try:
            return await run(r)
        except ToolError as error:
            return failure(r, error.code, str(error))
    outcomes = await asyncio.gather(*(one(r) for r in batch))
    return [(r.call_id, o) for r, o in zip(batch, outcomes, strict=True)]


async def wraps_and_raises(batch, run):
    try:
        outcomes = await asyncio.gather(*(run(r) for r in batch))
    except ConnectionError as error:
        raise RuntimeError("the batch failed") from error
    return [(r.call_id, o) for r, o in zip(batch, outcomes, strict=True)]


async def return_exceptions_read_as_outcomes(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in batch), return_exceptions=True)
    return [(o.call_id, o) for o in outcomes]


async def exceptions_as_answers(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in batch), return_exceptions=True)
    return [(r.call_id, o) for r, o in zip(batch, outcomes, strict=True)]


async def drops_the_raised(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in batch), return_exceptions=True)
    return [(r.call_id, o) for r, o in zip(batch, outcomes, strict=True)
            if isinstance(o, ToolOutcome)]


async def raised_as_text(batch, run):  # no code: it reads as a success
    async def one(r):
        try:
            return await run(r)
        except Exception as error:
            return ToolOutcome(r.call_id, r.name, str(error))
    return [(r.call_id, o) for r, o in zip(batch, await asyncio.gather(*map(one, batch)),
                                           strict=True)]


async def raised_as_business_error(batch, run):
    async def one(r):
        try:
            return await run(r)
        except ConnectionError as error:
            return failure(r, "worker_lost", str(error))
    return [(r.call_id, o) for r, o in zip(batch, await asyncio.gather(*map(one, batch)),
                                           strict=True)]


async def retries_the_raised(batch, run):
    async def one(r):
        try:
            return await run(r)
        except ConnectionError:
            return await run(r)
    return [(r.call_id, o) for r, o in zip(batch, await asyncio.gather(*map(one, batch)),
                                           strict=True)]


async def one_error_for_all(batch, run):
    try:
        outcomes = await asyncio.gather(*(run(r) for r in batch))
    except ConnectionError as error:
        return [(r.call_id, failure(r, Code.TOOL_INTERNAL_ERROR, str(error))) for r in batch]
    return [(r.call_id, o) for r, o in zip(batch, outcomes, strict=True)]


async def error_of_the_first_request(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in batch), return_exceptions=True)
    return [(r.call_id, o if isinstance(o, ToolOutcome)
             else failure(batch[0], Code.TOOL_INTERNAL_ERROR, str(o)))
            for r, o in zip(batch, outcomes, strict=True)]


async def task_group_then_errors(batch, run):
    tasks = []
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(run(r)) for r in batch]
    except* ConnectionError:
        pass
    return [(r.call_id, t.result() if not t.cancelled() and t.exception() is None
             else failure(r, Code.TOOL_INTERNAL_ERROR, "lost")) for r, t in zip(batch, tasks,
                                                                               strict=True)]


async def first_exception_then_errors(batch, run):
    tasks = [asyncio.ensure_future(run(r)) for r in batch]
    done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    return [(r.call_id, t.result() if t in done and t.exception() is None
             else failure(r, Code.TOOL_INTERNAL_ERROR, "lost")) for r, t in zip(batch, tasks,
                                                                               strict=True)]


async def only_the_first_raised(batch, run):  # one exception per batch, it assumes
    outcomes = await asyncio.gather(*(run(r) for r in batch), return_exceptions=True)
    first = next((i for i, o in enumerate(outcomes) if isinstance(o, Exception)), None)
    if first is not None:
        outcomes[first] = failure(batch[first], Code.TOOL_INTERNAL_ERROR, str(outcomes[first]))
    return [(r.call_id, o) for r, o in zip(batch, outcomes, strict=True)]


async def waits_on_a_queue(batch, run):  # the raising call never puts its result
    results = asyncio.Queue()

    async def one(r):
        await results.put((r.call_id, await run(r)))
    started = [asyncio.ensure_future(one(r)) for r in batch]
    by_id = dict([await results.get() for _ in started])
    return [(r.call_id, by_id[r.call_id]) for r in batch]


RAISING = "call_yTk9QzVPsv's run raised ConnectionError"
WRONG = [
    (plain_def, "your function returned a list at once, with nothing to await: write it as "
                "`async def collect_batch(...)`"),
    (runs_its_own_loop, "asyncio.run() cannot be called from a running event loop - the lab "
                        "already runs your function in its event loop"),
    (zip_over_completion, "was answered with the result of call_"),
    (completion_order, "store them in request order"),
    (sorted_by_id, "store them in request order"),
    (one_after_another, "the calls ran one after another"),
    (runs_twice, "ran 2 times: its side effects happened twice"),
    (outcomes_only, "you returned outcomes: return (call id, outcome) pairs"),
    (drops_the_first, "got none: answer every call exactly once"),
    (as_a_dict_of_tasks, "returned a dict: return a list of (call id, outcome) pairs in request "
                         "order"),
    (drops_the_failures, "fails): call_G2nX6B9KKU failed (incident_not_found) and got no "
                         "answer: its error outcome is its answer"),
    (retries_the_failures, "ran 2 times: its side effects happened twice"),
    (failures_last, "store them in request order"),
    (failure_as_text, "you answered call_G2nX6B9KKU with a str ('no incident for call_"),
    (raises_on_failure, "your function raised RuntimeError: no incident for call_"),
    (delegates, "hands the exercise to the lab's own keel_lab.gather_by_call_id"),
    (returns_nothing, "returned None"),
    (sequential, "the batch took 555 ms, its slowest call 500 ms: the calls ran one after"),
    (coroutines_awaited_in_turn, "the batch took 555 ms, its slowest call 500 ms"),
    (append_as_completed, "store them in request order"),
    (retries_inside, "call_G2nX6B9KKU ran 2 times: its side effects happened twice"),
    (dedup_by_arguments, "call_DVgZnVR1tg never ran: it has the same arguments as "
                         "call_MLV2XrT2QU, but two calls with the same arguments are still two "
                         "calls - run each once"),
    (keyed_by_name, "call_TNFZYyv0bs was answered with the outcome of call_G2nX6B9KKU, which "
                    "answers call_G2nX6B9KKU too: 'lookup_incident' is a tool name, not a call "
                    "id"),
    (off_by_one, "call_1M3fGZrcaj never ran: run every call of the batch exactly once"),
    (name_as_key, "you answered 'lookup_incident': that is a tool name, not a call id"),
    (tuple_swapped, "your pairs are swapped, (outcome, call id): write (call id, outcome)"),
    (content_not_outcome, "you answered call_1M3fGZrcaj with a str ('result of call_"),
    (wait_250_ms, "call_1M3fGZrcaj (500 ms) was cancelled before it finished and never "
                  "answered"),
    (first_completed, "call_TNFZYyv0bs (500 ms) was still running when your function "
                      "returned, and never answered"),
    (dict_completion_order, "returned a dict: return a list of (call id, outcome) pairs"),
    (tasks_then_gather_again, "call_1M3fGZrcaj ran 2 times"),
    (awaits_only_the_last, "call_TNFZYyv0bs (500 ms) was still running when your function "
                           "returned"),
    (reversed_order, "store them in request order"),
    (pairs_shifted, "call_TNFZYyv0bs was answered with the result of call_G2nX6B9KKU: pair "
                    "each result with the call id it carries"),
    (drops_the_code, "call_G2nX6B9KKU's outcome was replaced by one you built (its code "
                     "'incident_not_found' was lost): answer each call with the ToolOutcome "
                     "`run` returned, unchanged"),
    (generic_error, "call_G2nX6B9KKU's outcome was replaced by one you built (its code "
                    "'incident_not_found' became 'tool_error')"),
    (semaphore_of_2, "the batch took 759 ms, its slowest call 500 ms"),
    (mutates_the_batch, "you changed the batch list: read the batch, do not change it"),
    (timeout_of_1_s, "batch 5 (3 calls: call_nYUsDGX1mb 1500 ms fails, call_bKhrN2ynrH 299 ms "
                     "fails, call_DwJrB7BQGs 325 ms fails): call_nYUsDGX1mb (1500 ms) was "
                     "cancelled before it finished and never answered"),
    (first_then_rest, "the batch took 555 ms, its slowest call 500 ms"),
    (sequential_fresh, "took 555 ms, its slowest call 500 ms: the calls ran one after another - "
                       "start them all, then wait for all"),
    (zip_over_as_completed, "answered with the result of call_G2nX6B9KKU: pair each result with "
                            "the call id it carries, not by position"),
    (completion_order_fresh, "order than the calls (completion order?): store them in request "
                             "order, so logs and replays follow the calls"),
    (def_with_run_coroutine, "await: write it as `async def collect_batch(...)`, so that the "
                             "lab can await it, and `await` the calls inside"),
    (forgets_await_gather, "answered call_1M3fGZrcaj with a _GatheringFuture: pair each call id "
                           "with its ToolOutcome, a failed call's too"),
    (runs_twice_fresh, "call_1M3fGZrcaj ran 2 times: its side effects happened twice - run "
                       "every call exactly once"),
    (returns_dict, "function returned a dict: return a list of (call id, outcome) pairs in "
                   "request order, as the exercise asks"),
    (outcomes_only_fresh, "you returned outcomes: return (call id, outcome) pairs, e.g. "
                          "[(outcome.call_id, outcome), ...]"),
    (position_as_id, "you answered '0', which is no call id of this batch: pair each outcome "
                     "with the id of the call it answers"),
    (sorted_by_call_id, "order than the calls (completion order?): store them in request order, "
                        "so logs and replays follow the calls"),
    (semaphore_of_two, "some calls waited for others to finish (a limit on how many run at "
                       "once?) - start them all, then wait for all"),
    (request_not_id, "your pairs start with the ToolRequest itself: pair its id, "
                     "(request.call_id, outcome)"),
    (drops_failed_outcomes, "failed (incident_not_found) and got no answer: its error outcome "
                            "is its answer - return it like a result"),
    (first_completed_only, "answered: wait for every call however long it takes - a timeout of "
                           "your own drops slow calls without a word"),
    (gather_by_id, "call_yTk9QzVPsv 355 ms raises, call_SAGX1k3tLa 184 ms fails, call_QDdmbQ0MhU "
                   f"460 ms): {RAISING}, and it left your function: the other calls' outcomes "
                   "were lost with it, and none of the batch's 4 calls was answered"),
    (task_group_unguarded, f"{RAISING}, and it left your function: the other calls' outcomes "
                           "were lost with it, and none of the batch's 4 calls was answered; "
                           "call_GjXzGuR2Ev, call_QDdmbQ0MhU cancelled before finishing"),
    (wait_then_result, f"{RAISING}, and it left your function"),
    (catches_only_tool_errors, f"{RAISING}, and it left your function"),
    (wraps_and_raises, f"{RAISING}, and it left your function"),
    (return_exceptions_read_as_outcomes, "your function raised AttributeError: "
                                         "'ConnectionError' object has no attribute 'call_id'"),
    (exceptions_as_answers, "you answered call_yTk9QzVPsv with a ConnectionError: pair each "
                            "call id with its ToolOutcome, a failed call's too"),
    (drops_the_raised, f"{RAISING}, and the call got no answer: a call without its tool "
                       "message breaks the history"),
    (raised_as_text, f"{RAISING}, and you answered it with a success: the model would take its "
                     "content for the tool's result"),
    (raised_as_business_error, f"{RAISING}, and you answered it with the code 'worker_lost': "
                               "its code decides the run's status"),
    (retries_the_raised, "call_yTk9QzVPsv ran 2 times: its side effects happened twice"),
    (one_error_for_all, "call_GjXzGuR2Ev was answered with an error you built "
                        "('tool_internal_error'), though its run did not raise: its own outcome "
                        "was lost"),
    (error_of_the_first_request, f"{RAISING}, and you answered it with an outcome made for "
                                 "call_GjXzGuR2Ev: make its error from its own request"),
    (task_group_then_errors, "call_GjXzGuR2Ev was cancelled when call_yTk9QzVPsv's run raised, "
                             "and lost its own outcome, though its own run did not fail"),
    (first_exception_then_errors, "call_GjXzGuR2Ev was answered with an error you built "
                                  "('tool_internal_error'), though its run did not raise"),
    (only_the_first_raised, "call_yyjURqPvjc 57 ms raises): you answered call_yyjURqPvjc with a "
                            "ConnectionError"),
    (waits_on_a_queue, "your function was still waiting 60 s after its last call had ended, "
                       "and never returned"),
]

# this module's tables of known-wrong answers, by exercise (the instructor's guide shows them)
WRONG_ANSWERS = {"collect_batch": WRONG}


@pytest.mark.parametrize(("answer", "hint"), WRONG, ids=[a.__name__ for a, _ in WRONG])
def test_wrong_collectors_get_their_hint(answer, hint):
    v = verify_collect_batch(answer)
    assert not v.passed
    assert hint in v.hints[0]


def test_every_wrong_collector_reports_all_five_checks():
    assert {verify_collect_batch(answer).total for answer, _ in WRONG} == {5}


# The reviewer's right answers, each made to answer a call whose run raises (issue 31).
async def task_group_slots(batch, run):
    slots = [None] * len(batch)

    async def fill(i, request):
        try:
            slots[i] = await run(request)
        except Exception as error:
            slots[i] = failure(request, Code.TOOL_INTERNAL_ERROR, repr(error))

    async with asyncio.TaskGroup() as group:
        for i, request in enumerate(batch):
            group.create_task(fill(i, request))
    return [(request.call_id, slots[i]) for i, request in enumerate(batch)]


async def as_completed_then_lookup(batch, run):
    by_id = {}
    for fut in asyncio.as_completed([answered(r, run) for r in batch]):
        outcome = await fut
        by_id[outcome.call_id] = outcome
    return [(r.call_id, by_id[r.call_id]) for r in batch]


async def futures_and_callbacks(batch, run):
    loop = asyncio.get_running_loop()
    futures = [loop.create_future() for _ in batch]

    def relay(request, future):
        def done(task):
            error = task.exception()
            future.set_result(task.result() if error is None
                              else failure(request, Code.TOOL_INTERNAL_ERROR, str(error)))
        return done

    for request, future in zip(batch, futures, strict=True):
        loop.create_task(run(request)).add_done_callback(relay(request, future))
    if futures:
        await asyncio.wait(futures)
    return list(zip((r.call_id for r in batch), (f.result() for f in futures), strict=True))


async def wait_all(batch, run):
    if not batch:
        return []
    tasks = [asyncio.ensure_future(run(r)) for r in batch]
    await asyncio.wait(tasks)
    return [(r.call_id, t.result() if t.exception() is None
             else failure(r, Code.TOOL_INTERNAL_ERROR, repr(t.exception())))
            for r, t in zip(batch, tasks, strict=True)]


async def return_exceptions_mapped(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in batch), return_exceptions=True)
    return [(r.call_id, o if isinstance(o, ToolOutcome)
             else failure(r, Code.TOOL_INTERNAL_ERROR, f"{type(o).__name__}: {o}"))
            for r, o in zip(batch, outcomes, strict=True)]


async def a_generator_of_pairs(batch, run):  # loose, harmless: the executor takes it too
    outcomes = await asyncio.gather(*(answered(r, run) for r in batch))
    return ((o.call_id, o) for o in outcomes)


async def lists_not_tuples(batch, run):
    outcomes = await asyncio.gather(*(answered(r, run) for r in batch))
    return [[r.call_id, o] for r, o in zip(batch, outcomes, strict=True)]


RIGHT = [with_tasks_by_id, with_a_task_group, task_group_slots, as_completed_then_lookup,
         futures_and_callbacks, wait_all, return_exceptions_mapped, a_generator_of_pairs,
         lists_not_tuples]


@pytest.mark.parametrize("answer", RIGHT, ids=[a.__name__ for a in RIGHT])
def test_right_collectors_in_other_styles_pass_with_the_same_lines(answer):
    v = verify_collect_batch(answer)
    assert v.passed, v.hints
    assert v.lines() == verify_collect_batch(with_gather).lines()


def test_wait_set_order_fails_in_whichever_batch_its_set_reorders():
    """asyncio.wait's done set comes in an order that changes from run to run, so the batch
    named first changes too: the answer is not in the table (the grader's first hint would not
    be the notebook's), but it never passes and is always told about the order."""
    v = verify_collect_batch(wait_set_order)
    assert not v.passed
    assert "results stored in another order than the calls (completion order?)" in v.hints[0]


def test_the_labs_collector_under_a_new_function_object_is_refused():
    """A reviewer's cheat: the lab's own code, wrapped in a new function named for the exercise
    (`types.FunctionType`), is the lab's, not an answer."""
    import types

    from keel_lab import gather_by_call_id

    copy = types.FunctionType(gather_by_call_id.__code__, gather_by_call_id.__globals__,
                              "collect_batch")
    verdict = verify_collect_batch(copy)
    assert not verdict.passed
    assert verdict.hints[0].startswith("your function hands the exercise to the lab's own "
                                       "keel_lab.gather_by_call_id")
