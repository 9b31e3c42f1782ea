"""Q1's Chat Completions shapes: each recording's calls, verdicts and diagnostics, and the
boundaries of each policy (a tolerance must not kick in where the plain reading is valid)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from keel_cli._command import main
from keel_lab import Runner, incident_tools, validate_history
from keel_lab._core.messages import AssistantMessage, ToolMessage, UserMessage
from keel_lab._core.protocol import ToolCall
from keel_lab.providers._diagnosis import Diagnosis, diagnose, diagnose_file, read_stream
from keel_lab.providers._openai_adapter import OpenAIChatAdapter
from keel_lab.providers._replay import ReplayServer

pytestmark = pytest.mark.ch7

STREAMS = Path(__file__).resolve().parents[2] / "data" / "streams"
QUIRKS = STREAMS / "quirks"
ANSWER = STREAMS / "openai-chat/answer.sse"
A, B, C = ("call_KasaoSe1Nyez9gLghPyAAX7l", "call_bEJywO6OsCbvx4ancC9VifsH",
           "call_p88XBJv0FHz7BdKjuVZfJLqC")
INC3 = ("lookup_incident", {"incident_id": "INC-003"})
STATUS = ("get_service_status", {"service": "checkout"})
LOGS = ("search_logs", {"service": "checkout", "query": "timeout"})
LOOKUP = ("lookup_incident", {"incident_id": "INC-001"})
LOOKUP_2 = ("lookup_incident", {"incident_id": "INC-002"})


def calls(d: Diagnosis) -> list[tuple[int, str | None, str, Any, bool]]:
    return [(c.index, c.id, c.name, c.input, c.executable) for c in d.calls]


def notes(d: Diagnosis) -> list[tuple[int | None, str, str]]:
    return [(x.index, x.quirk, x.action) for x in d.diagnostics]


def entry(index: Any, id: str | None = None, name: str | None = None,
          arguments: Any = None, **extra: Any) -> dict[str, Any]:
    fn = {k: v for k, v in (("name", name), ("arguments", arguments)) if v is not None}
    out: dict[str, Any] = {"index": index, "function": fn, **extra}
    if id is not None:
        out.update(id=id, type="function")
    return out


def turn(*entries: dict[str, Any], finish: str | None = "tool_calls") -> list[dict[str, Any]]:
    """One chunk per tool-call entry, then the finish chunk (none when `finish` is None)."""
    records = [{"choices": [{"index": 0, "delta": {"tool_calls": [e]}}]} for e in entries]
    if finish:
        records.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return records


def opened(index: int, id: str, name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    """A call in the documented shape: id and name first, then its arguments in two pieces."""
    text = json.dumps(args)
    return [entry(index, id, name, ""), entry(index, arguments=text[:6]),
            entry(index, arguments=text[6:])]


# --- the recordings -----------------------------------------------------------------------

@pytest.mark.parametrize(("name", "expected_calls", "expected_notes"), [
    ("interleaved_fragments", [(0, A, *INC3), (1, B, *STATUS), (2, C, *LOGS)], []),
    ("arguments_before_name", [(0, A, *INC3), (1, B, *STATUS)],
     [(0, "arguments_before_name", "tolerated"), (1, "arguments_before_name", "tolerated")]),
    ("name_split", [(0, A, *INC3), (1, B, *STATUS)],
     [(0, "name_split", "tolerated"), (1, "name_split", "tolerated")]),
    ("name_then_arguments", [(0, A, *INC3), (1, B, *STATUS)], []),
    ("index_drift", [(0, A, *INC3)], [(0, "index_drift", "tolerated")]),
    ("call_repeated", [(0, A, *INC3)], [(0, "call_repeated", "tolerated")]),
    ("type_missing", [(0, A, *LOGS)], [(0, "type_missing", "tolerated")]),
    ("no_arguments", [(0, B, "list_open_incidents", {})], [(0, "no_arguments", "tolerated")]),
    ("arguments_in_one_burst", [(0, A, *INC3), (1, B, *STATUS), (2, C, *LOGS)], []),
    ("usage_chunk", [(0, "call_96IPBncLsHvp4Wy4FOR9DUmL", *LOOKUP),
                     (1, "call_t4Dk4BlQTaML2Hlh8ux98kDs", *LOOKUP_2)],
     [(None, "usage_chunk", "tolerated")]),
    ("parallel_tool_calls_ignored", [(0, "functions.lookup_incident:0", *LOOKUP),
                                     (1, "functions.lookup_incident:1", *LOOKUP_2)], []),
    ("identical_calls", [(0, "call_tY1lLNKMKqrFtwJztSu7xAcd", *LOOKUP),
                         (1, "call_BhK9fv2crTf8FrwQ1nKrU9TE", *LOOKUP)],
     [(1, "identical_calls", "tolerated")]),
])
def test_each_recording_gives_its_exact_calls_and_notes(name, expected_calls, expected_notes):
    d = diagnose_file(QUIRKS / f"{name}.sse")
    assert d.format == "openai-chat" and d.finish_reason == "tool_calls" and d.ok
    assert calls(d) == [(*c, True) for c in expected_calls]
    assert notes(d) == expected_notes
    assert all(c.error is None for c in d.calls)


@pytest.mark.parametrize(("name", "shown"), [
    ("arguments_before_name", "tolerated arguments_before_name (call 0"),
    ("name_split", "tolerated name_split (call 1"),
    ("index_drift", "tolerated index_drift (call 0"),
    ("call_repeated", "tolerated call_repeated (call 0"),
    ("type_missing", "tolerated type_missing (call 0"),
    ("no_arguments", "tolerated no_arguments (call 0"),
    ("usage_chunk", "tolerated usage_chunk: a usage-only chunk"),
    ("identical_calls", "tolerated identical_calls (call 1"),
])
def test_assemble_prints_the_shape_and_its_action(name, shown, capsys):
    path = str(QUIRKS / f"{name}.sse")
    assert main(["assemble", path]) == 0
    assert shown in capsys.readouterr().out
    assert main(["assemble", path, "--json"]) == 0
    quirk = shown.split()[1].rstrip(":")
    assert {d["action"] for d in json.loads(capsys.readouterr().out)["diagnostics"]
            if d["quirk"] == quirk} == {"tolerated"}


# --- interleaving: index 0 is a key like any other ----------------------------------------

def test_interleaving_means_the_same_as_calls_in_sequence():
    """Index 0's fragments keep arriving after calls 1 and 2 opened (a client treating 0 as
    "no index" would hand them to call 2: langchain-ai/langchain#38677)."""
    _, records = read_stream(QUIRKS / "interleaved_fragments.sse")
    entries = [r for r in records if "choices" in r and r["choices"][0]["delta"].get(
        "tool_calls")]
    order = [r["choices"][0]["delta"]["tool_calls"][0]["index"] for r in entries]
    assert order.index(2) < len(order) - 1 - order[::-1].index(0)  # 0 goes on after 2 opened
    in_sequence = sorted(entries, key=lambda r: r["choices"][0]["delta"]["tool_calls"][0][
        "index"])
    assert calls(diagnose(in_sequence + records[-2:], "openai-chat")) == calls(
        diagnose(records, "openai-chat"))


