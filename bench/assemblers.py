"""The lab's assembler beside the official SDK's accumulator and langchain-core's chunk merging.

Each gets the same OpenAI Chat Completions streams, already parsed (dicts for the lab, the SDK's
ChatCompletionChunk models, langchain AIMessageChunks), must produce the same calls, and is timed
on assembling alone. Run: .venv/bin/python bench/assemblers.py
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessageChunk
from langchain_core.messages.ai import add_ai_message_chunks
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

from keel_lab.providers.diagnosis import diagnose
from keel_lab.providers.streams.records import DONE, parse_records

STREAMS = Path(__file__).resolve().parent.parent / "keel_lab" / "data" / "streams"
Calls = list[tuple[str, str, Any]]


def synthetic(calls: int, fragments: int, interleave: bool, seed: int = 0
              ) -> list[dict[str, Any]]:
    """`calls` calls whose arguments arrive in `fragments` pieces each, one after the other
    (as OpenAI sends them) or interleaved (as some compatible servers do)."""
    rng = random.Random(seed)
    per_call = []
    for i in range(calls):
        text = json.dumps({"query": "x" * (fragments * 4), "n": i})
        size = max(1, len(text) // fragments)
        pieces = [text[k:k + size] for k in range(0, len(text), size)]
        per_call.append([{"index": i, "id": f"call_{i:04d}", "type": "function",
                          "function": {"name": "search_logs", "arguments": ""}}]
                        + [{"index": i, "function": {"arguments": p}} for p in pieces])
    order = [i for i, e in enumerate(per_call) for _ in e]
    if interleave:
        rng.shuffle(order)
    queues = [list(e) for e in per_call]
    head = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
            "model": "bench"}
    records = [{**head, "choices": [{"index": 0, "delta": {"tool_calls": [queues[i].pop(0)]},
                                     "finish_reason": None}]} for i in order]
    return [*records, {**head, "choices": [{"index": 0, "delta": {},
                                            "finish_reason": "tool_calls"}]}]


def lab(records: list[dict[str, Any]]) -> Calls:
    return [(c.id or "", c.name, c.input) for c in diagnose(records, "openai-chat").calls]


def sdk(chunks: list[ChatCompletionChunk]) -> Calls:
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(chunk)
    message = state.get_final_completion().choices[0].message
    return [(c.id, c.function.name, json.loads(c.function.arguments))
            for c in message.tool_calls or []]


def langchain(chunks: list[AIMessageChunk]) -> Calls:
    merged = add_ai_message_chunks(chunks[0], *chunks[1:])
    return [(c["id"] or "", c["name"], c["args"]) for c in merged.tool_calls]


def as_langchain(records: list[dict[str, Any]]) -> list[AIMessageChunk]:
    out = []
    for r in records:
        delta = r["choices"][0]["delta"]
        out.append(AIMessageChunk(content=delta.get("content") or "", tool_call_chunks=[
            {"index": e["index"], "id": e.get("id"), "name": e["function"].get("name"),
             "args": e["function"].get("arguments")} for e in delta.get("tool_calls") or []]))
    return out


def best(fn: Callable[[Any], Calls], data: Any, repeat: int) -> tuple[float, Calls]:
    times, result = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn(data)
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> dict[str, str]:
    cases = {p.name: [r for r in parse_records(p.read_text()) if r is not DONE]
             for p in sorted((STREAMS / "openai-chat").glob("*call*"))}
    cases["8 calls x 500 fragments, in sequence"] = synthetic(8, 500, interleave=False)
    cases["8 calls x 500 fragments, interleaved"] = synthetic(8, 500, interleave=True)
    out = {}
    for name, records in cases.items():
        repeat = 3 if len(records) > 1000 else 50
        t_lab, r_lab = best(lab, records, repeat)
        cells = [f"lab {t_lab * 1e3:.2f} ms"]
        for label, fn, data in (
                ("SDK", sdk, [ChatCompletionChunk.model_validate(r) for r in records]),
                ("langchain-core", langchain, as_langchain(records))):
            try:
                t, result = best(fn, data, repeat)
            except Exception as exc:  # a library that cannot assemble this stream
                cells.append(f"{label} fails ({type(exc).__name__})")
                continue
            assert sorted(result) == sorted(r_lab), f"{name}: {label} assembled other calls"
            order = "" if result == r_lab else ", calls in arrival order, not index order"
            cells.append(f"{label} {t * 1e3:.2f} ms ({t / t_lab:.1f}x{order})")
        out[f"{name}, {len(records)} chunks"] = "; ".join(cells)
    return out


if __name__ == "__main__":
    for k, v in main().items():
        print(f"{k}: {v}")
