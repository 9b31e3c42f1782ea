"""`keel-course classroom start|collect`: the instructor's two commands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from keel_course.bubblewrap import unavailable
from keel_course.checkout import Checkout
from keel_course.classroom.collect import GRADEBOOK, GRADED, chapters, collect, grade
from keel_course.classroom.hub import find_proxy, prepare, run_hub
from keel_course.classroom.roster import read_roster
from keel_course.classroom.settings import SETTINGS, Classroom


def _port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (1..65535)")
    return int(text)


START = ("Start JupyterHub on 127.0.0.1 for the students of ROSTER (one login name a line), "
         "keeping the class in DIR. The class password is KEEL_LAB_CLASS_PASSWORD, or a "
         "generated one kept in DIR/classroom.json.")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    c = sub.add_parser("classroom", help="a class on one machine: JupyterHub, collect, grade",
                       description="Run a class on this machine's JupyterHub (127.0.0.1 only) "
                                   "and grade it. docs/classroom.md explains both commands.")
    actions = c.add_subparsers(dest="action", required=True)
    s = actions.add_parser("start", help="start the hub for a roster (runs until Ctrl-C)",
                           description=START)
    s.add_argument("roster", type=Path)
    s.add_argument("dir", type=Path)
    s.add_argument("--port", type=_port, default=8000, help="the students' port (default 8000)")
    s.add_argument("--language", default="en", help="the handout's language (default en)")
    s.add_argument("--proxy", type=Path, help="configurable-http-proxy to run (default: the "
                                              "one `make classroom` installs)")
    k = actions.add_parser("collect", help="gather every student's notebooks and grade them",
                           description=f"Copy every student's saved notebooks of the chapters "
                                       f"with exercises ({', '.join(GRADED)}) into "
                                       f"DIR/collected/<UTC time>/<student>/ and run "
                                       f"keel-course grade over them, writing {GRADEBOOK} "
                                       f"there: a row per notebook, a row with 0 points for each "
                                       f"student of the class who handed nothing in, a total "
                                       f"per student. The exit code is grade's.")
    k.add_argument("dir", type=Path)
    k.add_argument("--chapter", action="append", metavar="CHAPTER",
                   help="only this chapter's notebooks, by name or number (03_batching or 03); "
                        "repeat it or give a comma list (02,03) for an assignment of several, "
                        "totalled over those alone (default: every chapter with exercises)")
    k.add_argument("--timeout", type=float, help="keel-course grade's limit per submission")
    k.add_argument("--jobs", type=int, help="keel-course grade's submissions at once")


def run(args: argparse.Namespace) -> int:
    if args.action == "start":
        checkout = Checkout.at(args.checkout)
        room = prepare(checkout, read_roster(args.roster), args.dir, args.port, args.language,
                       find_proxy(checkout, args.proxy))
        unconfined = unavailable()
        if unconfined:
            print(f"keel-course: warning: the students' servers run unconfined, each able to "
                  f"read the solutions and the other students' work (docs/classroom.md): "
                  f"{unconfined}", file=sys.stderr)
        run_hub(checkout, room)
    chosen = chapters(args.chapter) if args.chapter else ()
    roster = Classroom.load(args.dir).students if (args.dir / SETTINGS).is_file() else ()
    folder = collect(args.dir / "students", args.dir / "collected", chosen or None,
                     roster=roster)
    print(f"collected: {folder}")
    code = grade(folder, args.timeout, args.jobs, chosen)
    if (folder / GRADEBOOK).is_file():
        print(f"gradebook: {folder / GRADEBOOK}")
    return code
