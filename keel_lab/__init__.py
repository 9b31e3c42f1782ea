"""keel_lab: several tool calls in one turn, streamed or not, paired by call id.

`keel_lab.core` holds the lesson's rules, `keel_lab.providers` real providers' formats and
clients, `keel_lab.course` the course's tooling (plots load matplotlib only when imported).
The OpenAI conversions are named here too, but load on first use: a learner's check needs no
provider's format.
"""

from typing import Any

from keel_lab.core.batching import make_batches
from keel_lab.core.clock import run_coroutine
from keel_lab.core.errors import LabError
from keel_lab.core.events import Event
from keel_lab.core.executor import Executor, Span, TurnResult
from keel_lab.core.history import HistoryProblem, validate_history
from keel_lab.core.ids import RunIds
from keel_lab.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from keel_lab.core.model import ScriptedAdapter, Turn
from keel_lab.core.partial_success import FATAL_CODES, Code, Status, run_status
from keel_lab.core.protocol import ToolCall, ToolRequest, parse_arguments
from keel_lab.core.runner import Runner, RunResult
from keel_lab.core.streaming import (
    Assembly,
    CallState,
    Finish,
    Readiness,
    StreamAssembler,
    StreamCancelled,
    TextDelta,
    ToolCallDelta,
    assemble,
    cancel_after,
    readiness,
)
from keel_lab.core.tools import Tool, ToolError, ToolOutcome, Toolset, invoke
from keel_lab.course.incident_tools import incident_tools
from keel_lab.course.offline_model import OfflineAdapter
from keel_lab.i18n import set_language

__all__ = [
    "FATAL_CODES", "Assembly", "AssistantMessage", "CallState", "Code", "Event", "Executor",
    "Finish", "HistoryProblem", "LabError", "Message", "OfflineAdapter", "Readiness", "RunIds",
    "RunResult", "Runner", "ScriptedAdapter", "Span", "Status", "StreamAssembler",
    "StreamCancelled", "SystemMessage", "TextDelta", "Tool", "ToolCall", "ToolCallDelta",
    "ToolError", "ToolMessage", "ToolOutcome", "ToolRequest", "Toolset", "Turn", "TurnResult",
    "UserMessage", "assemble", "cancel_after", "from_openai", "incident_tools", "invoke",
    "make_batches", "parse_arguments", "readiness", "run_coroutine", "run_status", "set_language",
    "to_openai", "validate_history",
]


def __getattr__(name: str) -> Any:
    if name in ("from_openai", "to_openai"):
        from keel_lab.providers import openai_messages

        return getattr(openai_messages, name)
    raise AttributeError(f"module 'keel_lab' has no attribute {name!r}")
