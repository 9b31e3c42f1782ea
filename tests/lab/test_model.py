import json

import pytest

from keel_lab import (
    AssistantMessage,
    LabError,
    OfflineAdapter,
    RunIds,
    ScriptedAdapter,
    ToolCall,
    ToolMessage,
    Turn,
    UserMessage,
)

pytestmark = pytest.mark.ch5

TURN = Turn(RunIds("run-000000000abc"), 0)


def calls_for(question, tools):
    return [(c.name, json.loads(c.arguments))
            for c in OfflineAdapter().complete([UserMessage(question)], tools, TURN).tool_calls]


@pytest.mark.parametrize(("question", "expected"), [
    ("Which is more severe, INC-001 or INC-002?",
     [("lookup_incident", {"incident_id": "INC-001"}),
      ("lookup_incident", {"incident_id": "INC-002"})]),
    ("What is the status of checkout and auth-api?",
     [("get_service_status", {"service": "checkout"}),
      ("get_service_status", {"service": "auth-api"})]),
    ("Search the logs of catalog-search for 'indexer'",
     [("search_logs", {"service": "catalog-search", "query": "indexer"})]),
    ("Restart billing", [("restart_service", {"service": "billing"})]),
    ("Add a note to INC-004, note: schema fixed",
     [("add_incident_note", {"incident_id": "INC-004", "note": "schema fixed"})]),
    ("Hello there", []),
])
def test_offline_model_decides_the_calls(question, expected, tools):
    assert calls_for(question, tools) == expected


def test_call_ids_follow_the_run_step_call_form(tools):
    m = OfflineAdapter().complete([UserMessage("INC-001 vs INC-002, more severe?")], tools,
                                  Turn(RunIds("run-0123456789ab"), 2))
    assert [c.id for c in m.tool_calls] == ["run-0123456789ab:step-2:call-0",
                                            "run-0123456789ab:step-2:call-1"]


def _answer(tools, results_by_id):
    q = UserMessage("Which is more severe, INC-001 or INC-002?")
    turn = OfflineAdapter().complete([q], tools, TURN)
    msgs = [q, turn, *[ToolMessage(c.id, c.name, results_by_id(c)) for c in turn.tool_calls]]
    return OfflineAdapter().complete(msgs, tools, Turn(TURN.ids, 1)).content


def _incident(i):
    from keel_lab.course import _data as data
    return json.dumps(data.incidents()[i])


def test_answer_uses_each_result_by_call_id(tools):
    text = _answer(tools, lambda c: _incident(json.loads(c.arguments)["incident_id"]))
    assert text.startswith("INC-001 is the most severe (critical).")
    assert "INC-002 (low, open): Monthly reports render slowly." in text


def test_swapped_results_give_swapped_facts(tools):
    swap = {"INC-001": "INC-002", "INC-002": "INC-001"}
    text = _answer(tools, lambda c: _incident(swap[json.loads(c.arguments)["incident_id"]]))
    assert text.startswith("INC-002 is the most severe (critical).")
    assert "INC-001 (low, open): Monthly reports render slowly." in text


def test_tool_message_order_does_not_matter(tools):
    q = UserMessage("Which is more severe, INC-001 or INC-002?")
    turn = OfflineAdapter().complete([q], tools, TURN)
    msgs = [ToolMessage(c.id, c.name, _incident(json.loads(c.arguments)["incident_id"]))
            for c in turn.tool_calls]
    forward = OfflineAdapter().complete([q, turn, *msgs], tools, Turn(TURN.ids, 1))
    backward = OfflineAdapter().complete([q, turn, *msgs[::-1]], tools, Turn(TURN.ids, 1))
    assert forward == backward


def test_missing_user_message_is_a_clear_error(tools):
    with pytest.raises(LabError, match="needs a user message"):
        OfflineAdapter().complete([], tools, TURN)


def test_chunk_size_must_be_positive():
    with pytest.raises(LabError, match="chunk_size must be at least 1, got 0"):
        OfflineAdapter(chunk_size=0)


def test_stream_is_seeded(tools):
    q = [UserMessage("Which is more severe, INC-001 or INC-002?")]
    a = list(OfflineAdapter(seed=1).stream(q, tools, TURN))
    assert a == list(OfflineAdapter(seed=1).stream(q, tools, TURN))
    assert a != list(OfflineAdapter(seed=2).stream(q, tools, TURN))


def test_scripted_adapter_replays_turns_and_refuses_to_stream(tools):
    call = ToolCall("c1", "lookup_incident", '{"incident_id": "INC-001"}')
    s = ScriptedAdapter([AssistantMessage(tool_calls=(call,)), AssistantMessage("done")])
    assert s.complete([], tools, TURN).tool_calls == (call,)
    assert s.complete([], tools, Turn(TURN.ids, 1)) == AssistantMessage("done")
    with pytest.raises(LabError, match="the script has 2 turns; step 2 has none"):
        s.complete([], tools, Turn(TURN.ids, 2))
    with pytest.raises(NotImplementedError, match="no fragments to stream"):
        s.stream([], tools, TURN)
