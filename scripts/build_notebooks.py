"""Re-execute every solution notebook, save its outputs, and regenerate the learner edition.

Run: make notebooks   (or .venv/bin/python scripts/build_notebooks.py [NAME ...])
Outputs are deterministic (seeds, virtual clock, fixed ids, PNGs without metadata), so running
this twice changes nothing. Widget cells keep no output: widgets need a live kernel anyway.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from keel_lab.course.editions import learner_edition, problems, tags

ROOT = Path(__file__).resolve().parent.parent / "notebooks"
SOLUTIONS = ROOT / "solutions"


def execute(path: Path) -> dict:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", record_timing=False,
                   store_widget_state=True,  # nbclient needs it for Output widgets
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    for cell in nb.cells:
        if "widget" in tags(cell):
            cell.outputs = []
    nb.metadata.pop("widgets", None)
    return json.loads(nbformat.writes(nb))


def write(nb: dict, path: Path) -> None:
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(names: list[str]) -> int:
    paths = sorted(SOLUTIONS.glob("*.ipynb"))
    if names:
        paths = [p for p in paths if any(n in p.name for n in names)]
    for path in paths:
        nb = json.loads(path.read_text(encoding="utf-8"))
        bad = problems(nb)
        if bad:
            print(f"{path.name}: " + "; ".join(bad), file=sys.stderr)
            return 1
        start = time.perf_counter()
        nb = execute(path)
        write(nb, path)
        write(learner_edition(nb), ROOT / path.name)
        print(f"{path.name}: executed in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
