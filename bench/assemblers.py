"""The lab's assembler beside the official SDKs' accumulators, langchain-core's chunk merging and
pydantic-ai's parts manager.

Two questions, on the same streams (keel_lab.course._experiments.accumulators feeds each library
as its own client would):
- correct: per stream of a compared format - the real recordings of data/recordings/ first, then
  every generated OpenAI Chat Completions stream, quirks included, and the generated Responses and
  Anthropic ones - does each run exactly the calls the stream means (a real one: its source test's
  assertion or the official SDK's accumulator; a generated one: bench/expected_calls.py), and
  nothing it must not? The libraries cannot refuse: a call they would run that must not run makes
  them wrong.
- fast: CPU time from the same parsed JSON payloads to the calls (the ordinary streams, synthetic
  8-call streams, and four interleaved calls in one-byte deltas up to 1 MB against the peers'
  accumulation alone), and the lab's linearity on the whole wire path (1 MB against 0.5 MB).

Run: .venv/bin/python bench/assemblers.py          (summary and speed, as README rows)
     .venv/bin/python bench/assemblers.py --shapes (the per-recording table as well)
"""

from __future__ import annotations

import gc
import json
import random
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from expected_calls import EXPECTED

from keel_lab.course._experiments.accumulators import (
    RunCall,
    attempt,
    lab_calls,
    langchain_calls,
    langchain_chunks,
    meant,
    others,
    pydantic_ai_calls,
    real_recordings,
    recordings,
    sdk_calls,
    sdk_chunks,
    sources,
    verdict,
)
from keel_lab.course._experiments.providers import shape_group
from keel_lab.providers._diagnosis import diagnose
from keel_lab.providers._formats import DONE

LINEAR_LIMIT = 2.2  # time(1 MB) / time(0.5 MB); 2.0 is exactly linear
HEAD = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
        "model": "bench"}


PEERS = {"SDK": "sdk", "langchain-core": "langchain", "pydantic-ai": "pydantic_ai"}


def shapes() -> list[dict[str, str]]:
    """Per stream, the real recordings first: the intended calls (of a real one: what the
    source's test asserts, else what the official SDK's accumulator returns - so the SDK is the
    reference there, and counted apart; of a generated one: bench/expected_calls.py), and each
    assembler's verdict against them."""
    rows = []
    entries = {f"recordings/{e['file']}": e for e in sources()}
    for name, fmt, records in [*real_recordings(), *recordings()]:
        if name in entries:
            got_meant = meant(entries[name])
            assert isinstance(got_meant, list), f"{name}: no meaning: {got_meant!r}"
            want, never = got_meant, len(entries[name]["expected"].get("provider_calls", []))
        elif name in EXPECTED:
            want = [RunCall(c.id, c.name, c.arguments) for c in EXPECTED[name].runs]
            never = len(EXPECTED[name].not_run)
        else:
            raise SystemExit(f"{name}: no entry in bench/expected_calls.py")
        got, turn = others(records, fmt), diagnose(records, fmt)
        rows.append({"stream": name, "group": shape_group(name),
                     "intended": f"{len(want)} run, {never} never run",
                     "lab": verdict(attempt(partial(lab_calls, fmt=fmt), records), want),
                     **{label: verdict(got[key], want, turn) for label, key in PEERS.items()}})
    return rows


