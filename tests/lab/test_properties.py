"""Property tests: any chunking and interleaving of a valid multi-call stream assembles to the
same calls; any truncation of it runs nothing."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel_lab.providers._diagnosis import diagnose

pytestmark = pytest.mark.ch4

CALLS = [("call_a", "lookup_incident", {"incident_id": "INC-001"}),
         ("call_b", "search_logs", {"service": "checkout", "query": "café \"au lait\" ☕"}),
         ("call_c", "get_service_status", {"service": "auth-api"})]


def chunk(delta, finish=None):
    return {"object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


@st.composite
def streams(draw):
    """A valid OpenAI chat stream of CALLS with random cuts and a random interleaving."""
    per_call = []
    for i, (call_id, name, args) in enumerate(CALLS):
        text = json.dumps(args, ensure_ascii=False)
        cuts = sorted(draw(st.sets(st.integers(1, len(text) - 1), max_size=8)))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        name_cut = draw(st.integers(1, len(name)))
        entries = [{"index": i, "id": call_id, "type": "function",
                    "function": {"name": name[:name_cut], "arguments": ""}}]
        if name_cut < len(name):
            entries.append({"index": i, "function": {"name": name[name_cut:]}})
        entries += [{"index": i, "function": {"arguments": p}} for p in pieces]
        per_call.append(entries)
    order = draw(st.permutations([i for i, e in enumerate(per_call) for _ in e]))
    queues = [list(e) for e in per_call]
    records = [chunk({"tool_calls": [queues[i].pop(0)]}) for i in order]
    return [*records, chunk({}, "tool_calls")]


@settings(max_examples=200, deadline=None)
@given(streams())
def test_any_chunking_and_interleaving_gives_the_same_calls(records):
    d = diagnose(records, "openai-chat")
    assert d.ok
    assert [(c.id, c.name, c.input) for c in d.calls] == CALLS


@settings(max_examples=200, deadline=None)
@given(streams(), st.data())
def test_any_truncation_runs_nothing(records, data):
    cut = data.draw(st.integers(0, len(records) - 1))  # the finish chunk never arrives
    d = diagnose(records[:cut], "openai-chat")
    assert not d.ok and not [c for c in d.calls if c.executable]