def test_the_burst_comes_in_the_finish_chunk_itself():
    _, records = read_stream(QUIRKS / "arguments_in_one_burst.sse")
    last = records[-2]["choices"][0]
    assert last["finish_reason"] == "tool_calls" and len(last["delta"]["tool_calls"]) == 3


# --- the name: split, repeated, late ------------------------------------------------------

@pytest.mark.parametrize(("pieces", "name", "quirks"), [
    (["lookup_", "incident"], "lookup_incident", ["name_split"]),
    (["lookup_incident"] * 3, "lookup_incident", ["name_repeated"]),
    (["lookup_", "incident", "lookup_incident"], "lookup_incident",
     ["name_split", "name_repeated"]),
    (["lookup", "_", "incident"], "lookup_incident", ["name_split"]),
    # the boundary: a piece equal to the whole name so far is a repeat, by the lab's choice
    (["echo", "echo"], "echo", ["name_repeated"]),
    (["ab", "a"], "aba", ["name_split"]),
])
def test_split_and_repeated_names_are_told_apart(pieces, name, quirks):
    records = turn(entry(0, A, pieces[0], ""), *(entry(0, name=p) for p in pieces[1:]),
                   entry(0, arguments="{}"))
    d = diagnose(records, "openai-chat")
    assert calls(d) == [(0, A, name, {}, True)]
    assert [q for _, q, _ in notes(d)] == quirks


