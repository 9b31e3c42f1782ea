"""The README's course table, computed from the solution notebooks: each notebook's prose words,
the cells the learner writes, its exercises, and an estimate of the minutes it takes.

The core path is the chapters `NN_name.ipynb` (01-08), then the capstone (09), where the learner
writes the whole loop; the deeper notebooks beside them, `NNa_name.ipynb` (and the primer
`00_name.ipynb`), are optional. Each part is counted apart.
Words: the markdown cells' words, code spans and fenced code counted as one word each, link
targets left out. Learner cells: cells tagged `exercise`, `prediction`, `try` or `observe`.
Minutes (an estimate, stated as one): reading at 150 words a minute, one minute per code cell
run and read, three per prediction, try or observe cell, twelve per exercise - and 75 for the
capstone's one exercise, the whole loop (the chapter's own estimate, until a learner's is measured).

Run: .venv/bin/python scripts/course_table.py [NOTEBOOKS_DIR]   (default notebooks/solutions)
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from keel_course.editions import CHAPTER

LEARNER = {"exercise", "prediction", "try", "observe"}
WPM, PER_CODE_CELL, PER_SMALL_CELL, PER_EXERCISE, PER_CAPSTONE = 150, 1, 3, 12, 75
CAPSTONE = "09_capstone"


@dataclass(frozen=True)
class Chapter:
    name: str
    words: int
    code_cells: int
    learner_cells: int
    exercises: int

    @property
    def capstone(self) -> bool:
        return self.name == CAPSTONE

    @property
    def core(self) -> bool:
        return bool(CHAPTER.match(self.name)) and not self.capstone

    @property
    def path(self) -> str:
        return "capstone" if self.capstone else "core" if self.core else "deeper"

    @property
    def minutes(self) -> int:
        return round(self.words / WPM + self.code_cells * PER_CODE_CELL
                     + (self.learner_cells - self.exercises) * PER_SMALL_CELL
                     + self.exercises * (PER_CAPSTONE if self.capstone else PER_EXERCISE))


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


def chapters(folder: Path) -> list[Chapter]:
    return [chapter(p) for p in sorted(folder.glob("[0-9][0-9]*_*.ipynb"))]


def table(notebooks: list[Chapter]) -> str:
    rows = ["| notebook | path | words | learner cells | exercises | minutes (estimate) |",
            "|---|---|---:|---:|---:|---:|"]
    rows += [f"| {c.name} | {c.path} | {c.words:,} | {c.learner_cells} "
             f"| {c.exercises} | {c.minutes} |" for c in notebooks]
    for label, part in (("core path", [c for c in notebooks if c.core]),
                        ("capstone", [c for c in notebooks if c.capstone]),
                        ("deeper notebooks", [c for c in notebooks if c.path == "deeper"])):
        rows.append(f"| {label} | | {sum(c.words for c in part):,} | "
                    f"{sum(c.learner_cells for c in part)} | "
                    f"{sum(c.exercises for c in part)} | {sum(c.minutes for c in part)} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table(chapters(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("notebooks/solutions"))))
