"""The shapes of argument text (keel_lab.providers._streams.arguments): each reading, each
refusal, and that nothing but a shape is named."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel_lab.providers._streams.arguments import shape

pytestmark = pytest.mark.ch7

A = '{"incident_id": "INC-001"}'


@pytest.mark.parametrize(("parts", "quirk", "reading"), [
    ([A[:5], A[5:], A], "arguments_repeated", A),  # a trailing chunk with the whole text
    ([A[:5], A[5:-1], "}" + A], "arguments_repeated", A),  # a flush inside the last delta
    (["{", A], "arguments_repeated", A),  # the first character, then everything
    ([A, A], "arguments_repeated", A),  # two identical objects: one call's repeat
    ([A[:5], A[:12], A], "cumulative_snapshots", A),
    ([A, A, A], "cumulative_snapshots", A),  # snapshots that stopped growing
])
def test_tolerated_readings(parts, quirk, reading):
    found = shape(parts, "tool_calls")
    assert (found.quirk, found.reading) == (quirk, reading)
    assert "read as deltas, arguments: not valid JSON" in str(found.said)


def test_the_partial_repeat_says_how_much_came_first():
    assert str(shape(["{", A], "stop").said).startswith(
        "the first character of the arguments, then all of them arrived")
    assert str(shape([A[:3], A], "stop").said).startswith("the first 3 characters")


@pytest.mark.parametrize(("text", "quirk", "says"), [
    ('{"a": 1}{"a": 2}', "packed_calls", "2 JSON objects one after another"),
    ('{"a": 1} {"a": 2}\n{"a": 3}', "packed_calls", "3 JSON objects"),
    ('{"a": 1}{"ent', "packed_calls", "1 complete JSON object and the start of another"),
    ('{"p": "C:\\Hello"}', "invalid_escape", "`\\H` at char 9 is no JSON escape"),
    ('{"a": \\n[1]}', "invalid_escape", "a backslash outside any string at char 6"),
    ('{"q": "a\tb"}', "raw_control_character", "(U+0009) inside a string at char 8"),
    ('{"a": "x', "arguments_cut", "Unterminated string"),
    ('{"a": tru', "arguments_cut", "Expecting value: line 1 column 7 (char 6)"),
    ('{"a": 1.', "arguments_cut", "end inside a value"),
    ('{"a": 1e', "arguments_cut", "end inside a value"),
    ('{"a": [1, 2  ', "arguments_cut", "end inside a value"),
    ('{"a": -', "arguments_cut", "end inside a value"),
    ('{"a": 1, ', "arguments_cut", "end inside a value"),
    ('{"a"', "arguments_cut", "end inside a value"),
    ('{"q": "caf\\u00', "arguments_cut", "end inside a value"),
])
def test_refused_shapes_are_named_with_the_json_error(text, quirk, says):
    found = shape([text], "tool_calls")
    assert (found.quirk, found.reading) == (quirk, None)
    assert says in str(found.said) and str(found.said).endswith(")")


@pytest.mark.parametrize("parts", [
    [A], [A[:9], A[9:]], [""], ["  "], ['{"a": ', '{"a": 1}}'],  # parse as deltas
    ['{"a": 1,}'], ["[1]"], ['{"a": 1}true'], ['{"a": 1 "b": 2}'],  # no shape to name
    ['{"a": 1 2'], ['{"a": 1}]'],
    ['{"a": NaN}'], ['{"a": ' + "9" * 5000 + "}"],  # valid JSON Python refuses: the core says
])
def test_no_shape_is_named_where_there_is_none(parts):
    assert shape(parts, "tool_calls") is None


def test_a_cut_snapshot_is_refused_as_snapshots():
    found = shape(['{"a": "x', '{"a": "xy'], "tool_calls")
    assert (found.quirk, found.reading) == ("cumulative_snapshots", None)
    assert "the last one does not parse either" in str(found.said)


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(st.lists(st.text(alphabet='{}[]":,\\ ntrue0123abc\n', max_size=12), max_size=5))
def test_any_fragments_give_a_shape_or_none_and_never_raise(parts):
    found = shape(parts, "tool_calls")
    assert found is None or (found.quirk and str(found.said))


@pytest.mark.parametrize("text", ["{" * 200_000, '{"a":' * 100_000, "{}" * 100_000,
                                  '{"a": "' + "{" * 200_000, "{x" + "{" * 500_000,
                                  ("{" * 40 + "x") * 20_000])
def test_large_hostile_texts_are_judged_quickly(text):
    start = time.process_time()
    shape([text], "tool_calls")
    assert time.process_time() - start < 2.0
