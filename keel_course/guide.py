"""The parts of the instructor's guide, docs/instructors-guide.md, that must never go stale,
written from their sources: `keel-course guide` rewrites them, `keel-course guide --check` names
each stale one and exits 1 (`make guide`).

The guide is hand-written prose with generated parts between two marks:

    <!-- generated: KIND NAME -->
    ...
    <!-- /generated -->

KIND is `overview` (NAME `course`: each chapter's minutes, taken from its class plan in the
guide, its exercises and their points), `goals` (NAME a chapter: its "After this chapter you
can" list), `answers` (a chapter's model answers and what their checks print, from the solution
notebook) or `misconceptions` (NAME an exercise: every known-wrong answer of the table a test module
of tests/lab/ declares for it in its `WRONG_ANSWERS`, with the first hint the check prints for
it). A wrong answer is compiled from its own source as a notebook cell is, so a hint
that names a line counts from the answer's first line, as a learner sees it.

Every function takes the checkout it reads (`Checkout`): the solution notebooks, the guide
(`guide_path`) and the test tables (`wrong_answer_tables`) are its files.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import linecache
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from keel_checks.check import POINTS, VERIFIERS
from keel_checks.origin import lab_module
from keel_cli._cells import source, tags
from keel_course.checkout import Checkout
from keel_course.editions import CHAPTER, exercises, read_notebook
from keel_course.sources import failure, reading
from keel_lab._core.errors import LabError
from keel_lab._i18n import N_

REGION = re.compile(r"(<!-- generated: (\w+) (\w+) -->\n)(.*?)(<!-- /generated -->)", re.DOTALL)
PLAN = re.compile(r"^### Class plan \((\d+) min\)\n\n(\|.*?)\n\n", re.MULTILINE | re.DOTALL)
CHAPTER_HEAD = re.compile(r"^## Chapter (\d) - ", re.MULTILINE)


def guide_path(checkout: Checkout) -> Path:
    """The instructor's guide: docs/instructors-guide.md."""
    return checkout.root / "docs" / "instructors-guide.md"


