"""Chat Completions shapes of real OpenAI-compatible servers, each payload typed from a public
recording or report (cited above its test; docs/stream-quirks-sources.md has the rows): the calls
the provider meant, the note that names the shape, and the limits of each tolerance."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from keel_lab.providers._diagnosis import Diagnosis, diagnose, diagnose_file
from keel_lab.providers._formats import DONE

pytestmark = pytest.mark.ch7

Record = dict[str, Any]
W = {"location": "San Francisco"}


def calls(d: Diagnosis) -> list[tuple[int, str | None, str, Any, bool]]:
    return [(c.index, c.id, c.name, c.input, c.executable) for c in d.calls]


def notes(d: Diagnosis) -> list[tuple[int | None, str, str]]:
    return [(x.index, x.quirk, x.action) for x in d.diagnostics]


def chunk(delta: Record, finish: str | None = None, **choice: Any) -> Record:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, **choice}]}


# --- Writer (palmyra) ----------------------------------------------------------------------
# writer/writer-framework tests/backend/test_ai.py (commit 0161b6bd7a62), the streamed
# tool-call fixture of palmyra-x-004: continuations carry id, type and function.name as null,
# a new top-level id on every chunk, `graph_data` in every delta, a "\n" of text between calls.

def _writer(n: int, tool_calls: list[Record] | None, content: str | None = None,
            finish: str | None = None) -> Record:
    return {"id": f"writer-chunk-{n}", "object": "chat.completion.chunk", "choices": [{
        "index": 0, "finish_reason": finish, "delta": {
            "content": content, "role": "assistant", "tool_calls": tool_calls,
            "graph_data": {"sources": None, "status": None, "subqueries": None},
            "refusal": None}, "logprobs": None}],
        "created": 1731919162, "model": "palmyra-x-004", "usage": None,
        "system_fingerprint": "v1", "service_tier": None}


def _wcall(index: int, id: str | None = None, arguments: str | None = None) -> list[Record]:
    return [{"index": index, "id": id, "type": "function" if id else None,
             "function": {"name": "test_function" if id else None, "arguments": arguments}}]


W1, W2 = "chatcmpl-tool-1ff1df7d81074e5995ec77af2911f7c1", \
    "chatcmpl-tool-22538c865437437e8ace8076a5755749"
WRITER = [_writer(0, None, ""), _writer(1, _wcall(0, W1)),
          _writer(2, _wcall(0, arguments='{"arg1": 5')), _writer(3, _wcall(0, arguments="")),
          _writer(4, _wcall(0, arguments="}")), _writer(5, None, "\n"),
          _writer(6, _wcall(1, W2)), _writer(7, _wcall(1, arguments='{"arg1": 7')),
          _writer(8, _wcall(1, arguments="")), _writer(9, _wcall(1, arguments="}"), None,
                                                       "tool_calls")]
WRITER_CALLS = [(0, W1, "test_function", {"arg1": 5}, True),
                (1, W2, "test_function", {"arg1": 7}, True)]


def test_writer_null_fields_on_continuations_are_nothing_new():
    d = diagnose(WRITER, "openai-chat")
    assert calls(d) == WRITER_CALLS and d.ok and d.text == "\n"
    assert notes(d) == [(None, "unread_delta_field", "tolerated")]  # graph_data, said once
    assert "graph_data" in d.diagnostics[0].message


def test_writer_delta_repeated_under_message_is_read_once():
    """writer/writer-python src/writerai/types/chat_completion_chunk.py (commit 2a1d32a6):
    a streamed choice has `message` beside `delta`, "deprecated for streaming"; read both and
    every argument fragment and every text would count twice."""
    records = copy.deepcopy(WRITER)
    for r in records:
        choice = r["choices"][0]
        choice["message"] = copy.deepcopy(choice["delta"])
    d = diagnose(records, "openai-chat")
    assert calls(d) == WRITER_CALLS and d.ok and d.text == "\n"
    assert (None, "message_in_chunk", "tolerated") in notes(d)
    assert [q for _, q, _ in notes(d)].count("message_in_chunk") == 1


# --- Azure OpenAI --------------------------------------------------------------------------
# vercel/ai packages/openai/src/chat/__fixtures__/azure-model-router.1.chunks.txt (commit
# ed857f50f112): the first chunk has `choices: []`, an empty id and model, and
# `prompt_filter_results`; every later choice carries `content_filter_results`. The annotation
# chunk without a delta: microsoft/autogen#6465.

SAFE = {k: {"filtered": False, "severity": "safe"} for k in
        ("hate", "self_harm", "sexual", "violence")}
AZURE_FIRST = {"choices": [], "created": 0, "id": "", "model": "", "object": "",
               "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {
                   **SAFE, "jailbreak": {"filtered": False, "detected": False}}}]}


def _azure(delta: Record, finish: str | None = None, filters: Record | None = None) -> Record:
    return {"choices": [{"content_filter_results": SAFE if filters is None else filters,
                         "delta": delta, "finish_reason": finish, "index": 0,
                         "logprobs": None}],
            "created": 1762317021, "id": "chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt",
            "model": "gpt-5-nano-2025-08-07", "obfuscation": "D3WbtIxo1Q2j1Q",
            "object": "chat.completion.chunk", "system_fingerprint": None, "usage": None}


AZURE = [AZURE_FIRST,
         _azure({"content": "", "refusal": None, "role": "assistant"}, filters={}),
         _azure({"tool_calls": [{"index": 0, "id": "call_az1", "type": "function", "function": {
             "name": "weather", "arguments": ""}}]}),
         _azure({"tool_calls": [{"index": 0, "function": {"arguments": json.dumps(W)}}]}),
         _azure({}, "tool_calls", filters={}),
         {**_azure({}), "choices": [], "usage": {"completion_tokens": 78, "prompt_tokens": 15,
                                                 "total_tokens": 93}}]


def test_azure_prompt_filter_chunk_and_content_filter_results():
    d = diagnose(AZURE, "openai-chat")
    assert calls(d) == [(0, "call_az1", "weather", W, True)] and d.ok
    assert notes(d) == [(None, "prompt_filter_chunk", "tolerated"),
                        (None, "usage_chunk", "tolerated")]


def test_azure_annotation_chunk_without_a_delta_changes_nothing():
    annotation = {"id": "", "object": "", "created": 0, "model": "", "usage": None, "choices": [{
        "index": 0, "finish_reason": None, "content_filter_results": SAFE,
        "content_filter_offsets": {"check_offset": 44, "start_offset": 44, "end_offset": 198}}]}
    d = diagnose([*AZURE[:4], annotation, *AZURE[4:]], "openai-chat")
    assert calls(d) == [(0, "call_az1", "weather", W, True)] and d.ok


def test_a_filtered_azure_turn_runs_nothing():
    """A filtered turn says so in its finish reason, which refuses its calls."""
    records = [*AZURE[:4], _azure({}, "content_filter")]
    d = diagnose(records, "openai-chat")
    assert not d.ok and not d.calls[0].executable
    assert (None, "unusual_finish", "refused") in notes(d)


# --- OpenRouter ----------------------------------------------------------------------------
# SSE comments `: OPENROUTER PROCESSING` before the first chunk and extra fields `provider`,
# `native_finish_reason`: openai/openai-go#227 and pydantic/pydantic-ai
# tests/models/cassettes/test_openrouter/test_openrouter_advisor_tool_stream.yaml (commit
# 4fda38988f29), which also sends its finish chunk twice, the second with usage; `reasoning`
# and `reasoning_details`: test_openrouter_stream_error.yaml, where an `error` arrives inside a
# chunk mid-stream.

def _openrouter(delta: Record, finish: str | None = None, **extra: Any) -> Record:
    return {"id": "gen-1784878121-HxA00pxmV0n2x1hZAuok", "object": "chat.completion.chunk",
            "created": 1784878121, "model": "openai/gpt-4o-mini", "provider": "OpenAI",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish,
                         "native_finish_reason": finish}], **extra}


OPENROUTER = [
    _openrouter({"role": "assistant", "content": "", "reasoning": "We need",
                 "reasoning_details": [{"type": "reasoning.text", "text": "We need",
                                        "index": 0, "format": None}]}),
    _openrouter({"role": "assistant", "content": None, "tool_calls": [{
        "index": 0, "id": "call_or1", "type": "function", "function": {
            "name": "weather", "arguments": '{"location":'}}]}),
    _openrouter({"role": "assistant", "content": None, "reasoning": None, "tool_calls": [{
        "index": 0, "function": {"arguments": ' "San Francisco"}'}}]}),
    _openrouter({"role": "assistant", "content": ""}, "tool_calls"),
    _openrouter({"role": "assistant", "content": ""}, "tool_calls", usage={
        "prompt_tokens": 888, "completion_tokens": 74, "total_tokens": 962, "cost": 0.0145}),
]


def _sse(records: list[Record], comments: int = 0) -> str:
    head = ": OPENROUTER PROCESSING\n\n" * comments
    return head + "".join(f"data: {json.dumps(r)}\n\n" for r in records) + "data: [DONE]\n\n"


def test_openrouter_comment_lines_are_skipped(tmp_path: Path):
    """SSE comments are no part of any event: the stream reads as it does without them."""
    plain, commented = tmp_path / "plain.sse", tmp_path / "commented.sse"
    plain.write_text(_sse(OPENROUTER), encoding="utf-8")
    commented.write_text(_sse(OPENROUTER, comments=30), encoding="utf-8")
    a, b = diagnose_file(plain), diagnose_file(commented)
    assert calls(a) == calls(b) == [(0, "call_or1", "weather", W, True)]
    assert notes(a) == notes(b) and a.ok and b.ok


def test_openrouter_extra_fields_and_the_repeated_finish():
    d = diagnose([*OPENROUTER, DONE], "openai-chat")
    assert calls(d) == [(0, "call_or1", "weather", W, True)] and d.ok
    assert d.finish_reason == "tool_calls"
    assert notes(d) == [(None, "unread_delta_field", "tolerated")]
    assert "reasoning, reasoning_details" in d.diagnostics[0].message


def test_openrouter_error_inside_a_chunk_stops_the_turn():
    error = _openrouter({"role": "assistant", "content": ""},
                        error={"code": 400, "message": "Token limit reached"})
    d = diagnose([*OPENROUTER[:2], error, DONE], "openai-chat")
    assert not d.ok and not d.calls[0].executable
    assert notes(d)[-1] == (None, "server_error", "refused")


# --- Mistral -------------------------------------------------------------------------------
# vercel/ai packages/mistral/src/__fixtures__/mistral-tool-call.chunks.txt (commit ed857f50f112):
# the call whole in one chunk with its id, no `index`, no `type`, and the finish reason in the
# same chunk. Two calls in one chunk, each with its id and no index: the shape that the
# mistralai SDK reads as index 0 twice, merging them (comet-ml/opik#8363).

def _mistral(tool_calls: list[Record]) -> list[Record]:
    head = {"id": "b3999b8c93e04e11bcbff7bcab829667", "object": "chat.completion.chunk",
            "created": 1769088854, "model": "mistral-small-latest"}
    return [{**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                  "finish_reason": None, "logprobs": None}]},
            {**head, "choices": [{"index": 0, "delta": {"content": None,
                                                        "tool_calls": tool_calls},
                                  "finish_reason": "tool_calls", "logprobs": None}],
             "usage": {"prompt_tokens": 124, "total_tokens": 146, "completion_tokens": 22}}]


def _mcall(id: str, location: str) -> Record:
    return {"id": id, "function": {"name": "weather",
                                   "arguments": json.dumps({"location": location})}}


def test_mistral_call_without_index_in_the_finishing_chunk():
    d = diagnose(_mistral([_mcall("gSIMJiOkT", "San Francisco")]), "openai-chat")
    assert calls(d) == [(0, "gSIMJiOkT", "weather", W, True)] and d.ok
    assert notes(d) == [(0, "index_missing", "tolerated"), (0, "type_missing", "tolerated")]


def test_mistral_parallel_calls_without_index_each_run():
    d = diagnose(_mistral([_mcall("gSIMJiOkT", "San Francisco"), _mcall("pQ7rT2xYz", "Paris"),
                           _mcall("Zk3mN8vBc", "Tokyo")]), "openai-chat")
    assert calls(d) == [(0, "gSIMJiOkT", "weather", W, True),
                        (1, "pQ7rT2xYz", "weather", {"location": "Paris"}, True),
                        (2, "Zk3mN8vBc", "weather", {"location": "Tokyo"}, True)]
    assert d.ok and d.finish_reason == "tool_calls"


# --- Kimi K2 (Moonshot) --------------------------------------------------------------------
# The whole id and name in every chunk of a call (the repeat of ggml-org/llama.cpp#13774 and
# SillyTavern/SillyTavern#5948), and a turn that ends with data: [DONE] and no finish reason
# (Kimi K2.5: OpenRouterTeam/ai-sdk-provider#420; the same end from other servers:
# openclaw/openclaw#98575, waybarrios/vllm-mlx#672).

def _kimi(index: int, id: str, name: str, arguments: str) -> Record:
    return chunk({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {
        "name": name, "arguments": arguments}}]})


K1, K2 = "functions.get_weather:0", "functions.get_time:1"
KIMI = [chunk({"role": "assistant", "content": ""}),
        _kimi(0, K1, "get_weather", ""), _kimi(0, K1, "get_weather", '{"location": '),
        _kimi(0, K1, "get_weather", '"San Francisco"}'),
        _kimi(1, K2, "get_time", ""), _kimi(1, K2, "get_time", '{"tz": "PST"}')]


def test_kimi_repeated_id_and_name_and_done_without_finish():
    d = diagnose([*KIMI, DONE], "openai-chat")
    assert calls(d) == [(0, K1, "get_weather", W, True),
                        (1, K2, "get_time", {"tz": "PST"}, True)]
    assert d.ok and d.finish_reason == "tool_calls"
    assert notes(d) == [(0, "name_repeated", "tolerated"), (1, "name_repeated", "tolerated"),
                        (None, "done_without_finish", "tolerated")]


def test_done_without_finish_still_refuses_a_cut_call():
    """[DONE] closes the turn, not a call's JSON: a call cut off is refused, its sibling runs."""
    cut = [*KIMI[:3], *KIMI[4:], DONE]  # the second half of get_weather's arguments lost
    d = diagnose(cut, "openai-chat")
    assert calls(d)[1] == (1, K2, "get_time", {"tz": "PST"}, True)
    assert not d.calls[0].executable and not d.ok
    assert (0, "arguments_cut", "refused") in notes(d)


