"""Calls written into a turn's text (keel_lab.providers._leaks): found with where, and only them."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel_lab.providers._leaks import Leak, describe, leaked_calls

pytestmark = pytest.mark.ch7

CALL = '{"name": "lookup_incident", "arguments": {"incident_id": "INC-002"}}'


@pytest.mark.parametrize(("text", "found"), [
    (f"<tool_call>\n{CALL}\n</tool_call>", [Leak("lookup_incident", "<tool_call> tag", 0, 1)]),
    (f"<tool_call>{CALL}", [Leak("lookup_incident", "<tool_call> tag", 0, 1)]),  # never closed
    (CALL, [Leak("lookup_incident", "JSON object", 0, 1)]),
    ('{"name": "f", "parameters": {}}', [Leak("f", "JSON object", 0, 1)]),
    (f"Let me check.\n  {CALL}  \n", [Leak("lookup_incident", "JSON object", 16, 2)]),
    (f"{CALL}\n{CALL}", [Leak("lookup_incident", "JSON object", 0, 1),
                         Leak("lookup_incident", "JSON object", len(CALL) + 1, 2)]),
])
def test_calls_in_text_are_found_with_where(text, found):
    assert leaked_calls(text) == found


@pytest.mark.parametrize("text", [
    "",
    "INC-001 is critical; INC-002 is low.",
    f"The model may answer {CALL} when its parser fails.",  # inside a sentence
    f"```json\n{CALL}\n```",  # a code sample
    f"```\n<tool_call>{CALL}</tool_call>\n```\nthat is the format",
    f"Use `<tool_call>{CALL}</tool_call>` for that.",  # inline code
    "The <tool_call> tag wraps a call.",
    '{"name": "INC-001", "severity": "critical"}',  # no arguments: no call
    '{"name": 3, "arguments": {}}',  # the name must be text
    '{"name": "", "arguments": {}}',
    f"{CALL} and more text after it",
])
def test_text_that_is_no_leaked_call_is_left_alone(text):
    assert leaked_calls(text) == []


def test_describe_says_what_where_and_why_it_does_not_run():
    said = describe(leaked_calls(f"<tool_call>{CALL}</tool_call>\n{CALL}"))
    message = str(said)
    assert said.code == "call_in_text" and said.params["n"] == 2
    assert message.startswith("the turn's text holds 2 tool calls written as text")
    assert "'lookup_incident' (<tool_call> tag, line 1, char 0)" in message
    assert "(JSON object, line 2," in message and "so none of them runs" in message
    one = str(describe(leaked_calls(CALL)))  # one call in the text, whatever calls were sent
    assert one.startswith("the turn's text holds 1 tool call written as text, not sent as a call")
    assert "so it never runs; only calls sent as calls may" in one


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(st.text(alphabet='{}":,\n`<>/tool_cal namergus', max_size=80))
def test_any_text_is_read_without_raising(text):
    assert all(leak.name for leak in leaked_calls(text))


@pytest.mark.parametrize("text", ["{\n" * 100_000, '{"a":\n' * 50_000, "<tool_call>" * 50_000,
                                  "```\n" * 50_000])
def test_large_hostile_texts_are_read_quickly(text):
    start = time.process_time()
    leaked_calls(text)
    assert time.process_time() - start < 2.0
