"""Tools and the single place where one request becomes exactly one outcome.

Whatever happens - bad JSON, schema-invalid arguments, a business error, an exception, a timeout,
output that is not valid - `invoke` returns one `ToolOutcome`, so no call is ever left unanswered.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from keel_lab.core.messages import ToolMessage
from keel_lab.core.partial_success import Code
from keel_lab.core.protocol import ToolRequest

ToolFunction = Callable[..., Any] | Callable[..., Awaitable[Any]]


class ToolError(Exception):
    """Raised by a tool for a business error (`incident_not_found`): a fact the model can use."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


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
    timeout: float = 5.0  # seconds on the loop's clock, latency included

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
    """The result of one call: success with content, or an error code with a message."""

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
    # Imported on first use: jsonschema's import pulls in optional format checkers that cost
    # about a second, and `import keel_lab` must stay fast.
    from jsonschema import Draft202012Validator

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
    """Run one request and return its one outcome; `latency` is awaited on the loop's clock."""
    if tool is None:
        return failure(request, Code.UNKNOWN_TOOL, f"no tool named {request.name!r}")
    if request.parse_error is not None or request.input is None:
        return failure(request, Code.INVALID_ARGUMENTS, request.parse_error or "no arguments")
    errors = schema_errors(tool.parameters, request.input)
    if errors:
        return failure(request, Code.INVALID_ARGUMENTS, "; ".join(errors))
    try:
        output = await asyncio.wait_for(_call(tool, request.input, latency), tool.timeout)
    except ToolError as exc:
        return failure(request, exc.code, str(exc))
    except TimeoutError:
        return failure(request, Code.TOOL_TIMEOUT, f"no result within {tool.timeout:g} s")
    except Exception as exc:
        return failure(request, Code.TOOL_INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
    problem = output_problem(tool, output)
    if problem:
        return failure(request, Code.INVALID_TOOL_OUTPUT, problem)
    return success(request, output)


async def _call(tool: Tool, arguments: dict[str, Any], latency: float) -> Any:
    if latency > 0:
        await asyncio.sleep(latency)
    result = tool.function(**arguments)
    return await result if inspect.isawaitable(result) else result


def output_problem(tool: Tool, output: Any) -> str | None:
    """Why `output` cannot go back to the model, or None: a JSON object matching the schema."""
    if not isinstance(output, dict):
        return f"a tool must return a JSON object, {tool.name} returned {type(output).__name__}"
    try:
        json.dumps(output, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return f"output of {tool.name} is not JSON: {exc}"
    if tool.output_schema is not None:
        errors = schema_errors(tool.output_schema, output)
        if errors:
            return f"output of {tool.name} breaks its schema: " + "; ".join(errors)
    return None
