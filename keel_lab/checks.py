"""Checks for the notebooks' exercises: they judge what a learner's function does, not its text.

Each `verify_*` runs the learner's function through the lab's own experiments and returns a
verdict; `check(fn)` picks the verifier by the function's name and prints the verdict's lines.
A passing function prints the same lines whatever its implementation, so a notebook can compare
them with saved output; a failing one prints a hint of what went wrong.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import vclock
from .executor import make_batches, seeded_latency
from .experiments.streaming import offline_stream
from .experiments.timeline import turn_requests
from .history import validate_history
from .incident_tools import incident_tools
from .models import OfflineAdapter
from .pairing import Result
from .policy import run_status
from .protocol import AssistantMessage, Message, ToolCall, ToolMessage, ToolRequest, UserMessage
from .runner import Runner
from .streaming import Finish, StreamAssembler, StreamEvent, ToolCallDelta, cancel_after
from .tools import ToolError


@dataclass
class Verdict:
    exercise: str
    results: list[tuple[bool, str]] = field(default_factory=list)

    def add(self, ok: bool, passed: str, hint: str) -> None:
        self.results.append((ok, passed if ok else hint))

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(ok for ok, _ in self.results)

    def lines(self) -> list[str]:
        done = sum(ok for ok, _ in self.results)
        word = "PASSED" if self.passed else "NOT YET"
        return ([f"[{'pass' if ok else 'FAIL'}] {text}" for ok, text in self.results]
                + [f"{self.exercise}: {word} ({done}/{len(self.results)} checks)"])

    def __str__(self) -> str:
        return "\n".join(self.lines())


def _guard(verdict: Verdict, what: str, fn: Callable[..., Any], *args: Any) -> Any:
    """Call the learner's code; turn an exception into a failed check with a hint."""
    try:
        return fn(*args)
    except NotImplementedError:
        verdict.add(False, "", f"{what}: not implemented yet - replace the "
                               "`raise NotImplementedError` with your code")
    except Exception as exc:
        verdict.add(False, "", f"{what}: your function raised {type(exc).__name__}: {exc}")
    return None


# --- Chapter 1: answer every call -------------------------------------------------------------

AnswerAll = Callable[[Sequence[ToolCall], Callable[[ToolCall], str]], Sequence[ToolMessage]]


def _turn(*specs: tuple[str, str, dict[str, Any]]) -> list[ToolCall]:
    return [ToolCall(i, n, json.dumps(a)) for i, n, a in specs]


def _executor(failures: dict[str, Exception]) -> Callable[[ToolCall], str]:
    def execute(call: ToolCall) -> str:
        if call.id in failures:
            raise failures[call.id]
        return json.dumps({"call": call.id, "echo": json.loads(call.arguments)})
    return execute


def verify_answer_all(answer_all: AnswerAll) -> Verdict:
    v = Verdict("answer_all")
    scenarios = [
        ("three successful calls, the same tool twice", _turn(
            ("call_a", "lookup_incident", {"incident_id": "INC-001"}),
            ("call_b", "lookup_incident", {"incident_id": "INC-002"}),
            ("call_c", "get_service_status", {"service": "auth-api"})), {}),
        ("a business error and a crash beside a success", _turn(
            ("call_x", "lookup_incident", {"incident_id": "INC-999"}),
            ("call_y", "search_logs", {"service": "billing"}),
            ("call_z", "lookup_incident", {"incident_id": "INC-003"})),
         {"call_x": ToolError("incident_not_found", "there is no incident INC-999"),
          "call_y": ConnectionError("log index for billing is unreachable")}),
    ]
    for label, calls, failures in scenarios:
        execute = _executor(failures)
        messages = _guard(v, label, answer_all, calls, execute)
        if messages is None:
            return v
        messages = list(messages)
        history: list[Message] = [UserMessage("q"), AssistantMessage("", tuple(calls)),
                                  *messages]
        problems = validate_history(history)
        v.add(not problems, f"{label}: one tool message per call, matched by tool_call_id",
              f"{label}: the provider would answer: " + " | ".join(p.message for p in problems))
        by_id = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
        wrong = [c.id for c in calls if c.id in by_id and c.id not in failures
                 and by_id[c.id].content != execute(c)]
        unexplained = [c.id for c in calls if c.id in by_id and c.id in failures
                       and str(failures[c.id]) not in by_id[c.id].content]
        names = [c.id for c in calls if c.id in by_id and by_id[c.id].name != c.name]
        v.add(not (wrong or unexplained or names),
              f"{label}: each message carries its own call's result or error",
              f"{label}: " + "; ".join(text for ids, text in [
                  (wrong, f"{wrong} carry another call's result (or changed it)"),
                  (unexplained, f"{unexplained} should say what went wrong (put the "
                                "exception's message in the content)"),
                  (names, f"{names} should copy the call's tool name")] if ids))
    return v