def wrong_answers(checkout: Checkout) -> dict[str, tuple[str, str]]:
    """Each exercise's table of known-wrong answers, (test module, table name), as the test
    modules declare them: `WRONG_ANSWERS = {"exercise": TABLE, ...}` at module level, read
    from their source (the tests name their tables; no module of the lab names a test)."""
    found: dict[str, tuple[str, str]] = {}
    for path in sorted(wrong_answer_tables(checkout).glob("test_*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
                    and [getattr(t, "id", None) for t in node.targets] == ["WRONG_ANSWERS"]):
                found |= {key.value: (path.stem, value.id)
                          for key, value in zip(node.value.keys, node.value.values, strict=True)
                          if isinstance(key, ast.Constant) and isinstance(key.value, str)
                          and isinstance(value, ast.Name)}
    return found


def wrong_answer_tables(checkout: Checkout) -> Path:
    """The folder of the checks' test modules, whose tables of wrong answers the guide shows:
    tests/lab/."""
    return checkout.root / "tests" / "lab"


def read_guide(checkout: Checkout) -> str:
    """The guide's text; `LabError` when it cannot be read."""
    path = guide_path(checkout)
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.reason if isinstance(exc, UnicodeDecodeError) else exc.strerror or exc
        raise LabError("cannot_read", N_("{path}: cannot read ({reason})"),
                       path=path, reason=reason) from exc


def write_guide(checkout: Checkout) -> Path:
    """Rewrite every generated part of the guide from its sources; the guide's path."""
    path = guide_path(checkout)
    text = render(checkout, read_guide(checkout))
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise LabError("cannot_write", N_("cannot write {path}: {reason}"),
                       path=path, reason=failure(exc)) from exc
    return path


def check_guide(checkout: Checkout) -> list[str]:
    """The guide's stale generated parts, as `KIND NAME`; none when it is current."""
    return stale(checkout, read_guide(checkout))


def notebook(checkout: Checkout, chapter: str) -> dict[str, Any]:
    path = checkout.solutions / f"{chapter}.ipynb"
    with reading(path):
        return read_notebook(path)


def chapters(checkout: Checkout) -> list[str]:
    """The core path's chapters (`NN_name`); the optional deeper notebooks have no class plan."""
    return sorted(p.stem for p in checkout.solutions.glob("*.ipynb") if CHAPTER.match(p.name))


def sections(checkout: Checkout, chapter: str) -> list[str]:
    """The chapter's `##` headings in order, as JupyterLab's table of contents lists them."""
    return [line[3:].strip() for c in notebook(checkout, chapter)["cells"]
            if c["cell_type"] == "markdown"
            for line in source(c).splitlines() if line.startswith("## ")]


def title(checkout: Checkout, chapter: str) -> str:
    first = source(notebook(checkout, chapter)["cells"][0]).splitlines()[0]
    return first.lstrip("#").strip()


def goals(checkout: Checkout, chapter: str) -> list[str]:
    """The bullets after "After this chapter you can", links made relative to docs/."""
    text = source(notebook(checkout, chapter)["cells"][0]).split(
        "**After this chapter you can**", 1)[1]
    items = re.split(r"\n- ", "\n" + text.strip())[1:]
    return [re.sub(r"\]\((?!https?:|#)", "](../notebooks/", " ".join(item.split()))
            for item in items]


# --- the class plans, read back from the guide ---


Row = tuple[int, str, list[str], str]


def plans(checkout: Checkout, guide: str) -> dict[str, tuple[int, list[Row]]]:
    """Each chapter's class plan in the guide: its stated total and its rows (minutes,
    activity, the notebook sections it covers, how)."""
    starts = [(m.start(), f"0{m.group(1)}") for m in CHAPTER_HEAD.finditer(guide)]
    names = {name[:2]: name for name in chapters(checkout)}
    out = {}
    for n, (at, number) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(guide)
        found = PLAN.search(guide, at, end)
        if found is None:
            continue
        rows = []
        for line in found.group(2).splitlines()[2:]:
            minutes, activity, covered, how = (c.strip() for c in line.strip("|").split("|", 3))
            rows.append((int(minutes), activity,
                         [s.strip() for s in covered.split(";") if s.strip()], how))
        out[names[number]] = (int(found.group(1)), rows)
    return out


def overview(checkout: Checkout, guide: str) -> str:
    lines = ["| chapter | minutes | exercises (points) |", "|---|---|---|"]
    for chapter, (total, _) in plans(checkout, guide).items():
        names = ", ".join(f"`{e}` ({POINTS[e]})"
                          for e in exercises(notebook(checkout, chapter))) or "-"
        lines.append(f"| {title(checkout, chapter)} | {total} | {names} |")
    total = sum(t for t, _ in plans(checkout, guide).values())
    lines.append(f"| **the course** | **{total}** | **{sum(POINTS.values())} points** |")
    return "\n".join(lines)


# --- answers and misconceptions ---


def fenced(text: str, lang: str) -> str:
    fence = "````" if "```" in text else "```"
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def printed(cell: dict[str, Any]) -> str:
    return "".join(source({"source": o.get("text", "")}) for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream")


LABELS = {"exercise": "The model answer", "prediction": "The prediction",
          "observe": "The fault, written", "check": "Its check prints"}


def answers(checkout: Checkout, chapter: str) -> str:
    """Every cell a learner completes, solved, under the heading it sits under, with what its
    check (or the cell itself, for a fault) prints."""
    parts: list[str] = []
    heading = shown = ""
    for cell in notebook(checkout, chapter)["cells"]:
        found = [line[3:] for line in source(cell).splitlines() if line.startswith("## ")]
        if cell["cell_type"] == "markdown" and found:
            heading = found[-1]
        kind = next((k for k in LABELS if k in tags(cell)), "")
        if not kind:
            continue
        if heading != shown:
            parts.append(f"**{heading}**")
            shown = heading
        if kind != "check":
            parts.append(f"{LABELS[kind]}:\n\n" + fenced(source(cell), "python"))
        if kind in ("check", "observe"):
            parts.append(f"{LABELS['check'] if kind == 'check' else 'It prints'}:\n\n"
                         + fenced(printed(cell), "text"))
    return "\n\n".join(parts) or "This chapter has no exercise."


def fresh(tables: Path, module: str) -> ModuleType:
    """A test module of the folder `tables` loaded anew under a private name, so no earlier
    run's state (a counter a wrong answer advances) changes what its answers print."""
    path = tables / f"{module}.py"
    if not path.is_file():
        raise LabError("wrong_answers_missing", N_("{path} is missing: the guide's "
                                                   "misconceptions are its table of wrong "
                                                   "answers"), path=path)
    for folder in (tables, tables.parent):  # the tables, and tests/json_fields.py they may use
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(f"_guide_{module}", path)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def as_a_cell(fn: Callable[..., Any], module: ModuleType) -> tuple[Callable[..., Any], str]:
    """`fn` compiled from its own source in a cell of its own (its module's names in scope),
    and that source; the lab's own functions as they are."""
    if lab_module(fn.__module__):
        return fn, f"{fn.__name__} = {fn.__module__}.{fn.__qualname__}  # the lab's own"
    text = inspect.getsource(fn)
    filename = f"<answer {fn.__name__}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    scope = dict(vars(module))
    exec(compile(text, filename, "exec"), scope)
    compiled: Callable[..., Any] = scope[fn.__name__]
    return compiled, text


def misconceptions(checkout: Checkout, exercise: str, table_of: tuple[str, str]) -> str:
    """Each known-wrong answer of `exercise`'s table (`table_of`: its test module and table, as
    `wrong_answers` found them) with the first hint its check prints."""
    name, table_name = table_of
    module = fresh(wrong_answer_tables(checkout), name)
    table = getattr(module, table_name)
    parts = []
    for fn, _ in table:
        compiled, text = as_a_cell(fn, module)
        verdict = VERIFIERS[exercise](compiled)
        parts.append(f"**`{fn.__name__}`** - the first hint it gets:\n\n"
                     + fenced(verdict.hints[0], "text")
                     + "\n\n<details><summary>The answer</summary>\n\n"
                     + fenced(text, "python") + "\n\n</details>")
    return "\n\n".join(parts)


# --- the guide ---


def generated(checkout: Checkout, kind: str, name: str, guide: str) -> str:
    """The text of the part `<!-- generated: KIND NAME -->`; `LabError` for a part the guide
    cannot have (an unknown kind, chapter or exercise)."""
    if kind == "overview":
        return overview(checkout, guide)
    if kind in ("goals", "answers") and name not in chapters(checkout):
        raise LabError("part_names_no_chapter", N_("the generated part '{kind} {name}' names "
                                                   "no chapter; chapters: {chapters}"),
                       kind=kind, name=name, chapters=", ".join(chapters(checkout)))
    if kind == "goals":
        return "\n".join(f"- {g}" for g in goals(checkout, name))
    if kind == "answers":
        return answers(checkout, name)
    if kind == "misconceptions":
        tables = wrong_answers(checkout)
        if name not in tables:
            raise LabError("part_names_no_exercise", N_("the generated part '{kind} {name}' "
                                                        "names no exercise with a table of wrong "
                                                        "answers; exercises: {exercises}"),
                           kind=kind, name=name, exercises=", ".join(tables))
        return misconceptions(checkout, name, tables[name])
    raise LabError("unknown_part", N_("unknown generated part {kind!r} (overview, goals, "
                                      "answers or misconceptions)"), kind=kind)


def render(checkout: Checkout, guide: str) -> str:
    """The guide's text with every generated part written anew from its sources."""
    return REGION.sub(lambda m: f"{m.group(1)}{generated(checkout, m.group(2), m.group(3), guide)}"
                                f"\n{m.group(5)}", guide)


def stale(checkout: Checkout, guide: str) -> list[str]:
    """The generated parts that differ from what their sources give now, as `KIND NAME`."""
    fresh_text = render(checkout, guide)
    old = {(m.group(2), m.group(3)): m.group(4) for m in REGION.finditer(guide)}
    new = {(m.group(2), m.group(3)): m.group(4) for m in REGION.finditer(fresh_text)}
    return [f"{kind} {name}" for (kind, name), text in new.items()
            if old.get((kind, name)) != text]
