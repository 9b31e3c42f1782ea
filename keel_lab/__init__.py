"""keel_lab: several tool calls in one turn, streamed or not, paired by call id.

Plotting lives in `keel_lab.plots` and loads matplotlib only when imported.
"""

from .errors import LabError
from .events import Event
from .executor import Executor, Span, StepResult, make_batches
from .history import HistoryProblem, validate_history
from .ids import RunIds
from .incident_tools import incident_tools
from .models import OfflineAdapter, ScriptedAdapter, Turn
from .policy import FATAL_CODES, run_status
from .protocol import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolRequest,
    UserMessage,
    from_openai,
    parse_arguments,
    to_openai,
)
from .runner import Runner, RunResult
from .streaming import (
    Assembly,
    CallState,
    Finish,
    StreamAssembler,
    StreamCancelled,
    StreamError,
    TextDelta,
    ToolCallDelta,
    assemble,
    cancel_after,
)
from .tools import Tool, ToolError, ToolOutcome, Toolset, invoke
from .vclock import run

__all__ = [
    "FATAL_CODES", "Assembly", "AssistantMessage", "CallState", "Event", "Executor", "Finish",
    "HistoryProblem", "LabError", "Message", "OfflineAdapter", "RunIds", "RunResult", "Runner",
    "ScriptedAdapter", "Span", "StepResult", "StreamAssembler", "StreamCancelled",
    "StreamError", "SystemMessage", "TextDelta", "Tool", "ToolCall", "ToolCallDelta",
    "ToolError", "ToolMessage", "ToolOutcome", "ToolRequest", "Toolset", "Turn", "UserMessage",
    "assemble", "cancel_after", "from_openai", "incident_tools", "invoke", "make_batches",
    "parse_arguments", "run", "run_status", "to_openai", "validate_history",
]
