"""Published client code's readings against the lab's assembly, on the recorded streams."""

from __future__ import annotations

import json

import pytest

from keel_cli._command import main
from keel_lab.course._experiments.naive_clients import (
    READINGS,
    compare,
    dedupe_name_arguments,
    fragment_alone,
    index_zero_falsy,
    key_by_name,
    last_block,
    naive_clients,
    turn,
)
from keel_lab.course._experiments.providers import stream_names
from keel_lab.course._experiments.registry import EXPERIMENTS, Params
from keel_lab.course._plots import plot

pytestmark = pytest.mark.ch7

INC = [("lookup_incident", json.dumps({"incident_id": f"INC-00{n}"})) for n in (1, 2)]
EMPTY = ("lookup_incident", "{}")


def test_the_lab_is_the_reference():
    t = turn("openai-chat/parallel_calls.sse")
    assert t.format == "openai-chat" and t.finished and t.lab == INC


def test_parsing_each_fragment_alone_runs_every_call_with_nothing():
    assert fragment_alone(turn("anthropic/parallel_calls.sse")) == [EMPTY, EMPTY]
    assert compare(INC, [EMPTY, EMPTY]) == (2, 2)


def test_a_fragment_that_parses_alone_is_kept():
    """Ollama sends whole calls: one fragment each, so the bug costs nothing there."""
    t = turn("ollama/parallel_calls.jsonl")
    assert fragment_alone(t) == t.lab == INC


def test_index_zero_read_as_missing_splits_call_zero():
    naive = index_zero_falsy(turn("openai-chat/parallel_calls.sse"))
    assert naive == [EMPTY, INC[1]]  # call 0 kept its name but lost its arguments
    assert compare(INC, naive) == (1, 1)


def test_the_last_block_as_the_call_loses_the_others():
    t = turn("anthropic/three_calls.jsonl")
    assert last_block(t) == t.lab[-1:] and len(t.lab) == 3


def test_dedupe_drops_a_second_identical_call():
    t = turn("anthropic/no_arguments.sse")
    assert t.lab == [("list_open_incidents", "{}")] * 2
    assert dedupe_name_arguments(t) == [("list_open_incidents", "{}")]
    assert dedupe_name_arguments(turn("openai-chat/parallel_calls.sse")) == INC


def test_keying_by_name_merges_same_name_calls():
    assert key_by_name(turn("gemini/parallel_calls.sse")) == [INC[1]]
    mixed = turn("openai-chat/parallel_calls_interleaved.jsonl")
    assert key_by_name(mixed) == mixed.lab  # three names, nothing merged


def test_a_stream_that_never_finished_runs_nothing_in_any_reading():
    t = turn("quirks/truncated.sse")
    assert not t.finished and t.lab == []
    assert [r.read(t) for r in READINGS] == [[]] * len(READINGS)


def test_a_refused_turn_run_anyway_is_counted_wrong():
    t = turn("quirks/duplicate_id.sse")
    assert t.lab == [] and compare(t.lab, fragment_alone(t)) == (0, 2)


def test_compare_counts_multisets():
    assert compare(INC, INC[::-1]) == (0, 0)
    assert compare([EMPTY, EMPTY], [EMPTY]) == (1, 0)
    assert compare([], [EMPTY]) == (0, 1)


def test_the_report_is_computed_per_reading_and_recording():
    names = ["openai-chat/parallel_calls.sse", "anthropic/no_arguments.sse"]
    r = naive_clients(names)
    assert r.params == {"recordings": 2}
    row = {(x["reading"], x["recording"]): (x["lost"], x["wrong"]) for x in r.rows}
    assert row[("index_zero_falsy", names[0])] == (1, 1)
    assert ("index_zero_falsy", names[1]) not in row  # it reads OpenAI chat chunks only
    assert row[("dedupe_name_arguments", names[1])] == (1, 0)
    totals = r.data["readings"]
    assert totals["last_block"] == {"source": "anthropics/courses (tool_use, chapter 6)",
                                    "bug": "takes the message's last block as the call",
                                    "recordings": 2, "hurt": 2, "lost": 2, "wrong": 0}
    assert len(r.findings) == len(READINGS)


def test_every_recording_is_read_by_every_reading_of_its_format():
    r = EXPERIMENTS["naive_clients"].run(Params())
    assert r.params["recordings"] == len(stream_names())
    for reading in READINGS:
        t = r.data["readings"][reading.name]
        assert t["recordings"] >= 1 and t["lost"] + t["wrong"] >= 1, reading.name
    assert plot(r) is not None


def test_the_cli_runs_it(capsys):
    assert main(["experiments", "naive_clients", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["experiment"] == "naive_clients" and set(out["readings"]) == {
        r.name for r in READINGS}
