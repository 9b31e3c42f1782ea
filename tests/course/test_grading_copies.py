"""Copies of the lab's own code (issue 35): the package a student receives holds the lab's
batching, collecting and resuming functions, each the whole answer of an exercise; a learner's
function that is one of them under the exercise's name - whatever its docstring - gets 0 points
and a row saying whose copy it is. A learner's own answer (the solutions') is never taken for
one. And partial credit: a make_batches right by the tools' declarations but wrong on a name no
tool has earns the one point its passing lines carry."""

from __future__ import annotations

import ast
import inspect
import json
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import Any

import pytest
from test_grading_grade import NOTEBOOKS, _solved_with, edited, solved

from keel_checks.exercises import EXERCISES
from keel_course.grading import grade
from keel_course.grading.guard import Guard, _nested, lab_name
from keel_course.grading.integrity import Snapshot, import_lab
from keel_lab._core.batching import make_batches
from keel_lab._core.executor import gather_by_call_id
from keel_lab.course._production.store import resume_plan

pytestmark = pytest.mark.lab_wide

import_lab()
# exercise -> the lab function that is its whole answer, as `lab_name` names it
TWINS: dict[str, tuple[Callable[..., Any], str]] = {
    "make_batches": (make_batches, "keel_lab's _core.batching.make_batches"),
    "collect_batch": (gather_by_call_id, "keel_lab's _core.executor.gather_by_call_id"),
    "calls_to_resume": (resume_plan, "keel_lab's course._production.store.resume_plan"),
}
STUB_DOC = ('    """Group neighbours that may share a batch; every other call runs alone, in '
            'order."""\n')


def pasted(fn: Callable[..., Any], name: str, docstring: str | None) -> str:
    """`fn`'s source under `name`, its docstring replaced by `docstring` (None: kept; "": none),
    as a learner pastes it into the exercise cell."""
    source = inspect.getsource(fn)
    lines = source.splitlines(True)
    body = ast.parse(source).body[0].body  # type: ignore[attr-defined]
    header = "".join(lines[: body[0].lineno - 1])
    if docstring is not None:
        source = header + docstring + "".join(lines[body[1].lineno - 1:])
    return "from __future__ import annotations\n" + source.replace(
        f"def {fn.__name__}(", f"def {name}(", 1)


def function_code(text: str, name: str) -> CodeType:
    module = compile(text, "<cell 3>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    return next(c for c in _nested(module) if c.co_name == name)


@pytest.fixture(scope="module")
def guard() -> Guard:
    return Guard(Snapshot())


@pytest.mark.parametrize("docstring", [None, STUB_DOC, ""], ids=["verbatim", "stub", "none"])
@pytest.mark.parametrize("exercise", list(TWINS))
def test_a_copy_of_the_lab_is_found_whatever_its_docstring(guard, exercise, docstring):
    fn, name = TWINS[exercise]
    lab = guard.copied(function_code(pasted(fn, exercise, docstring), exercise))
    assert lab is not None and lab_name(lab) == name


def test_the_lab_functions_own_code_is_no_copy(guard):
    assert all(guard.copied(fn.__code__) is None for fn, _ in TWINS.values())


def _answer_cells(chapter: str) -> list[str]:
    nb = json.loads((NOTEBOOKS / "solutions" / f"{chapter}.ipynb").read_text("utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda x: x.name)
def test_no_solution_answer_is_taken_for_a_copy(guard, exercise):
    cells = [c for c in _answer_cells(exercise.chapter) if f"def {exercise.name}(" in c]
    assert cells
    for cell in cells:
        module = compile(cell, "<cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        assert [c.co_name for c in _nested(module) if guard.copied(c)] == []


UNKNOWN_IS_SAFE = '''def make_batches(requests, tools):
    """Group neighbours that may share a batch; every other call runs alone, in order."""
    batches, together = [], False
    for request in requests:
        tool = tools.get(request.name)
        safe = tool is None or (tool.concurrency_safe and not tool.requires_approval)
        if safe and together:
            batches[-1].append(request)
        else:
            batches.append([request])
        together = safe
    return batches
'''


@pytest.mark.slow
def test_the_gradebook_flags_a_copy_and_gives_partial_credit(tmp_path):
    source = inspect.getsource(make_batches).splitlines(True)
    under_the_stub = "def make_batches(requests, tools):\n" + STUB_DOC + "".join(source[2:])
    submissions = {
        "copy_under_the_stub": _solved_with(under_the_stub),
        "copy_verbatim": _solved_with(pasted(make_batches, "make_batches", None)),
        "unknown_is_safe": _solved_with(UNKNOWN_IS_SAFE),
        "solved": solved("03_batching"),
        "collect_copy": edited(solved("06_faults"), "exercise",
                               lambda s: pasted(gather_by_call_id, "collect_batch", "")),
    }
    paths = []
    for name, nb in submissions.items():
        paths.append(tmp_path / f"{name}.ipynb")
        paths[-1].write_text(json.dumps(nb), "utf-8")
    rows = {Path(r.path).stem: r for r in grade(paths, timeout=60, jobs=2)}
    for name in ("copy_under_the_stub", "copy_verbatim", "collect_copy"):
        exercise = rows[name].exercises[0]
        twin = TWINS[exercise.name][1]
        assert (exercise.passed, exercise.points) == (False, 0), rows[name]
        said = f"{exercise.name} is a copy of {twin} (the lab's own code under another name)"
        assert exercise.hint is not None and said in exercise.hint
        assert rows[name].error is not None and said in rows[name].error
    partial = rows["unknown_is_safe"].exercises[0]
    assert (partial.passed, partial.points, partial.max_points) == (False, 1, 2), partial
    assert partial.hint is not None and "no tool has that name" in partial.hint
    assert (rows["solved"].points, rows["solved"].error) == (2, None), rows["solved"]
