"""Chapter 9's capstone check: wrong loops get their own hint, right ones written in other styles
pass with the same lines."""

import asyncio
import importlib
import json

import pytest

from keel_checks.capstone import (
    CANCEL,
    RECORDINGS,
    SWEPT,
    cases,
    expected,
    positional,
    verify_agent_loop,
)
from keel_checks.verdict import seeded
from keel_lab import (
    AssistantMessage,
    Finish,
    Runner,
    StreamAssembler,
    StreamCancelled,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolMessage,
    ToolRequest,
    UserMessage,
    invoke,
)

pytestmark = pytest.mark.ch9

FATAL = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}


# --- the parts the learner wrote in earlier chapters, as a learner would paste them ---


def accumulate(events):
    calls = {}
    for delta in (e for e in events if isinstance(e, ToolCallDelta)):
        call = calls.setdefault(delta.index, {"id": None, "name": "", "arguments": ""})
        call["id"] = call["id"] or delta.id or None
        call["name"] += delta.name or ""
        call["arguments"] += delta.arguments_delta or ""
    return [ToolCall(c["id"], c["name"], c["arguments"]) for _, c in sorted(calls.items())]


def make_batches(requests, tools):
    batches, together = [], False
    for r in requests:
        tool = tools.get(r.name)
        safe = tool is not None and tool.concurrency_safe and not tool.requires_approval
        if safe and together:
            batches[-1].append(r)
        else:
            batches.append([r])
        together = safe
    return batches


async def read(model, messages):
    """The turn's events; or, when the run ends here, its status: "cancelled" (a cancel) or
    "failed" (a stream that broke or ended without a finish)."""
    events = []
    try:
        async for event in model(messages):
            events.append(event)
    except StreamCancelled:
        return "cancelled"
    except Exception:  # a dropped connection, a server error
        return "failed"
    return events if any(isinstance(e, Finish) for e in events) else "failed"


def turn_message(events):
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    return AssistantMessage(text, tuple(accumulate(events)))


async def outcomes_by_id(requests, tools):
    """Each call's outcome under its id: batch by batch, a batch's calls together."""
    outcomes = {}
    for batch in make_batches(requests, tools):
        done = await asyncio.gather(*(invoke(tools.get(r.name), r) for r in batch))
        outcomes.update({o.call_id: o for o in done})
    return outcomes


def status_of(codes, partial):
    if set(codes) & FATAL:
        return "failed"
    return "partial" if partial or any(codes) else "completed"


# --- right answers, three styles and the notebook's ---


async def with_gather(model, tools, question):
    messages, partial = [UserMessage(question)], False
    while True:
        events = await read(model, messages)
        if isinstance(events, str):
            return messages, events
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, "partial" if partial else "completed"
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        outcomes = {}
        for batch in make_batches(requests, tools):
            done = await asyncio.gather(*(invoke(tools.get(r.name), r) for r in batch))
            outcomes.update({o.call_id: o for o in done})
        messages += [outcomes[r.call_id].to_message() for r in requests]
        codes = [outcomes[r.call_id].code for r in requests]
        if status_of(codes, partial) == "failed":
            return messages, "failed"
        partial = status_of(codes, partial) == "partial"


async def with_a_queue(model, tools, question):
    messages, errors = [UserMessage(question)], []
    while True:
        events = await read(model, messages)
        if isinstance(events, str):
            return messages, events
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, "partial" if errors else "completed"
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        done = asyncio.Queue()

        async def worker(request, queue):
            await queue.put((request.call_id, await invoke(tools.get(request.name), request)))

        answers = {}
        for batch in make_batches(requests, tools):
            workers = [asyncio.create_task(worker(r, done)) for r in batch]
            for _ in batch:
                call_id, outcome = await done.get()
                answers[call_id] = outcome
            await asyncio.gather(*workers)
        for r in requests:
            messages.append(answers[r.call_id].to_message())
        errors += [o.code for o in answers.values() if o.code]
        if FATAL & set(errors):
            return messages, "failed"