# --- Chapter 2: pair by call id ---------------------------------------------------------------

PairResults = Callable[[Sequence[ToolCall], Sequence[Result]], Sequence[Sequence[Any]]]


def _completion_order(calls: list[ToolCall], rng: random.Random) -> list[Result]:
    """Real `as_completed` on the virtual clock, with random delays of 10-500 ms."""
    delays = {c.id: rng.uniform(0.010, 0.500) for c in calls}

    async def one(call: ToolCall) -> Result:
        await asyncio.sleep(delays[call.id])
        return Result(call.id, call.arguments)

    async def collect() -> list[Result]:
        return [await f for f in asyncio.as_completed([one(c) for c in calls])]

    return vclock.run(collect())


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
        pairs = _guard(v, f"run {run}", pair_results, calls, list(results))
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
    calls = _turn(("call_a", "lookup_incident", {}), ("call_b", "restart_service", {}),
                  ("call_c", "lookup_incident", {}))
    results = [Result("call_c", ""), Result("call_a", "")]  # call_b was denied by policy
    pairs = _guard(v, "a skipped call", pair_results, calls, results)
    if pairs is not None:
        errors = _pairing_errors(pairs, calls, frozenset({"call_b"}))
        v.add(not errors, "a call the policy skipped gets None, not its neighbour's result",
              "a skipped call: " + "; ".join(errors))
    return v


# --- Chapter 3: batches -----------------------------------------------------------------------

MakeBatches = Callable[[Sequence[ToolRequest], Any], Sequence[Sequence[ToolRequest]]]


def _request(i: int, name: str) -> ToolRequest:
    return ToolRequest(f"call-{i}", name, "{}", {})


def verify_make_batches(make_batches_fn: MakeBatches) -> Verdict:
    v = Verdict("make_batches")
    tools = incident_tools()
    names = ["lookup_incident", "get_service_status", "search_logs", "add_incident_note",
             "restart_service", "no_such_tool"]
    rng = random.Random(3)
    cases = [turn_requests(0)] + [
        [_request(i, rng.choice(names)) for i in range(rng.randint(1, 8))] for _ in range(30)]
    cases.append([_request(0, "add_incident_note"), _request(1, "add_incident_note")])
    yours: list[list[ToolRequest]] = []
    for n, requests in enumerate(cases):
        got = _guard(v, f"case {n}", make_batches_fn, requests, tools)
        if got is None:
            return v
        batches = [list(b) for b in got]
        yours = yours or batches
        problem = _batch_problem(requests, batches, tools)
        if problem:
            calls = ", ".join(f"{r.call_id}={r.name}" for r in requests)
            v.add(False, "", f"requests [{calls}]: {problem}")
            return v
    v.add(True, f"{len(cases)} request lists: every call once, in order", "")
    v.add(True, "unsafe calls (writes, approvals, unknown tools) always run alone", "")
    v.add(True, "consecutive concurrency-safe calls share one batch", "")
    latency = seeded_latency(0, 0.05, 0.4)
    wall = sum(max(latency(r) for r in b) for b in yours)
    serial = sum(latency(r) for r in cases[0])
    v.add(True, f"chapter turn: wall time {wall * 1000:.0f} ms with your batches, "
                f"{serial * 1000:.0f} ms one by one", "")
    return v


def _batch_problem(requests: Sequence[ToolRequest], batches: list[list[ToolRequest]],
                   tools: Any) -> str:
    flat = [r for b in batches for r in b]
    if [r.call_id for r in flat] != [r.call_id for r in requests]:
        return (f"batches hold {[r.call_id for r in flat]}: every call exactly once, "
                "in request order")
    if any(not b for b in batches):
        return "an empty batch"

    def safe(r: ToolRequest) -> bool:
        t = tools.get(r.name)
        return bool(t and t.concurrency_safe and not t.requires_approval)

    for b in batches:
        unsafe = [r for r in b if not safe(r)]
        if unsafe and len(b) > 1:
            return (f"{unsafe[0].call_id} ({unsafe[0].name}) shares a batch with "
                    f"{[r.call_id for r in b if r is not unsafe[0]]}: it must run alone")
    want = len(make_batches(requests, tools))
    if len(batches) != want:
        return (f"{len(batches)} batches where {want} will do: consecutive safe calls "
                "should share one batch")
    return ""


# --- Chapter 4: when a streamed call may run --------------------------------------------------


@dataclass(frozen=True)
class CallView:
    """What a learner's `is_executable` sees of a streamed call so far."""

    index: int
    id: str | None
    name: str
    arguments: str
    closed: bool  # the stream has sent its finish reason


