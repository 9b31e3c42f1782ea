"""The two editions of a chapter: the solution notebook is the source, the learner edition is
generated from it by replacing each solution block with a stub.

The learner edition keeps no verdict: its check cells lose their saved output (no `PASSED` under
an unsolved exercise) and their `# NBVAL_CHECK_OUTPUT` line, so `pytest --nbval-lax` judges them
by the exception `check` raises, not by comparing printed lines. Predict-then-observe cells
(chapter 6) keep nothing that gives the answer away: a "prediction" cell's string is emptied, and
an "observe" cell loses its solution block and its saved output.

Notebooks are handled as plain JSON dicts (nbformat 4), so this module needs no Jupyter import.
"""

from __future__ import annotations

import ast
import copy
import re
from typing import Any

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
STUB = 'raise NotImplementedError("your code here")'
CHECK_MARK = "# NBVAL_CHECK_OUTPUT"
_PREDICTION = re.compile(r'^(\w+ = )"[^"\n]*"', re.MULTILINE)
_BLOCK = re.compile(rf"^([ \t]*){re.escape(BEGIN)}\n.*?^[ \t]*{re.escape(END)}[ \t]*$",
                    re.MULTILINE | re.DOTALL)

Notebook = dict[str, Any]


def source(cell: dict[str, Any]) -> str:
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else str(text)


def tags(cell: dict[str, Any]) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def strip_solutions(text: str) -> str:
    """Replace every solution block with a stub at the block's indentation."""
    return _BLOCK.sub(lambda m: f"{m.group(1)}{STUB}", text)


def learner_edition(solution: Notebook) -> Notebook:
    """The learner's copy: exercise and observe cells stubbed, predictions emptied, those cells
    and the check cells cleared, every other output kept."""
    nb = copy.deepcopy(solution)
    for cell in nb["cells"]:
        kind = tags(cell)
        if "exercise" in kind or "observe" in kind:
            cell["source"] = strip_solutions(source(cell))
        elif "check" in kind:
            cell["source"] = unmarked(source(cell))
        elif "prediction" in kind:
            cell["source"] = _PREDICTION.sub(r'\1""', source(cell))
        else:
            continue
        cell["outputs"] = []
        cell["execution_count"] = None
    return nb


def unmarked(text: str) -> str:
    """A check cell's source without its `# NBVAL_CHECK_OUTPUT` line."""
    return "".join(line for line in text.splitlines(keepends=True)
                   if line.strip() != CHECK_MARK)


def fill_solutions(learner: Notebook, solution: Notebook) -> Notebook:
    """The learner's copy with the solutions put back, as a learner who solved it would have."""
    nb = copy.deepcopy(learner)
    answers = iter(c for c in solution["cells"] if _answered(c))
    for cell in nb["cells"]:
        if _answered(cell):
            cell["source"] = source(next(answers))
    return nb


def _answered(cell: dict[str, Any]) -> bool:
    """A cell whose learner copy the learner completes: an exercise, a prediction, a fault."""
    return bool({"exercise", "prediction", "observe"} & set(tags(cell)))


def exercises(nb: Notebook) -> list[str]:
    """The exercise names of a notebook, in order (from each exercise cell's function)."""
    return [function_name(source(c)) for c in nb["cells"] if "exercise" in tags(c)]


def function_name(text: str) -> str:
    """The one top-level function an exercise cell defines, or "" if it defines another number."""
    defs = [n for n in ast.parse(text).body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    return defs[0].name if len(defs) == 1 else ""


def problems(nb: Notebook) -> list[str]:
    """What breaks the course's conventions for exercise and check cells."""
    out = []
    cells = nb["cells"]
    for n, cell in enumerate(cells):
        text = source(cell)
        if "exercise" in tags(cell):
            tree = ast.parse(text)
            defs = [x for x in tree.body
                    if isinstance(x, ast.FunctionDef | ast.AsyncFunctionDef)]
            if len(tree.body) != 1 or len(defs) != 1:
                out.append(f"cell {n}: an exercise cell defines exactly one top-level function")
            if text.count(BEGIN) != 1 or text.count(END) != 1:
                out.append(f"cell {n}: an exercise cell has one {BEGIN} ... {END} block")
            follower = cells[n + 1] if n + 1 < len(cells) else {}
            if "check" not in tags(follower):
                out.append(f"cell {n}: an exercise cell is followed by its check cell")
        if "check" in tags(cell) and not text.startswith(CHECK_MARK):
            out.append(f"cell {n}: a check cell starts with {CHECK_MARK}")
    return out
