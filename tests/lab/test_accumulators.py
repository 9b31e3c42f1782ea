"""The official SDK's accumulators and langchain-core, fed as their clients feed them, judged
against the lab on the recorded streams."""

import warnings

import openai
import pytest

from keel_lab.course._experiments.accumulators import (
    COMPARED,
    RunCall,
    anthropic_sdk_calls,
    comparison_report,
    lab_calls,
    langchain_calls,
    langchain_chunks,
    others,
    real_recordings,
    recordings,
    responses_sdk_calls,
    sdk_calls,
    sdk_chunks,
    verdict,
)
from keel_lab.course._experiments.providers import STREAMS, stream_names
from keel_lab.providers._diagnosis import diagnose, read_stream
from keel_lab.providers._replay import ReplayServer

pytestmark = pytest.mark.ch7

A = RunCall("call_a", "lookup_incident", {"incident_id": "INC-001"})
B = RunCall("call_b", "lookup_incident", {"incident_id": "INC-002"})


def records(name):
    return read_stream(STREAMS / name)[1]


def test_verdict_names_what_goes_wrong():
    assert verdict([A, B], [A, B]) == "correct"
    assert verdict([B, A], [A, B]) == "correct (arrival order)"
    assert verdict([A, B], [A]) == "wrong: runs 1 it must not"
    assert verdict([A], [A, B]) == "wrong: misses 1"
    assert verdict([A, A], [A, B]) == "wrong: runs 1 it must not, misses 1"
    assert verdict(IndexError("x"), [A, B]) == "fails (IndexError): runs nothing, misses 2"
    assert verdict(IndexError("x"), []) == "fails (IndexError): runs nothing"
    assert verdict(None, [A]) == "-"


def test_arguments_that_differ_only_in_key_order_are_the_same_call():
    two = RunCall("c", "search_logs", {"service": "checkout", "query": "timeout"})
    same = RunCall("c", "search_logs", {"query": "timeout", "service": "checkout"})
    assert verdict([two], [same]) == "correct"


def test_recordings_are_every_stream_of_the_compared_formats():
    names = [n for n, _, _ in recordings()]
    assert "openai-chat/parallel_calls.sse" in names and "quirks/id_changed.sse" in names
    assert "openai-responses/parallel_calls.sse" in names
    assert "anthropic/three_calls.jsonl" in names
    assert not any(n.startswith(("ollama/", "gemini/")) for n in names)
    assert all(fmt in COMPARED for _, fmt, _ in recordings())
    assert len(names) == len([n for n in stream_names()
                              if read_stream(STREAMS / n)[0] in COMPARED])


def test_on_an_ordinary_stream_all_three_agree():
    r = records("openai-chat/parallel_calls.sse")
    got = others(r, "openai-chat")
    assert got["sdk"] == got["langchain"] == lab_calls(r)
    assert [c.arguments for c in lab_calls(r)] == [{"incident_id": "INC-001"},
                                                   {"incident_id": "INC-002"}]


def test_the_sdk_fails_when_a_later_call_starts_first_and_langchain_keeps_arrival_order():
    r = records("openai-chat/parallel_calls_interleaved.jsonl")
    got = others(r, "openai-chat")
    assert isinstance(got["sdk"], IndexError)
    assert verdict(got["langchain"], lab_calls(r)) == "correct (arrival order)"


def test_neither_library_can_refuse_a_changed_id():
    r = records("quirks/id_changed.sse")
    assert lab_calls(r) == []
    got = others(r, "openai-chat")
    assert verdict(got["sdk"], []) == verdict(got["langchain"], []) == \
        "wrong: runs 2 it must not"


def test_langchain_openai_drops_the_entries_of_a_chunk_without_function():
    r = records("openai-chat/one_call.sse")
    entry = r[1]["choices"][0]["delta"]["tool_calls"][0]
    del entry["function"]
    chunks = langchain_chunks(sdk_chunks(r))
    assert chunks[1].tool_call_chunks == []
    assert chunks[0].tool_call_chunks[0]["id"] == "call_Ik2zwEQHfwcepYyNGfB51Ybm"


def test_a_call_whose_arguments_do_not_parse_is_not_run_by_the_sdk():
    r = records("token_limit/finish_tool_calls.sse")
    assert [c.id for c in sdk_calls(sdk_chunks(r))] == ["call_c3j27xdcg2lMLzgeonyLGcTJ"]
    assert len(langchain_calls(langchain_chunks(sdk_chunks(r)))) == 2  # completes the cut


@pytest.mark.parametrize("name", ["quirks/id_repeated.sse", "quirks/name_repeated.sse",
                                  "openai-chat/parallel_calls.sse"])
