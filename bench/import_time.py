"""`import keel_lab` in a fresh interpreter, best of 7 (plotting and jsonschema load on use), and
the first validation of a call's arguments, which loads jsonschema.

Run: .venv/bin/python bench/import_time.py
"""

from __future__ import annotations

import subprocess
import sys
import time


def once(module: str, then: str = "") -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import {module}{then}"], check=True)
    return time.perf_counter() - start


def main() -> dict[str, str]:
    base = min(once("sys") for _ in range(7))
    lab = min(once("keel_lab") for _ in range(7))
    plots = min(once("keel_lab.course._plots") for _ in range(3))
    schema = min(once("keel_lab._core.tools",
                      "; keel_lab._core.tools.schema_errors({'type': 'object'}, {})")
                 for _ in range(3))
    return {"`import keel_lab` (interpreter start-up subtracted)": f"{lab - base:.3f} s",
            "`import keel_lab.course._plots` (matplotlib)": f"{plots - base:.3f} s",
            "first validation of a call's arguments (imports jsonschema)": f"{schema - base:.3f} s"}


if __name__ == "__main__":
    for k, v in main().items():
        print(f"{k}: {v}")
