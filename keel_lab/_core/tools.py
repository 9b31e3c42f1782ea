"""Tools and the single place where one request becomes exactly one outcome.

Whatever happens - bad or hostile JSON, schema-invalid arguments, a business error, an exception,
a tool that cancels itself, a timeout, output that is not valid - `invoke` returns one
`ToolOutcome`, so no call is ever left unanswered.

A synchronous tool function runs in a worker thread of its own, so a blocking one neither stops
the loop nor serialises its batch. Python cannot kill a thread: when the timeout is up the call
is answered `tool_timeout`, and the thread still runs to its end - its side effects happen, its
result is dropped. The thread is a daemon, so it does not keep the process alive.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import sys
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from keel_lab._core.clock import VirtualClockLoop, now
from keel_lab._core.messages import ToolMessage
from keel_lab._core.partial_success import Code
from keel_lab._core.protocol import ToolRequest
from keel_lab._i18n import _

ToolFunction = Callable[..., Any] | Callable[..., Awaitable[Any]]


class ToolError(Exception):
    """Raised by a tool for a business error (`incident_not_found`): a fact the model can use.
    Its code is a non-empty string, never `approval_required` (approval is declared and decided
    before a call runs); a ToolError breaking either rule is answered `tool_internal_error`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code

    def __reduce__(self) -> tuple[type[ToolError], tuple[str, str]]:
        """Pickled whole: a grader sends a tool's error into the learner's process."""
        return type(self), (self.code, str(self))


@dataclass(frozen=True)
class Tool:
    """A tool and what the executor must know about it before running it."""

    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the arguments
    function: ToolFunction
    concurrency_safe: bool = False  # read-only and independent: may share a concurrent batch
    requires_approval: bool = False  # side effect: pause the run until a person decides
    output_schema: dict[str, Any] | None = None
    # Seconds on the loop's clock, latency included; on the virtual clock a worker thread's own
    # time counts in real seconds (`_in_thread`).
    timeout: float = 5.0
    # A function that may block (I/O, a slow computation) runs in a worker thread, as above;
    # one that never blocks (the course's in-memory incident tools) is called on the loop,
    # which saves a thread hand-off per call but cannot interrupt it at its timeout.
    blocking: bool = True

    @property
    def may_run_together(self) -> bool:
        """May share a concurrent batch: concurrency-safe, and no person has to decide first."""
        return self.concurrency_safe and not self.requires_approval

    def schema(self) -> dict[str, Any]:
        """The tool as an OpenAI `tools=[...]` entry."""
        return {"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters}}


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    call_id: str
    name: str
    content: str  # JSON text, what the tool message carries
    code: str | None = None  # None on success
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.code is None

    def to_message(self) -> ToolMessage:
        return ToolMessage(self.call_id, self.name, self.content)


def success(request: ToolRequest, output: Any) -> ToolOutcome:
    return ToolOutcome(request.call_id, request.name, json.dumps(output, ensure_ascii=False))


def failure(request: ToolRequest, code: str, detail: str) -> ToolOutcome:
    """The error outcome that answers `request`: `code` decides what the run does, `detail`
    says why; its content is the JSON error the tool message carries."""
    body = {"error": {"code": code, "message": detail}}
    return ToolOutcome(request.call_id, request.name, json.dumps(body, ensure_ascii=False),
                       code, detail)


@dataclass
class Toolset:
    """Tools by name; the name picks the function, the call id identifies the call."""

    tools: dict[str, Tool] = field(default_factory=dict)

    @classmethod
    def of(cls, tools: Iterable[Tool]) -> Toolset:
        return cls({t.name: t for t in tools})

    def get(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def schemas(self) -> list[dict[str, Any]]:
        return [t.schema() for t in self.tools.values()]


@cache
def _validator(schema_json: str) -> Any:
    # Imported on first use, without the optional `rfc3987_syntax` (Jupyter installs it with
    # jsonschema's format extras): jsonschema imports it for its "iri" format checker, which the
    # lab's validators never use, and it builds a grammar at import - 3.5 s measured, paid by a
    # learner's first experiment. `None` in sys.modules makes that one import fail, for this
    # import only.
    blocked = "jsonschema" not in sys.modules and "rfc3987_syntax" not in sys.modules
    if blocked:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]
    try:
        from jsonschema import Draft202012Validator
    finally:
        if blocked:
            del sys.modules["rfc3987_syntax"]

    return Draft202012Validator(json.loads(schema_json))


def schema_errors(schema: dict[str, Any], value: Any) -> list[str]:
    """Readable JSON Schema violations of `value`, each prefixed with where it is."""
    validator = _validator(json.dumps(schema, sort_keys=True))
    out = []
    for e in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in e.absolute_path)
        out.append(f"{where}: {e.message}" if where else e.message)
    return out


