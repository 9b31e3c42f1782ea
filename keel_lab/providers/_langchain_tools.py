"""A lab `Tool` as a LangChain tool: `tool.invoke(tool_call)` returns a `ToolMessage`.

LangChain's own form of the rule "every call gets exactly one message": invoked with a whole
tool call, a tool answers with a `ToolMessage` carrying that call's id; an error code gives
`status="error"` with the same JSON error body the lab sends everywhere.
"""

from __future__ import annotations

import json
from typing import Any

from keel_lab._core.clock import run_coroutine
from keel_lab._core.protocol import ToolRequest
from keel_lab._core.tools import Tool, invoke


def to_langchain_tool(tool: Tool) -> Any:
    """A `StructuredTool` that runs `tool` through the lab's `invoke` (one outcome per call)."""
    from langchain_core.tools import StructuredTool, ToolException

    def run(**arguments: Any) -> str:
        request = ToolRequest("langchain", tool.name, json.dumps(arguments), arguments)
        outcome = run_coroutine(invoke(tool, request))
        if not outcome.ok:
            raise ToolException(outcome.content)
        return outcome.content

    return StructuredTool.from_function(func=run, name=tool.name,
                                        description=tool.description,
                                        args_schema=tool.parameters, handle_tool_error=True)