def _views(events: Iterable[StreamEvent]) -> list[tuple[int, CallView, bool]]:
    """(chunk, view, reference verdict) after every event, for every call so far."""
    assembler, out = StreamAssembler(), []
    try:
        for n, event in enumerate(events, 1):
            assembler.feed(event)
            for s in assembler.calls():
                out.append((n, CallView(s.index, s.id, s.name, s.arguments, s.closed),
                            s.executable))
    except Exception:  # a cancelled stream: what arrived stays, closed stays False
        pass
    return out


def verify_is_executable(is_executable: Callable[[CallView], bool]) -> Verdict:
    v = Verdict("is_executable")
    one = offline_stream("Look up INC-001", seed=0, chunk_size=4)
    three = offline_stream("Which is more severe, INC-001, INC-002 or INC-003?", seed=1,
                           chunk_size=3)
    bad = [e for e in three if not (isinstance(e, ToolCallDelta) and e.index == 1
                                    and e.arguments_delta and e.arguments_delta.endswith("}"))]
    odd: list[StreamEvent] = [
        ToolCallDelta(0, id="a", name="lookup_incident", arguments_delta='["INC-001"]'),
        ToolCallDelta(1, name="lookup_incident", arguments_delta="{}"),
        ToolCallDelta(2, id="c", arguments_delta="{}"), Finish("tool_calls")]
    cases: list[tuple[str, Iterable[StreamEvent]]] = [
        ("one call, fragment by fragment", one),
        ("three interleaved calls", three),
        ("a stream cancelled before its finish", cancel_after(three, len(three) - 1)),
        ("one call's JSON broken beside good siblings", bad),
        ("arguments that are not an object, a missing id, a missing name", odd),
    ]
    for label, events in cases:
        for chunk, view, want in _views(events):
            got = _guard(v, label, is_executable, view)
            if got is None:
                return v
            if bool(got) != want:
                v.add(False, "", f"{label}, chunk {chunk}, call {view.index}: you said "
                                 f"{bool(got)}, expected {want} - {_why(view)}")
                break
        else:
            v.add(True, f"{label}: right after every chunk", "")
    return v


def _why(view: CallView) -> str:
    if not view.closed:
        return "the stream has not closed this call yet, so it may be half a call"
    if not view.id or not view.name:
        return "a call needs an id and a name"
    try:
        value = json.loads(view.arguments)
    except ValueError:
        return "its arguments are not valid JSON"
    if not isinstance(value, dict):
        return "its arguments must be a JSON object"
    return "it is complete, closed and parses: it may run"


# --- Chapter 5: partial success ---------------------------------------------------------------

STATUS_CASES: list[tuple[list[str | None], str]] = [
    ([None, None, None], "every call succeeded"),
    ([None, "incident_not_found"], "a business error beside a success"),
    (["incident_not_found", "service_not_found"], "only business errors"),
    (["tool_timeout", None], "a timeout, which the model can explain"),
    (["invalid_arguments"], "arguments the model got wrong"),
    ([None, "approval_required"], "a call waiting for approval"),
    (["unknown_tool", None], "a tool that does not exist"),
    ([None, "tool_internal_error"], "a tool that crashed"),
    (["invalid_tool_output"], "a tool that returned garbage"),
    (["incident_not_found", "tool_internal_error"], "a business error and a crash"),
]


def verify_run_status(status_fn: Callable[[list[str | None]], str]) -> Verdict:
    v = Verdict("run_status")
    for codes, label in STATUS_CASES:
        got = _guard(v, label, status_fn, list(codes))
        if got is None:
            return v
        want = run_status(codes)
        v.add(got == want, f"{label}: {want}",
              f"{label} {codes}: expected {want!r}, got {got!r}")

    class LearnersRunner(Runner):
        status_rule = staticmethod(status_fn)

    question = "Which is more severe, INC-001 or INC-999?"
    r = _guard(v, "a run", LearnersRunner(OfflineAdapter()).run, question)
    if r is not None:
        v.add(r.status == "completed" and r.partial,
              "in a real run, INC-999 missing still completes (marked partial)",
              f"in a real run the status was {r.status}: the model can explain a missing "
              "incident, so the run should complete")
    return v



VERIFIERS: dict[str, Callable[..., Verdict]] = {
    "answer_all": verify_answer_all, "pair_results": verify_pair_results,
    "make_batches": verify_make_batches, "is_executable": verify_is_executable,
    "run_status": verify_run_status,
}


def check(fn: Callable[..., Any]) -> None:
    """Print the verdict on an exercise function (found by its name); returns nothing, so a
    notebook cell shows only the verdict lines."""
    verifier = VERIFIERS.get(getattr(fn, "__name__", ""))
    if verifier is None:
        print(f"no exercise is called {getattr(fn, '__name__', fn)!r}; exercises: "
              + ", ".join(VERIFIERS))
        return
    print(verifier(fn))