def test_without_done_nor_finish_nothing_runs():
    d = diagnose(KIMI, "openai-chat")
    assert not d.ok and d.finish_reason is None
    assert (None, "truncated", "refused") in notes(d)
    assert "done_without_finish" not in [q for _, q, _ in notes(d)]


def test_done_without_finish_closes_a_text_turn_as_stop():
    d = diagnose([chunk({"role": "assistant", "content": "Hello"}), DONE], "openai-chat")
    assert d.ok and d.finish_reason == "stop" and d.text == "Hello"
    assert notes(d) == [(None, "done_without_finish", "tolerated")]


def test_a_finish_before_done_is_no_quirk():
    d = diagnose([*KIMI, chunk({}, "tool_calls"), DONE], "openai-chat")
    assert d.ok and "done_without_finish" not in [q for _, q, _ in notes(d)]


# --- DeepSeek, Groq, xAI, Qwen (DashScope) -------------------------------------------------
# vercel/ai fixtures (commit ed857f50f112): packages/deepseek/src/chat/__fixtures__/
# deepseek-tool-call.chunks.txt (reasoning_content first, then the call in 11 fragments),
# packages/groq/src/__fixtures__/groq-tool-call.chunks.txt (the whole call in one chunk,
# `x_groq`), packages/xai/src/__fixtures__/xai-tool-call.chunks.txt (no finish_reason key
# before the end, a usage chunk), packages/alibaba/src/__fixtures__/alibaba-tool-call.chunks.txt
# (`id: ""` on continuations, an empty trailing fragment without a finish, then the finish).