async def invoke(tool: Tool | None, request: ToolRequest, latency: float = 0.0) -> ToolOutcome:
    """Run one request and return its one outcome; `latency` is awaited on the loop's clock. A
    tool that raises `asyncio.CancelledError` or cancels its own task is answered
    `tool_internal_error`; a cancellation of the caller still propagates."""
    if tool is None:
        return failure(request, Code.UNKNOWN_TOOL,
                       _("no tool named {name}").format(name=repr(request.name)))
    if request.parse_error is not None or request.input is None:
        return failure(request, Code.INVALID_ARGUMENTS, request.parse_error or _("no arguments"))
    try:
        errors = schema_errors(tool.parameters, request.input)
    except RecursionError:
        errors = [_("arguments are nested too deeply to validate")]
    if errors:
        return failure(request, Code.INVALID_ARGUMENTS, "; ".join(errors))
    try:
        output = await _run(tool, request.input, latency)
    except ToolError as exc:
        return _business_error(tool, request, exc)
    except TimeoutError:
        return failure(request, Code.TOOL_TIMEOUT, _("no result within {seconds} s").format(
            seconds=f"{tool.timeout:g}"))
    except _CancelledItself:
        return failure(request, Code.TOOL_INTERNAL_ERROR,
                       _("{tool} was cancelled from inside (it raised CancelledError or "
                         "cancelled its own task)").format(tool=tool.name))
    except Exception as exc:
        return failure(request, Code.TOOL_INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
    problem = output_problem(tool, output)
    if problem:
        return failure(request, Code.INVALID_TOOL_OUTPUT, problem)
    return success(request, output)


def _business_error(tool: Tool, request: ToolRequest, exc: ToolError) -> ToolOutcome:
    """A ToolError's outcome: its code, unless the tool broke ToolError's rules."""
    code = getattr(exc, "code", None)  # a subclass may skip ToolError's __init__
    if not isinstance(code, str) or not code:
        return failure(request, Code.TOOL_INTERNAL_ERROR,
                       _("{tool} raised a ToolError without a code ({code}): {error}").format(
                           tool=tool.name, code=repr(code), error=exc))
    if code == Code.APPROVAL_REQUIRED:
        return failure(request, Code.TOOL_INTERNAL_ERROR, _(
            "{tool} raised approval_required while running: approval is decided before a call "
            "runs - declare the tool requires_approval=True").format(tool=tool.name))
    return failure(request, code, str(exc))


async def _run(tool: Tool, arguments: dict[str, Any], latency: float) -> Any:
    """The call in a task of its own, within its timeout: a tool that cancels its task cancels
    only that task; the caller's own cancellation still propagates."""
    task = asyncio.ensure_future(_call(tool, arguments, latency, now() + tool.timeout))
    try:
        return await asyncio.wait_for(task, tool.timeout)
    except asyncio.CancelledError:
        caller = asyncio.current_task()
        if caller is not None and caller.cancelling():
            raise
        raise _CancelledItself from None


class _CancelledItself(Exception):
    """The tool's task was cancelled from inside: a broken tool, not a cancelled run."""


async def _call(tool: Tool, arguments: dict[str, Any], latency: float, deadline: float) -> Any:
    if latency > 0:
        await asyncio.sleep(latency)
    if inspect.iscoroutinefunction(tool.function) or not tool.blocking:
        result = tool.function(**arguments)
    else:
        result = await _in_thread(tool, arguments, deadline - now())
    return await result if inspect.isawaitable(result) else result


async def _in_thread(tool: Tool, arguments: dict[str, Any], budget: float) -> Any:
    """Run a synchronous function in a daemon thread of its own and wait for it.

    On a real loop the wait is an ordinary await. On the virtual clock a thread takes real time
    while the clock would jump to the next timer (the timeout), so the loop waits for the thread
    in real time, up to `budget` seconds, with its clock held: every call of a batch first
    starts its thread, then they are collected in the loop's own order - deterministic, and the
    threads still overlap.
    """
    done: concurrent.futures.Future[Any] = concurrent.futures.Future()
    threading.Thread(target=_fill, args=(done, tool.function, arguments), daemon=True,
                     name=f"keel-lab tool {tool.name}").start()
    if not isinstance(asyncio.get_running_loop(), VirtualClockLoop):
        return await asyncio.wrap_future(done)
    await asyncio.sleep(0)  # the batch's other calls start their threads now
    if not concurrent.futures.wait([done], timeout=max(budget, 0.0)).done:
        await asyncio.sleep(budget)  # the rest of the timeout passes on the loop's clock
        raise TimeoutError
    return done.result()


def _fill(done: concurrent.futures.Future[Any], function: ToolFunction,
          arguments: dict[str, Any]) -> None:
    if not done.set_running_or_notify_cancel():
        return
    try:
        done.set_result(function(**arguments))
    except BaseException as exc:  # handed to the loop's side, which decides what it means
        done.set_exception(exc)


def output_problem(tool: Tool, output: Any) -> str | None:
    """Why `output` cannot go back to the model, or None: a JSON object matching the schema."""
    if not isinstance(output, dict):
        return _("a tool must return a JSON object, {tool} returned {type}").format(
            tool=tool.name, type=type(output).__name__)
    try:
        json.dumps(output, allow_nan=False)
        errors = [] if tool.output_schema is None else schema_errors(tool.output_schema, output)
    except RecursionError:
        return _("output of {tool} is nested too deeply to send").format(tool=tool.name)
    except (TypeError, ValueError) as exc:
        return _("output of {tool} is not JSON: {error}").format(tool=tool.name, error=exc)
    if errors:
        return _("output of {tool} breaks its schema: {errors}").format(
            tool=tool.name, errors="; ".join(errors))
    return None
