"""The README's course table, computed from the solution notebooks: each notebook's prose words,
the cells the learner writes, its exercises, and an estimate of the minutes it takes.

The core path is the chapters `NN_name.ipynb` (01-08), then the capstone (09), where the learner
writes the whole loop; the deeper notebooks beside them, `NNa_name.ipynb` (and the primer
`00_name.ipynb`), are optional. Each part is counted apart.
Words: runs of letters, digits, `_` and `'` in the markdown cells (a code span's too), with
fenced code, HTML tags (markup, not read) and link targets left out; a cell tagged `answer` (the
learner's own space) or `estimate` is not prose and not counted. Learner cells: cells tagged
`exercise`, `prediction`, `try` or `observe`.
Minutes (an estimate, stated as one): reading at 150 words a minute, one minute per code cell
run and read, three per prediction, try or observe cell, and per exercise two minutes plus one
per line of its solution (code lines, comments and blank lines left out): an exercise's size,
not a flat figure. Each notebook opens with its own estimate, a cell tagged `estimate` that
`--write` keeps current in the solution notebooks and their Chinese catalogs.

Run: .venv/bin/python scripts/course_table.py [--write] [NOTEBOOKS_DIR]
(default notebooks/solutions)
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from keel_cli._cells import tags
from keel_course.editions import CHAPTER

LEARNER = {"exercise", "prediction", "try", "observe"}
UNREAD = {"answer", "estimate"}  # the learner's own space, and the estimate itself
WPM, PER_CODE_CELL, PER_SMALL_CELL, PER_EXERCISE, PER_LINE = 150, 1, 3, 2, 1
CAPSTONE = "09_capstone"
ESTIMATE = "*About {minutes} minutes* (an estimate from the reading and the exercises' size)."
ESTIMATE_ZH = "*约 {minutes} 分钟*（根据阅读量和练习的规模估算）。"  # noqa: RUF001
CATALOGS = Path(__file__).resolve().parents[1] / "locale" / "zh_CN" / "LC_MESSAGES"
_SOLUTION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.DOTALL)


@dataclass(frozen=True)
class Chapter:
    name: str
    words: int
    code_cells: int
    learner_cells: int
    exercise_lines: tuple[int, ...]  # each exercise's solution lines

    @property
    def exercises(self) -> int:
        return len(self.exercise_lines)

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
                     + sum(PER_EXERCISE + PER_LINE * n for n in self.exercise_lines))

    @property
    def estimate(self) -> str:
        return ESTIMATE.format(minutes=self.minutes)


def prose_words(markdown: str) -> int:
    text = re.sub(r"```.*?```", " ", markdown, flags=re.DOTALL)
    text = re.sub(r"<[^>\n]*>", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    return len(re.findall(r"[A-Za-z0-9_']+", text))


def solution_lines(code: str) -> int:
    """The lines of code between an exercise's solution markers."""
    return sum(1 for block in _SOLUTION.findall(code) for line in block.splitlines()
               if line.strip() and not line.strip().startswith("#"))


def chapter(path: Path) -> Chapter:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    text = ["".join(c["source"]) for c in cells
            if c["cell_type"] == "markdown" and not UNREAD.intersection(tags(c))]
    code = [c for c in cells if c["cell_type"] == "code"]
    return Chapter(path.stem, sum(map(prose_words, text)), len(code),
                   sum(1 for c in cells if LEARNER.intersection(tags(c))),
                   tuple(solution_lines("".join(c["source"])) for c in cells
                         if "exercise" in tags(c)))


def write_estimate(path: Path) -> bool:
    """Put the notebook's current estimate in its `estimate` cell (added after the title cell
    when it has none) and in its Chinese catalog; whether anything changed."""
    from keel_course.translation import read_catalog, write_catalog

    nb = json.loads(path.read_text(encoding="utf-8"))
    row = chapter(path)
    cells = nb["cells"]
    old = next((c for c in cells if "estimate" in tags(c)), None)
    if old is not None and "".join(old["source"]) == row.estimate:
        return False
    if old is None:
        old = {"cell_type": "markdown", "id": f"{path.stem[:3]}-estimate",
               "metadata": {"tags": ["estimate"]}, "source": []}
        cells.insert(1, old)
    before = "".join(old["source"])
    old["source"] = [row.estimate]
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    po = CATALOGS / f"{path.stem}.po"
    if po.exists():
        catalog = read_catalog(po, "zh_CN")
        if before in catalog:
            del catalog[before]
        catalog.add(row.estimate, ESTIMATE_ZH.format(minutes=row.minutes))
        write_catalog(catalog, po)
    return True


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
    args = [a for a in sys.argv[1:] if a != "--write"]
    folder = Path(args[0]) if args else Path("notebooks/solutions")
    if "--write" in sys.argv:
        for notebook in sorted(folder.glob("[0-9][0-9]*_*.ipynb")):
            if write_estimate(notebook):
                print(f"{notebook.name}: {chapter(notebook).estimate}", file=sys.stderr)
    print(table(chapters(folder)))
