"""The recordings of make_streams.quirks_findings(), one per policy F1 added: each assembles to
its calls, verdicts and (index, quirk, action) diagnostics, and `keel-lab assemble` names the
shape and what the lab does with it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keel_cli._command import main
from keel_lab.providers._diagnosis import diagnose_file

pytestmark = pytest.mark.ch7

STREAMS = Path(__file__).resolve().parents[2] / "data" / "streams"
INC1, INC2 = '{"incident_id": "INC-001"}', '{"incident_id": "INC-002"}'
LOOKUP = (0, "call_4EZCll34OohJli8zCBEyUo0D", "lookup_incident", INC1, True)

RECORDINGS: dict[str, tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]] = {
    "quirks/finish_content_filter.sse": (
        [(0, "call_YVOK56Yk5sSjRY2uwkAxPq1B", "lookup_incident", INC1, False),
         (1, "call_KQpsnlDHylCb3S1vNEuXueIj", "lookup_incident", INC2, False)],
        [(None, "unusual_finish", "refused")]),
    "anthropic/stop_refusal.sse": (
        [(1, "toolu_01POIvGrv5iFlbCBFNOgmBjMtp", "lookup_incident", INC1, False)],
        [(None, "unusual_finish", "refused")]),
    "gemini/malformed_function_call.sse": (
        [], [(None, "malformed_function_call", "refused"), (None, "unusual_finish", "reported")]),
    "openai-responses/arguments_mismatch.sse": (
        [(0, "call_TsoYlZxsqUWEV1SnKHgElGR9", "lookup_incident", INC1, True),
         (1, "call_btCvtsv2pzVX1eodlziJOedy", "lookup_incident", INC2, False)],
        [(1, "arguments_mismatch", "refused")]),
    "openai-responses/item_id_reused.sse": (
        [(0, "call_C5nEIRy5vJN2wtbEnaJsD7CL", "lookup_incident", INC1, False),
         (1, "call_unzspQlqDf6X6NWJoyBPftnb", "lookup_incident", INC2, False)],
        [(0, "item_id_reused", "refused"), (1, "item_id_reused", "refused")]),
    "quirks/duplicate_key.sse": (
        [LOOKUP, (1, "call_hV9t7wFZteXJed1EdvsinHbO", "search_logs",
                  '{"service": "checkout", "query": "timeout", "query": "error"}', False)],
        [(1, "duplicate_key", "refused")]),
    "quirks/lone_surrogate.sse": (
        [(0, "call_WEbjdkVQgYZnCyaqB9GAQ89y", "lookup_incident", INC1, True),
         (1, "call_5UkbOPhgWc9PCjXtsWmVjkwM", "search_logs",
          '{"service": "checkout", "query": "timeout \\ud83d"}', False)],
        [(1, "lone_surrogate", "refused")]),
}

# what `assemble` prints for each: the shape and its action, or the refused call's error
PRINTED = {
    "quirks/finish_content_filter.sse": "- refused unusual_finish: the turn ended with the finish "
                                        "reason 'content_filter'",
    "anthropic/stop_refusal.sse": "- refused unusual_finish: the turn ended with the finish "
                                  "reason 'refusal'",
    "gemini/malformed_function_call.sse": "- refused malformed_function_call: the finish reason "
                                          "MALFORMED_FUNCTION_CALL",
    "openai-responses/arguments_mismatch.sse": "- refused arguments_mismatch (call 1, id "
                                               "call_btCvtsv2pzVX1eodlziJOedy)",
    "openai-responses/item_id_reused.sse": "- refused item_id_reused (call 1, id "
                                           "call_unzspQlqDf6X6NWJoyBPftnb)",
    "quirks/duplicate_key.sse": "the key 'query' appears twice in one object",
    "quirks/lone_surrogate.sse": "a string holds a lone surrogate",
}


def test_every_recording_is_here():
    assert set(RECORDINGS) == set(PRINTED)
    assert all((STREAMS / name).is_file() for name in RECORDINGS)


@pytest.mark.parametrize("name", RECORDINGS)
def test_each_recording_assembles_to_its_calls_verdicts_and_diagnostics(name):
    calls, diagnostics = RECORDINGS[name]
    d = diagnose_file(STREAMS / name)
    assert [(c.index, c.id, c.name, c.arguments, c.executable) for c in d.calls] == calls
    assert [(x.index, x.quirk, x.action) for x in d.diagnostics] == diagnostics
    assert all(c.input is None and c.error for c in d.calls if not c.executable)
    assert not d.ok


@pytest.mark.parametrize("name", RECORDINGS)
def test_assemble_names_the_shape_and_exits_1(name, capsys):
    assert main(["assemble", str(STREAMS / name)]) == 1
    assert PRINTED[name] in capsys.readouterr().out


def test_an_unusual_finish_names_the_reason_and_the_normal_ones():
    d = diagnose_file(STREAMS / "anthropic/stop_refusal.sse")
    assert d.finish_reason == "refusal"
    assert "'tool_use', 'end_turn'" in d.diagnostics[0].message
    assert all("'refusal'" in (c.error or "") for c in d.calls)


def test_the_lost_gemini_call_carries_geminis_message():
    d = diagnose_file(STREAMS / "gemini/malformed_function_call.sse")
    assert d.calls == [] and d.finish_reason == "malformed_function_call"
    assert "Gemini's message: \"Malformed function call: print(default_api.lookup_incident(" \
        in d.diagnostics[0].message


def test_the_responses_refusals_say_what_would_make_them_runnable():
    mismatch = diagnose_file(STREAMS / "openai-responses/arguments_mismatch.sse")
    assert "a done event that repeats the deltas" in mismatch.calls[1].error
    reused = diagnose_file(STREAMS / "openai-responses/item_id_reused.sse")
    assert "output indexes 0 and 1 share the item id fc_" in reused.calls[0].error
    assert "distinct item ids" in reused.diagnostics[1].message


def test_a_bad_argument_value_refuses_only_its_call():
    for name in ("quirks/duplicate_key.sse", "quirks/lone_surrogate.sse"):
        d = diagnose_file(STREAMS / name)
        assert d.calls[0].input == {"incident_id": "INC-001"} and d.calls[0].executable, name