def synthetic(calls: int, fragments: int, interleave: bool, size: int = 4, seed: int = 0
              ) -> list[dict[str, Any]]:
    """`calls` calls whose arguments arrive in `fragments` pieces of about `size` characters
    each, one call after the other (as OpenAI sends them) or interleaved (as some compatible
    servers do)."""
    rng = random.Random(seed)
    per_call = []
    for i in range(calls):
        text = json.dumps({"query": "x" * (fragments * size), "n": i})
        step = max(1, len(text) // fragments)
        pieces = [text[k:k + step] for k in range(0, len(text), step)]
        per_call.append([{"index": i, "id": f"call_{i:04d}", "type": "function",
                          "function": {"name": "search_logs", "arguments": ""}}]
                        + [{"index": i, "function": {"arguments": p}} for p in pieces])
    order = [i for i, e in enumerate(per_call) for _ in e]
    if interleave:
        rng.shuffle(order)
    queues = [list(e) for e in per_call]
    records = [{**HEAD, "choices": [{"index": 0, "delta": {"tool_calls": [queues[i].pop(0)]},
                                     "finish_reason": None}]} for i in order]
    return [*records, {**HEAD, "choices": [{"index": 0, "delta": {},
                                            "finish_reason": "tool_calls"}]}]


def best(fn: Callable[[Any], Any], data: Any, repeat: int) -> tuple[float, Any]:
    """The shortest CPU time of `repeat` runs (CPU time: other processes on the machine
    change it less than wall time), and the last result (or what it raised)."""
    times, result = [], None
    gc.collect()  # what earlier measurements left is not this one's to collect
    for _ in range(repeat):
        start = time.process_time()
        result = attempt(fn, data)
        times.append(time.process_time() - start)
    return min(times), result


def sdk_path(records: list[dict[str, Any]]) -> list[RunCall]:
    return sdk_calls(sdk_chunks(records))


def langchain_path(records: list[dict[str, Any]]) -> list[RunCall]:
    return langchain_calls(langchain_chunks(sdk_chunks(records)))


def pydantic_ai_path(records: list[dict[str, Any]]) -> list[RunCall]:
    return pydantic_ai_calls(sdk_chunks(records))


def speed() -> dict[str, str]:
    """From the same parsed JSON payloads to the calls: the lab's converter and assembler;
    the SDK's chunk objects and accumulator; langchain-openai's chunks and langchain-core's
    merge. Each is what a client of that library runs on every streamed turn."""
    cases = {name: records for name, fmt, records in recordings()
             if name.startswith("openai-chat/") and "call" in name}
    cases["8 calls x 500 fragments, in sequence"] = synthetic(8, 500, interleave=False)
    cases["8 calls x 500 fragments, interleaved"] = synthetic(8, 500, interleave=True)
    out = {}
    for name, records in cases.items():
        repeat = 5 if len(records) > 1000 else 200
        t_lab, r_lab = best(lab_calls, records, repeat)
        cells = [f"lab {t_lab * 1e3:.2f} ms"]
        for label, fn in (("SDK", sdk_path), ("langchain-core", langchain_path),
                          ("pydantic-ai", pydantic_ai_path)):
            t, result = best(fn, records, repeat)
            if isinstance(result, BaseException):
                cells.append(f"{label} fails ({type(result).__name__})")
                continue
            note = verdict(result, r_lab)
            assert note.startswith("correct"), f"{name}: {label} {note}"
            order = ", calls in arrival order, not index order" if "arrival" in note else ""
            cells.append(f"{label} {t * 1e3:.2f} ms ({t / t_lab:.1f}x{order})")
            assert t > t_lab, f"{name}: {label} took less than the lab"
        chunks = sum(r is not DONE for r in records)
        out[f"{name}, {chunks} chunks"] = "; ".join(cells)
    return out


def one_byte() -> dict[str, str]:
    """Four interleaved calls in one-byte deltas, 150 KB, 0.5 MB and 1 MB of arguments: the
    lab from the parsed payloads to the calls it lets run, against each peer's accumulation
    alone - pydantic-ai's parts manager fed ready SDK chunks, langchain-core's one merge of ready
    `AIMessageChunk`s - leaving out the chunk objects the peers need first (seconds more). The
    lab must be ahead of both at every size, and linear (1 MB / 0.5 MB at most LINEAR_LIMIT)."""
    out, lab_times = {}, {}
    for total in (150_000, 500_000, 1_000_000):
        records = synthetic(4, total // 4, interleave=True, size=1)
        t_lab, got = best(lab_calls, records, 3)  # before the peers' millions of objects exist,
        chunks = sdk_chunks(records)  # which each garbage collection would walk again
        t_pai, pai = best(pydantic_ai_calls, chunks, 3)
        messages = langchain_chunks(chunks)
        del chunks
        t_lc, lc = best(langchain_calls, messages, 3)
        del messages
        row = (f"4 interleaved calls, one-byte deltas, {total // 1000} KB ({len(records)} chunks)",
               f"lab {t_lab:.2f} s; pydantic-ai's parts manager {t_pai:.2f} s "
               f"({t_pai / t_lab:.1f}x); langchain-core's merge {t_lc:.2f} s ({t_lc / t_lab:.1f}x)")
        print(*row, sep=": ", file=sys.stderr, flush=True)  # seen even if an assertion fails
        for label, result in (("pydantic-ai", pai), ("langchain-core", lc)):
            assert verdict(result, got).startswith("correct"), f"{total}: {label} differs"
        assert t_lab < min(t_pai, t_lc), f"{total}: the lab is behind ({t_lab:.2f} s)"
        lab_times[total] = t_lab
        out[row[0]] = row[1]
    ratio = lab_times[1_000_000] / lab_times[500_000]
    assert ratio <= LINEAR_LIMIT, f"the lab is not linear on one-byte deltas: {ratio:.2f}"
    out["lab, one-byte deltas: 1 MB / 0.5 MB"] = f"{ratio:.2f} (2.0 = linear)"
    return out


def linearity() -> dict[str, str]:
    """The lab on the whole wire path (converter, assembler, diagnosis): 8 interleaved calls,
    16-character fragments, 0.5 MB and 1 MB of arguments in all."""
    def run(total: int) -> float:
        records = synthetic(8, total // 8 // 16, interleave=True, size=16)
        t, calls = best(lambda r: diagnose(r, "openai-chat"), records, 3)
        assert all(c.executable for c in calls.calls) and len(calls.calls) == 8
        return t

    half, full = run(500_000), run(1_000_000)
    ratio = full / half
    assert ratio <= LINEAR_LIMIT, f"the lab is not linear: ratio {ratio:.2f}"
    return {"lab, wire path: 1 MB of arguments in 16-byte fragments, 8 interleaved calls":
            f"{full:.2f} s CPU (ratio to 0.5 MB {ratio:.2f}; 2.0 = linear)"}


def summary(rows: list[dict[str, str]]) -> dict[str, str]:
    out = {}
    for kind, group in (("real recordings", True), ("generated streams", False)):
        part = [r for r in rows if (r["group"] == "real recording") == group]
        cells = []
        for label in ("lab", *PEERS):
            compared = [r for r in part if r[label] != "-"]
            correct = sum(r[label].startswith("correct") for r in compared)
            cells.append(f"{label} {correct}/{len(compared)}")
        out[f"{kind} assembled exactly as intended ({len(part)}; "
            "`bench/assemblers.py --shapes`)"] = "; ".join(cells)
    return out


def main() -> dict[str, str]:
    return {**summary(shapes()), **speed(), **one_byte(), **linearity()}


if __name__ == "__main__":
    if "--shapes" in sys.argv:
        rows = shapes()
        print("| " + " | ".join(rows[0]) + " |\n|" + "---|" * len(rows[0]))
        for row in rows:
            print("| " + " | ".join(row.values()) + " |")
        print()
    for k, v in main().items():
        print(f"{k}: {v}")
