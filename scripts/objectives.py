"""The objectives table of docs/authors.md, computed from the solution notebooks: each core
chapter's "After this chapter you can" bullets, with the cells where the learner practises each
one and the cells that assess it.

A chapter declares them on the markdown cell that holds the bullets, in its metadata:
`"objectives": [{"activity": [cell ids], "assessment": [cell ids]}, ...]`, one entry per bullet
in order. An activity is a code cell the learner runs, changes or writes; an assessment is a
cell that tells the learner whether they have it: an exercise's check, a prediction (answered
back), an observed fault, or the learner's written answer to a checkpoint question compared with
the hidden one. tests/course/test_objectives.py checks every declaration and this table.

Run: .venv/bin/python scripts/objectives.py [NOTEBOOKS_DIR]   (default notebooks/solutions)
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keel_cli._cells import function_name, source, tags

HEAD = "**After this chapter you can**"
ASSESSING = {"check", "prediction", "observe", "answer"}
_QUESTION = re.compile(r"^\*\*(\d+)\. ", re.MULTILINE)
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_HEADING = re.compile(r"^#+ (.+)$", re.MULTILINE)
_FENCED = re.compile(r"```.*?```", re.DOTALL)

Cell = dict[str, Any]


@dataclass(frozen=True)
class Objective:
    chapter: str
    text: str
    activity: tuple[str, ...]  # cell ids
    assessment: tuple[str, ...]


def bullets(markdown: str) -> list[str]:
    """The objectives: the bullet list right after the heading, each item on one line."""
    after = markdown.split(HEAD, 1)[1].strip("\n")
    items: list[str] = []
    for line in after.splitlines():
        if line.startswith("- "):
            items.append(line[2:].strip())
        elif line.startswith("  ") and items:
            items[-1] += " " + line.strip()
        elif items:
            break
    return [_LINK.sub(r"\1", item) for item in items]


def objectives(path: Path) -> list[Objective]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    cell = next((c for c in cells if c["cell_type"] == "markdown" and HEAD in source(c)), None)
    if cell is None:
        return []
    declared = cell.get("metadata", {}).get("objectives", [])
    texts = bullets(source(cell))
    return [Objective(path.stem, text, tuple(d.get("activity", ())),
                      tuple(d.get("assessment", ())))
            for text, d in zip(texts, [*declared, *[{}] * (len(texts) - len(declared))],
                               strict=True)]


def describe(cell_id: str, cells: list[Cell]) -> str:
    """A cell as a reader of the table finds it: its kind and its name or section."""
    n = next(i for i, c in enumerate(cells) if c.get("id") == cell_id)
    cell, kind = cells[n], set(tags(cells[n]))
    before = cells[:n]
    if "check" in kind or "exercise" in kind:
        name = next((function_name(source(c)) for c in reversed([*before, cell])
                     if "exercise" in tags(c)), "") or "?"
        return f"check of `{name}`" if "check" in kind else f"exercise `{name}`"
    if "prediction" in kind:
        return f"prediction `{source(cell).split('=')[0].strip()}`"
    if "observe" in kind:
        return f"observed fault `{function_name(source(cell)) or '?'}`"
    if "answer" in kind:
        asked = _QUESTION.findall(source(cells[n - 1]))
        return f"written answer to question {asked[-1]}" if asked else "written summary"
    heading = next((h for c in reversed(before) if c["cell_type"] == "markdown"
                    for h in reversed(_HEADING.findall(_FENCED.sub("", source(c))))),
                   "the opening")
    section = _LINK.sub(r"\1", heading)
    return f"{'try' if 'try' in kind else 'cell'} in \"{section}\""


def table(folder: Path) -> str:
    rows = ["| chapter | objective | practised in | assessed by |", "|---|---|---|---|"]
    for path in sorted(folder.glob("0[1-8]_*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for o in objectives(path):
            practised = "; ".join(dict.fromkeys(describe(c, cells) for c in o.activity))
            assessed = "; ".join(dict.fromkeys(describe(c, cells) for c in o.assessment))
            rows.append(f"| {o.chapter[:2]} | {o.text.replace('|', '/')} | {practised} "
                        f"| {assessed or '**none**'} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("notebooks/solutions")))
