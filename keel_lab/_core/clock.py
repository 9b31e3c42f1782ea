"""A virtual clock for asyncio: real tasks, `gather`, `as_completed` and timeouts, no waiting.

The loop is asyncio's own; only its idea of time changes. When every task is asleep, the
selector jumps the clock to the next timer instead of blocking, so ten thousand trials with
delays of hundreds of milliseconds finish in well under a second, in the same order every time.
(`looptime` does the same for tests; bench/virtual_clock.py measured it ten to fifteen times
slower on this workload, so the lab keeps this small loop.)
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")


class _JumpingSelector(selectors.SelectSelector):
    def __init__(self, loop: VirtualClockLoop) -> None:
        super().__init__()
        self._loop = loop

    def select(self, timeout: float | None = None) -> list[Any]:
        if timeout is None:  # no timer at all: only another thread can wake the loop
            return super().select(None)
        # The virtual loop has no sockets to poll, so never ask the kernel: when nothing is
        # ready before the next timer, move the clock to it instead of waiting.
        if timeout > 0:
            self._loop.advance(timeout)
        return []


class VirtualClockLoop(asyncio.SelectorEventLoop):
    """An event loop whose `time()` only moves when all tasks wait for a timer."""

    def __init__(self) -> None:
        self._now = 0.0
        super().__init__(_JumpingSelector(self))

    def time(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds


@contextmanager
def clock_moves() -> Iterator[list[float]]:
    """The seconds every virtual clock moved while the block ran: an experiment that really
    sleeps its delays moves it, one that only does arithmetic on them does not (a check asks)."""
    moved: list[float] = []
    advance = VirtualClockLoop.advance

    def watched_advance(loop: VirtualClockLoop, seconds: float) -> None:
        moved.append(seconds)
        advance(loop, seconds)

    VirtualClockLoop.advance = watched_advance  # type: ignore[method-assign,assignment]
    try:
        yield moved
    finally:
        VirtualClockLoop.advance = advance  # type: ignore[method-assign]


def now() -> float:
    """The running loop's clock: virtual seconds under `run_coroutine()`, monotonic otherwise."""
    return asyncio.get_running_loop().time()


def run_coroutine(coro: Coroutine[Any, Any, T], *, virtual: bool = True) -> T:
    """Run `coro` to completion on a fresh loop, virtual by default; inside Jupyter, whose loop
    already runs in the main thread, the new loop runs in a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run(coro, virtual)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(_run, coro, virtual).result()


def _run(coro: Coroutine[Any, Any, T], virtual: bool) -> T:
    if not virtual:
        return asyncio.run(coro)
    loop = VirtualClockLoop()
    try:
        return loop.run_until_complete(coro)
    finally:
        try:  # as asyncio.run does: a task left running (a call cancelled and not awaited) is
            left = asyncio.all_tasks(loop)  # cancelled and finished, and a stream read up to
            for task in left:  # its finish and left is closed, not garbage on a closed loop
                task.cancel()
            if left:
                loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()
