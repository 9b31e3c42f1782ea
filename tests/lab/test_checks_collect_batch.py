"""Chapter 6's `collect_batch` check: wrong collectors get their own hint, right ones written
differently pass with the same lines."""

import asyncio

import pytest

from keel_lab.course.checks.collect import verify_collect_batch


async def with_gather(batch, run):
    outcomes = await asyncio.gather(*(run(r) for r in batch))
    return [(o.call_id, o) for o in outcomes]


async def as_a_dict_of_tasks(batch, run):
    tasks = {r.call_id: asyncio.ensure_future(run(r)) for r in batch}
    await asyncio.wait(tasks.values())
    return {call_id: task.result() for call_id, task in tasks.items()}


async def with_a_task_group(batch, run):
    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(run(r)) for r in batch]
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


async def drops_the_last(batch, run):
    return (await with_gather(batch, run))[:-1] if len(batch) > 1 else await with_gather(
        batch, run)


async def delegates(batch, run):
    from keel_lab.core.executor import gather_by_call_id
    return await gather_by_call_id(batch, run)


async def returns_nothing(batch, run):
    await with_gather(batch, run)


WRONG = [
    (zip_over_completion, "was answered with the result of call_"),
    (completion_order, "store them in request order"),
    (sorted_by_id, "store them in request order"),
    (one_after_another, "the calls ran one after another"),
    (runs_twice, "ran 2 times: its side effects happened twice"),
    (outcomes_only, "you returned outcomes: return (call id, outcome) pairs"),
    (drops_the_last, "got none: answer every call exactly once"),
    (delegates, "hands the exercise to the lab's own keel_lab.core.executor.gather_by_call_id"),
    (returns_nothing, "returned None"),
]


@pytest.mark.parametrize(("answer", "hint"), WRONG, ids=[a.__name__ for a, _ in WRONG])
def test_wrong_collectors_get_their_hint(answer, hint):
    v = verify_collect_batch(answer)
    assert not v.passed
    assert hint in v.hints[0]


@pytest.mark.parametrize("answer", [as_a_dict_of_tasks, with_a_task_group])
def test_right_collectors_in_other_styles_pass_with_the_same_lines(answer):
    v = verify_collect_batch(answer)
    assert v.passed, v.hints
    assert v.lines() == verify_collect_batch(with_gather).lines()
