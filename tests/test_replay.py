"""The official openai SDK on a real socket: recorded streams served by the replay server."""

from pathlib import Path

import openai
import pytest

from keel_lab import LabError, Runner, incident_tools, validate_history
from keel_lab.providers.openai_adapter import OpenAIChatAdapter
from keel_lab.providers.replay import ReplayServer

STREAMS = Path(__file__).resolve().parent.parent / "keel_lab" / "data" / "streams"
TURNS = [STREAMS / "openai-chat/parallel_calls.sse", STREAMS / "openai-chat/answer.sse"]
QUESTION = "Which is more severe, INC-001 or INC-002?"
TOOLS = incident_tools()


@pytest.fixture
def server():
    with ReplayServer(TURNS) as s:
        yield s


def test_streamed_run_end_to_end_over_http(server):
    model = OpenAIChatAdapter("replay", server.url)
    r = Runner(model, TOOLS, stream=True).run(QUESTION)
    assert r.status == "completed" and r.answer.startswith("INC-001 is more severe")
    assert [m.role for m in r.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert validate_history(r.messages) == []
    second = server.requests[1]
    assert second["stream"] is True
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "tool", "tool"]
    ids = [c["id"] for c in second["messages"][1]["tool_calls"]]
    assert [m["tool_call_id"] for m in second["messages"][2:]] == ids
    assert {t["function"]["name"] for t in second["tools"]} >= {"lookup_incident"}
    assert model.last_diagnostics == []


def test_non_streamed_run_gets_the_same_calls(server):
    streamed = Runner(OpenAIChatAdapter("replay", server.url), TOOLS, stream=True).run(QUESTION)
    plain = Runner(OpenAIChatAdapter("replay", server.url), TOOLS).run(QUESTION)
    assert plain.messages == streamed.messages


def test_server_rejects_a_broken_history_with_the_providers_text(server):
    client = OpenAIChatAdapter("replay", server.url).client
    with pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(model="replay", messages=[
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_x", "type": "function",
                 "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "user", "content": "and?"}])
    assert err.value.status_code == 400
    assert "The following tool_call_ids did not have response messages: call_x" in str(
        err.value)


def test_quirky_stream_through_the_sdk_is_diagnosed():
    with ReplayServer([STREAMS / "quirks/all_index_zero.sse", TURNS[1]]) as s:
        model = OpenAIChatAdapter("replay", s.url)
        r = Runner(model, TOOLS, stream=True).run(QUESTION)
    assert r.status == "completed" and len(r.messages[1].tool_calls) == 2
    assert [d.quirk for d in model.diagnostics[0]] == ["index_reused"]
    assert model.last_diagnostics == []  # the answer turn was clean


def test_truncated_stream_through_the_sdk_runs_nothing():
    with ReplayServer([STREAMS / "quirks/truncated.sse"]) as s:
        model = OpenAIChatAdapter("replay", s.url)
        r = Runner(model, TOOLS, stream=True).run(QUESTION)
    assert r.status == "failed" and "nothing was run" in r.error
    assert not [e for e in r.events if e.kind.startswith("tool.")]
    assert [d.quirk for d in model.last_diagnostics] == ["truncated"]


def test_only_loopback():
    with pytest.raises(LabError, match="loopback only"):
        ReplayServer(TURNS, host="0.0.0.0")
    with ReplayServer(TURNS) as s:
        assert s.url.startswith("http://127.0.0.1:")


def test_a_server_that_is_gone_fails_the_run_with_a_message():
    with ReplayServer(TURNS) as s:
        url = s.url
    for stream in (False, True):
        r = Runner(OpenAIChatAdapter("replay", url, timeout=2), TOOLS, stream=stream).run(QUESTION)
        assert r.status == "failed" and "APIConnectionError" in r.error
        assert "nothing was run" in r.error
