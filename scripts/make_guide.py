"""Write the parts of docs/instructors-guide.md that must never go stale, from their sources.

Run: .venv/bin/python scripts/make_guide.py          (rewrite the generated parts)
     .venv/bin/python scripts/make_guide.py --check  (exit 1 naming each stale part)

The guide is hand-written prose with generated parts between two marks:

    <!-- generated: KIND NAME -->
    ...
    <!-- /generated -->

KIND is `overview` (NAME `course`: each chapter's minutes, taken from its class plan in the
guide, its exercises and their points), `goals` (NAME a chapter: its "After this chapter you
can" list), `answers` (a chapter's model answers and what their checks print, from the solution
notebook) or `misconceptions` (NAME an exercise: every known-wrong answer of the checks' test
tables in tests/lab/test_checks*.py with the first hint the check prints for it). A wrong answer is
compiled from its own source as a notebook cell is, so a hint that names a line counts from the
answer's first line, as a learner sees it.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import linecache
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from keel_course.editions import exercises
from keel_lab.course.cells import source, tags
from keel_lab.course.checks.check import POINTS, VERIFIERS

REPO = Path(__file__).resolve().parent.parent
GUIDE = REPO / "docs" / "instructors-guide.md"
SOLUTIONS = REPO / "notebooks" / "solutions"
TESTS = REPO / "tests" / "lab"

# Each exercise's table of known-wrong answers: (test module, table name); every entry is
# (function, a part of the hint the test expects).
WRONG_ANSWERS: dict[str, tuple[str, str]] = {
    "answer_all": ("test_checks", "ANSWER_ALL_WRONG"),
    "count_in_order": ("test_checks_count_in_order", "WRONG"),
    "pair_results": ("test_checks", "PAIR_WRONG"),
    "make_batches": ("test_checks", "BATCH_WRONG"),
    "is_executable": ("test_checks", "EXECUTABLE_WRONG"),
    "run_status": ("test_checks", "STATUS_WRONG"),
    "collect_batch": ("test_checks_collect_batch", "WRONG"),
    "answer_responses": ("test_checks_providers", "WRONG"),
}

REGION = re.compile(r"(<!-- generated: (\w+) (\w+) -->\n)(.*?)(<!-- /generated -->)", re.DOTALL)
PLAN = re.compile(r"^### Class plan \((\d+) min\)\n\n(\|.*?)\n\n", re.MULTILINE | re.DOTALL)
CHAPTER_HEAD = re.compile(r"^## Chapter (\d) - ", re.MULTILINE)


def notebook(chapter: str) -> dict[str, Any]:
    nb: dict[str, Any] = json.loads((SOLUTIONS / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    return nb


def chapters() -> list[str]:
    return sorted(p.stem for p in SOLUTIONS.glob("*.ipynb"))


def sections(chapter: str) -> list[str]:
    """The chapter's `##` headings in order, as JupyterLab's table of contents lists them."""
    return [line[3:].strip() for c in notebook(chapter)["cells"] if c["cell_type"] == "markdown"
            for line in source(c).splitlines() if line.startswith("## ")]


def title(chapter: str) -> str:
    first = source(notebook(chapter)["cells"][0]).splitlines()[0]
    return first.lstrip("#").strip()


def goals(chapter: str) -> list[str]:
    """The bullets after "After this chapter you can", links made relative to docs/."""
    text = source(notebook(chapter)["cells"][0]).split("**After this chapter you can**", 1)[1]
    items = re.split(r"\n- ", "\n" + text.strip())[1:]
    return [re.sub(r"\]\((?!https?:|#)", "](../notebooks/", " ".join(item.split()))
            for item in items]


# --- the class plans, read back from the guide ---


Row = tuple[int, str, list[str], str]


def plans(guide: str) -> dict[str, tuple[int, list[Row]]]:
    """Each chapter's class plan in the guide: its stated total and its rows (minutes,
    activity, the notebook sections it covers, how)."""
    starts = [(m.start(), f"0{m.group(1)}") for m in CHAPTER_HEAD.finditer(guide)]
    names = {name[:2]: name for name in chapters()}
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


def overview(guide: str) -> str:
    lines = ["| chapter | minutes | exercises (points) |", "|---|---|---|"]
    for chapter, (total, _) in plans(guide).items():
        names = ", ".join(f"`{e}` ({POINTS[e]})" for e in exercises(notebook(chapter))) or "-"
        lines.append(f"| {title(chapter)} | {total} | {names} |")
    total = sum(t for t, _ in plans(guide).values())
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


def answers(chapter: str) -> str:
    """Every cell a learner completes, solved, under the heading it sits under, with what its
    check (or the cell itself, for a fault) prints."""
    parts: list[str] = []
    heading = shown = ""
    for cell in notebook(chapter)["cells"]:
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


def fresh(module: str) -> ModuleType:
    """A test module loaded anew under a private name, so no earlier run's state (a counter a
    wrong answer advances) changes what its answers print."""
    for folder in (TESTS, TESTS.parent):  # the tables, and tests/json_fields.py they may use
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(f"_guide_{module}", TESTS / f"{module}.py")
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def as_a_cell(fn: Callable[..., Any], module: ModuleType) -> tuple[Callable[..., Any], str]:
    """`fn` compiled from its own source in a cell of its own (its module's names in scope),
    and that source; the lab's own functions as they are."""
    if fn.__module__.startswith("keel_lab"):
        return fn, f"{fn.__name__} = {fn.__module__}.{fn.__qualname__}  # the lab's own"
    text = inspect.getsource(fn)
    filename = f"<answer {fn.__name__}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    scope = dict(vars(module))
    exec(compile(text, filename, "exec"), scope)
    compiled: Callable[..., Any] = scope[fn.__name__]
    return compiled, text


def misconceptions(exercise: str) -> str:
    module = fresh(WRONG_ANSWERS[exercise][0])
    table = getattr(module, WRONG_ANSWERS[exercise][1])
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


def generated(kind: str, name: str, guide: str) -> str:
    if kind == "overview":
        return overview(guide)
    if kind == "goals":
        return "\n".join(f"- {g}" for g in goals(name))
    if kind == "answers":
        return answers(name)
    if kind == "misconceptions":
        return misconceptions(name)
    raise ValueError(f"unknown generated part {kind!r}")


def render(guide: str) -> str:
    return REGION.sub(lambda m: f"{m.group(1)}{generated(m.group(2), m.group(3), guide)}\n"
                                f"{m.group(5)}", guide)


def stale(guide: str) -> list[str]:
    """The generated parts that differ from what their sources give now."""
    fresh_text = render(guide)
    old = {(m.group(2), m.group(3)): m.group(4) for m in REGION.finditer(guide)}
    new = {(m.group(2), m.group(3)): m.group(4) for m in REGION.finditer(fresh_text)}
    return [f"{kind} {name}" for (kind, name), text in new.items()
            if old.get((kind, name)) != text]


def main(argv: list[str]) -> int:
    guide = GUIDE.read_text(encoding="utf-8")
    if "--check" in argv:
        parts = stale(guide)
        for part in parts:
            print(f"{GUIDE.name}: '{part}' is stale: run scripts/make_guide.py", file=sys.stderr)
        return 1 if parts else 0
    GUIDE.write_text(render(guide), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
