"""What each recorded stream was generated to mean: which calls must run, and which must not.

An oracle independent of the lab: every entry is read from `scripts/make_streams.py` (the turn it
describes and the quirk it applies), never from the lab's own assembly, and typed in here. Ids
are the wire's (`call_id` for the Responses API); Ollama and Gemini calls without an id get the
id the lab documents it assigns at the boundary (`ollama-call-<n>`, `gemini-call-<n>`).
`tests/lab/test_expected_calls.py` holds the lab to it; `bench/assemblers.py` holds the official
SDK's accumulator and langchain-core to it as well.

Add one entry per new recording (path relative to data/streams). `runs` lists the calls
that must run, in index order; `not_run` the calls the stream holds that must never run (an
empty `runs` is "the turn runs nothing"); `why` says what the generator did, in one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STREAMS = Path(__file__).resolve().parent.parent / "data" / "streams"


@dataclass(frozen=True)
class Call:
    """A call that must run: exactly this id, name and arguments."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class NotRun:
    """A call the stream holds that must never run (its arguments may be no JSON at all)."""

    id: str | None
    name: str


@dataclass(frozen=True)
class Expected:
    runs: tuple[Call, ...] = ()
    not_run: tuple[NotRun, ...] = ()
    why: str = field(default="")


INC1, INC2, INC3 = ({"incident_id": f"INC-00{n}"} for n in (1, 2, 3))
CHECKOUT = {"service": "checkout"}
TIMEOUT = {"service": "checkout", "query": "timeout"}

# quirks/: the two lookups of make_streams.quirks() (seed 7), bent one way each
Q0, Q1 = "call_U8JZpDE0iGXlD6gNCFbaEPFj", "call_8Oool8DklZDOCj2ISaJiHkTj"
QUIRK_PAIR = (Call(Q0, "lookup_incident", INC1), Call(Q1, "lookup_incident", INC2))
QUIRK_PAIR_REFUSED = (NotRun(Q0, "lookup_incident"), NotRun(Q1, "lookup_incident"))
M0, M1, M2 = ("call_KasaoSe1Nyez9gLghPyAAX7l", "call_bEJywO6OsCbvx4ancC9VifsH",
              "call_p88XBJv0FHz7BdKjuVZfJLqC")  # make_streams.quirks_chat_more()


def tolerated(why: str) -> Expected:
    """A quirk of make_streams.quirks() that leaves both lookups known exactly."""
    return Expected(QUIRK_PAIR, why=why)


