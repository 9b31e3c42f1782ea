"""Re-execute every solution notebook, save its outputs, and regenerate the learner edition.

Run: make notebooks   (or .venv/bin/python scripts/build_notebooks.py [--editions-only] [NAME ...])
Outputs are deterministic (seeds, virtual clock, fixed ids, PNGs without metadata), so running
this twice changes nothing. Widget cells keep only their static snapshot: the live view needs
a kernel (and a widget state the notebooks do not save).
The learner edition is executed too, as a learner's Run All leaves it: its checks say NOT YET
and the notebook runs to the end (a cell that fails stops the build), and a cell that answers a
prediction shows only the line that asks for it; its check cells and "Your progress" are then
cleared.
`--editions-only` executes nothing: it regenerates the learner edition from the solutions as
saved, with the outputs its saved learner edition has for the same code, for a change to the
editions' text (seconds instead of minutes).

Both languages by default (`--language en` or `--language zh` for one): the Chinese edition,
notebooks/zh/ (solutions in notebooks/zh/solutions/), is the English solutions with their
markdown translated by the catalogs in locale/ (`keel_course.translation`) and a first code
cell that sets the language, executed the same way. With `--editions-only` it is retranslated
with the outputs it saved: after a change to the catalogs alone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from keel_cli._cells import tags
from keel_course import translation
from keel_course.checkout import Checkout
from keel_course.editions import (
    PROGRESS_CELLS,
    learner_edition,
    notebook_text,
    problems,
    read_notebook,
    solution_paths,
    static_outputs,
)
from keel_lab._core.errors import LabError
from keel_lab._i18n import N_

os.environ["KEEL_PROGRESS"] = "off"  # the solutions' checks leave no progress file beside them
os.environ.pop("KEEL_CHECKS", None)  # a learner's Jupyter: a check that does not pass runs on
CHECKOUT = Checkout.at(Path(__file__).resolve().parent.parent)


def execute(path: Path) -> dict[str, Any]:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", record_timing=False,
                   store_widget_state=True,  # nbclient needs it for Output widgets
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    for cell in nb.cells:
        if "widget" in tags(cell):
            cell.outputs = nbformat.from_dict(static_outputs(cell.outputs))
        elif cell.cell_type == "code":
            cell.outputs = coalesce_streams(cell.outputs)
    nb.metadata.pop("widgets", None)
    value: dict[str, Any] = json.loads(nbformat.writes(nb))
    return value


def coalesce_streams(outputs: list[Any]) -> list[Any]:
    """One output per run of text on one stream: the kernel flushes stdout on a timer, so where
    a print would be split depends on the machine's load, not on the notebook."""
    out: list[Any] = []
    for o in outputs:
        if (out and o.output_type == "stream" and out[-1].output_type == "stream"
                and out[-1].name == o.name):
            out[-1].text += o.text
        else:
            out.append(o)
    return out


def write(nb: dict[str, Any], path: Path) -> None:
    path.write_text(notebook_text(nb), encoding="utf-8")


def saved(path: Path) -> dict[str, Any]:
    """A notebook an earlier build executed: what `--editions-only` takes its outputs from."""
    if not path.is_file():
        raise LabError("edition_not_executed", N_("{target} does not exist yet: build it "
                                                  "without --editions-only"), target=path)
    return read_notebook(path)


def write_learner(edition: dict[str, Any], path: Path, editions_only: bool) -> None:
    """The learner edition at `path`, executed as Run All leaves it, check cells cleared; with
    `editions_only`, the outputs the saved one has for the same code."""
    if editions_only:  # as an executed one is written: nbformat's own layout of each cell
        edition = json.loads(nbformat.writes(nbformat.from_dict(
            translation.reuse_outputs(edition, saved(path), path.name))))
    else:
        write(edition, path)
        edition = execute(path)
        added = {cell["id"] for cell in PROGRESS_CELLS}  # its table: this machine's, not saved
        for cell in edition["cells"]:
            if cell["cell_type"] == "code" and ("check" in tags(cell) or cell["id"] in added):
                cell["outputs"], cell["execution_count"] = [], None
    write(edition, path)


def translated(nb: dict[str, Any], path: Path, language: str, editions_only: bool) -> None:
    """Chapter `path` in `language` from its English solution `nb`: solution and learner edition."""
    folder = translation.edition(CHECKOUT, language)
    target = folder / "solutions" / path.name
    chapter = translation.chapter(nb, path.stem, language, CHECKOUT.locale)
    if editions_only:
        chapter = translation.reuse_outputs(chapter, saved(target), target.name)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        write(chapter, target)
        chapter = execute(target)
    write(chapter, target)
    write_learner(translation.learner(chapter, language, CHECKOUT.locale), folder / path.name,
                  editions_only)


def glossary(language: str) -> None:
    """The edition's glossary, and the link to it beside the solutions (as in English)."""
    folder = translation.edition(CHECKOUT, language)
    (folder / "glossary.md").write_text(translation.glossary(CHECKOUT, language),
                                        encoding="utf-8")
    link = folder / "solutions" / "glossary.md"
    if not link.is_symlink():
        link.symlink_to(Path("..") / "glossary.md")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", metavar="NAME", help="chapters whose file name has NAME")
    p.add_argument("--editions-only", action="store_true",
                   help="regenerate the learner edition from the saved solutions; execute nothing")
    p.add_argument("--language", nargs="+", choices=["en", *translation.LOCALES],
                   default=["en", *translation.LOCALES],
                   help="the languages to build (default: all)")
    args = p.parse_args(argv)
    try:
        paths = solution_paths(CHECKOUT, args.names)
    except LabError as exc:
        print(exc, file=sys.stderr)
        return 2
    others = [code for code in args.language if code != "en"]
    for path in paths:
        nb = read_notebook(path)
        bad = problems(nb)
        if bad:
            print(f"{path.name}: " + "; ".join(bad), file=sys.stderr)
            return 1
        start = time.perf_counter()
        try:
            if "en" in args.language:
                if not args.editions_only:
                    nb = execute(path)
                    write(nb, path)
                write_learner(learner_edition(nb), CHECKOUT.notebooks / path.name,
                              args.editions_only)
            for code in others:
                translated(nb, path, code, args.editions_only)
        except LabError as exc:
            print(exc, file=sys.stderr)
            return 2
        done = "learner edition written" if args.editions_only else "executed"
        print(f"{path.name} ({', '.join(args.language)}): {done} "
              f"in {time.perf_counter() - start:.1f} s")
    try:
        for code in others:
            glossary(code)
    except LabError as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
