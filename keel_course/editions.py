"""The two editions of a chapter: the solution notebook is the source, the learner edition is
generated from it by replacing each solution block with a stub.

The learner edition keeps no verdict: its check cells lose their saved output (no `PASSED` under
an unsolved exercise) and their `# NBVAL_CHECK_OUTPUT` line, so `pytest --nbval-lax` judges them
by the exception `check` raises, not by comparing printed lines. Predict-then-observe cells
(chapter 6) keep nothing that gives the answer away: a "prediction" cell's string is emptied, and
an "observe" cell loses its solution block and its saved output. A chapter with exercises ends
with "Your progress": the learner's passed exercises over the whole course
(`keel_lab.course.show_progress`), which only the learner edition has.

The cells nbgrader grades carry its metadata in the learner edition as in the nbgrader course's
source (`keel_course.nbgrader`), so a handout notebook, or the learner's working copy of one, is
a submission nbgrader autogrades: an exercise cell is an answer (a solution cell named after its
function), its check cell a test worth the exercise's `POINTS`, an observe cell an answer worth
nothing. A check cell imports `check` itself, as nbgrader runs it (an answer that rebinds the
name changes nothing), so the learner's copy of a locked cell is nbgrader's to the character.

Notebooks are handled as plain JSON dicts (nbformat 4), so this module needs no Jupyter import.
The sources live in the repository's `notebooks/solutions/`, not in the installed package: the
handout and the nbgrader course are built from a checkout, which their caller names
(`keel_course.checkout`).
"""

from __future__ import annotations

import ast
import copy
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from keel_checks.check import POINTS
from keel_cli._cells import CHECK_MARK, function_name, source, tags
from keel_course.checkout import Checkout
from keel_lab._core.errors import LabError
from keel_lab._i18n import N_

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
STUB = 'raise NotImplementedError("your code here")'
NBGRADER_SCHEMA = 3  # the version of nbgrader's cell metadata (nbgrader 0.6 to 0.9)
IMPORT_CHECK = "from keel_lab.course import check\n\n"
# A core chapter's file name (01_history.ipynb); any other notebook (00_asyncio_primer,
# 04a_where_calls_close) is an optional deeper one beside the chapters.
CHAPTER = re.compile(r"0[1-9]_")
_PREDICTION = re.compile(r'^(\w+ = )"[^"\n]*"', re.MULTILINE)
_BLOCK = re.compile(rf"^([ \t]*){re.escape(BEGIN)}\n.*?^[ \t]*{re.escape(END)}[ \t]*$",
                    re.MULTILINE | re.DOTALL)

Notebook = dict[str, Any]

PROGRESS_CELLS: list[dict[str, Any]] = [
    {"cell_type": "markdown", "id": "your-progress", "metadata": {}, "source": [
        "## Your progress\n", "\n",
        "Which exercises of the course you have passed so far, in this chapter and the others:\n",
        "every check you run is noted in a small file next to your notebooks.",
    ]},
    {"cell_type": "code", "execution_count": None, "id": "your-progress-code", "metadata": {},
     "outputs": [], "source": [
         "# NBVAL_IGNORE_OUTPUT\n",
         "from keel_lab.course import show_progress\n", "\n",
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
    for n, meta in graded_cells(nb).items():
        nb["cells"][n].setdefault("metadata", {})["nbgrader"] = meta
    if exercises(nb):
        nb["cells"].extend(copy.deepcopy(PROGRESS_CELLS))
    for cell in nb["cells"]:
        kind = tags(cell)
        if "exercise" in kind or "observe" in kind:
            cell["source"] = strip_solutions(source(cell))
        elif "check" in kind:
            cell["source"] = check_source(source(cell))
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


def check_source(text: str) -> str:
    """A solution's check cell as the learner edition and nbgrader have it: importing `check`
    itself, without its `# NBVAL_CHECK_OUTPUT` line."""
    return IMPORT_CHECK + unmarked(text)


def nbgrader_metadata(grade_id: str, *, solution: bool = False, grade: bool = False,
                      locked: bool = False, points: int | None = None) -> dict[str, Any]:
    """A cell's `nbgrader` metadata (schema version 3, without the checksum nbgrader adds)."""
    meta: dict[str, Any] = {"grade": grade, "grade_id": grade_id, "locked": locked,
                            "schema_version": NBGRADER_SCHEMA, "solution": solution}
    if points is not None:
        meta["points"] = points
    return meta


def graded_cells(nb: Notebook) -> dict[int, dict[str, Any]]:
    """nbgrader's metadata for the cells it grades, by cell index: each exercise cell an answer
    named after its function, its check cell (`<function>_check`) a locked test worth the
    exercise's points, each observe cell (`observe_<function>`) an answer worth nothing. A
    check of an exercise without points in `checks.check.POINTS` gets none (`keel-course
    nbgrader` refuses its chapter)."""
    graded = {}
    exercise = ""
    for n, cell in enumerate(nb["cells"]):
        kind = tags(cell)
        if "exercise" in kind:
            exercise = function_name(source(cell))
            graded[n] = nbgrader_metadata(exercise, solution=True)
        elif "check" in kind and exercise in POINTS:
            graded[n] = nbgrader_metadata(f"{exercise}_check", grade=True, locked=True,
                                          points=POINTS[exercise])
        elif "observe" in kind:
            graded[n] = nbgrader_metadata(f"observe_{function_name(source(cell))}",
                                          solution=True)
    return graded


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


def solution_paths(checkout: Checkout, names: Sequence[str] = ()) -> list[Path]:
    """The checkout's solution notebooks, in course order; with `names`, those whose file name
    contains one of them. `LabError` when there are none, or a name matches no chapter."""
    paths = sorted(checkout.solutions.glob("*.ipynb"))
    if not paths:
        raise LabError("no_solutions", N_("no solution notebooks in {folder}: give a checkout "
                                          "of the keel-lab repository"),
                       folder=checkout.solutions)
    unknown = [n for n in names if not any(n in p.name for p in paths)]
    if unknown:
        raise LabError("chapter_not_found", N_("no chapter matches {name!r}; chapters: "
                                               "{chapters}"),
                       name=unknown[0], chapters=", ".join(p.stem for p in paths))
    return [p for p in paths if not names or any(n in p.name for n in names)]


def read_notebook(path: Path) -> Notebook:
    value: Notebook = json.loads(path.read_text(encoding="utf-8"))
    return value


def notebook_text(nb: Notebook) -> str:
    """A notebook as the course saves it: one-space indent, UTF-8 kept, a final newline."""
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def static_outputs(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A widget cell's outputs as saved: each display's static snapshot (`text/html`, which
    `keel_lab.course._notebook.Explorer` adds), without the live view, whose model a saved
    notebook does not keep."""
    kept = []
    for output in outputs:
        data = output.get("data", {})
        if "text/html" in data:
            kept.append({**output, "data": {k: v for k, v in data.items() if k != WIDGET_VIEW}})
    return kept
