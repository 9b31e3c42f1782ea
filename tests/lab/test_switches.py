"""Request bodies with the providers' switches, and `is_error` on failed results."""

import pytest

from keel_lab import incident_tools
from keel_lab._core.messages import UserMessage
from keel_lab._core.tools import ToolOutcome
from keel_lab.providers._anthropic_messages import validate_anthropic
from keel_lab.providers._switches import (
    anthropic_request,
    anthropic_results,
    openai_chat_request,
)

pytestmark = pytest.mark.ch7

MESSAGES = [UserMessage("Which is more severe, INC-001 or INC-002?")]


def test_openai_parallel_tool_calls_only_when_switched_off():
    tools = incident_tools()
    assert "parallel_tool_calls" not in openai_chat_request("m", MESSAGES, tools)
    body = openai_chat_request("m", MESSAGES, tools, parallel=False)
    assert body["parallel_tool_calls"] is False
    assert body["messages"] == [{"role": "user", "content": MESSAGES[0].content}]
    assert len(body["tools"]) == len(tools.tools)


def test_anthropic_disable_parallel_tool_use():
    tools = incident_tools()
    assert "tool_choice" not in anthropic_request("m", MESSAGES, tools)
    body = anthropic_request("m", MESSAGES, tools, parallel=False)
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert anthropic_request("m", MESSAGES, tools, choice="any")["tool_choice"] == \
        {"type": "any"}
    assert body["tools"][0]["input_schema"] == tools.get("lookup_incident").parameters


def test_is_error_marks_failed_outcomes_and_still_answers_the_call():
    ok = ToolOutcome("toolu_a", "lookup_incident", '{"id": "INC-001"}')
    bad = ToolOutcome("toolu_b", "lookup_incident", '{"error": {}}', "incident_not_found")
    message = anthropic_results([ok, bad])
    assert [b.get("is_error") for b in message["content"]] == [None, True]
    history = [{"role": "user", "content": "q"},
               {"role": "assistant", "content": [
                   {"type": "tool_use", "id": i, "name": "lookup_incident", "input": {}}
                   for i in ("toolu_a", "toolu_b")]},
               message]
    assert validate_anthropic(history) == []
