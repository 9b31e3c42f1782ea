"""Write the generated streams under data/streams/ from one description of each turn.

The streams follow the providers' documented wire formats; the quirk streams reproduce shapes
reported in public bug trackers (docs/stream-quirks-sources.md). Generated, not hand-typed,
so every file is consistent and can be rebuilt: `.venv/bin/python scripts/make_streams.py`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "data" / "streams"
ZH_ANSWER = OUT.parent / "zh" / "streams" / "openai-chat" / "answer.sse"
CREATED = 1764460800  # 2025-11-30T00:00:00Z, fixed so the files never change
LOOKUPS = [("lookup_incident", {"incident_id": "INC-001"}),
           ("lookup_incident", {"incident_id": "INC-002"})]
MIXED = [("lookup_incident", {"incident_id": "INC-003"}),
         ("get_service_status", {"service": "checkout"}),
         ("search_logs", {"service": "checkout", "query": "timeout"})]

Record = dict[str, Any]


def chunks(text: str, rng: random.Random, low: int = 3, high: int = 9) -> list[str]:
    out, i = [], 0
    while i < len(text):
        n = rng.randint(low, high)
        out.append(text[i:i + n])
        i += n
    return out


def call_id(prefix: str, n: int, rng: random.Random, length: int = 24) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return prefix + "".join(rng.choice(alphabet) for _ in range(length))


def sse(records: list[Record], named: bool = False, done: bool = False) -> str:
    parts = [(f"event: {r['type']}\n" if named else "")
             + f"data: {json.dumps(r, separators=(',', ':'))}\n\n" for r in records]
    return "".join(parts) + ("data: [DONE]\n\n" if done else "")


def jsonl(records: list[Record]) -> str:
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)


# --- OpenAI Chat Completions ----------------------------------------------------------------

def chat_chunk(delta: Record, finish: str | None = None) -> Record:
    return {"id": "chatcmpl-keel0001", "object": "chat.completion.chunk", "created": CREATED,
            "model": "gpt-4o-mini-2024-07-18", "system_fingerprint": "fp_keel01",
            "choices": [{"index": 0, "delta": delta, "logprobs": None,
                         "finish_reason": finish}]}


def chat_entries(calls: list[tuple[str, Record]], seed: int) -> list[list[Record]]:
    """Per call: its tool_calls entries, first with id and name, then argument fragments."""
    rng = random.Random(seed)
    out = []
    for i, (name, args) in enumerate(calls):
        entries = [{"index": i, "id": call_id("call_", i, rng), "type": "function",
                    "function": {"name": name, "arguments": ""}}]
        entries += [{"index": i, "function": {"arguments": a}}
                    for a in chunks(json.dumps(args), rng)]
        out.append(entries)
    return out


def chat_stream(per_call: list[list[Record]], finish: str = "tool_calls",
                interleave: bool = False, seed: int = 0) -> list[Record]:
    order: list[Record] = []
    if interleave:
        rng, queues = random.Random(seed), [list(e) for e in per_call]
        while any(queues):
            q = rng.choice([q for q in queues if q])
            order.append(q.pop(0))
    else:
        order = [e for entries in per_call for e in entries]
    records = [chat_chunk({"role": "assistant", "content": None, "refusal": None,
                           "tool_calls": [order[0]]})]
    records += [chat_chunk({"tool_calls": [e]}) for e in order[1:]]
    return [*records, chat_chunk({}, finish)]


def chat_answer(text: str, seed: int) -> list[Record]:
    """A final turn: the answer as content deltas, finish reason "stop"."""
    pieces = chunks(text, random.Random(seed), 2, 7)
    records = [chat_chunk({"role": "assistant", "content": "", "refusal": None})]
    records += [chat_chunk({"content": p}) for p in pieces]
    return [*records, chat_chunk({}, "stop")]


def mutate(per_call: list[list[Record]], fn: Callable[[int, int, Record], Record | None]
           ) -> list[list[Record]]:
    """Apply fn(call, fragment number, entry) to every entry; None drops the entry."""
    out = []
    for c, entries in enumerate(per_call):
        kept = [fn(c, k, json.loads(json.dumps(e))) for k, e in enumerate(entries)]
        out.append([e for e in kept if e is not None])
    return out


def quirks() -> dict[str, str]:
    base = chat_entries(LOOKUPS, seed=7)
    ids = [e[0]["id"] for e in base]

    def drop_index(c: int, k: int, e: Record) -> Record:
        e.pop("index")
        return e

    def null_index(c: int, k: int, e: Record) -> Record:
        e["index"] = None
        return e

    def all_zero(c: int, k: int, e: Record) -> Record:
        e["index"] = 0
        return e

    def shift(c: int, k: int, e: Record) -> Record:
        e["index"] += 1
        return e

    def as_string(c: int, k: int, e: Record) -> Record:
        e["index"] = str(e["index"])
        return e

    def repeat_name(c: int, k: int, e: Record) -> Record:
        e["function"]["name"] = LOOKUPS[c][0]
        return e

    def repeat_id(c: int, k: int, e: Record) -> Record:
        e["id"], e["type"] = ids[c], "function"
        return e

    def empty_ids(c: int, k: int, e: Record) -> Record:
        if k:
            e["id"] = "" if k % 2 else None
            e["function"]["name"] = None
        return e

    def change_id(c: int, k: int, e: Record) -> Record:
        if c == 0 and k == 2:
            e["id"] = "call_changedMidway0000000000"
        return e

    def same_id(c: int, k: int, e: Record) -> Record:
        if c == 1 and k == 0:
            e["id"] = ids[0]
        return e

    def with_null_tail(entries: list[list[Record]]) -> list[list[Record]]:
        return [[*e, {"index": c, "function": {"arguments": None}}]
                for c, e in enumerate(entries)]

    def object_arguments() -> list[list[Record]]:
        return [[{"index": i, "id": ids[i], "type": "function",
                  "function": {"name": n, "arguments": a}}] for i, (n, a) in enumerate(LOOKUPS)]

    cafe = [[{"index": 0, "id": ids[0], "type": "function",
              "function": {"name": "search_logs", "arguments": ""}},
             {"index": 0, "function": {"arguments": '{"service": "checkout", "query": "caf'}},
             {"index": 0, "function": {"arguments": '\ufffd\ufffd"}'}}]]
    escape = [[{"index": 0, "id": ids[0], "type": "function",
                "function": {"name": "search_logs", "arguments": ""}},
               {"index": 0, "function": {"arguments": '{"service": "checkout", "query": "caf\\u'}},
               {"index": 0, "function": {"arguments": '00e9 \\"au'}},
               {"index": 0, "function": {"arguments": ' lait\\""}'}}]]
    cut = chat_stream(base)[:-3]
    return {
        "index_missing": sse(chat_stream(mutate(base, drop_index)), done=True),
        "index_null": sse(chat_stream(mutate(base, null_index)), done=True),
        "all_index_zero": sse(chat_stream(mutate(base, all_zero)), done=True),
        "sparse_index": sse(chat_stream(mutate(base, shift)), done=True),
        "index_string": sse(chat_stream(mutate(base, as_string)), done=True),
        "name_repeated": sse(chat_stream(mutate(base, repeat_name)), done=True),
        "id_repeated": sse(chat_stream(mutate(base, repeat_id)), done=True),
        "id_empty_on_continuation": sse(chat_stream(mutate(base, empty_ids)), done=True),
        "id_changed": sse(chat_stream(mutate(base, change_id)), done=True),
        "arguments_null_tail": sse(chat_stream(with_null_tail(base)), done=True),
        "arguments_object": jsonl(chat_stream(object_arguments())),
        "finish_stop_with_calls": sse(chat_stream(base, finish="stop"), done=True),
        "split_utf8": sse(chat_stream(cafe), done=True),
        "split_escape": sse(chat_stream(escape), done=True),
        "duplicate_id": sse(chat_stream(mutate(base, same_id)), done=True),
        "truncated": sse(cut),
    }


def token_limit() -> dict[str, str]:
    """A turn cut by the token limit in the middle of its second call's arguments: OpenAI
    documents finish_reason "length" for it; some servers send "tool_calls" all the same
    (vllm-project/vllm#53269), so only the arguments that do not parse show the cut."""
    base = chat_entries(LOOKUPS, seed=11)
    cut = [base[0], base[1][:-1]]
    return {"finish_length": sse(chat_stream(cut, finish="length"), done=True),
            "finish_tool_calls": sse(chat_stream(cut), done=True)}


def quirks_arguments() -> dict[str, str]:
    """Argument texts bent by servers (docs/stream-quirks-sources.md): snapshots
    instead of deltas, the whole arguments again at the end, calls packed into one, escapes
    and raw newlines JSON does not allow, and a second call left in the content as text."""
    base = chat_entries(LOOKUPS, seed=31)

    def snapshot(c: int, k: int, e: Record) -> Record:  # DeepSeek, Qianfan: everything so far
        if k:
            e["function"]["arguments"] = "".join(
                x["function"]["arguments"] for x in base[c][1:k + 1])
        return e

    def flush(entries: list[list[Record]]) -> list[list[Record]]:  # vllm xlam: the last delta
        out = json.loads(json.dumps(entries))  # carries the whole arguments once more
        for c, e in enumerate(out):
            e[-1]["function"]["arguments"] += json.dumps(LOOKUPS[c][1])
        return out

    def one_call(c: int, name: str, text: str, seed: int) -> list[Record]:
        rng = random.Random(seed)
        return [{"index": c, "id": call_id("call_", c, rng), "type": "function",
                 "function": {"name": name, "arguments": ""}},
                *({"index": c, "function": {"arguments": a}} for a in chunks(text, rng))]

    both = json.dumps(LOOKUPS[0][1]) + json.dumps(LOOKUPS[1][1])  # Gemini via OpenAI-compat
    windows = '{"service": "checkout", "query": "C:\\Deploy\\checkout.log"}'
    newline = '{"service": "checkout", "query": "timeout\nretry"}'
    leaked = chat_stream([base[0]])
    text = ('<tool_call>\n{"name": "lookup_incident", "arguments": {"incident_id": "INC-002"}}'
            "\n</tool_call>")
    leaked[-1:-1] = [chat_chunk({"content": p}) for p in chunks(text, random.Random(32), 4, 12)]
    return {
        "cumulative_snapshots": sse(chat_stream(mutate(base, snapshot)), done=True),
        "arguments_repeated": sse(chat_stream(flush(base)), done=True),
        "packed_calls": sse(chat_stream([one_call(0, "lookup_incident", both, 33)]), done=True),
        "invalid_escape": sse(chat_stream([base[0], one_call(1, "search_logs", windows, 34)]),
                              done=True),
        "raw_control_character": sse(chat_stream(
            [base[0], one_call(1, "search_logs", newline, 35)]), done=True),
        "call_in_text": sse(leaked, done=True),
    }


# --- OpenAI Responses -----------------------------------------------------------------------

def responses(calls: list[tuple[str, Record]], seed: int, reasoning: bool = False
              ) -> list[Record]:
    rng = random.Random(seed)
    seq = iter(range(10_000))
    resp = {"id": "resp_keel0001", "object": "response", "created_at": CREATED,
            "status": "in_progress", "model": "gpt-4.1-mini-2025-04-14", "output": []}
    events: list[Record] = [{"type": "response.created", "sequence_number": next(seq),
                             "response": resp},
                            {"type": "response.in_progress", "sequence_number": next(seq),
                             "response": resp}]
    output = []
    offset = 0
    if reasoning:
        item = {"id": "rs_keel0001", "type": "reasoning", "summary": []}
        events += [{"type": "response.output_item.added", "sequence_number": next(seq),
                    "output_index": 0, "item": item},
                   {"type": "response.output_item.done", "sequence_number": next(seq),
                    "output_index": 0, "item": item}]
        output.append(item)
        offset = 1
    for i, (name, args) in enumerate(calls):
        index, text = i + offset, json.dumps(args)
        item = {"id": call_id("fc_", i, rng, 20), "type": "function_call",
                "status": "in_progress", "arguments": "", "call_id": call_id("call_", i, rng),
                "name": name}
        events.append({"type": "response.output_item.added", "sequence_number": next(seq),
                       "output_index": index, "item": item})
        events += [{"type": "response.function_call_arguments.delta",
                    "sequence_number": next(seq), "item_id": item["id"],
                    "output_index": index, "delta": d} for d in chunks(text, rng)]
        events.append({"type": "response.function_call_arguments.done",
                       "sequence_number": next(seq), "item_id": item["id"],
                       "output_index": index, "arguments": text})
        done = {**item, "status": "completed", "arguments": text}
        events.append({"type": "response.output_item.done", "sequence_number": next(seq),
                       "output_index": index, "item": done})
        output.append(done)
    events.append({"type": "response.completed", "sequence_number": next(seq),
                   "response": {**resp, "status": "completed", "output": output}})
    return events


# --- Anthropic Messages ---------------------------------------------------------------------

def anthropic(calls: list[tuple[str, Record]], seed: int, text: str = "") -> list[Record]:
    rng = random.Random(seed)
    events: list[Record] = [
        {"type": "message_start", "message": {
            "id": "msg_01Keel", "type": "message", "role": "assistant", "content": [],
            "model": "claude-sonnet-4-5-20250929", "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 412, "output_tokens": 1}}},
        {"type": "ping"}]
    index = 0
    if text:
        events.append({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}})
        events += [{"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": t}} for t in chunks(text, rng)]
        events.append({"type": "content_block_stop", "index": 0})
        index = 1
    for n, (name, args) in enumerate(calls):
        events.append({"type": "content_block_start", "index": index + n, "content_block": {
            "type": "tool_use", "id": call_id("toolu_01", n, rng), "name": name, "input": {}}})
        events.append({"type": "content_block_delta", "index": index + n,
                       "delta": {"type": "input_json_delta", "partial_json": ""}})
        events += [{"type": "content_block_delta", "index": index + n,
                    "delta": {"type": "input_json_delta", "partial_json": p}}
                   for p in chunks(json.dumps(args), rng)]
        events.append({"type": "content_block_stop", "index": index + n})
    events += [{"type": "message_delta", "delta": {"stop_reason": "tool_use",
                                                   "stop_sequence": None},
                "usage": {"output_tokens": 96}},
               {"type": "message_stop"}]
    return events


# --- Ollama ---------------------------------------------------------------------------------

def ollama(calls: list[tuple[str, Record]], one_record: bool = True) -> list[Record]:
    stamp = iter(f"2025-11-30T00:00:0{i}.000000Z" for i in range(10))
    head = {"model": "qwen3:8b"}
    tool_calls = [{"function": {"name": n, "arguments": a}} for n, a in calls]
    groups = [tool_calls] if one_record else [[c] for c in tool_calls]
    records = [{**head, "created_at": next(stamp),
                "message": {"role": "assistant", "content": "", "tool_calls": g},
                "done": False} for g in groups]
    records.append({**head, "created_at": next(stamp),
                    "message": {"role": "assistant", "content": ""}, "done": True,
                    "done_reason": "stop", "total_duration": 812000000, "eval_count": 41})
    return records


# --- Gemini ---------------------------------------------------------------------------------

def gemini(calls: list[tuple[str, Record]], seed: int, ids: bool = False,
           one_event: bool = True, text: str = "") -> list[Record]:
    """`streamGenerateContent` events: whole `functionCall` parts, `finishReason` STOP on the
    last event; a thought signature on the first call's part only (as for parallel calls)."""
    rng = random.Random(seed)
    parts: list[Record] = []
    for k, (name, args) in enumerate(calls):
        fn: Record = {"name": name, "args": args}
        if ids:
            fn = {"id": call_id("", k, rng, 8).lower(), **fn}
        part: Record = {"functionCall": fn}
        if k == 0:
            part["thoughtSignature"] = call_id("", k, rng, 44) + "=="
        parts.append(part)
    groups = [parts] if one_event else [[p] for p in parts]
    if text:
        groups.insert(0, [{"text": "Checking the incident first.", "thought": True},
                          {"text": text}])
    records: list[Record] = [{"candidates": [{"content": {"role": "model", "parts": g},
                                              "index": 0}],
                              "modelVersion": "gemini-2.5-flash",
                              "responseId": f"keel-gemini-{seed}"} for g in groups]
    records[-1]["candidates"][0]["finishReason"] = "STOP"
    records[-1]["usageMetadata"] = {"promptTokenCount": 212, "candidatesTokenCount": 38,
                                    "totalTokenCount": 250}
    return records


# --- Q1's shapes: more OpenAI Chat Completions quirks ------------------------------------

def served_by(records: list[Record], model: str) -> list[Record]:
    """The same chunks as another OpenAI-compatible server names its model."""
    return [{**r, "model": model} for r in records]


def quirks_chat_more() -> dict[str, str]:
    """Chat Completions shapes from the threads in docs/stream-quirks-sources.md, one per file."""
    rng = random.Random(21)
    ids = [call_id("call_", n, rng) for n in range(3)]
    args = [json.dumps(a) for _, a in MIXED]

    def opening(i: int, name: str, arguments: str | None = "", **extra: Any) -> Record:
        fn: Record = {"name": name} if arguments is None else {"name": name,
                                                                "arguments": arguments}
        return {"index": i, "id": ids[i], "type": "function", "function": fn, **extra}

    def fragments(i: int, text: str) -> list[Record]:
        return [{"index": i, "function": {"arguments": a}} for a in chunks(text, rng)]

    # fragments of three calls round-robin: index 0 goes on after 1 and 2 opened
    queues = [[opening(i, n), *fragments(i, args[i])] for i, (n, _) in enumerate(MIXED)]
    interleaved = [q.pop(0) for _ in range(max(map(len, queues))) for q in queues if q]
    # the first delta brings the id and arguments, the name comes in the next one
    before_name = [[{"index": i, "id": ids[i], "type": "function",
                     "function": {"arguments": args[i][:9]}},
                    {"index": i, "function": {"name": n}}, *fragments(i, args[i][9:])]
                   for i, (n, _) in enumerate(MIXED[:2])]
    split_name = [[opening(i, n[:7]), {"index": i, "function": {"name": n[7:]}},
                   *fragments(i, args[i])] for i, (n, _) in enumerate(MIXED[:2])]
    name_then_args = [[opening(i, n, None), {"index": i, "function": {"arguments": args[i]}}]
                      for i, (n, _) in enumerate(MIXED[:2])]
    # one call whose continuation fragments come at an incremented index (Nebius, Cerebras)
    drift = [opening(0, MIXED[0][0])]
    drift += [{**f, "index": k} for k, f in enumerate(fragments(0, args[0]))]
    # two calls, and the second one's last fragment at index 2: which call it continues is unknown
    two = [[opening(i, n), *fragments(i, args[i])] for i, (n, _) in enumerate(MIXED[:2])]
    two[1][-1] = {**two[1][-1], "index": 2}
    # one call said at three indexes, the same id each time (LocalAI)
    again = [opening(0, MIXED[0][0]), *fragments(0, args[0]),
             *[opening(0, MIXED[0][0], args[0], index=k) for k in (1, 2)]]
    untyped = opening(0, "search_logs")
    del untyped["type"]
    burst = [chat_chunk({"role": "assistant", "content": None,
                         "tool_calls": [opening(i, n) for i, (n, _) in enumerate(MIXED)]}),
             chat_chunk({"tool_calls": [{"index": i, "function": {"arguments": a}}
                                        for i, a in enumerate(args)]}, "tool_calls")]
    usage = {"prompt_tokens": 311, "completion_tokens": 64, "total_tokens": 375}
    with_usage = chat_stream(chat_entries(LOOKUPS, 22))
    with_usage[-1:-1] = [{**chat_chunk({}), "choices": [], "usage": usage}]
    with_usage.append({**chat_chunk({}), "choices": [{"index": 0, "delta": {}}],
                       "usage": usage})
    kimi = [[{**e, "id": f"functions.{n}:{i}"} if "id" in e else e for e in entries]
            for i, ((n, _), entries) in enumerate(zip(LOOKUPS, chat_entries(LOOKUPS, 23),
                                                      strict=True))]
    twins = chat_entries([LOOKUPS[0]] * 2, 24)
    return {
        "interleaved_fragments": sse(chat_stream([interleaved]), done=True),
        "arguments_before_name": sse(served_by(chat_stream(before_name), "qwen3-coder-30b"),
                                     done=True),
        "name_split": sse(chat_stream(split_name), done=True),
        "name_then_arguments": sse(served_by(chat_stream(name_then_args), "gemini-2.5-flash"),
                                   done=True),
        "index_drift": sse(served_by(chat_stream([drift]), "llama-3.3-70b"), done=True),
        "index_drift_several_calls": sse(served_by(chat_stream(two), "llama-3.3-70b"),
                                         done=True),
        "call_repeated": sse(served_by(chat_stream([again]), "qwen3-4b"), done=True),
        "type_missing": sse(served_by(chat_stream([[untyped, *fragments(0, args[2])]]),
                                      "Qwen/Qwen2.5-7B-Instruct"), done=True),
        "no_arguments": sse(served_by(chat_stream([[{
            "index": 0, "id": ids[1], "type": "function",
            "function": {"name": "list_open_incidents"}}]]), "Qwen/Qwen2.5-7B-Instruct"),
            done=True),
        "arguments_in_one_burst": sse(burst, done=True),
        "usage_chunk": sse(with_usage, done=True),
        "parallel_tool_calls_ignored": sse(served_by(chat_stream(kimi), "kimi-k2-0905-preview"),
                                           done=True),
        "identical_calls": sse(chat_stream(twins), done=True),
    }


# --- Q3's shapes: the Responses API and Anthropic ------------------------------------------

def quirks_responses_anthropic() -> dict[str, str]:
    """Responses: two argument deltas of the second call sent before its output_item.added
    (openai/openai-python#2852). Anthropic: two calls of a tool without parameters, the first
    with Claude's one empty `partial_json`, the second with no input_json_delta at all
    (BerriAI/litellm#5063)."""
    events = responses(LOOKUPS, 14)
    added = next(i for i, e in enumerate(events) if e["type"] == "response.output_item.added"
                 and e["output_index"] == 1)
    early = events[added + 1:added + 3]
    events = [*events[:added], *early, events[added], *events[added + 3:]]
    for n, e in enumerate(events):
        e["sequence_number"] = n
    parameterless = anthropic([("list_open_incidents", {})] * 2, 15)
    starts = [i for i, e in enumerate(parameterless) if e["type"] == "content_block_start"]
    no_delta = [e for i, e in enumerate(parameterless)
                if not (i > starts[1] and e["type"] == "content_block_delta")]
    empty_only = [e for e in no_delta if not (e["type"] == "content_block_delta" and
                                               e["delta"]["partial_json"] == "{}")]
    return {"openai-responses/arguments_before_item.sse": sse(events, named=True),
            "anthropic/no_arguments.sse": sse(empty_only, named=True)}


# --- F1's policies: finishes, Gemini's lost call, Responses disagreements, argument values ---

def quirks_findings() -> dict[str, str]:
    """A finish reason that does not close a tool turn (Chat's documented `content_filter`,
    Anthropic's `refusal`), Gemini's MALFORMED_FUNCTION_CALL (no call arrives, only the reason
    and its finishMessage), a Responses `function_call_arguments.done` that is not its deltas
    (it repeats the other call's arguments), two Responses items with one item id, and a
    `search_logs` call whose arguments hold a duplicate key or half of an emoji's escape pair."""
    refusal = anthropic(LOOKUPS[:1], 42, "I'll look up the incident.")
    refusal[-2]["delta"]["stop_reason"] = "refusal"
    malformed = gemini([], 43, text="Let me look up both incidents.")
    last = malformed[-1]["candidates"][0]
    del last["content"]
    last["finishReason"] = "MALFORMED_FUNCTION_CALL"
    last["finishMessage"] = ("Malformed function call: print(default_api.lookup_incident("
                             "incident_id='INC-001'), default_api.lookup_incident(")
    mismatch = responses(LOOKUPS, 44)
    for e in mismatch:
        if e["type"] == "response.function_call_arguments.done" and e["output_index"] == 1:
            e["arguments"] = json.dumps(LOOKUPS[0][1])
    reused = responses(LOOKUPS, 45)
    first, second = (e["item"]["id"] for e in reused
                     if e["type"] == "response.output_item.added")
    reused = json.loads(json.dumps(reused).replace(second, first))

    def bent(text: str, seed: int) -> list[list[Record]]:
        """The lookup of INC-001, then search_logs with this arguments text."""
        lookup, search = chat_entries([LOOKUPS[0], MIXED[2]], seed)
        return [lookup, [search[0], *({"index": 1, "function": {"arguments": a}}
                                      for a in chunks(text, random.Random(seed)))]]

    duplicate = '{"service": "checkout", "query": "timeout", "query": "error"}'
    surrogate = '{"service": "checkout", "query": "timeout \\ud83d"}'
    return {
        "quirks/finish_content_filter.sse": sse(chat_stream(chat_entries(LOOKUPS, 41),
                                                            finish="content_filter"), done=True),
        "anthropic/stop_refusal.sse": sse(refusal, named=True),
        "gemini/malformed_function_call.sse": sse(malformed),
        "openai-responses/arguments_mismatch.sse": sse(mismatch, named=True),
        "openai-responses/item_id_reused.sse": sse(reused, named=True),
        "quirks/duplicate_key.sse": sse(chat_stream(bent(duplicate, 46)), done=True),
        "quirks/lone_surrogate.sse": sse(chat_stream(bent(surrogate, 47)), done=True),
    }


def main() -> None:
    files = {
        "openai-chat/one_call.sse": sse(chat_stream(chat_entries(LOOKUPS[:1], 1)), done=True),
        "openai-chat/parallel_calls.sse": sse(chat_stream(chat_entries(LOOKUPS, 2)),
                                              done=True),
        "openai-chat/answer.sse": sse(chat_answer(
            "INC-001 is more severe: a critical outage of the login API (502s). INC-002 is a "
            "low-severity slowdown of monthly reports.", 10), done=True),
        "openai-chat/parallel_calls_interleaved.jsonl": jsonl(chat_stream(
            chat_entries(MIXED, 3), interleave=True, seed=3)),
        "openai-responses/one_call.sse": sse(responses(LOOKUPS[:1], 4), named=True),
        "openai-responses/parallel_calls.sse": sse(responses(LOOKUPS, 5), named=True),
        "openai-responses/after_reasoning.jsonl": jsonl(responses(MIXED, 6, reasoning=True)),
        "anthropic/one_call.sse": sse(anthropic(LOOKUPS[:1], 7), named=True),
        "anthropic/parallel_calls.sse": sse(anthropic(
            LOOKUPS, 8, "I'll look up both incidents."), named=True),
        "anthropic/three_calls.jsonl": jsonl(anthropic(MIXED, 9)),
        "ollama/one_call.jsonl": jsonl(ollama(LOOKUPS[:1])),
        "ollama/parallel_calls.jsonl": jsonl(ollama(LOOKUPS)),
        "ollama/calls_in_separate_lines.jsonl": jsonl(ollama(MIXED, one_record=False)),
        "gemini/one_call.sse": sse(gemini(LOOKUPS[:1], 11)),
        "gemini/parallel_calls.sse": sse(gemini(LOOKUPS, 12)),
        "gemini/calls_in_separate_events.sse": sse(gemini(
            MIXED, 13, ids=True, one_event=False, text="I'll check the checkout service.")),
    }
    files.update({f"quirks/{name}.{'jsonl' if text.startswith('{') else 'sse'}": text
                  for name, text in quirks().items()})
    files.update({f"token_limit/{name}.sse": text for name, text in token_limit().items()})
    files.update({f"quirks/{name}.sse": text for name, text in quirks_arguments().items()})
    files.update(quirks_responses_anthropic())
    files.update({f"quirks/{name}.sse": text for name, text in quirks_chat_more().items()})
    files.update(quirks_findings())
    for name, text in files.items():
        path = OUT / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    print(f"wrote {len(files)} streams under {OUT}")
    # the same answer in Chinese, which the Chinese edition's chapter 7 replays (answer_stream)
    ZH_ANSWER.parent.mkdir(parents=True, exist_ok=True)
    ZH_ANSWER.write_text(sse(chat_answer(
        "INC-001 更严重：登录 API 出现严重（critical）故障，返回 502。INC-002 只是月度报表变慢，"  # noqa: RUF001
        "严重程度低（low）。",  # noqa: RUF001
        10), done=True), encoding="utf-8")
    print(f"wrote {ZH_ANSWER}")


if __name__ == "__main__":
    main()
