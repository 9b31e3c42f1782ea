import re

import pytest

from keel_lab import (
    Finish,
    LabError,
    OfflineAdapter,
    Readiness,
    RunIds,
    StreamAssembler,
    StreamCancelled,
    TextDelta,
    ToolCallDelta,
    Turn,
    UserMessage,
    assemble,
    cancel_after,
    incident_tools,
    readiness,
)
from keel_lab._core.errors import Said

pytestmark = pytest.mark.ch4
CORRUPT = Said("corrupt", "corrupt")

D = ToolCallDelta
INTERLEAVED = [
    D(0, id="call_a", name="explore_code"), D(0, arguments_delta='{"query": '),
    D(1, id="call_b", name="explore_code"), D(0, arguments_delta='"login"}'),
    D(1, arguments_delta='{"query": "session"}'), Finish("tool_calls"),
]


def test_interleaved_fragments_are_grouped_by_index():
    a = assemble(INTERLEAVED)
    assert [(c.id, c.name, c.arguments) for c in a.message.tool_calls] == [
        ("call_a", "explore_code", '{"query": "login"}'),
        ("call_b", "explore_code", '{"query": "session"}')]
    assert [r.input for r in a.requests] == [{"query": "login"}, {"query": "session"}]
    assert a.finish_reason == "tool_calls"


def test_nothing_is_executable_before_the_finish_even_when_it_parses():
    asm = StreamAssembler()
    seen = []
    for event in INTERLEAVED:
        asm.feed(event)
        seen.append([(s.index, s.parses, s.executable) for s in asm.calls()])
    assert seen[3] == [(0, True, False), (1, False, False)]  # call 0 parses, still not runnable
    assert seen[4] == [(0, True, False), (1, True, False)]
    assert seen[5] == [(0, True, True), (1, True, True)]


def test_result_before_finish_is_refused():
    asm = StreamAssembler()
    asm.feed(INTERLEAVED[0])
    with pytest.raises(LabError, match="has not finished"):
        asm.result()


def test_events_after_the_finish_are_refused():
    asm = StreamAssembler()
    asm.feed(Finish("stop"))
    with pytest.raises(LabError, match="after the finish reason"):
        asm.feed(D(0, id="x"))


@pytest.mark.parametrize("index", [-1, "0", None, 1.0])
def test_bad_index_is_named(index):
    with pytest.raises(LabError, match=re.escape(
            f"event 0: tool call index must be an integer >= 0, got {index!r}")):
        assemble([D(index, id="x")])


def refused(events):
    """The assembly of a turn that must be refused whole: nothing of it may run."""
    a = assemble(events)
    assert a.message is None and a.requests == ()
    assert not any(a.readiness(s).executable for s in a.calls)
    return a


def test_missing_id_names_the_index():
    a = refused([D(0, id="a", name="f", arguments_delta="{}"),
                 D(1, name="f", arguments_delta="{}"), Finish("tool_calls")])
    assert a.refused == "call at index 1 has no id"
    assert [(p.index, p.kind) for p in a.problems] == [(1, "unusable_call")]


def test_missing_name_names_the_index_and_id():
    a = refused([D(0, id="a", arguments_delta="{}"), Finish("tool_calls")])
    assert a.refused == "call at index 0 (id a) has no name"


def test_duplicate_id_names_both_indexes():
    a = refused([D(0, id="a", name="f"), D(1, id="a", name="g"), Finish("tool_calls")])
    assert a.refused == "call at index 1 (id a) reuses the id of call at index 0"
    assert [(p.index, p.kind) for p in a.problems] == [(1, "duplicate_id")]


def test_changed_id_is_refused():
    a = refused([D(0, id="a", name="f"), D(0, id="b", arguments_delta="{}"),
                 Finish("tool_calls")])
    assert a.refused == "call at index 0: id changed from a to b mid-call"


@pytest.mark.parametrize("arguments", [None, "{}"])
def test_a_parameterless_call_runs(arguments):
    a = assemble([D(0, id="p", name="list_services", arguments_delta=arguments),
                  Finish("tool_calls")])
    assert a.calls[0].readiness == Readiness(True, Said("may_run",
                                                        "complete and closed: it may run"))
    assert a.requests[0].input == {}


def test_readiness_names_the_first_reason():
    assert readiness(None, "f", "{}", True).reason == "the call has no id"
    assert readiness("a", "", "{}", True).reason == "the call has no name"
    assert "not closed" in readiness("a", "f", "{}", False).reason.replace("has not closed",
                                                                           "not closed")
    assert readiness("a", "f", "[1]", True).reason == "arguments must be a JSON object, got list"
    assert readiness("a", "f", "{}", True, refused=CORRUPT).reason == "corrupt"
    assert [readiness(*given).code for given in [(None, "f", "{}", True), ("a", "", "{}", True),
                                                 ("a", "f", "{}", False), ("a", "f", "[1]", True),
                                                 ("a", "f", "{", True), ("a", "f", "{}", True)]
            ] == ["no_id", "no_name", "not_closed", "not_an_object", "not_json", "may_run"]


def test_repeated_same_id_is_fine():
    a = assemble([D(0, id="a", name="f"), D(0, id="a", arguments_delta="{}"), Finish("tool_calls")])
    assert a.message.tool_calls[0].id == "a"


