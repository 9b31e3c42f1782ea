"""The exhaustive re-chunking sweep: every rewrite of every recorded stream, one at a time.

Each argument fragment split at every character boundary, every adjacent pair of one call's
fragments merged, every payload of a call moved before each run of other calls' payloads it
may pass. The meaning (calls and the diagnostics' quirk and action) must stay the recording's.
Cumulative snapshots are read from their fragments as they came, so their fragments are never
split or merged (re-cut, they are another stream); the summary says how many recordings that
leaves with moves only. `tests/lab/test_rechunking.py` holds the rewrites and the bounded property
test; this is the sweep that is too slow for `make test`.

Run: .venv/bin/python bench/rechunking.py
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter

# tests/lab/test_rechunking.py, and tests/json_fields.py that it imports
sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "tests"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "tests", "lab"))

from test_rechunking import STREAMS, fragment_bound, meaning, rewrites, stream_files

from keel_lab.providers._diagnosis import read_stream


def sweep() -> tuple[Counter[str], list[str]]:
    """How many variants of each kind were checked (and how many recordings keep their fragment
    boundaries, as "bound"), and every variant whose meaning changed."""
    checked: Counter[str] = Counter()
    changed = []
    for name in stream_files():
        fmt, records = read_stream(STREAMS / name)
        checked["bound"] += bool(fragment_bound(records, fmt)[0])
        expected = meaning(records, fmt)
        for rewrite in rewrites(records, fmt):
            checked[rewrite.kind] += 1
            if meaning(rewrite.apply(records, fmt), fmt) != expected:
                changed.append(f"{name}: {rewrite}")
    return checked, changed


def summary() -> tuple[dict[str, str], list[str]]:
    start = time.perf_counter()
    checked, changed = sweep()
    took = time.perf_counter() - start
    bound = checked.pop("bound")
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(checked.items()))
    return {"re-chunked variants of every recorded stream":
            f"{sum(checked.values())} ({kinds}) in {took:.1f} s, {len(changed)} changed meaning; "
            f"{bound} recording(s) of cumulative snapshots keep their fragment boundaries"
            }, changed


def main() -> dict[str, str]:
    return summary()[0]


if __name__ == "__main__":
    result, changed = summary()
    for line in changed:
        print("changed:", line)
    for k, v in result.items():
        print(f"{k}: {v}")
    sys.exit(1 if changed else 0)
