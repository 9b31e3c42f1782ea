"""Chapter 4's `read_turn` check: a stalled stream is given up after an idle timeout on the
virtual clock and runs nothing; each wrong reader gets its own hint, right ones written in
other styles pass with the same lines."""

import asyncio
import contextlib
import time

import pytest

from keel_checks.stall import CASES, verify_read_turn
from keel_lab._core.streaming import Finish, StreamAssembler, ToolCallDelta

# `runs_its_own_loop` hands asyncio.run a coroutine that the running loop refuses, never awaited
pytestmark = [pytest.mark.ch4,
              pytest.mark.filterwarnings("ignore:coroutine 'with_wait_for' was never awaited")]


async def with_wait_for(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    while assembler.finish_reason is None:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except TimeoutError:
            return assembler.interrupted(f"no event for {timeout} s")
        except StopAsyncIteration:
            return assembler.interrupted("the stream ended before its finish")
        assembler.feed(event)
    return assembler.result()


async def with_a_rescheduled_timeout(stream, timeout):
    assembler = StreamAssembler()
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(timeout) as idle:
            async for event in stream:
                assembler.feed(event)
                if assembler.finish_reason is not None:
                    return assembler.result()
                idle.reschedule(loop.time() + timeout)
    except TimeoutError:
        return assembler.interrupted("stalled")
    return assembler.interrupted("no finish")


async def with_a_task_and_wait(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    while True:
        next_event = asyncio.ensure_future(anext(events))
        try:
            done, _ = await asyncio.wait({next_event}, timeout=timeout)
        finally:
            next_event.cancel()
        if not done:
            return assembler.interrupted("stalled")
        if next_event.exception() is not None:
            return assembler.interrupted(f"the stream ended: {next_event.exception()!r}")
        assembler.feed(next_event.result())
        if assembler.finish_reason:
            return assembler.result()


async def never_times_out(stream, timeout):
    assembler = StreamAssembler()
    async for event in stream:
        assembler.feed(event)
    return assembler.result() if assembler.finish_reason else assembler.interrupted("ended")


async def measures_wall_time(stream, timeout):
    assembler = StreamAssembler()
    last = time.monotonic()
    async for event in stream:
        if time.monotonic() - last > timeout:
            return assembler.interrupted("stalled")
        last = time.monotonic()
        assembler.feed(event)
    return assembler.result() if assembler.finish_reason else assembler.interrupted("ended")


async def a_total_deadline(stream, timeout):
    assembler = StreamAssembler()
    try:
        async with asyncio.timeout(timeout):
            async for event in stream:
                assembler.feed(event)
    except TimeoutError:
        return assembler.interrupted("too slow")
    return assembler.result()


async def closes_the_turn_itself(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    while assembler.finish_reason is None:
        try:
            assembler.feed(await asyncio.wait_for(anext(events), timeout))
        except (TimeoutError, StopAsyncIteration):
            assembler.feed(Finish("timeout"))  # "what arrived is the turn"
    return assembler.result()


async def runs_complete_calls(stream, timeout):
    """After a stall, the calls whose arguments parse are closed by hand and run."""
    got = await with_wait_for(stream, timeout)
    if got.finish_reason is None and got.calls and all(c.parses for c in got.calls):
        assembler = StreamAssembler()
        for c in got.calls:
            assembler.feed(ToolCallDelta(c.index, c.id, c.name, c.arguments))
        assembler.feed(Finish("stalled"))
        return assembler.result()
    return got


async def swallows_the_timeout(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    while assembler.finish_reason is None:
        try:
            assembler.feed(await asyncio.wait_for(anext(events), timeout))
        except (TimeoutError, StopAsyncIteration):
            return None
    return assembler.result()


async def raises_the_timeout(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    while assembler.finish_reason is None:
        assembler.feed(await asyncio.wait_for(anext(events), timeout))
    return assembler.result()


async def forgets_the_pieces(stream, timeout):
    got = await with_wait_for(stream, timeout)
    return got if got.finish_reason else StreamAssembler().interrupted("stalled")


async def catches_the_cancellation(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    while assembler.finish_reason is None:
        try:
            assembler.feed(await asyncio.wait_for(anext(events), timeout))
        except (TimeoutError, StopAsyncIteration, asyncio.CancelledError):
            return assembler.interrupted("stopped")
    return assembler.result()


async def milliseconds(stream, timeout):
    return await with_wait_for(stream, timeout / 1000)


async def blocks_with_time_sleep(stream, timeout):
    time.sleep(timeout / 2)  # "give the stream a head start"
    return await with_wait_for(stream, timeout)


# The answers of a review (2 s timeout: "1 s" is half of it, 2000 s a thousand times it).


async def deadline_for_the_turn(stream, timeout):
    # deadline for the whole turn, not the silence between events
    assembler = StreamAssembler()
    try:
        async with asyncio.timeout(timeout):
            async for event in stream:
                assembler.feed(event)
                if isinstance(event, Finish):
                    return assembler.result()
    except TimeoutError:
        return assembler.interrupted("stalled")
    return assembler.interrupted("ended without a finish")


async def swallows_stop(stream, timeout):
    # turns the user's Stop into an interrupted assembly instead of letting it through
    assembler = StreamAssembler()
    events = aiter(stream)
    while True:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except StopAsyncIteration:
            return assembler.interrupted("ended without a finish")
        except (TimeoutError, asyncio.CancelledError):
            return assembler.interrupted("stalled or cancelled")
        assembler.feed(event)
        if isinstance(event, Finish):
            return assembler.result()


async def stop_as_interrupted(stream, timeout):
    # uses interrupted(..., cancelled=True) for a cancel: swallows CancelledError
    assembler = StreamAssembler()
    events = aiter(stream)
    try:
        while True:
            try:
                event = await asyncio.wait_for(anext(events), timeout)
            except StopAsyncIteration:
                break
            assembler.feed(event)
            if isinstance(event, Finish):
                return assembler.result()
    except TimeoutError:
        return assembler.interrupted(f"no event for {timeout} s")
    except asyncio.CancelledError:
        return assembler.interrupted("the user pressed Stop", cancelled=True)
    return assembler.interrupted("stream ended before a finish")


async def no_end_check(stream, timeout):
    # stream that ends without a finish: calls result() anyway (LabError)
    assembler = StreamAssembler()
    events = aiter(stream)
    while True:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except StopAsyncIteration:
            return assembler.result()
        except TimeoutError:
            return assembler.interrupted("stalled")
        assembler.feed(event)
        if isinstance(event, Finish):
            return assembler.result()


async def empty_why(stream, timeout):
    # passes str(exc) as the reason: str(TimeoutError()) == "" so refused is falsy -> calls may run
    assembler = StreamAssembler()
    events = aiter(stream)
    while True:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except StopAsyncIteration as exc:
            return assembler.interrupted(str(exc))
        except TimeoutError as exc:
            return assembler.interrupted(str(exc))
        assembler.feed(event)
        if isinstance(event, Finish):
            return assembler.result()


async def fresh_assembler(stream, timeout):
    # on a stall returns an empty assembly: loses the pieces read so far
    assembler = StreamAssembler()
    events = aiter(stream)
    while True:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except StopAsyncIteration:
            return assembler.interrupted("ended without a finish")
        except TimeoutError:
            return StreamAssembler().interrupted("stalled")
        assembler.feed(event)
        if isinstance(event, Finish):
            return assembler.result()


async def timeout_in_ms(stream, timeout):
    # unit confusion: treats timeout as seconds->milliseconds (waits 1000x too long)
    assembler = StreamAssembler()
    events = aiter(stream)
    while True:
        try:
            event = await asyncio.wait_for(anext(events), timeout * 1000)
        except StopAsyncIteration:
            return assembler.interrupted("ended without a finish")
        except TimeoutError:
            return assembler.interrupted("stalled")
        assembler.feed(event)
        if isinstance(event, Finish):
            return assembler.result()


async def half_timeout(stream, timeout):
    # "to be safe" waits timeout/2 per event: a steady 1.5 s trickle is wrongly given up
    assembler = StreamAssembler()
    events = aiter(stream)
    while True:
        try:
            event = await asyncio.wait_for(anext(events), timeout / 2)
        except StopAsyncIteration:
            return assembler.interrupted("ended without a finish")
        except TimeoutError:
            return assembler.interrupted("stalled")
        assembler.feed(event)
        if isinstance(event, Finish):
            return assembler.result()


async def finish_not_fed(stream, timeout):
    # breaks on Finish before feeding it: result() finds no finish reason
    assembler = StreamAssembler()
    events = aiter(stream)
    while True:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except StopAsyncIteration:
            return assembler.interrupted("ended without a finish")
        except TimeoutError:
            return assembler.interrupted("stalled")
        if isinstance(event, Finish):
            return assembler.result()
        assembler.feed(event)


async def always_interrupted(stream, timeout):
    # never returns result(): the finished turn is reported as interrupted
    assembler = StreamAssembler()
    events = aiter(stream)
    while True:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except (StopAsyncIteration, TimeoutError):
            break
        assembler.feed(event)
        if isinstance(event, Finish):
            break
    return assembler.interrupted("stream over")


async def returns_assembler(stream, timeout):
    # returns the StreamAssembler instead of its Assembly
    assembler = StreamAssembler()
    events = aiter(stream)
    while True:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except (StopAsyncIteration, TimeoutError):
            return assembler
        assembler.feed(event)
        if isinstance(event, Finish):
            return assembler


async def only_tool_deltas(stream, timeout):
    # feeds only the tool-call deltas and the finish: text (and notices/refusals) are dropped
    assembler = StreamAssembler()
    events = aiter(stream)
    while True:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except StopAsyncIteration:
            return assembler.interrupted("ended without a finish")
        except TimeoutError:
            return assembler.interrupted("stalled")
        if isinstance(event, (ToolCallDelta, Finish)):
            assembler.feed(event)
        if isinstance(event, Finish):
            return assembler.result()


async def polls_the_wall_clock(stream, timeout):
    # measures the silence with time.monotonic (real clock): on the virtual clock never stalls
    assembler = StreamAssembler()
    events = aiter(stream)
    last = time.monotonic()
    while True:
        task = asyncio.ensure_future(anext(events))
        while not task.done():
            if time.monotonic() - last > timeout:
                task.cancel()
                return assembler.interrupted("stalled")
            await asyncio.sleep(0.1)
        try:
            event = task.result()
        except StopAsyncIteration:
            return assembler.interrupted("ended without a finish")
        last = time.monotonic()
        assembler.feed(event)
        if isinstance(event, Finish):
            return assembler.result()


async def leaks_the_pending_task(stream, timeout):
    # asyncio.wait: on timeout forgets to cancel the pending anext task (left waiting on the stream)
    assembler = StreamAssembler()
    events = aiter(stream)
    while True:
        task = asyncio.ensure_future(anext(events))
        done, _pending = await asyncio.wait({task}, timeout=timeout)
        if not done:
            return assembler.interrupted("stalled")
        try:
            event = task.result()
        except StopAsyncIteration:
            return assembler.interrupted("ended without a finish")
        assembler.feed(event)
        if isinstance(event, Finish):
            return assembler.result()


async def reads_past_the_finish(stream, timeout):
    # keeps reading after the finish until the stream ends; a stall after the finish -> interrupted
    assembler = StreamAssembler()
    events = aiter(stream)
    while True:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except StopAsyncIteration:
            break
        except TimeoutError:
            return assembler.interrupted("stalled")
        if assembler.finish_reason is None:
            assembler.feed(event)
    if assembler.finish_reason is None:
        return assembler.interrupted("ended without a finish")
    return assembler.result()


async def catches_cancelled_not_timeout(stream, timeout):
    # pre-3.11 confusion: thinks wait_for raises CancelledError on timeout; TimeoutError escapes
    assembler = StreamAssembler()
    events = aiter(stream)
    while True:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except StopAsyncIteration:
            return assembler.interrupted("ended without a finish")
        except asyncio.CancelledError:
            return assembler.interrupted("stalled")
        assembler.feed(event)
        if isinstance(event, Finish):
            return assembler.result()


async def timeout_on_the_first_event_only(stream, timeout):
    # guards only the first event with the timeout; after that waits forever
    assembler = StreamAssembler()
    events = aiter(stream)
    try:
        first = await asyncio.wait_for(anext(events), timeout)
    except StopAsyncIteration:
        return assembler.interrupted("empty stream")
    except TimeoutError:
        return assembler.interrupted("stalled")
    assembler.feed(first)
    if isinstance(first, Finish):
        return assembler.result()
    async for event in events:
        assembler.feed(event)
        if isinstance(event, Finish):
            return assembler.result()
    return assembler.interrupted("ended without a finish")


async def tool_calls_finish_only(stream, timeout):
    # only "tool_calls" counts as a finish; other finishes are treated as the end without a finish
    assembler = StreamAssembler()
    events = aiter(stream)
    while True:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except StopAsyncIteration:
            return assembler.interrupted("ended without a finish")
        except TimeoutError:
            return assembler.interrupted("stalled")
        assembler.feed(event)
        if isinstance(event, Finish):
            if event.reason == "tool_calls":
                return assembler.result()
            return assembler.interrupted(f"finish {event.reason}")


async def timeout_around_the_body(stream, timeout):
    # the timeout wraps the loop body (feeding), not the wait for the next event: never fires
    assembler = StreamAssembler()
    try:
        async for event in stream:
            async with asyncio.timeout(timeout):
                assembler.feed(event)
            if isinstance(event, Finish):
                return assembler.result()
    except TimeoutError:
        return assembler.interrupted("stalled")
    return assembler.interrupted("ended without a finish")


async def one_timeout_rescheduled(stream, timeout):
    # one asyncio.timeout context, rescheduled after every event
    loop = asyncio.get_running_loop()
    assembler = StreamAssembler()
    try:
        async with asyncio.timeout(loop.time() + timeout) as cm:
            async for event in stream:
                cm.reschedule(loop.time() + timeout)
                assembler.feed(event)
                if assembler.finish_reason is not None:
                    return assembler.result()
    except TimeoutError:
        return assembler.interrupted(f"no event for {timeout} s: stalled")
    return assembler.interrupted("stream ended before a finish reason")


async def a_task_per_event_cancelled(stream, timeout):
    # asyncio.wait on a task per event, cancelling it on a stall
    assembler = StreamAssembler()
    events = aiter(stream)
    while assembler.finish_reason is None:
        task = asyncio.ensure_future(anext(events))
        try:
            done, _ = await asyncio.wait({task}, timeout=timeout)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if not done:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await task
            return assembler.interrupted(f"stalled: silent for {timeout} s")
        try:
            assembler.feed(task.result())
        except StopAsyncIteration:
            return assembler.interrupted("the stream ended without a finish")
    return assembler.result()


async def recursive(stream, timeout, _assembler=None, _events=None):
    # recursive, sentinel default on anext, asyncio.timeout per event
    assembler = _assembler or StreamAssembler()
    events = _events or aiter(stream)
    try:
        async with asyncio.timeout(timeout):
            event = await anext(events, None)
    except TimeoutError:
        return assembler.interrupted("idle timeout")
    if event is None:
        return assembler.interrupted("no finish before the end of the stream")
    assembler.feed(event)
    if isinstance(event, Finish):
        return assembler.result()
    return await recursive(stream, timeout, assembler, events)


def plain_def(stream, timeout):  # `def` and `for`: the stream is an async one
    assembler = StreamAssembler()
    for event in stream:
        assembler.feed(event)
    return assembler.result()


def runs_its_own_loop(stream, timeout):  # a `def` that starts a loop inside the lab's own
    return asyncio.run(with_wait_for(stream, timeout))


def returns_at_once(stream, timeout):  # `def`, never reads: the lab awaits what it returns
    return StreamAssembler().interrupted("not read")



# --- a tester's answers who had not read the check (issue 22) ---


async def no_timeout_at_all(stream, timeout):
    assembler = StreamAssembler()
    async for event in stream:
        assembler.feed(event)
        if assembler.finish_reason is not None:
            return assembler.result()
    return assembler.interrupted("the stream ended before its finish")


def def_not_async(stream, timeout):
    assembler = StreamAssembler()
    for event in stream:
        assembler.feed(event)
        if assembler.finish_reason is not None:
            break
    return assembler.result()


async def swallows_cancellation(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    while assembler.finish_reason is None:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except (TimeoutError, asyncio.CancelledError):
            return assembler.interrupted("stopped")
        except StopAsyncIteration:
            return assembler.interrupted("the stream ended before its finish")
        assembler.feed(event)
    return assembler.result()


async def deadline_for_whole_turn(stream, timeout):
    assembler = StreamAssembler()
    try:
        async with asyncio.timeout(timeout):
            async for event in stream:
                assembler.feed(event)
                if assembler.finish_reason is not None:
                    return assembler.result()
    except TimeoutError:
        return assembler.interrupted(f"no finish after {timeout} s")
    return assembler.interrupted("the stream ended before its finish")


async def end_of_stream_is_finish(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    while assembler.finish_reason is None:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except TimeoutError:
            return assembler.interrupted(f"no event for {timeout} s")
        except StopAsyncIteration:
            break
        assembler.feed(event)
    return assembler.result()


async def reads_past_finish(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    while True:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except TimeoutError:
            return assembler.interrupted(f"no event for {timeout} s")
        except StopAsyncIteration:
            break
        assembler.feed(event)
    if assembler.finish_reason is None:
        return assembler.interrupted("the stream ended before its finish")
    return assembler.result()


async def returns_none_on_timeout(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    while assembler.finish_reason is None:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except (TimeoutError, StopAsyncIteration):
            return None
        assembler.feed(event)
    return assembler.result()


async def timeout_propagates(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    while assembler.finish_reason is None:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except StopAsyncIteration:
            return assembler.interrupted("the stream ended before its finish")
        assembler.feed(event)
    return assembler.result()


async def forgets_await(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    while assembler.finish_reason is None:
        try:
            event = asyncio.wait_for(anext(events), timeout)
        except TimeoutError:
            return assembler.interrupted(f"no event for {timeout} s")
        except StopAsyncIteration:
            return assembler.interrupted("the stream ended before its finish")
        assembler.feed(event)
    return assembler.result()


async def wait_leaves_task_pending(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    while assembler.finish_reason is None:
        task = asyncio.ensure_future(anext(events))
        done, _ = await asyncio.wait({task}, timeout=timeout)
        if not done:
            return assembler.interrupted(f"no event for {timeout} s")
        try:
            event = task.result()
        except StopAsyncIteration:
            return assembler.interrupted("the stream ended before its finish")
        assembler.feed(event)
    return assembler.result()


async def timeout_in_milliseconds(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    while assembler.finish_reason is None:
        try:
            event = await asyncio.wait_for(anext(events), timeout * 1000)
        except TimeoutError:
            return assembler.interrupted(f"no event for {timeout} s")
        except StopAsyncIteration:
            return assembler.interrupted("the stream ended before its finish")
        assembler.feed(event)
    return assembler.result()


async def finish_not_fed_fresh(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    while True:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except TimeoutError:
            return assembler.interrupted(f"no event for {timeout} s")
        except StopAsyncIteration:
            return assembler.interrupted("the stream ended before its finish")
        if type(event).__name__ == "Finish":
            return assembler.result()
        assembler.feed(event)


async def raises_on_timeout(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    while assembler.finish_reason is None:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except TimeoutError:
            raise RuntimeError(f"stream stalled for {timeout} s")  # noqa: B904
        except StopAsyncIteration:
            return assembler.interrupted("the stream ended before its finish")
        assembler.feed(event)
    return assembler.result()


async def catches_everything(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    while assembler.finish_reason is None:
        try:
            event = await asyncio.wait_for(anext(events), timeout)
        except BaseException:
            return assembler.interrupted("stopped")
        assembler.feed(event)
    return assembler.result()


async def timeout_only_first_event(stream, timeout):
    assembler = StreamAssembler()
    events = aiter(stream)
    try:
        first = await asyncio.wait_for(anext(events), timeout)
    except TimeoutError:
        return assembler.interrupted(f"no event for {timeout} s")
    except StopAsyncIteration:
        return assembler.interrupted("empty stream")
    assembler.feed(first)
    async for event in events:
        assembler.feed(event)
        if assembler.finish_reason is not None:
            return assembler.result()
    return assembler.interrupted("the stream ended before its finish")


WRONG = [
    (plain_def, "'async_generator' object is not iterable - the stream is asynchronous: read "
                "it with `async for` inside an `async def`"),
    (runs_its_own_loop, "the lab already runs your function in its event loop, and no second "
                        "loop can start inside it"),
    (returns_at_once, "your function returned an Assembly at once, with nothing to await: "
                      "write it as `async def read_turn(...)`"),
    (never_times_out, "you waited 2100 s, 2100 s after the last event: no timeout fired"),
    (measures_wall_time, "no timeout fired"),
    (a_total_deadline, "not a deadline for the whole turn"),
    (closes_the_turn_itself, "your assembly treats the stalled turn as finished"),
    (runs_complete_calls, "the call at index 0 would run: a turn whose stream never finished"),
    (swallows_the_timeout, "your function returned None"),
    (raises_the_timeout, "raised TimeoutError: (a stall is an answer, not an error"),
    (forgets_the_pieces, "the pieces that arrived are not in your assembly"),
    (catches_the_cancellation, "you caught the cancellation and returned an Assembly"),
    (milliseconds, "you stopped after 0.002 s without an event, less than the 2 s timeout"),
    (blocks_with_time_sleep, "s of real time: time.sleep blocks the loop"),
    (deadline_for_the_turn, "you stopped reading after 2 s (stalled), but no 2 s passed without "
                            "an event: the timeout is the silence between two events, not a "
                            "deadline for the whole turn"),
    (swallows_stop, "you caught the cancellation and returned an Assembly"),
    (stop_as_interrupted, "you caught the cancellation and returned an Assembly"),
    (no_end_check, "quirks/truncated.sse: your function raised LabError: the stream has not "
                   "finished: no call may run yet (result() needs a finish"),
    (empty_why, "why must be a non-empty reason"),
    (fresh_assembler, "the pieces that arrived are not in your assembly"),
    (timeout_in_ms, "your timeout fired after 2000 s without an event, not 2 s: the timeout is "
                    "in seconds"),
    (half_timeout, "read to its finish: you stopped after 1 s without an event, less than the "
                   "2 s timeout"),
    (finish_not_fed, "feed the Finish to the assembler too"),
    (always_interrupted, "the finish arrived: return assembler.result()"),
    (returns_assembler, "your function returned a StreamAssembler"),
    (only_tool_deltas, "anthropic/stop_refusal.sse: the call at index 1: your assembly says "
                       "\"complete and closed: it may run\", the lab's \"the turn ended"),
    (polls_the_wall_clock, "no timeout fired. The timeout must wrap the wait for the next event"),
    (leaks_the_pending_task, "a task you started is still pending after you returned"),
    (reads_past_the_finish, "stays open: the turn returned at its finish: the finish arrived "
                            "after 0.27 s, but you waited 2 s more for another event"),
    (catches_cancelled_not_timeout, "raised TimeoutError: (a stall is an answer, not an error"),
    (timeout_on_the_first_event_only, "arguments: stopped, nothing to run: you waited 2100.09 s"),
    (tool_calls_finish_only, "the finish arrived: return assembler.result() - whatever its "
                             "reason (here 'refusal')"),
    (timeout_around_the_body, "The timeout must wrap the wait for the next event"),
    (no_timeout_at_all, "asyncio runs on the loop's clock, time.monotonic() on the wall's"),
    (def_not_async, "object is not iterable - the stream is asynchronous: read it with `async "
                    "for` inside an `async def`"),
    (swallows_cancellation, "let asyncio.CancelledError propagate (catch only the timeout), so "
                            "the code that cancelled you stops too"),
    (deadline_for_whole_turn, "2 s passed without an event: the timeout is the silence between "
                              "two events, not a deadline for the whole turn"),
    (end_of_stream_is_finish, "needs a finish: feed the Finish to the assembler too, or return "
                              "assembler.interrupted(why) when none arrived)"),
    (reads_past_finish, "2 s more for another event: return assembler.result() at the finish - "
                        "the stream may stay open after it"),
    (returns_none_on_timeout, "any event: stopped after 2 s of silence, nothing to run: your "
                              "function returned None - is a `return` missing?"),
    (timeout_propagates, "TimeoutError: (a stall is an answer, not an error: catch the timeout "
                         "and return assembler.interrupted(why))"),
    (forgets_await, "as the lab assembles them: your function raised AttributeError: "
                    "'coroutine' object has no attribute 'reason'"),
    (wait_leaves_task_pending, "is still pending after you returned, waiting on the stream: "
                               "cancel it (task.cancel()) before you return"),
    (timeout_in_milliseconds, "run: your timeout fired after 2000 s without an event, not 2 s: "
                              "the timeout is in seconds, as asyncio's are"),
    (finish_not_fed_fresh, "needs a finish: feed the Finish to the assembler too, or return "
                           "assembler.interrupted(why) when none arrived)"),
    (raises_on_timeout, "stopped after 2 s of silence, nothing to run: your function raised "
                        "RuntimeError: stream stalled for 2.0 s"),
    (catches_everything, "let asyncio.CancelledError propagate (catch only the timeout), so the "
                         "code that cancelled you stops too"),
    (timeout_only_first_event, "asyncio runs on the loop's clock, time.monotonic() on the wall's"),
]

# this module's tables of known-wrong answers, by exercise (the instructor's guide shows them)
WRONG_ANSWERS = {"read_turn": WRONG}
RIGHT = [with_a_rescheduled_timeout, with_a_task_and_wait, one_timeout_rescheduled,
         a_task_per_event_cancelled, recursive]


@pytest.mark.parametrize(("answer", "hint"), WRONG, ids=[a.__name__ for a, _ in WRONG])
def test_wrong_readers_get_their_hint(answer, hint):
    v = verify_read_turn(answer)
    assert not v.passed and len(v.lines()) == len(CASES) + 1
    assert hint in v.hints[0], v.hints[0]


@pytest.mark.parametrize("answer", RIGHT, ids=[a.__name__ for a in RIGHT])
def test_right_readers_in_other_styles_pass_with_the_same_lines(answer):
    v = verify_read_turn(answer)
    assert v.passed, v.hints
    assert v.lines() == verify_read_turn(with_wait_for).lines()


def test_another_threads_sleep_is_not_the_answers():
    """A Jupyter kernel's parent poller sleeps 1 s at a time in its own thread; counted as the
    answer's, it failed a right answer in a saved notebook ('it took 1.0 s ... time.sleep')."""
    import threading

    done = threading.Event()

    def poller() -> None:
        while not done.is_set():
            time.sleep(0.05)

    thread = threading.Thread(target=poller, daemon=True)
    thread.start()
    try:
        assert verify_read_turn(with_wait_for).passed
    finally:
        done.set()
        thread.join()
