"""keel_lab: several tool calls in one turn, streamed or not, paired by call id.

The lesson's names are here: the protocol objects and the history rules, the pairing strategies,
tools and batching, the executor, the stream assembler, partial success and the run loop. Two
more faces: `keel_lab.providers` (real providers' formats, streams and clients) and
`keel_lab.course` (the course's data, experiments, plots and checks). Every other module is
private (`_core`, `_i18n`, ...): read it, but import from a face. The course's and the providers'
names offered here load on first use, so `import keel_lab` loads no plot and no SDK.
"""

from keel_lab import _legacy
from keel_lab._core.batching import make_batches
from keel_lab._core.clock import now, run_coroutine
from keel_lab._core.errors import LabError, Said
from keel_lab._core.events import Event
from keel_lab._core.executor import Executor, RunCall, Span, TurnResult, gather_by_call_id
from keel_lab._core.history import HistoryProblem, validate_history
from keel_lab._core.ids import RunIds
from keel_lab._core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from keel_lab._core.model import ScriptedAdapter, Turn
from keel_lab._core.pairing import (
    Result,
    by_call_id,
    mismatches,
    position_over_completion,
    position_over_gather,
    position_over_gather_filtered,
    position_with_skip,
)
from keel_lab._core.partial_success import FATAL_CODES, Code, Status, run_status
from keel_lab._core.protocol import ToolCall, ToolRequest, parse_arguments
from keel_lab._core.runner import Runner, RunResult
from keel_lab._core.streaming import (
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
from keel_lab._core.tools import Tool, ToolError, ToolOutcome, Toolset, failure, invoke
from keel_lab._i18n import set_language
from keel_lab._lazy import lazy

_legacy.install()

__getattr__, __dir__ = lazy(__name__, {
    "keel_lab.course._incident_tools": ("incident_tools",),
    "keel_lab.course._offline_model": ("OfflineAdapter",),
    "keel_lab.providers._openai_messages": ("from_openai", "to_openai"),
})

__all__ = [
    "FATAL_CODES", "Assembly", "AssistantMessage", "CallState", "Code", "Event", "Executor",
    "Finish", "HistoryProblem", "LabError", "Message", "OfflineAdapter", "Readiness", "Result",
    "RunCall", "RunIds", "RunResult", "Runner", "Said", "ScriptedAdapter", "Span", "Status",
    "StreamAssembler", "StreamCancelled", "SystemMessage", "TextDelta", "Tool", "ToolCall",
    "ToolCallDelta", "ToolError", "ToolMessage", "ToolOutcome", "ToolRequest", "Toolset", "Turn",
    "TurnResult", "UserMessage", "assemble", "by_call_id", "cancel_after", "failure",
    "from_openai",
    "gather_by_call_id", "incident_tools", "invoke", "make_batches", "mismatches", "now",
    "parse_arguments",
    "position_over_completion", "position_over_gather", "position_over_gather_filtered",
    "position_with_skip", "readiness", "run_coroutine", "run_status", "set_language",
    "to_openai", "validate_history",
]
