"""Every benchmark, printed as the Markdown table the README carries.

Run: make bench   (or .venv/bin/python bench/run_all.py)
"""

from __future__ import annotations

import os
import platform
import sys

sys.path.insert(0, os.path.dirname(__file__))

import assembler
import assemblers
import classroom_hub
import course
import experiments
import grading
import import_time
import live_sliders
import sliders
import virtual_clock


def main() -> None:
    print(f"Python {platform.python_version()}, {os.cpu_count()} cores, {platform.machine()}\n")
    print("| measurement | result |\n|---|---|")
    for bench in (virtual_clock, experiments, assembler, assemblers, import_time, sliders,
                  live_sliders, course, grading, classroom_hub):
        for k, v in bench.main().items():
            print(f"| {k} | {v} |")


if __name__ == "__main__":
    main()