EXPECTED: dict[str, Expected] = {
    # --- OpenAI Chat Completions ---
    "openai-chat/one_call.sse": Expected(
        (Call("call_Ik2zwEQHfwcepYyNGfB51Ybm", "lookup_incident", INC1),), why="one call"),
    "openai-chat/parallel_calls.sse": Expected(
        (Call("call_9382DFFX1Kvzq2TQmNmClrKb", "lookup_incident", INC1),
         Call("call_3g8Xi7cgR5C3BXd7U6Yb54hK", "lookup_incident", INC2)), why="two calls"),
    "openai-chat/answer.sse": Expected(why="a text answer, no calls"),
    "openai-chat/parallel_calls_interleaved.jsonl": Expected(
        (Call("call_PliIX6meolEmA61eQjOMtei1", "lookup_incident", INC3),
         Call("call_3JOoJ37hYvAqxEKw9lCTxB03", "get_service_status", CHECKOUT),
         Call("call_64Yty6bZuzkc97I4XGCIfNQ9", "search_logs", TIMEOUT)),
        why="three calls whose fragments interleave; call 2 starts before call 1"),
    # --- OpenAI Responses: the call id is call_id, never the item id fc_... ---
    "openai-responses/one_call.sse": Expected(
        (Call("call_XRxL0GQN87B1pzQzRMKTSo3u", "lookup_incident", INC1),), why="one call"),
    "openai-responses/parallel_calls.sse": Expected(
        (Call("call_5KHXe3PYiGkPAuNaRL63xYKw", "lookup_incident", INC1),
         Call("call_oNL89sM995YTBXaK7JQEVT0m", "lookup_incident", INC2)), why="two calls"),
    "openai-responses/after_reasoning.jsonl": Expected(
        (Call("call_RfzMu3a6iirGMkjszuQqznrF", "lookup_incident", INC3),
         Call("call_p6Xf716Mgkps5zg6BoXPmbTW", "get_service_status", CHECKOUT),
         Call("call_AMxKBpVj5qnnTXYhYSIrfDLb", "search_logs", TIMEOUT)),
        why="three calls after a reasoning item at output_index 0"),
    "openai-responses/arguments_before_item.sse": Expected(
        (Call("call_ZZx6HQO35UWzQXzoohJKjqqR", "lookup_incident", INC1),
         Call("call_looXL3Gv3fgrMRcnNfzSgQGH", "lookup_incident", INC2)),
        why="two calls; two argument deltas of the second come before its output_item.added"),
    # --- Anthropic Messages ---
    "anthropic/one_call.sse": Expected(
        (Call("toolu_01U8JZpDE0iGXlD6gNCFbaEPFj", "lookup_incident", INC1),), why="one call"),
    "anthropic/parallel_calls.sse": Expected(
        (Call("toolu_01CFIPzgNZpBdfdYfkM51ZFfOw", "lookup_incident", INC1),
         Call("toolu_01e56YuHqQG0EYn1YGqDVPsFf5", "lookup_incident", INC2)),
        why="a text block, then two calls"),
    "anthropic/three_calls.jsonl": Expected(
        (Call("toolu_01dnXRIL3rAVgd5mFVj7nsCuYK", "lookup_incident", INC3),
         Call("toolu_01KKPDHIg37lExsYyv4G6SNrOu", "get_service_status", CHECKOUT),
         Call("toolu_01R6NZRVzCMt4A4aD5Y2fIBPbv", "search_logs", TIMEOUT)), why="three calls"),
    "anthropic/no_arguments.sse": Expected(
        (Call("toolu_019NAhvCK6PBD4zrJ2sXPHVdtW", "list_open_incidents", {}),
         Call("toolu_01ZQWO72N3WzUOT7ugaOkd1afF", "list_open_incidents", {})),
        why="a parameterless tool twice: one empty partial_json, then no input_json_delta"),
    # --- Ollama: no ids on the wire ---
    "ollama/one_call.jsonl": Expected(
        (Call("ollama-call-0", "lookup_incident", INC1),), why="one call"),
    "ollama/parallel_calls.jsonl": Expected(
        (Call("ollama-call-0", "lookup_incident", INC1),
         Call("ollama-call-1", "lookup_incident", INC2)), why="two calls in one line"),
    "ollama/calls_in_separate_lines.jsonl": Expected(
        (Call("ollama-call-0", "lookup_incident", INC3),
         Call("ollama-call-1", "get_service_status", CHECKOUT),
         Call("ollama-call-2", "search_logs", TIMEOUT)), why="three calls, one per line"),
    # --- Gemini: whole functionCall parts, ids optional ---
    "gemini/one_call.sse": Expected(
        (Call("gemini-call-0", "lookup_incident", INC1),), why="one call, no id"),
    "gemini/parallel_calls.sse": Expected(
        (Call("gemini-call-0", "lookup_incident", INC1),
         Call("gemini-call-1", "lookup_incident", INC2)), why="two same-name calls, no ids"),
    "gemini/calls_in_separate_events.sse": Expected(
        (Call("qsr6rz24", "lookup_incident", INC3),
         Call("2of5wjkb", "get_service_status", CHECKOUT),
         Call("qx4bouph", "search_logs", TIMEOUT)),
        why="text and a thought first, then three calls with ids, one per event"),
    # --- quirks/: OpenAI chat shapes reported by public trackers ---
    "quirks/index_missing.sse": tolerated("no index on any entry"),
    "quirks/index_null.sse": tolerated("index null on every entry"),
    "quirks/all_index_zero.sse": tolerated("both calls at index 0, distinct ids"),
    "quirks/sparse_index.sse": tolerated("indexes 1 and 2"),
    "quirks/index_string.sse": tolerated("indexes as strings"),
    "quirks/name_repeated.sse": tolerated("the full name in every entry"),
    "quirks/id_repeated.sse": tolerated("the id in every entry"),
    "quirks/id_empty_on_continuation.sse": tolerated("id \"\" or null on continuations"),
    "quirks/arguments_null_tail.sse": tolerated("a last entry with arguments null"),
    "quirks/arguments_object.jsonl": tolerated("arguments sent as a JSON object"),
    "quirks/finish_stop_with_calls.sse": tolerated("finish_reason stop after the calls"),
    "quirks/split_escape.sse": Expected(
        (Call(Q0, "search_logs", {"service": "checkout", "query": 'café "au lait"'}),),
        why="a \\u escape and a \\\" split across fragments"),
    "quirks/split_utf8.sse": Expected(
        not_run=(NotRun(Q0, "search_logs"),),
        why="each half of a split UTF-8 character sent as U+FFFD"),
    "quirks/id_changed.sse": Expected(
        not_run=QUIRK_PAIR_REFUSED, why="call 0's id changes in its second arguments fragment"),
    "quirks/duplicate_id.sse": Expected(
        not_run=(NotRun(Q0, "lookup_incident"), NotRun(Q0, "lookup_incident")),
        why="call 1 reuses call 0's id"),
    "quirks/truncated.sse": Expected(
        not_run=QUIRK_PAIR_REFUSED, why="cut before call 1's last fragments and the finish"),
    # quirks/ of make_streams.quirks_chat_more() (seed 21): the MIXED calls bent one way each
    "quirks/interleaved_fragments.sse": Expected(
        (Call(M0, "lookup_incident", INC3), Call(M1, "get_service_status", CHECKOUT),
         Call(M2, "search_logs", TIMEOUT)),
        why="three calls' fragments round-robin; index 0 goes on after 1 and 2 opened"),
    "quirks/arguments_before_name.sse": Expected(
        (Call(M0, "lookup_incident", INC3), Call(M1, "get_service_status", CHECKOUT)),
        why="each call's first delta has id and arguments, the name comes next"),
    "quirks/name_split.sse": Expected(
        (Call(M0, "lookup_incident", INC3), Call(M1, "get_service_status", CHECKOUT)),
        why="each name sent as its first 7 characters, then the rest"),
    "quirks/name_then_arguments.sse": Expected(
        (Call(M0, "lookup_incident", INC3), Call(M1, "get_service_status", CHECKOUT)),
        why="a name-only entry (no arguments key), then the whole arguments"),
    "quirks/index_drift.sse": Expected(
        (Call(M0, "lookup_incident", INC3),),
        why="one call; its k-th arguments fragment sent at index k"),
    "quirks/index_drift_several_calls.sse": Expected(
        not_run=(NotRun(M0, "lookup_incident"), NotRun(M1, "get_service_status"),
                 NotRun(None, "")),
        why="two calls; call 1's last fragment sent at index 2, which no call opened"),
    "quirks/call_repeated.sse": Expected(
        (Call(M0, "lookup_incident", INC3),),
        why="one call, sent whole again at indexes 1 and 2 with the same id"),
    "quirks/type_missing.sse": Expected(
        (Call(M0, "search_logs", TIMEOUT),), why="the opening entry has no type"),
    "quirks/no_arguments.sse": Expected(
        (Call(M1, "list_open_incidents", {}),), why="a parameterless call, no arguments at all"),
    "quirks/arguments_in_one_burst.sse": Expected(
        (Call(M0, "lookup_incident", INC3), Call(M1, "get_service_status", CHECKOUT),
         Call(M2, "search_logs", TIMEOUT)),
        why="three calls opened in one chunk, all arguments in the finish chunk"),
    "quirks/usage_chunk.sse": Expected(
        (Call("call_96IPBncLsHvp4Wy4FOR9DUmL", "lookup_incident", INC1),
         Call("call_t4Dk4BlQTaML2Hlh8ux98kDs", "lookup_incident", INC2)),
        why="a choices: [] usage chunk before the finish, a usage chunk with an empty choice "
            "after it"),
    "quirks/parallel_tool_calls_ignored.sse": Expected(
        (Call("functions.lookup_incident:0", "lookup_incident", INC1),
         Call("functions.lookup_incident:1", "lookup_incident", INC2)),
        why="two calls (Kimi-style ids) although one was asked for"),
    "quirks/identical_calls.sse": Expected(
        (Call("call_tY1lLNKMKqrFtwJztSu7xAcd", "lookup_incident", INC1),
         Call("call_BhK9fv2crTf8FrwQ1nKrU9TE", "lookup_incident", INC1)),
        why="the same lookup twice under two ids"),
    # make_streams.quirks_arguments(): argument texts bent by servers (seed 31)
    "quirks/cumulative_snapshots.sse": Expected(
        (Call("call_AeHwZJrCI8HiOtwIJvCqDIOi", "lookup_incident", INC1),
         Call("call_NlFHBx84ZVMNVZXm9PNuNalq", "lookup_incident", INC2)),
        why="each fragment repeats everything sent before it"),
    "quirks/arguments_repeated.sse": Expected(
        (Call("call_AeHwZJrCI8HiOtwIJvCqDIOi", "lookup_incident", INC1),
         Call("call_NlFHBx84ZVMNVZXm9PNuNalq", "lookup_incident", INC2)),
        why="each call's last fragment carries its tail and then the whole arguments again"),
    "quirks/packed_calls.sse": Expected(
        not_run=(NotRun("call_kKoO01Rep45i6hLp5n8gU9rh", "lookup_incident"),),
        why="two lookups' arguments packed into one call as {...}{...}"),
    "quirks/invalid_escape.sse": Expected(
        (Call("call_AeHwZJrCI8HiOtwIJvCqDIOi", "lookup_incident", INC1),),
        (NotRun("call_hWlB1O5B4YX98Eb9TVGlg0JG", "search_logs"),),
        why="call 1's query is a Windows path with single backslashes"),
    "quirks/raw_control_character.sse": Expected(
        (Call("call_AeHwZJrCI8HiOtwIJvCqDIOi", "lookup_incident", INC1),),
        (NotRun("call_jVwIvV3JSb9QkDvhw37zRpXz", "search_logs"),),
        why="call 1's query holds a raw newline"),
    "quirks/call_in_text.sse": Expected(
        (Call("call_AeHwZJrCI8HiOtwIJvCqDIOi", "lookup_incident", INC1),),
        why="one call; the second left in the content as a <tool_call> tag, which never runs"),
    # --- token_limit/: the second call cut by the token limit ---
    "token_limit/finish_length.sse": Expected(
        (Call("call_c3j27xdcg2lMLzgeonyLGcTJ", "lookup_incident", INC1),),
        (NotRun("call_oCmZ9cpvnpKnA1hEDCM4PmBx", "lookup_incident"),),
        why="finish_reason length; call 1's arguments cut"),
    "token_limit/finish_tool_calls.sse": Expected(
        (Call("call_c3j27xdcg2lMLzgeonyLGcTJ", "lookup_incident", INC1),),
        (NotRun("call_oCmZ9cpvnpKnA1hEDCM4PmBx", "lookup_incident"),),
        why="finish_reason tool_calls although call 1's arguments are cut"),
    # --- make_streams.quirks_findings(): finishes, Gemini's lost call, Responses, argument values
    "quirks/finish_content_filter.sse": Expected(
        not_run=(NotRun("call_YVOK56Yk5sSjRY2uwkAxPq1B", "lookup_incident"),
                 NotRun("call_KQpsnlDHylCb3S1vNEuXueIj", "lookup_incident")),
        why="two lookups, finish_reason content_filter"),
    "anthropic/stop_refusal.sse": Expected(
        not_run=(NotRun("toolu_01POIvGrv5iFlbCBFNOgmBjMtp", "lookup_incident"),),
        why="a text block and one lookup, stop_reason refusal"),
    "gemini/malformed_function_call.sse": Expected(
        why="text, then finishReason MALFORMED_FUNCTION_CALL and no functionCall part"),
    "openai-responses/arguments_mismatch.sse": Expected(
        (Call("call_TsoYlZxsqUWEV1SnKHgElGR9", "lookup_incident", INC1),),
        (NotRun("call_btCvtsv2pzVX1eodlziJOedy", "lookup_incident"),),
        why="call 1's function_call_arguments.done carries call 0's arguments"),
    "openai-responses/item_id_reused.sse": Expected(
        not_run=(NotRun("call_C5nEIRy5vJN2wtbEnaJsD7CL", "lookup_incident"),
                 NotRun("call_unzspQlqDf6X6NWJoyBPftnb", "lookup_incident")),
        why="two function_call items with one item id"),
    "quirks/duplicate_key.sse": Expected(
        (Call("call_4EZCll34OohJli8zCBEyUo0D", "lookup_incident", INC1),),
        (NotRun("call_hV9t7wFZteXJed1EdvsinHbO", "search_logs"),),
        why="call 1's arguments hold the key query twice"),
    "quirks/lone_surrogate.sse": Expected(
        (Call("call_WEbjdkVQgYZnCyaqB9GAQ89y", "lookup_incident", INC1),),
        (NotRun("call_5UkbOPhgWc9PCjXtsWmVjkwM", "search_logs"),),
        why="call 1's query ends in \\ud83d, half of an emoji's escape pair"),
}


def recordings() -> list[str]:
    """Every recorded stream, as its path relative to data/streams."""
    return sorted(p.relative_to(STREAMS).as_posix() for p in STREAMS.rglob("*")
                  if p.is_file() and p.suffix in (".sse", ".jsonl"))
