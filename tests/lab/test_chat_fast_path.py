"""The chat reader's shortcut for a chunk that is one more argument fragment (`_fragment`) must
decide exactly as the field-by-field path: on any value of any type in any field of such a
chunk, the diagnosis (calls, verdicts, notices) or the error line is the same with and without
it."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel_cli._command import diagnosis_json
from keel_lab import LabError
from keel_lab.providers._diagnosis import diagnose
from keel_lab.providers._streams import openai_chat

pytestmark = pytest.mark.ch7

VALUES = st.one_of(st.none(), st.booleans(), st.integers(-2, 2**31 + 1), st.floats(0, 1),
                   st.sampled_from(["", "0", "x", '{"a": 1}', "call_b", "lookup_incident"]),
                   st.lists(st.none(), max_size=2), st.dictionaries(st.sampled_from(
                       ["index", "id", "function", "arguments"]), st.none(), max_size=2))
PLACES = st.sampled_from([
    ("choices",), ("choices", 0), ("choices", 0, "index"), ("choices", 0, "delta"),
    ("choices", 0, "finish_reason"), ("choices", 0, "message"),
    ("choices", 0, "delta", "content"), ("choices", 0, "delta", "role"),
    ("choices", 0, "delta", "reasoning"), ("choices", 0, "delta", "tool_calls"),
    ("choices", 0, "delta", "tool_calls", 0),
    ("choices", 0, "delta", "tool_calls", 0, "index"),
    ("choices", 0, "delta", "tool_calls", 0, "id"),
    ("choices", 0, "delta", "tool_calls", 0, "function"),
    ("choices", 0, "delta", "tool_calls", 0, "function", "name"),
    ("choices", 0, "delta", "tool_calls", 0, "function", "arguments")])


def turn() -> list[dict]:
    def chunk(entry: dict, finish: str | None = None) -> dict:
        return {"choices": [{"index": 0, "delta": {"tool_calls": [entry]} if entry else {},
                             "finish_reason": finish}]}
    return [chunk({"index": 0, "id": "call_a", "type": "function",
                   "function": {"name": "lookup_incident", "arguments": ""}}),
            chunk({"index": 0, "function": {"arguments": '{"incident_id": '}}),
            chunk({"index": 0, "function": {"arguments": '"INC-001"}'}}),
            chunk({}, "tool_calls")]


def outcome(records: list[dict]) -> str:
    try:
        d = diagnose(records, "openai-chat")
    except LabError as exc:
        return f"error: {exc}"
    return json.dumps(diagnosis_json(d), sort_keys=True, default=str)


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(st.sampled_from([1, 2]), PLACES, VALUES)
def test_the_shortcut_decides_as_the_field_by_field_path(which, place, value):
    records = turn()
    target = records[which]
    *parents, last = place
    node = target
    for key in parents:
        node = node[key]
    node[last] = copy.deepcopy(value)
    fast = outcome(copy.deepcopy(records))
    saved = openai_chat._fragment
    openai_chat._fragment = lambda chunk: None  # every chunk read field by field
    try:
        slow = outcome(records)
    finally:
        openai_chat._fragment = saved
    assert fast == slow


def test_the_shortcut_takes_a_plain_fragment_and_nothing_else():
    first, fragment, _, finish = turn()
    assert openai_chat._fragment(fragment) == (0, '{"incident_id": ')
    assert openai_chat._fragment(first) is None and openai_chat._fragment(finish) is None