def test_a_name_in_the_first_chunk_is_no_quirk():
    d = diagnose(turn(*opened(0, A, *INC3)), "openai-chat")
    assert d.ok and notes(d) == []


def test_arguments_without_a_name_that_never_comes_are_refused():
    d = diagnose(turn(entry(0, A, arguments='{"incident_id": "INC-003"}')), "openai-chat")
    assert not d.ok and calls(d) == [(0, A, "", {"incident_id": "INC-003"}, False)]
    assert "arguments_before_name" not in [q for _, q, _ in notes(d)]
    assert "has no name" in (d.calls[0].error or "")


# --- a drifting index ---------------------------------------------------------------------

def test_a_drift_in_a_turn_of_several_calls_is_refused_and_says_what_would_run():
    records = turn(*opened(0, A, *INC3), *opened(1, B, *STATUS), entry(2, arguments=" "))
    d = diagnose(records, "openai-chat")
    assert not d.ok and not [c for c in d.calls if c.executable]
    drift = next(x for x in d.diagnostics if x.quirk == "index_drift")
    assert (drift.index, drift.action) == (2, "refused")
    assert "which one it continues cannot be known" in drift.message
    assert "at their call's index would be runnable" in drift.message
    assert all(c.error for c in d.calls)


def test_the_recorded_drift_in_two_calls_runs_nothing(capsys):
    d = diagnose_file(QUIRKS / "index_drift_several_calls.sse")
    assert d.finish_reason == "tool_calls" and not d.ok
    assert [(c.index, c.id, c.name, c.executable) for c in d.calls] == [
        (0, A, "lookup_incident", False), (1, B, "get_service_status", False),
        (2, None, "", False)]
    assert notes(d)[0] == (2, "index_drift", "refused")
    assert d.calls[0].error.startswith("not run: the turn is refused because of call 2 "
                                       "(index_drift:")
    assert main(["assemble", str(QUIRKS / "index_drift_several_calls.sse")]) == 1
    assert "- refused index_drift (call 2)" in capsys.readouterr().out


def test_a_new_index_with_an_id_is_a_new_call_not_a_drift():
    d = diagnose(turn(*opened(0, A, *INC3), *opened(1, B, *STATUS)), "openai-chat")
    assert d.ok and [c.index for c in d.calls] == [0, 1] and notes(d) == []


def test_a_call_opened_by_its_arguments_alone_is_no_drift():
    """No call before it: nothing it could continue, so it is a call of its own (with no id
    and no name it cannot run, and the turn is refused for it)."""
    d = diagnose(turn(entry(0, arguments="{}")), "openai-chat")
    assert "index_drift" not in [q for _, q, _ in notes(d)] and not d.ok


# --- the same call at several indexes, and two identical calls ----------------------------

def test_the_same_id_with_other_content_at_a_second_index_refuses_the_turn():
    records = turn(*opened(0, A, *INC3), entry(1, A, "lookup_incident",
                                               '{"incident_id": "INC-001"}'))
    d = diagnose(records, "openai-chat")
    assert not d.ok and [c.index for c in d.calls] == [0, 1]
    assert not [c for c in d.calls if c.executable]
    [refused] = [x for x in d.diagnostics if x.action == "refused"]
    assert (refused.index, refused.quirk, refused.id) == (1, "duplicate_id", A)
    assert "reuses the id of call at index 0" in refused.message
    assert "sent again unchanged would be kept once" in refused.message


def test_a_partial_repeat_is_not_the_same_call():
    """LocalAI's repeats carry the same id; one that lacks the arguments is not "the same
    call said twice" - merging it would be a guess - so the turn is refused."""
    d = diagnose(turn(*opened(0, A, *INC3), entry(1, A, "lookup_incident", "")),
                 "openai-chat")
    assert not d.ok and ("duplicate_id", "refused") in [(q, a) for _, q, a in notes(d)]