def test_the_offline_sdk_path_is_what_the_sdk_gives_over_a_socket(name):
    with ReplayServer([STREAMS / name]) as server, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client = openai.OpenAI(base_url=server.url, api_key="replay")
        with client.chat.completions.stream(
                model="replay", messages=[{"role": "user", "content": "?"}]) as stream:
            message = stream.get_final_completion().choices[0].message
    wire = [RunCall(c.id, c.function.name, c.function.arguments)
            for c in message.tool_calls or []]
    offline = sdk_calls(sdk_chunks(records(name)))
    assert [(c.id, c.name) for c in wire] == [(c.id, c.name) for c in offline]


def test_responses_sdk_reads_the_call_id_and_needs_the_completed_event():
    r = records("openai-responses/parallel_calls.sse")
    assert responses_sdk_calls(r) == lab_calls(r, "openai-responses")
    assert all(c.id.startswith("call_") for c in responses_sdk_calls(r))
    with pytest.raises(RuntimeError, match=r"response\.completed"):
        responses_sdk_calls(r[:-1])


def test_anthropic_sdk_gives_each_tool_use_block_with_its_input():
    r = records("anthropic/parallel_calls.sse")
    assert anthropic_sdk_calls(r) == lab_calls(r, "anthropic")
    assert [c.arguments for c in anthropic_sdk_calls(r)] == [{"incident_id": "INC-001"},
                                                             {"incident_id": "INC-002"}]
    with pytest.raises(RuntimeError, match="no message_start"):
        anthropic_sdk_calls([e for e in r if e.get("type") != "message_start"])


def test_anthropic_sdk_completes_cut_input_json_with_its_partial_parser():
    r = records("anthropic/one_call.sse")
    stop = next(i for i, e in enumerate(r) if e.get("type") == "content_block_stop")
    cut = r[:stop - 1]  # the last input_json_delta and everything after it lost
    assert lab_calls(cut, "anthropic") == []
    assert len(anthropic_sdk_calls(cut)) == 1  # it has no notion of a call being complete


def test_comparison_report_has_a_row_per_recording_and_counts_the_correct():
    report = comparison_report()
    real = [n for n, _, _ in real_recordings()]
    assert [r["stream"] for r in report.rows] == real + [n for n, _, _ in recordings()]
    assert real and all(n.startswith("recordings/") for n in real) and report.params["real"] == len(
        real)
    rows = {r["stream"]: r for r in report.rows}
    assert rows["recordings/mistral/chat_call_without_index.jsonl"]["sdk"].startswith("fails")
    assert rows["recordings/mistral/chat_call_without_index.jsonl"]["pydantic_ai"] == "correct"
    assert rows["openai-chat/parallel_calls.sse"]["sdk"] == "correct"
    assert rows["quirks/duplicate_id.sse"]["lab_runs"] == "nothing (refused)"
    assert rows["openai-responses/parallel_calls.sse"]["langchain_core"] == "-"
    correct = report.data["correct"]
    assert correct["sdk"] == sum(r["sdk"].startswith("correct") for r in report.rows)
    assert 0 < correct["sdk"] < report.data["compared"]["sdk"]
    chat = sum(r["stream"].split("/")[0] not in ("openai-responses", "anthropic", "recordings")
               or "/chat_" in r["stream"] for r in report.rows)
    assert report.data["compared"]["langchain_core"] == report.data["compared"][
        "pydantic_ai"] == chat
    assert 0 < correct["pydantic_ai"] < chat


def test_an_accumulator_exposes_the_refusal_stop_reason_and_runs_nothing_itself():
    r = records("anthropic/stop_refusal.sse")
    turn = diagnose(r, "anthropic")
    got = anthropic_sdk_calls(r)
    assert lab_calls(r, "anthropic") == [] and len(got) == 1
    assert (got.field, got.ending) == ("stop_reason", "refusal")
    assert verdict(got, [], turn) == ("correct (returns 1 and stop_reason 'refusal': "
                                      "a client that ignores it runs 1)")
    assert verdict(got, []) == "wrong: runs 1 it must not"  # the client that ignores it
    row = next(x for x in comparison_report().rows if x["stream"] == "anthropic/stop_refusal.sse")
    assert row["sdk"].startswith("correct") and "stop_reason 'refusal'" in row["sdk"]


def test_langchain_core_exposes_the_finish_reason_and_a_cut_stream_has_none():
    r = records("quirks/finish_content_filter.sse")
    got = langchain_calls(langchain_chunks(sdk_chunks(r)))
    assert (got.ending, len(got)) == ("content_filter", 2)
    assert verdict(got, [], diagnose(r, "openai-chat")).startswith("correct (returns 2 and "
                                                                   "finish_reason 'content")
    cut = records("quirks/truncated.sse")
    assert sdk_calls(sdk_chunks(cut)).exposes() == "no finish_reason"


def test_an_exposed_ending_excuses_nothing_the_lab_refuses_for_another_reason():
    r = records("quirks/duplicate_id.sse")
    got = sdk_calls(sdk_chunks(r))
    assert got.ending == "tool_calls"
    assert verdict(got, [], diagnose(r, "openai-chat")) == "wrong: runs 2 it must not"
