"""The two editions of a chapter: the solution notebook is the source, the learner edition is
generated from it by replacing each solution block with a stub.

The learner edition keeps no verdict: its check cells lose their saved output (no `PASSED` under
an unsolved exercise) and their `# NBVAL_CHECK_OUTPUT` line, so `pytest --nbval-lax` judges them
by the exception `check` raises, not by comparing printed lines. Predict-then-observe cells
(chapter 6) keep nothing that gives the answer away: a "prediction" cell's string is emptied, and
an "observe" cell loses its solution block and its saved output. A chapter with exercises ends
with "Your progress": the learner's passed exercises over the whole course
(`keel_lab.course.progress`), which only the learner edition has.

Notebooks are handled as plain JSON dicts (nbformat 4), so this module needs no Jupyter import.
The sources live in the repository's `notebooks/solutions/`, not in the installed package: the
handout and the nbgrader course are built from a checkout.
"""

from __future__ import annotations

import ast
import copy
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.course.cells import CHECK_MARK, function_name, source, tags

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
STUB = 'raise NotImplementedError("your code here")'
_PREDICTION = re.compile(r'^(\w+ = )"[^"\n]*"', re.MULTILINE)
_BLOCK = re.compile(rf"^([ \t]*){re.escape(BEGIN)}\n.*?^[ \t]*{re.escape(END)}[ \t]*$",
                    re.MULTILINE | re.DOTALL)

Notebook = dict[str, Any]

COURSE = Path(__file__).resolve().parents[1] / "notebooks"
SOLUTIONS = COURSE / "solutions"

PROGRESS_CELLS: list[dict[str, Any]] = [
    {"cell_type": "markdown", "id": "your-progress", "metadata": {}, "source": [
        "## Your progress\n", "\n",
        "Which exercises of the course you have passed so far, in this chapter and the others:\n",
        "every check you run is noted in a small file next to your notebooks.",
    ]},
    {"cell_type": "code", "execution_count": None, "id": "your-progress-code", "metadata": {},
     "outputs": [], "source": [
         "# NBVAL_IGNORE_OUTPUT\n",
         "from keel_lab.course.progress import show_progress\n", "\n",
         "show_progress()",
     ]},
]


def strip_solutions(text: str) -> str:
    """Replace every solution block with a stub at the block's indentation."""
    return _BLOCK.sub(lambda m: f"{m.group(1)}{STUB}", text)


def learner_edition(solution: Notebook) -> Notebook:
    """The learner's copy: exercise and observe cells stubbed, predictions emptied, those cells
    and the check cells cleared, every other output kept; "Your progress" after any exercise."""
    nb = copy.deepcopy(solution)
    if exercises(nb):
        nb["cells"].extend(copy.deepcopy(PROGRESS_CELLS))
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


def solution_paths(names: Sequence[str] = ()) -> list[Path]:
    """The solution notebooks, in course order; with `names`, those whose file name contains one
    of them. `LabError` when there are none: the package runs outside a checkout, or a name
    matches no chapter."""
    paths = sorted(SOLUTIONS.glob("*.ipynb"))
    if not paths:
        raise LabError(f"no solution notebooks in {SOLUTIONS}: run this from a checkout of "
                       "the keel-lab repository")
    unknown = [n for n in names if not any(n in p.name for p in paths)]
    if unknown:
        raise LabError(f"no chapter matches {unknown[0]!r}; chapters: "
                       + ", ".join(p.stem for p in paths))
    return [p for p in paths if not names or any(n in p.name for n in names)]


def read_notebook(path: Path) -> Notebook:
    value: Notebook = json.loads(path.read_text(encoding="utf-8"))
    return value


def notebook_text(nb: Notebook) -> str:
    """A notebook as the course saves it: one-space indent, UTF-8 kept, a final newline."""
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