@pytest.mark.parametrize(("arguments", "error"), [
    ('{"query": "login"', "not valid JSON"),
    ('["login"]', "must be a JSON object, got list"),
])
def test_bad_arguments_hurt_only_their_own_call(arguments, error):
    a = assemble([D(0, id="a", name="f", arguments_delta=arguments),
                  D(1, id="b", name="f", arguments_delta='{"query": "ok"}'), Finish("tool_calls")])
    bad, good = a.requests
    assert bad.input is None and error in bad.parse_error
    assert bad.raw_arguments == arguments  # the history keeps what the model sent
    assert good.input == {"query": "ok"} and good.parse_error is None
    assert [s.executable for s in a.calls] == [False, True]


def test_empty_arguments_mean_no_arguments_once_closed():
    asm = StreamAssembler()
    asm.feed(D(0, id="a", name="f"))
    assert not asm.calls()[0].parses
    asm.feed(Finish("tool_calls"))
    assert asm.result().requests[0].input == {}


def test_text_deltas_become_content():
    a = assemble([TextDelta("Hel"), TextDelta("lo"), Finish("stop")])
    assert a.message.content == "Hello" and a.requests == ()


def test_cancelled_stream_runs_nothing_and_keeps_what_arrived():
    a = assemble(cancel_after(INTERLEAVED, 4))
    assert a.message is None and a.requests == () and a.cancelled
    assert "cancelled after 4 events" in a.refused
    assert [(s.index, s.arguments) for s in a.calls] == [(0, '{"query": "login"}'), (1, "")]


def test_stream_that_raises_runs_nothing():
    def broken():
        yield INTERLEAVED[0]
        raise ConnectionResetError("peer went away")
    a = assemble(broken())
    assert a.requests == () and not a.cancelled
    assert a.refused == "stream raised ConnectionResetError: peer went away"


def test_stream_without_finish_runs_nothing():
    a = assemble(INTERLEAVED[:-1])
    assert a.requests == () and a.refused == "stream ended before a finish reason"


def test_cancel_after_raises_stream_cancelled():
    with pytest.raises(StreamCancelled):
        list(cancel_after([Finish("stop")] * 3, 1))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("chunk_size", [1, 2, 5, 64])
@pytest.mark.parametrize("interleave", [True, False])
def test_any_chunking_assembles_to_the_unstreamed_turn(seed, chunk_size, interleave):
    model, tools = OfflineAdapter(seed, chunk_size, interleave), incident_tools()
    messages = [UserMessage("Compare INC-001, INC-002 and INC-003, more severe? "
                            "Also the status of auth-api")]
    turn = Turn(RunIds.seeded(seed), 0)
    assert assemble(model.stream(messages, tools, turn)).message == model.complete(
        messages, tools, turn)


def test_a_refused_call_is_answered_not_run_and_siblings_are_unaffected():
    from keel_lab._core.streaming import Refuse
    a = assemble([D(0, id="a", name="f", arguments_delta='{"q": "caf\ufffd"}'),
                  D(1, id="b", name="f", arguments_delta='{"q": "ok"}'),
                  Refuse(0, Said("split_utf8", "arguments contain U+FFFD")),
                  Finish("tool_calls")])
    bad, good = a.requests
    assert bad.input is None and bad.parse_error == "arguments contain U+FFFD"
    assert a.message.tool_calls[0].arguments == '{"q": "caf\ufffd"}'
    assert good.input == {"q": "ok"}
    assert [s.executable for s in a.calls] == [False, True]


def test_snapshots_stop_quietly_when_the_stream_dies_but_not_on_bad_events():
    from keel_lab._core.streaming import snapshots
    seen = [(n, [(s.index, s.arguments) for s in calls])
            for n, _, calls in snapshots(cancel_after(INTERLEAVED, 2))]
    assert seen == [(1, [(0, "")]), (2, [(0, '{"query": ')])]
    with pytest.raises(LabError, match="index must be an integer"):
        list(snapshots([D(-1, id="x")]))


def test_a_converters_reading_replaces_what_the_fragments_gave():
    """`Arguments`: the wire's arguments for this call are this text (snapshots, a repeat)."""
    from keel_lab._core.streaming import Arguments
    asm = StreamAssembler()
    for event in [D(0, id="a", name="f", arguments_delta='{"q": '),
                  D(0, arguments_delta='{"q": "x"}'), D(1, id="b", name="f")]:
        asm.feed(event)
    assert asm.calls()[0].arguments == '{"q": {"q": "x"}'
    asm.feed(Arguments(0, '{"q": "x"}'))
    asm.feed(Finish("tool_calls"))
    a = asm.result()
    assert [c.arguments for c in a.message.tool_calls] == ['{"q": "x"}', ""]
    assert [s.executable for s in a.calls] == [True, True]
    assert a.requests[0].input == {"q": "x"}


def test_a_reading_comes_before_the_finish_and_does_not_undo_a_refusal():
    from keel_lab._core.streaming import Arguments, Refuse
    a = assemble([D(0, id="a", name="f", arguments_delta="{"), Refuse(0, CORRUPT),
                  Arguments(0, "{}"), Finish("tool_calls")])
    assert a.calls[0].readiness == Readiness(False, CORRUPT)
    with pytest.raises(LabError, match="arrived after the finish reason"):
        assemble([D(0, id="a", name="f"), Finish("tool_calls"), Arguments(0, "{}")])