def test_the_same_content_under_distinct_ids_is_two_calls():
    d = diagnose(turn(*opened(0, A, *INC3), *opened(1, B, *INC3)), "openai-chat")
    assert calls(d) == [(0, A, *INC3, True), (1, B, *INC3, True)]
    assert notes(d) == [(1, "identical_calls", "tolerated")]


def test_the_same_name_with_other_arguments_is_no_twin():
    d = diagnose(turn(*opened(0, A, *INC3), *opened(1, B, *LOOKUP)), "openai-chat")
    assert d.ok and notes(d) == []


# --- type, arguments, usage ---------------------------------------------------------------

def test_type_missing_is_noted_on_the_opening_only():
    first = entry(0, A, "search_logs", "")
    del first["type"]
    d = diagnose(turn(first, entry(0, arguments=json.dumps(LOGS[1]))), "openai-chat")
    assert d.ok and notes(d) == [(0, "type_missing", "tolerated")]
    assert notes(diagnose(turn(*opened(0, A, *LOGS)), "openai-chat")) == []


@pytest.mark.parametrize("arguments", ["{}", " {} "])
def test_arguments_sent_for_a_parameterless_tool_are_no_quirk(arguments):
    d = diagnose(turn(entry(0, A, "list_open_incidents", arguments)), "openai-chat")
    assert calls(d) == [(0, A, "list_open_incidents", {}, True)] and notes(d) == []


def test_empty_arguments_text_counts_as_no_arguments():
    d = diagnose(turn(entry(0, A, "list_open_incidents", "")), "openai-chat")
    assert d.ok and notes(d) == [(0, "no_arguments", "tolerated")]


def test_no_arguments_is_not_said_of_a_cut_stream():
    d = diagnose(turn(entry(0, A, "list_open_incidents"), finish=None), "openai-chat")
    assert not d.ok and [q for _, q, _ in notes(d)] == ["truncated"]


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_usage_chunk_before_or_after_the_finish_changes_nothing(where):
    records = turn(*opened(0, A, *INC3))
    usage = {"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 3,
                                      "total_tokens": 12}}
    records.insert(len(records) - (where == "before"), usage)
    d = diagnose(records, "openai-chat")
    assert calls(d) == [(0, A, *INC3, True)]
    assert notes(d) == [(None, "usage_chunk", "tolerated")]


def test_an_empty_choices_list_without_usage_is_not_a_usage_chunk():
    d = diagnose([{"choices": []}, *turn(*opened(0, A, *INC3))], "openai-chat")
    assert d.ok and notes(d) == []


# --- every call is answered: the extra calls, the identical calls -------------------------

@pytest.mark.parametrize("name", ["parallel_tool_calls_ignored", "identical_calls"])
def test_the_runner_answers_every_call_of_the_turn(name):
    """A provider that ignores `parallel_tool_calls: false` (LiveBench/LiveBench#485) or a
    turn with two identical calls: each call id gets its own tool message."""
    with ReplayServer([QUIRKS / f"{name}.sse", ANSWER]) as server:
        r = Runner(OpenAIChatAdapter("replay", server.url), incident_tools(),
                   stream=True).run("Which is more severe, INC-001 or INC-002?")
    assert r.status == "completed"
    ids = [c.id for c in r.messages[1].tool_calls]
    assert len(set(ids)) == 2
    assert [m.tool_call_id for m in r.messages if isinstance(m, ToolMessage)] == ids
    assert validate_history(r.messages) == []


def test_answering_only_the_first_of_the_extra_calls_is_an_invalid_history():
    d = diagnose_file(QUIRKS / "parallel_tool_calls_ignored.sse")
    turn_calls = tuple(ToolCall(c.id or "", c.name, c.arguments) for c in d.calls)
    history = [UserMessage("q"), AssistantMessage("", turn_calls),
               ToolMessage(turn_calls[0].id, "lookup_incident", "{\"ok\": true}")]
    [problem] = validate_history(history)
    assert "functions.lookup_incident:1" in problem.message
    assert "did not have response messages" in problem.message
