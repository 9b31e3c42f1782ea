"""The course under nbval: each solution notebook alone, and all of them in one run.

Run: .venv/bin/python bench/course.py
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NBVAL = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval",
         "--nbval-current-env"]


def timed(paths: list[Path]) -> float:
    start = time.perf_counter()
    subprocess.run([*NBVAL, *map(str, paths)], cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> dict[str, str]:
    paths = sorted((ROOT / "notebooks" / "solutions").glob("*.ipynb"))
    out = {f"nbval {p.name}": f"{timed([p]):.1f} s" for p in paths}
    out["nbval, the whole course in one run"] = f"{timed(paths):.1f} s"
    return out


if __name__ == "__main__":
    for k, v in main().items():
        print(f"{k}: {v}")
