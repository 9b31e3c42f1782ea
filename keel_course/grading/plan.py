"""What of a submission is run, and what is judged without running it.

The grader never runs a check cell and never reads saved outputs. It finds each exercise of the
submission's chapter by its function's name (the exercise table's names, as the learner edition
has them, read from its view `keel_checks.progress.CHAPTERS`: a module-level dict, which the
snapshot watches), and runs, in notebook order:

- every cell that binds an exercise's name, whole: that cell is the learner's answer (a `def`,
  also inside `if` or `try`, a lambda or a callable instance assigned to the name);
- from every other cell, only what defines: functions, classes, assignments of a literal
  (`FATAL = {"unknown_tool"}`), assignments of the names that code uses (a constant computed in
  another cell, and what it is computed from), and the imports of names that code uses - not the
  experiments, plots and widgets around them (nor their imports: matplotlib and widgets would
  take most of a submission's time). The notebook's check passes such an answer, so the grader
  must too.

A check cell is recognised by its code, `check(name)` (nbgrader's edition imports `check`
first; compared as code: comments and spacing do not count), whatever its tags. The exercise
is checked where its (first) check cell stands, between the chunks before and after it: the
function judged is the one bound there, as running the notebook top to bottom would see it.
An exercise gets no points without running when its function is missing (deleted or renamed)
or no intact check cell is left (edited or removed).
"""

from __future__ import annotations

import ast
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache

from keel_checks.progress import CHAPTERS
from keel_course.grading.submission import Cell, Submission

_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)
_MAGIC = re.compile(r"^[%!].*$", re.MULTILINE)  # IPython line magics and shell escapes
_DEFINES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Chunk:
    """One cell's code to run: whole (an exercise's cell, `keep` None) or only its top-level
    statements numbered in `keep`."""

    cell: int
    source: str
    keep: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Plan:
    chapter: str | None
    exercises: tuple[str, ...] = ()  # the chapter's exercises, in course order
    chunks: tuple[Chunk, ...] = ()
    refused: dict[str, str] = field(default_factory=dict)  # exercise -> why it is not run
    error: str | None = None  # why the submission has no chapter
    # exercise -> how many chunks run before it is checked: its check cell's place, so the
    # function checked is the one bound there, as running the notebook top to bottom would see
    checked_after: dict[str, int] = field(default_factory=dict)
    elsewhere: dict[str, int] = field(default_factory=dict)  # name -> cell binding it, not run
    stubs: frozenset[str] = frozenset()  # exercises still the handout's stub (refused, not run)

    @property
    def to_run(self) -> list[str]:
        return [x for x in self.exercises if x not in self.refused]


NOT_ATTEMPTED = "not attempted: {x} is still the handout's stub"


def python(source: str) -> str:
    """A cell's source as Python: IPython's `%magic` and `!shell` lines become blank lines (so
    line numbers stay those of the cell)."""
    return _MAGIC.sub("", source)


# CPython 3.11 counts the AST constructor's recursion per interpreter, not per thread: two
# threads parsing at once (the grader plans submissions in a thread pool) can fail with
# "SystemError: AST constructor recursion depth mismatch". One parse at a time.
_PARSING = threading.Lock()


