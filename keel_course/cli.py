"""`keel-course`: the instructor's and author's commands - the handout a class receives, the
nbgrader course, grading submitted notebooks, a class on one server, and the instructor's guide's
generated parts. The commands that publish the course read it from a checkout of the repository,
`--checkout DIR` (default: the current folder); grading needs none.

Errors and exit codes are `keel-lab`'s (`keel_cli._command.run`): one line on stderr, never a
traceback, 2 for a user's mistake.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from keel_cli._command import WIDTH, bounded, json_text, run
from keel_course.checkout import Checkout
from keel_course.classroom.command import add_parser as add_classroom_parser
from keel_course.classroom.command import run as run_classroom
from keel_lab._core.errors import LabError
from keel_lab._core.tables import printable
from keel_lab._i18n import N_, ngettext


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= 86400:
        raise argparse.ArgumentTypeError(f"{value:g} is outside 0..86400 seconds")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="keel-course", description=__doc__)
    p.add_argument("--checkout", type=Path, default=Path("."), metavar="DIR",
                   help="the keel-lab checkout whose course handout, nbgrader and classroom "
                        "start publish and guide writes (default: the current folder)")
    sub = p.add_subparsers(dest="command", required=True)
    h = sub.add_parser("handout", help="write the handout a class receives (no solutions)",
                       description="Write the learner edition, the package, requirements and a "
                                   "README for students into OUT, and check that no solution "
                                   "line is in any of its files. Exit 0 written, 2 when it "
                                   "cannot be (OUT or OUT.zip holds something a handout did "
                                   "not write, or a leak).")
    h.add_argument("out", type=Path, metavar="OUT",
                   help="a new or empty folder, or a previous handout")
    h.add_argument("--zip", action="store_true", help="also write OUT.zip")
    h.add_argument("--language", default="en", help="the handout's language (default en)")

    n = sub.add_parser("nbgrader", help="lay out the chapters as an nbgrader course",
                       description="Write DIR/source/<chapter>/<chapter>.ipynb with solutions "
                                   "and nbgrader's cell metadata, and DIR/nbgrader_config.py "
                                   "unless there is one; then run nbgrader's commands in DIR. "
                                   "Students submit the handout's notebooks or nbgrader's "
                                   "released ones: both carry the metadata nbgrader grades by. "
                                   "With --check, write nothing: say which notebooks in "
                                   "DIR/submitted/ nbgrader cannot autograde as `keel-course "
                                   "grade` would, why, and what to do; exit 2 when any.")
    n.add_argument("dir", type=Path, metavar="DIR", help="the course folder")
    n.add_argument("chapters", nargs="*", metavar="CHAPTER",
                   help="only chapters whose name, or a deeper notebook's they link, "
                        "contains CHAPTER (default: all)")
    n.add_argument("--check", action="store_true",
                   help="check DIR/submitted/ before `nbgrader autograde`")

    r = sub.add_parser("grade", help="grade a class's submitted notebooks",
                       description="Grade submitted notebooks by what their exercise functions "
                                   "do, with the checks' own verifiers, each in its own process "
                                   "with a time and a memory limit. Exit 0 when it graded "
                                   "(whatever the scores), 2 when no PATH could be read.")
    r.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                   help="a submitted notebook, or a folder searched recursively for *.ipynb")
    r.add_argument("--json", action="store_true", help="one JSON object")
    r.add_argument("--csv", type=Path, metavar="FILE", help="write a CSV gradebook to FILE")
    r.add_argument("--timeout", type=_seconds, default=60.0, metavar="SECONDS",
                   help="time limit per submission (default 60)")
    r.add_argument("--jobs", type=bounded(1, 256), default=None, metavar="N",
                   help="submissions graded at once (default: the number of cores)")
    r.add_argument("--chapter", action="append", metavar="CHAPTER",
                   help="grade and total only this chapter's notebooks, by name or number "
                        "(03_batching or 03); repeat it or give a comma list (02,03) for an "
                        "assignment of several (default: the chapters handed in)")
    r.add_argument("--roster", type=Path, metavar="FILE",
                   help="who should have handed in, one name a line: a row of 0 points and "
                        "'no submission' for each one with no notebook")

    add_classroom_parser(sub)

    g = sub.add_parser("guide", help="write the instructor's guide's generated parts",
                       description="Rewrite the generated parts of docs/instructors-guide.md "
                                   "(the overview, each chapter's goals and answer key, each "
                                   "exercise's misconceptions with their hints) from the "
                                   "solution notebooks, the checks and the checks' test tables "
                                   "in tests/lab/; the hand-written prose stays as it is. With "
                                   "--check, write nothing: name each stale part on stderr and "
                                   "exit 1 when any. Exit 2 when the guide cannot be read or "
                                   "written.")
    g.add_argument("--check", action="store_true",
                   help="name the stale parts instead of writing them (exit 1 when any)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return run(parser(), {"handout": _handout, "nbgrader": _nbgrader, "grade": _grade,
                          "classroom": run_classroom, "guide": _guide}, argv)


def _handout(args: argparse.Namespace) -> int:
    from keel_course.handout import build_handout, check_zip, zip_handout

    checkout = Checkout.at(args.checkout)
    if args.zip:
        check_zip(args.out)  # before the build: a zip that is not ours costs no handout
    folder = build_handout(checkout, args.out, args.language)
    print(f"handout: {printable(folder)}")
    if args.zip:
        print(f"zip: {printable(zip_handout(folder))}")
    return 0


def _nbgrader(args: argparse.Namespace) -> int:
    from keel_course.nbgrader import check_submissions, layout_course

    if args.check:
        count, findings = check_submissions(args.dir, args.chapters)
        for finding in findings:
            print(printable(finding))
        blocked = len({f.path for f in findings if f.blocking})
        if blocked:
            raise LabError("not_autogradable", N_("{blocked} of {count} submitted notebooks "
                                                  "cannot be autograded by nbgrader as they are "
                                                  "(listed above, each with what to do)"),
                           blocked=blocked, count=count)
        print(f"{count} submitted notebooks: nbgrader can autograde them all")
        return 0
    for path in layout_course(Checkout.at(args.checkout), args.dir, args.chapters):
        print(printable(path))
    return 0


def _grade(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from keel_course.classroom.roster import read_roster
    from keel_course.grading import find_submissions, grade
    from keel_course.grading.grade import chapters
    from keel_course.grading.gradebook import Gradebook, check_csv, table, to_dict, write_csv
    from keel_course.grading.sandbox import isolation

    chosen = chapters(args.chapter) if args.chapter else ()
    roster = read_roster(args.roster) if args.roster else ()
    paths = find_submissions(args.paths, lambda problem: print(
        f"keel-course: warning: {printable(problem)}", file=sys.stderr))
    if args.csv:
        check_csv(args.csv, paths)  # before grading: a wrong path costs no grading time
    unconfined = isolation()
    if unconfined:  # on every run: the instructor must know what the grades are worth
        print(f"keel-course: warning: {printable(unconfined)}: submissions run in plain processes, "
              "which a determined cheat can escape (docs/grading.md: the threat model)",
              file=sys.stderr)
    with tqdm(total=len(paths), desc="grading", file=sys.stderr, unit="notebook", leave=False,
              disable=None) as bar:
        rows = grade(paths, args.timeout, args.jobs, bar.update, chosen)
    if len(rows) < len(paths):
        graded = {row.path for row in rows}
        others = [str(p) for p in paths if str(p) not in graded]
        left = len(others)
        print("keel-course: warning: " + ngettext(
            "left out {count} notebook of another chapter (graded: {chapters}): {paths}",
            "left out {count} notebooks of other chapters (graded: {chapters}): {paths}",
            left).format(count=left, chapters=", ".join(chosen),
                         paths=printable(", ".join(others[:10]) + (" ..." if left > 10 else ""))),
              file=sys.stderr)
    book = Gradebook(rows, _class_folder(paths, args.paths), chosen, roster)
    sandbox = {"sandbox": "none" if unconfined else "bubblewrap", "why": unconfined}
    print(json_text(to_dict(book) | {"isolation": sandbox}) if args.json
          else table(book, WIDTH), flush=True)
    if args.csv:
        write_csv(book, args.csv)  # a failure now is one line on stderr, after the grades
    return 0


def _class_folder(found: Sequence[Path], given: Sequence[Path]) -> str:
    """The class folder, which the gradebook's paths are relative to: the one the PATHs given
    share (a folder, or a notebook's own folder)."""
    places = [os.path.abspath(p if p.is_dir() else p.parent) for p in given if p.exists()]
    return os.path.commonpath(places or [os.path.dirname(os.path.abspath(found[0]))])


def _guide(args: argparse.Namespace) -> int:
    from keel_course.guide import check_guide, guide_path, write_guide

    checkout = Checkout.at(args.checkout)
    if not args.check:
        write_guide(checkout)
        return 0
    parts = check_guide(checkout)
    again = "keel-course guide" if args.checkout == Path(".") else (
        f"keel-course --checkout {shlex.quote(printable(args.checkout))} guide")
    for part in parts:
        print(f"{guide_path(checkout).name}: '{part}' is stale: run {again}", file=sys.stderr)
    return 1 if parts else 0


if __name__ == "__main__":
    sys.exit(main())