def _call(id: str | None, name: str | None, arguments: str, **extra: Any) -> Record:
    fn = {"arguments": arguments} if name is None else {"name": name, "arguments": arguments}
    return {"index": 0, **({"id": id, "type": "function"} if id is not None else {}),
            "function": fn, **extra}


DEEPSEEK = [chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
            chunk({"content": None, "reasoning_content": '".'}),
            chunk({"tool_calls": [_call("call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather", "")]}),
            *[chunk({"tool_calls": [_call(None, None, part)]}) for part in
              ["{", '"', "location", '"', ": ", '"', "San", " Francisco", '"', "}"]],
            chunk({"content": "", "reasoning_content": None}, "tool_calls")]
GROQ = [chunk({"role": "assistant", "content": None}),
        chunk({"tool_calls": [_call("tk85n1k4m", "weather", "{}")]}),
        {**chunk({}, "tool_calls"), "x_groq": {"id": "req_01kh52nj5yfcat8hrmvrk2j2hj"}}]
XAI = [{"choices": [{"index": 0, "delta": {"reasoning_content": "First", "role": "assistant"}}]},
       {"choices": [{"index": 0, "delta": {"tool_calls": [_call(
           "call_55117580", "weather", '{"location":"San Francisco"}')]}}]},
       {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
       {"choices": [], "usage": {"prompt_tokens": 291, "completion_tokens": 26}}]
QWEN = [chunk({"content": None, "tool_calls": [_call("call_eee11723464a4b9eb8cee71d", "weather",
                                                     "")], "role": "assistant"}),
        chunk({"content": None, "tool_calls": [_call("", None, '{"location": "San Francisco')]}),
        chunk({"content": None, "tool_calls": [_call("", None, '"}')]}),
        {"choices": [{"delta": {"tool_calls": [_call("", None, "")]}, "index": 0}]},
        chunk({}, "tool_calls"),
        {"choices": [], "usage": {"prompt_tokens": 295, "completion_tokens": 22}}]


@pytest.mark.parametrize(("records", "expected", "quirks"), [
    (DEEPSEEK, ("call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", W), ["unread_delta_field"]),
    (GROQ, ("tk85n1k4m", {}), []),
    (XAI, ("call_55117580", W), ["unread_delta_field", "usage_chunk"]),
    (QWEN, ("call_eee11723464a4b9eb8cee71d", W), ["usage_chunk"]),
], ids=["deepseek", "groq", "xai", "qwen"])
def test_compatible_servers_give_their_call(records, expected, quirks):
    d = diagnose(records, "openai-chat")
    assert calls(d) == [(0, expected[0], "weather", expected[1], True)] and d.ok
    assert [q for _, q, _ in notes(d)] == quirks


# --- fields nobody documents ---------------------------------------------------------------

def test_unread_delta_fields_are_said_once_per_stream():
    records = [chunk({"role": "assistant", "reasoning_content": "a"}),
               chunk({"channel": "analysis", "reasoning": "b"}),
               chunk({"tool_calls": [_call("c1", "f", "{}")], "audio": {"id": "x"}}),
               chunk({}, "tool_calls")]
    d = diagnose(records, "openai-chat")
    assert d.ok and notes(d) == [(None, "unread_delta_field", "tolerated")]
    assert "(reasoning_content; said for the first such delta)" in d.diagnostics[0].message


def test_null_unread_fields_and_unknown_chunk_fields_are_no_quirk():
    records = [{**chunk({"tool_calls": [_call("c1", "f", "{}")], "reasoning": None,
                         "function_call": None}, obfuscation="x", stop_reason=None),
                "x_vendor": {"anything": [1, 2]}, "provider": "Somewhere"},
               chunk({}, "tool_calls", native_finish_reason="STOP")]
    d = diagnose(records, "openai-chat")
    assert d.ok and notes(d) == []


# --- a choice index that counts the chunks (Foundry Local) ----------------------------------
# microsoft/foundry-local#263 (v0.7.117, qwen2.5-1.5b-instruct-generic-gpu:3, n=1): the one
# choice's `index` is 0 in the first chunk, 1 in the next, and so on; each choice repeats its
# delta under `message`; huggingface/text-generation-inference#1648 fixed the same counter in TGI.
# Before, every chunk after the first was read as another choice and its text was lost.

def _foundry(n: int, content: str | None, finish: str | None = None) -> Record:
    said = {"role": "assistant", "content": content, "name": None, "tool_call_id": None,
            "function_call": None, "tool_calls": []}
    return {"model": "qwen2.5-1.5b-instruct-generic-gpu:3", "choices": [
        {"delta": said, "message": said, "index": n, "finish_reason": finish,
         "finish_details": None, "logprobs": None}], "usage": None, "id": "chat.id.1",
        "IsDelta": False, "Successful": True, "object": "chat.completion.chunk"}


FOUNDRY = [_foundry(0, "Wh"), _foundry(1, "isper"), _foundry(2, "ing"),
           _foundry(3, " winds", "stop"), DONE]


def test_a_choice_index_that_rises_with_every_chunk_keeps_the_text():
    d = diagnose(FOUNDRY, "openai-chat")
    assert d.ok and d.text == "Whispering winds" and d.finish_reason == "stop"
    assert ("choice_index_rising", "tolerated") in [(q, a) for _, q, a in notes(d)]


def test_several_choices_are_not_a_rising_index():
    """n=2: each index comes back, so only choice 0 is read, as before."""
    two = [_foundry(0, "A"), _foundry(1, "B"), _foundry(0, "C"), _foundry(1, "D"),
           _foundry(0, None, "stop"), _foundry(1, None, "stop")]
    d = diagnose(two, "openai-chat")
    assert d.text == "AC" and "choice_index_rising" not in [q for _, q, _ in notes(d)]