def parsed(source: str) -> ast.Module | None:
    try:
        with _PARSING:
            return ast.parse(python(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def definitions(tree: ast.Module, used: set[str]) -> list[int]:
    """The top-level statements of a cell that only define (see the module's note), by index;
    an import only when a name it binds is in `used` (a star import always)."""
    return [n for n, s in enumerate(tree.body)
            if _defines(s) or _assigns(s) & used
            or (isinstance(s, ast.Import | ast.ImportFrom) and _binds(s) & (used | {"*"}))]


def _assigns(statement: ast.stmt) -> set[str]:
    """The names a top-level assignment binds (none for any other statement)."""
    if not isinstance(statement, ast.Assign | ast.AnnAssign):
        return set()
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _defines(statement: ast.stmt) -> bool:
    return isinstance(statement, _DEFINES) or _literal(statement)


def _binds(statement: ast.Import | ast.ImportFrom) -> set[str]:
    return {(a.asname or a.name).split(".")[0] for a in statement.names}


def _used(trees: list[ast.AST]) -> set[str]:
    """Every name the code reads (a name loaded, deleted or declared global)."""
    return {n.id for t in trees for n in ast.walk(t) if isinstance(n, ast.Name)
            and not isinstance(n.ctx, ast.Store)}


def _literal(statement: ast.stmt) -> bool:
    value = statement.value if isinstance(statement, ast.Assign | ast.AnnAssign) else None
    if value is None:
        return False
    try:
        ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return False
    return True


def defined(cell: Cell) -> set[str]:
    """The names a cell binds at its top level, also inside `if`, `try`, `with` and loops (a
    function, a class, an assigned lambda or instance; not an import), or by its text its
    functions when it does not parse."""
    tree = parsed(cell.source)
    if tree is None:
        return set(_DEF.findall(cell.source))
    return {name for s in tree.body for name in _bound(s)}


def _bound(statement: ast.stmt) -> Iterator[str]:
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield statement.name
    elif isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        yield from (n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    elif not isinstance(statement, ast.Import | ast.ImportFrom):
        for child in ast.iter_child_nodes(statement):
            if isinstance(child, ast.stmt):
                yield from _bound(child)
            elif isinstance(child, ast.ExceptHandler | ast.match_case):
                yield from (n for s in child.body for n in _bound(s))


@cache
def expected_check(exercise: str) -> str:
    """The course's check cell for an exercise, as code."""
    with _PARSING:
        return ast.dump(ast.parse(f"check({exercise})"))


# the lab's own import of `check`: through the course's face, as the editions write it, or by
# the paths older editions wrote
_CHECK_IMPORTS = {"keel_lab.course", "keel_lab.course.checks", "keel_lab.course.checks.check"}


def _lab_check_import(statement: ast.stmt) -> bool:
    """`from keel_lab.course import check`: what nbgrader's edition puts before the call."""
    return (isinstance(statement, ast.ImportFrom) and statement.module in _CHECK_IMPORTS
            and [(a.name, a.asname) for a in statement.names] == [("check", None)])


def _checked(cell: Cell) -> str | None:
    """The exercise an intact check cell checks (`check(name)`, after the lab's own import of
    `check` at most), or None."""
    tree = parsed(cell.source)
    if tree is None:
        return None
    while tree.body and _lab_check_import(tree.body[0]):
        tree.body.pop(0)
    code = ast.dump(tree)
    return next((x for x in CHAPTERS if expected_check(x) == code), None)


def chapter_of(sub: Submission) -> tuple[str | None, str | None]:
    """(chapter, None), or (None, why): the chapter whose exercises the notebook names most, by
    the names its cells bind and the exercises its check cells check."""
    names: set[str] = set()
    for cell in sub.code_cells():
        names |= defined(cell)
        names.add(_checked(cell) or "")
    found: dict[str, int] = {}
    for exercise, chapter in CHAPTERS.items():
        found[chapter] = found.get(chapter, 0) + (exercise in names)
    best = max(found.values())
    if best == 0:
        return None, ("no exercise of the course in this notebook (exercises: "
                      + ", ".join(CHAPTERS) + ")")
    tied = [c for c, n in found.items() if n == best]
    if len(tied) > 1:
        return None, "exercises of several chapters in one notebook: " + ", ".join(tied)
    return tied[0], None


def plan(sub: Submission) -> Plan:
    chapter, error = chapter_of(sub)
    if chapter is None:
        return Plan(None, error=error)
    exercises = tuple(x for x, c in CHAPTERS.items() if c == chapter)
    code = sub.code_cells()
    binds = {c.number: defined(c) & set(exercises) for c in code}
    checks: dict[str, int] = {}  # exercise -> its (first) intact check cell
    for c in code:
        x = _checked(c)
        if x in exercises and x not in checks:
            checks[x] = c.number
    refused: dict[str, str] = {}
    stubs: set[str] = set()
    for x in exercises:
        if not any(x in b for b in binds.values()):
            refused[x] = f"no function {x} in the notebook (deleted or renamed?)"
        elif x not in checks:
            refused[x] = (f"the check cell of {x} was edited or removed (it must read "
                          f"`check({x})`): no points, whatever the function does")
        elif all(_stub(c, x) for c in code if x in binds[c.number]):
            refused[x] = NOT_ATTEMPTED.format(x=x)
            stubs.add(x)
    cells = [c for c in code if _checked(c) is None
             and (binds[c.number] or "check" not in c.tags)]  # an edited check cell: not run
    answers = {n for n, b in binds.items() if b}
    chunks = tuple(_chunks(cells, answers))
    at = {x: sum(1 for chunk in chunks if chunk.cell < checks[x])
          for x in exercises if x not in refused}
    return Plan(chapter, exercises, chunks, refused, checked_after=at,
                elsewhere=_elsewhere(cells, answers, chunks),
                stubs=frozenset(stubs))


def _stub(cell: Cell, name: str) -> bool:
    """Whether the cell's `def name` only raises NotImplementedError (a docstring aside): the
    handout's stub, untouched - said as such, and never run."""
    tree = parsed(cell.source)
    defs = [s for s in (tree.body if tree else ())
            if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == name]
    if not defs:
        return False
    body = [s for s in defs[-1].body
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    raised = body[0].exc if len(body) == 1 and isinstance(body[0], ast.Raise) else None
    if isinstance(raised, ast.Call):
        raised = raised.func
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"


def _chunks(cells: list[Cell], answers: set[int]) -> Iterator[Chunk]:
    trees = {c.number: parsed(c.source) for c in cells}
    running: list[ast.AST] = [t for n, t in trees.items() if t is not None and n in answers]
    running += [s for n, t in trees.items() if t is not None and n not in answers
                for s in t.body if _defines(s)]
    used = _used(running)
    others = [s for n, t in trees.items() if t is not None and n not in answers for s in t.body]
    while True:  # and what the assignments those names need read, until nothing is added
        grown = used | _used([s for s in others if _assigns(s) & used])
        if grown == used:
            break
        used = grown
    for cell in cells:
        tree = trees[cell.number]
        if cell.number in answers:
            yield Chunk(cell.number, cell.source)
        elif tree is not None and (keep := definitions(tree, used)):
            yield Chunk(cell.number, cell.source, tuple(keep))


def _elsewhere(cells: list[Cell], answers: set[int], chunks: tuple[Chunk, ...]
               ) -> dict[str, int]:
    """The names that other cells bind with statements the grader does not run, each with the
    (first) cell doing it: a NameError for one of them gets a hint saying why."""
    kept = {c.cell: set(c.keep or ()) for c in chunks}
    out: dict[str, int] = {}
    for cell in cells:
        tree = parsed(cell.source)
        if cell.number in answers or tree is None:
            continue
        for n, statement in enumerate(tree.body):
            if n not in kept.get(cell.number, set()):
                for name in _bound(statement):
                    out.setdefault(name, cell.number)
    return out