async def with_wait_and_a_dict(model, tools, question):
    """asyncio.wait over tasks, each task mapped to its request explicitly."""
    history, any_error = [UserMessage(question)], False
    while True:
        assembler = StreamAssembler()
        try:
            async for event in model(history):
                assembler.feed(event)
        except StreamCancelled:
            return history, "cancelled"
        except Exception:  # a stream that broke
            return history, "failed"
        if assembler.finish_reason is None:
            return history, "failed"
        turn = assembler.result()
        history.append(turn.message)
        if not turn.requests:
            return history, "partial" if any_error else "completed"
        results = {}
        for batch in make_batches(list(turn.requests), tools):
            tasks = {asyncio.ensure_future(invoke(tools.get(r.name), r)): r for r in batch}
            pending = set(tasks)
            while pending:
                finished, pending = await asyncio.wait(pending,
                                                       return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    results[tasks[task].call_id] = task.result()
        history += [results[r.call_id].to_message() for r in turn.requests]
        codes = {o.code for o in results.values()} - {None}
        if codes & FATAL:
            return history, "failed"
        any_error = any_error or bool(codes)


async def with_a_task_group(model, tools, question):
    messages = [UserMessage(question)]
    codes = []
    while isinstance(events := await read(model, messages), list):
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        pairs = []
        for batch in make_batches(requests, tools):
            async with asyncio.TaskGroup() as group:
                tasks = [(r.call_id, group.create_task(invoke(tools.get(r.name), r)))
                         for r in batch]
            pairs += [(call_id, task.result()) for call_id, task in tasks]
        by_id = dict(pairs)
        messages += [by_id[r.call_id].to_message() for r in requests]
        codes += [o.code for o in by_id.values()]
        if set(codes) & FATAL:
            return messages, "failed"
    return messages, events


async def parses_arguments_itself(model, tools, question):
    """Chapter 4's own parsing, in its own words; as_completed, each outcome kept by its id."""
    messages, codes = [UserMessage(question)], []
    while isinstance(events := await read(model, messages), list):
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = []
        for call in message.tool_calls:
            try:
                value = json.loads(call.arguments or "{}")
            except ValueError:
                value = None
            ok = isinstance(value, dict)
            requests.append(ToolRequest(call.id, call.name, call.arguments, value if ok else None,
                                        None if ok else "my parser: not a JSON object"))
        outcomes = {}
        for batch in make_batches(requests, tools):
            for next_done in asyncio.as_completed([invoke(tools.get(r.name), r) for r in batch]):
                outcome = await next_done
                outcomes[outcome.call_id] = outcome
        messages += [outcomes[r.call_id].to_message() for r in requests]
        codes += [outcomes[r.call_id].code for r in requests]
        if set(codes) & FATAL:
            return messages, "failed"
    return messages, events


RIGHT = [with_gather, with_a_queue, with_wait_and_a_dict, with_a_task_group,
         parses_arguments_itself]


# --- wrong answers ---


async def zip_over_completion(model, tools, question):
    messages, codes = [UserMessage(question)], []
    while isinstance(events := await read(model, messages), list):
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        for batch in make_batches(requests, tools):
            finished = [await f for f in asyncio.as_completed(
                [invoke(tools.get(r.name), r) for r in batch])]
            for r, o in zip(batch, finished, strict=True):
                messages.append(ToolMessage(r.call_id, r.name, o.content))
                codes.append(o.code)
        if set(codes) & FATAL:
            return messages, "failed"
    return messages, events


async def completion_order(model, tools, question):
    messages, codes = [UserMessage(question)], []
    while isinstance(events := await read(model, messages), list):
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        for batch in make_batches(requests, tools):
            for f in asyncio.as_completed([invoke(tools.get(r.name), r) for r in batch]):
                outcome = await f
                messages.append(outcome.to_message())
                codes.append(outcome.code)
        if set(codes) & FATAL:
            return messages, "failed"
    return messages, events


async def runs_calls_at_first_parse(model, tools, question):
    """Starts each call as soon as its arguments parse, before the turn's finish."""
    messages, codes = [UserMessage(question)], []
    while True:
        events, started = [], {}
        try:
            async for event in model(messages):
                events.append(event)
                for call in accumulate(events):
                    request = ToolRequest.from_call(call)
                    if call.id not in started and call.arguments and request.input is not None:
                        started[call.id] = asyncio.ensure_future(
                            invoke(tools.get(call.name), request))
        except StreamCancelled:
            return messages, "cancelled"
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        for call in message.tool_calls:
            outcome = await started[call.id]
            messages.append(outcome.to_message())
            codes.append(outcome.code)
        if set(codes) & FATAL:
            return messages, "failed"


async def runs_what_came_before_the_cancel(model, tools, question):
    messages, codes = [UserMessage(question)], []
    while True:
        events, cancelled = [], False
        try:
            async for event in model(messages):
                events.append(event)
        except StreamCancelled:
            cancelled = True
        message = turn_message(events)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        outcomes = {}
        for batch in make_batches(requests, tools):
            done = await asyncio.gather(*(invoke(tools.get(r.name), r) for r in batch))
            outcomes.update({o.call_id: o for o in done})
        if cancelled:
            return messages, "cancelled"
        messages.append(message)
        if not requests:
            return messages, status_of(codes, False)
        messages += [outcomes[r.call_id].to_message() for r in requests]
        codes += [o.code for o in outcomes.values()]
        if set(codes) & FATAL:
            return messages, "failed"


async def drops_failed_calls(model, tools, question):
    messages, codes = [UserMessage(question)], []
    while isinstance(events := await read(model, messages), list):
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        outcomes = {}
        for batch in make_batches(requests, tools):
            done = await asyncio.gather(*(invoke(tools.get(r.name), r) for r in batch))
            outcomes.update({o.call_id: o for o in done})
        messages += [outcomes[r.call_id].to_message() for r in requests
                     if outcomes[r.call_id].ok]
        codes += [o.code for o in outcomes.values()]
        if set(codes) & FATAL:
            return messages, "failed"
    return messages, events


async def skips_calls_that_do_not_parse(model, tools, question):
    messages, codes = [UserMessage(question)], []
    while isinstance(events := await read(model, messages), list):
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [r for r in map(ToolRequest.from_call, message.tool_calls)
                    if r.input is not None]
        outcomes = {}
        for batch in make_batches(requests, tools):
            done = await asyncio.gather(*(invoke(tools.get(r.name), r) for r in batch))
            outcomes.update({o.call_id: o for o in done})
        messages += [outcomes[r.call_id].to_message() for r in requests]
        codes += [o.code for o in outcomes.values()]
        if set(codes) & FATAL:
            return messages, "failed"
    return messages, events


async def asks_the_model_after_250_ms(model, tools, question):
    messages, codes = [UserMessage(question)], []
    while isinstance(events := await read(model, messages), list):
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        tasks = {asyncio.ensure_future(invoke(tools.get(r.name), r)): r for r in requests}
        done, _ = await asyncio.wait(tasks, timeout=0.25)
        for task in done:
            messages.append(task.result().to_message())
            codes.append(task.result().code)
    return messages, events


async def one_gather_per_turn(model, tools, question):
    """Every call of a turn at once: no batches, the write beside the reads."""
    messages, codes = [UserMessage(question)], []
    while isinstance(events := await read(model, messages), list):
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        outcomes = await asyncio.gather(*(invoke(tools.get(r.name), r) for r in requests))
        messages += [o.to_message() for o in outcomes]
        codes += [o.code for o in outcomes]
        if set(codes) & FATAL:
            return messages, "failed"
    return messages, events


async def one_call_at_a_time(model, tools, question):
    messages, codes = [UserMessage(question)], []
    while isinstance(events := await read(model, messages), list):
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        for call in message.tool_calls:
            outcome = await invoke(tools.get(call.name), ToolRequest.from_call(call))
            messages.append(outcome.to_message())
            codes.append(outcome.code)
        if set(codes) & FATAL:
            return messages, "failed"
    return messages, events


async def completed_unless_fatal(model, tools, question):
    messages = [UserMessage(question)]
    while isinstance(events := await read(model, messages), list):
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, "completed"
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        outcomes = {}
        for batch in make_batches(requests, tools):
            done = await asyncio.gather(*(invoke(tools.get(r.name), r) for r in batch))
            outcomes.update({o.call_id: o for o in done})
        messages += [outcomes[r.call_id].to_message() for r in requests]
        if {o.code for o in outcomes.values()} & FATAL:
            return messages, "failed"
    return messages, events


async def fails_on_any_error(model, tools, question):
    messages = [UserMessage(question)]
    while isinstance(events := await read(model, messages), list):
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, "completed"
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        outcomes = {}
        for batch in make_batches(requests, tools):
            done = await asyncio.gather(*(invoke(tools.get(r.name), r) for r in batch))
            outcomes.update({o.call_id: o for o in done})
        messages += [outcomes[r.call_id].to_message() for r in requests]
        if any(not o.ok for o in outcomes.values()):
            return messages, "failed"
    return messages, events


async def keeps_the_cancelled_turn(model, tools, question):
    messages, codes = [UserMessage(question)], []
    while True:
        events = []
        try:
            async for event in model(messages):
                events.append(event)
        except StreamCancelled:
            messages.append(turn_message(events))
            return messages, "cancelled"
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        outcomes = {}
        for batch in make_batches(requests, tools):
            done = await asyncio.gather(*(invoke(tools.get(r.name), r) for r in batch))
            outcomes.update({o.call_id: o for o in done})
        messages += [outcomes[r.call_id].to_message() for r in requests]
        codes += [o.code for o in outcomes.values()]
        if set(codes) & FATAL:
            return messages, "failed"


async def arguments_overwritten(model, tools, question):
    """Each fragment replaces the call's arguments instead of adding to them."""
    messages, codes = [UserMessage(question)], []
    while isinstance(events := await read(model, messages), list):
        calls = {}
        for e in events:
            if isinstance(e, ToolCallDelta):
                call = calls.setdefault(e.index, {"id": e.id, "name": e.name, "arguments": ""})
                call["arguments"] = e.arguments_delta or call["arguments"]
        message = AssistantMessage("".join(e.text for e in events if isinstance(e, TextDelta)),
                                   tuple(ToolCall(c["id"], c["name"], c["arguments"])
                                         for _, c in sorted(calls.items())))
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        outcomes = {}
        for batch in make_batches(requests, tools):
            done = await asyncio.gather(*(invoke(tools.get(r.name), r) for r in batch))
            outcomes.update({o.call_id: o for o in done})
        messages += [outcomes[r.call_id].to_message() for r in requests]
        codes += [o.code for o in outcomes.values()]
        if set(codes) & FATAL:
            return messages, "failed"
    return messages, events


async def forgets_the_question(model, tools, question):
    messages, codes = [], []
    first = [UserMessage(question)]
    while isinstance(events := await read(model, first + messages), list):
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        outcomes = {}
        for batch in make_batches(requests, tools):
            done = await asyncio.gather(*(invoke(tools.get(r.name), r) for r in batch))
            outcomes.update({o.call_id: o for o in done})
        messages += [outcomes[r.call_id].to_message() for r in requests]
        codes += [o.code for o in outcomes.values()]
        if set(codes) & FATAL:
            return messages, "failed"
    return messages, events


async def returns_the_status_only(model, tools, question):
    return (await with_gather(model, tools, question))[1]


async def delegates_to_the_runner(model, tools, question):
    class Model:  # the lab's Model protocol over the exercise's model
        def stream(self, messages, tools_, turn):
            raise NotImplementedError

    result = await Runner(Model(), tools, stream=True).start(question)
    return list(result.messages), str(result.status)


def plain_def(model, tools, question):
    return [UserMessage(question)], "completed"


async def runs_each_call_twice(model, tools, question):
    """Runs every batch again, 'to be sure'."""
    messages, codes = [UserMessage(question)], []
    while isinstance(events := await read(model, messages), list):
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        await outcomes_by_id(requests, tools)
        outcomes = await outcomes_by_id(requests, tools)
        messages += [outcomes[r.call_id].to_message() for r in requests]
        codes += [o.code for o in outcomes.values()]
        if set(codes) & FATAL:
            return messages, "failed"
    return messages, events


async def runs_a_turn_without_its_finish(model, tools, question):
    """Takes whatever the stream sent as the turn, finish or not."""
    messages, codes = [UserMessage(question)], []
    while True:
        events = []
        try:
            async for event in model(messages):
                events.append(event)
        except StreamCancelled:
            return messages, "cancelled"
        except Exception:
            return messages, "failed"
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        outcomes = await outcomes_by_id(requests, tools)
        messages += [outcomes[r.call_id].to_message() for r in requests]
        codes += [o.code for o in outcomes.values()]
        if set(codes) & FATAL:
            return messages, "failed"


async def lets_a_broken_stream_crash(model, tools, question):
    """Catches a cancel only: any other error of the stream escapes the loop."""
    messages, codes = [UserMessage(question)], []
    while True:
        events = []
        try:
            async for event in model(messages):
                events.append(event)
        except StreamCancelled:
            return messages, "cancelled"
        if not any(isinstance(e, Finish) for e in events):
            return messages, "failed"
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        outcomes = await outcomes_by_id(requests, tools)
        messages += [outcomes[r.call_id].to_message() for r in requests]
        codes += [o.code for o in outcomes.values()]
        if set(codes) & FATAL:
            return messages, "failed"


async def tool_messages_sorted_by_id(model, tools, question):
    messages, codes = [UserMessage(question)], []
    while isinstance(events := await read(model, messages), list):
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        outcomes = await outcomes_by_id(requests, tools)
        messages += [outcomes[i].to_message() for i in sorted(outcomes)]
        codes += [o.code for o in outcomes.values()]
        if set(codes) & FATAL:
            return messages, "failed"
    return messages, events


async def crash_sent_back_to_the_model(model, tools, question):
    """A crashed tool is one more error for the model to read; 'failed' only at the end."""
    messages, codes = [UserMessage(question)], []
    while isinstance(events := await read(model, messages), list):
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        outcomes = await outcomes_by_id(requests, tools)
        messages += [outcomes[r.call_id].to_message() for r in requests]
        codes += [o.code for o in outcomes.values()]
    return messages, events


async def stops_reading_at_other_events(model, tools, question):
    """Takes any event that is neither a fragment nor text for the finish, and stops there."""
    messages, codes = [UserMessage(question)], []
    while True:
        events = []
        try:
            async for event in model(messages):
                events.append(event)
                if not isinstance(event, ToolCallDelta | TextDelta):
                    break
        except StreamCancelled:
            return messages, "cancelled"
        except Exception:
            return messages, "failed"
        if not events or isinstance(events[-1], ToolCallDelta | TextDelta):
            return messages, "failed"
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        outcomes = await outcomes_by_id(requests, tools)
        messages += [outcomes[r.call_id].to_message() for r in requests]
        codes += [o.code for o in outcomes.values()]
        if set(codes) & FATAL:
            return messages, "failed"


async def runs_provider_calls(model, tools, question):
    """Takes a ProviderCall (a tool the provider runs itself) for one of the turn's calls."""
    messages, codes = [UserMessage(question)], []
    while isinstance(events := await read(model, messages), list):
        message = turn_message(events)
        theirs = tuple(ToolCall(e.id or e.name, e.name, e.input or "{}") for e in events
                       if type(e).__name__ == "ProviderCall")
        message = AssistantMessage(message.content, message.tool_calls + theirs)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        outcomes = await outcomes_by_id(requests, tools)
        messages += [outcomes[r.call_id].to_message() for r in requests]
        codes += [o.code for o in outcomes.values()]
        if set(codes) & FATAL:
            return messages, "failed"
    return messages, events


async def bad_arguments_answered_as_a_crash(model, tools, question):
    """Answers a call whose arguments do not parse itself, with the wrong error code."""
    messages, codes = [UserMessage(question)], []
    while isinstance(events := await read(model, messages), list):
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        outcomes = await outcomes_by_id([r for r in requests if r.input is not None], tools)
        for r in requests:
            if r.input is None:
                error = {"error": {"code": "tool_internal_error", "message": r.parse_error}}
                messages.append(ToolMessage(r.call_id, r.name, json.dumps(error)))
            else:
                messages.append(outcomes[r.call_id].to_message())
        codes += [o.code for o in outcomes.values()]
        if set(codes) & FATAL:
            return messages, "failed"
    return messages, events


# --- answers that hand the loop to the lab, however they reach it ---


async def lab_executor_by_a_built_name(model, tools, question):
    executor = getattr(importlib.import_module("keel_lab._core." + "executor"), "Exec" + "utor")(8)
    messages, codes = [UserMessage(question)], []
    while isinstance(events := await read(model, messages), list):
        message = turn_message(events)
        messages.append(message)
        if not message.tool_calls:
            return messages, status_of(codes, False)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        outcomes = (await executor.execute(requests, tools)).outcomes
        messages += [outcomes[r.call_id].to_message() for r in requests]
        codes += [o.code for o in outcomes.values()]
        if set(codes) & FATAL:
            return messages, "failed"
    return messages, events


async def lab_runner_subclassed(model, tools, question):
    """The lab's Runner, asked for each turn through the exercise's model."""
    runner = importlib.import_module("keel_lab._core." + "runner")
    executor = importlib.import_module("keel_lab._core." + "executor")

    class Mine(getattr(runner, "Run" + "ner")):
        async def _ask(self, state):
            state.turns += 1
            events = await read(model, state.messages)
            if isinstance(events, str):
                return state.result(events, error=events)
            message = turn_message(events)
            return runner.Reply(message, tuple(map(ToolRequest.from_call, message.tool_calls)))

    result = await Mine(None, tools, executor.Executor(8)).start(question)
    return list(result.messages), "partial" if result.partial else str(result.status)


async def patches_asyncio_sleep(model, tools, question):
    """One call at a time, hidden by making every delay of the run vanish."""
    sleep = asyncio.sleep

    async def no_wait(delay, result=None):
        return await sleep(0, result)

    asyncio.sleep = no_wait
    try:
        return await one_call_at_a_time(model, tools, question)
    finally:
        asyncio.sleep = sleep


WRONG = [
    (zip_over_completion, "was answered with the result of"),
    (completion_order, "in request order"),
    (runs_calls_at_first_parse, "started before its turn's finish: until then the turn may "
                                "still be cancelled"),
    (runs_what_came_before_the_cancel, "its turn was cancelled before its finish"),
    (drops_failed_calls, "got 0 tool messages: every call gets exactly one, a failed one too"),
    (skips_calls_that_do_not_parse, "(lookup_incident) had its tool message: answer every "
                                    "call of the turn, then ask the model"),
    (asks_the_model_after_250_ms, "the model was called again while"),
    (one_gather_per_turn, "ran at the same time as"),
    (one_call_at_a_time, "calls that may run together ran one after another"),
    (completed_unless_fatal, "status 'completed', expected 'partial'"),
    (fails_on_any_error, "your loop stopped after turn 0"),
    (keeps_the_cancelled_turn, "a cancelled turn adds nothing to the history"),
    (arguments_overwritten, "accumulate each call's fragments by index"),
    (forgets_the_question, "start it with UserMessage(question)"),
    (returns_the_status_only, "return (messages, status)"),
    (delegates_to_the_runner, "hands the exercise to the lab's own keel_lab.Runner"),
    (plain_def, "write it as `async def agent_loop(...)`"),
    (runs_each_call_twice, "ran 2 times, the lab's loop ran it 1: each call runs exactly once"),
    (runs_a_turn_without_its_finish, "keeps a turn whose stream ended without its Finish"),
    (lets_a_broken_stream_crash, "raised ConnectionError: the connection dropped mid-stream - "
                                 "a stream can also break with an error that is not a cancel"),
    (tool_messages_sorted_by_id, "put one per call right after its turn, in request order"),
    (crash_sent_back_to_the_model, "a crashed tool ends the run 'failed' right after that "
                                   "turn's tool messages - the model is not called again"),
    (stops_reading_at_other_events, "read every stream to its finish"),
    (runs_provider_calls, "is a ProviderCall, a call the provider runs itself"),
    (bad_arguments_answered_as_a_crash, "has the error code tool_internal_error, its outcome "
                                        "invalid_arguments"),
    (lab_executor_by_a_built_name, "hands the exercise to the lab's own keel_lab.Executor"),
    (lab_runner_subclassed, "hands the exercise to the lab's own keel_lab.Runner"),
    (patches_asyncio_sleep, "replaced asyncio.sleep while the check ran"),
]

# this module's tables of known-wrong answers, by exercise (the instructor's guide shows them)
WRONG_ANSWERS = {"agent_loop": WRONG}


@pytest.fixture(scope="module")
def lines():
    return verify_agent_loop(with_gather).lines()


@pytest.mark.parametrize("answer", RIGHT, ids=lambda f: f.__name__)
def test_right_answers_in_other_styles_pass_with_the_same_lines(answer, lines):
    v = verify_agent_loop(answer)
    assert v.passed, v.hints
    assert v.lines() == lines


@pytest.mark.parametrize(("answer", "hint"), WRONG, ids=[a.__name__ for a, _ in WRONG])
def test_wrong_answers_get_their_hint_and_the_same_check_count(answer, hint):
    v = verify_agent_loop(answer)
    assert not v.passed
    assert hint in v.hints[0], v.hints[0]
    assert v.total == 8


def test_positional_pairing_goes_wrong_in_the_sweep():
    swept = [expected(c) for c in cases(seeded(9))[SWEPT]]
    assert 0 < sum(map(positional, swept)) < len(swept)


def test_the_cancels_come_after_a_complete_call_and_run_nothing_in_the_lab():
    for case in cases(seeded(9))[CANCEL]:
        want = expected(case)
        assert want.returned[1] == ("cancelled" if case.end == "cancel" else "failed")
        assert not want.runs and want.returned[0] == [want.returned[0][0]]


def test_every_recorded_format_is_replayed():
    assert set(RECORDINGS) == {"openai-chat", "openai-responses", "anthropic", "gemini"}
