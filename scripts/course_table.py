"""The README's course table, computed from the solution notebooks: each chapter's prose words,
the cells the learner writes, its exercises, and an estimate of the minutes it takes.

Words: the markdown cells' words, code spans and fenced code counted as one word each, link
targets left out. Learner cells: cells tagged `exercise`, `prediction`, `try` or `observe`.
Minutes (an estimate, stated as one): reading at 150 words a minute, one minute per code cell
run and read, five per learner cell and ten more per exercise.

Run: .venv/bin/python scripts/course_table.py [NOTEBOOKS_DIR]   (default notebooks/solutions)
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

LEARNER = {"exercise", "prediction", "try", "observe"}
WPM, PER_CODE_CELL, PER_LEARNER_CELL, PER_EXERCISE = 150, 1, 5, 10


@dataclass(frozen=True)
class Chapter:
    name: str
    words: int
    code_cells: int
    learner_cells: int
    exercises: int

    @property
    def minutes(self) -> int:
        return round(self.words / WPM + self.code_cells * PER_CODE_CELL
                     + self.learner_cells * PER_LEARNER_CELL + self.exercises * PER_EXERCISE)


def prose_words(markdown: str) -> int:
    text = re.sub(r"```.*?```", " code ", markdown, flags=re.DOTALL)
    text = re.sub(r"`[^`\n]*`", " code ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    return len(re.findall(r"[A-Za-z0-9_'-]+", text))


def chapter(path: Path) -> Chapter:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]

    def tags(cell: dict[str, object]) -> set[str]:
        meta = cell.get("metadata")
        return set(meta.get("tags", [])) if isinstance(meta, dict) else set()

    text = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    code = [c for c in cells if c["cell_type"] == "code"]
    return Chapter(path.stem, sum(map(prose_words, text)), len(code),
                   sum(1 for c in cells if tags(c) & LEARNER),
                   sum(1 for c in cells if "exercise" in tags(c)))


def table(chapters: list[Chapter]) -> str:
    rows = ["| chapter | words | learner cells | exercises | minutes (estimate) |",
            "|---|---:|---:|---:|---:|"]
    rows += [f"| {c.name} | {c.words:,} | {c.learner_cells} | {c.exercises} | {c.minutes} |"
             for c in chapters]
    rows.append(f"| all | {sum(c.words for c in chapters):,} | "
                f"{sum(c.learner_cells for c in chapters)} | "
                f"{sum(c.exercises for c in chapters)} | {sum(c.minutes for c in chapters)} |")
    return "\n".join(rows)


if __name__ == "__main__":
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("notebooks/solutions")
    print(table([chapter(p) for p in sorted(folder.glob("[0-9][0-9]_*.ipynb"))]))
