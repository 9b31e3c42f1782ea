import asyncio

import pytest

from keel_lab import run_coroutine
from keel_lab._core.clock import now

pytestmark = pytest.mark.ch2


async def sleepers():
    order = []

    async def one(name, delay):
        await asyncio.sleep(delay)
        order.append((name, round(now(), 6)))

    await asyncio.gather(one("slow", 3600), one("fast", 0.25), one("mid", 60))
    return order, now()


def test_virtual_time_jumps_instead_of_waiting():
    # an hour of sleeps: finishing at all shows it did not wait
    order, end = run_coroutine(sleepers())
    assert order == [("fast", 0.25), ("mid", 60.0), ("slow", 3600.0)]
    assert end == 3600.0


def test_each_run_starts_at_zero():
    assert run_coroutine(sleepers())[1] == run_coroutine(sleepers())[1] == 3600.0


def test_timeouts_fire_on_virtual_time():
    async def main():
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(asyncio.sleep(10), 2)
        return now()
    assert run_coroutine(main()) == 2.0


def test_real_clock_when_asked():
    async def main():
        await asyncio.sleep(0.01)
        return "done"
    assert run_coroutine(main(), virtual=False) == "done"


def test_works_inside_a_running_loop_like_jupyter():
    async def notebook_cell():
        return run_coroutine(sleepers())[1]
    assert asyncio.run(notebook_cell()) == 3600.0


def test_exceptions_come_back_unchanged():
    async def fail():
        raise ValueError("boom")
    with pytest.raises(ValueError, match="boom"):
        run_coroutine(fail())


def test_a_task_left_running_is_cancelled_and_finished_before_the_loop_closes():
    """As `asyncio.run` does: a call cancelled and never awaited (chapter 6's fault 5) ends
    with the run, not as 'Task was destroyed but it is pending' on a closed loop."""
    ended = []

    async def tool():
        try:
            await asyncio.sleep(60)
        finally:
            ended.append(now())

    async def main():
        left = asyncio.ensure_future(tool())  # never awaited, never cancelled here
        await asyncio.sleep(1)
        return "answered" if not left.done() else "the tool ended early"

    assert run_coroutine(main()) == "answered" and ended == [1.0]
