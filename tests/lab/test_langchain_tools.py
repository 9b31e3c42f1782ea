"""A lab tool invoked the LangChain way: one ToolMessage per tool call, errors marked."""

import json

import pytest
from langchain_core.messages import ToolMessage

from keel_lab import incident_tools
from keel_lab.providers._langchain_tools import to_langchain_tool

pytestmark = pytest.mark.ch1


def _call(call_id, incident_id):
    return {"type": "tool_call", "id": call_id, "name": "lookup_incident",
            "args": {"incident_id": incident_id}}


def test_invoke_with_a_tool_call_returns_its_tool_message():
    tool = to_langchain_tool(incident_tools().get("lookup_incident"))
    message = tool.invoke(_call("call_9f3Kx", "INC-001"))
    assert isinstance(message, ToolMessage)
    assert (message.tool_call_id, message.name, message.status) == \
        ("call_9f3Kx", "lookup_incident", "success")
    assert json.loads(message.content)["id"] == "INC-001"


def test_an_error_outcome_is_status_error_with_the_lab_error_body():
    tool = to_langchain_tool(incident_tools().get("lookup_incident"))
    message = tool.invoke(_call("call_b", "INC-999"))
    assert message.status == "error" and message.tool_call_id == "call_b"
    assert json.loads(message.content)["error"]["code"] == "incident_not_found"
    bad = tool.invoke(_call("call_c", "nope"))
    assert json.loads(bad.content)["error"]["code"] == "invalid_arguments"
