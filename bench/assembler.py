"""The assembler is linear: 1 MB of arguments in 1-byte deltas across 8 interleaved calls.

Run: .venv/bin/python bench/assembler.py
"""

from __future__ import annotations

import json
import time

from keel_lab._core.streaming import Finish, StreamEvent, ToolCallDelta, assemble

CALLS, TOTAL = 8, 1_000_000


def stream(total: int) -> list[StreamEvent]:
    per_call = total // CALLS
    payloads = [json.dumps({"blob": "x" * (per_call - 12)}) for _ in range(CALLS)]
    events: list[StreamEvent] = [ToolCallDelta(i, id=f"call_{i}", name="store")
                                 for i in range(CALLS)]
    longest = max(len(p) for p in payloads)
    events += [ToolCallDelta(i, arguments_delta=p[k]) for k in range(longest)
               for i, p in enumerate(payloads) if k < len(p)]  # round-robin interleaving
    return [*events, Finish("tool_calls")]


def measure(total: int) -> float:
    events = stream(total)
    start = time.perf_counter()
    result = assemble(events)
    elapsed = time.perf_counter() - start
    assert all(r.input is not None for r in result.requests) and len(result.requests) == CALLS
    return elapsed


def main() -> dict[str, str]:
    half, full = measure(TOTAL // 2), measure(TOTAL)
    return {"1 MB in 1-byte deltas, 8 interleaved calls": f"{full:.2f} s",
            "time ratio 1 MB / 0.5 MB (2.0 = linear)": f"{full / half:.2f}"}


if __name__ == "__main__":
    for k, v in main().items():
        print(f"{k}: {v}")
