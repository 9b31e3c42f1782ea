"""The notebooks' translation catalogs: extract the templates, update the catalogs, count.

Run: make locale   (or .venv/bin/python scripts/i18n.py extract|update|status [--language zh])
`extract` writes build/gettext/<name>.pot: one per chapter, `glossary`, and `editions` (the text
the learner edition adds). `update` extracts, then merges them into
locale/<locale>/LC_MESSAGES/<name>.po (new entries empty, changed ones fuzzy with their previous
msgid, removed ones obsolete). `status` counts the translated entries; it exits 1 while any entry
is missing, fuzzy or breaks its markup (`-v` lists them). The logic is
`keel_course.translation`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from keel_course import translation as t
from keel_course.checkout import Checkout
from keel_lab._core.errors import LabError
from keel_lab._i18n import N_

CHECKOUT = Checkout.at(Path(__file__).resolve().parent.parent)
POT_DIR = CHECKOUT.build / "gettext"  # the templates, generated


def status(language: str, verbose: bool) -> int:
    folder = t.catalog_path(language, t.GLOSSARY, CHECKOUT.locale).parent
    paths = sorted(folder.glob("*.po"))
    if not paths:
        raise LabError("no_catalogs", N_("no catalogs in {folder}: run `make locale` first"),
                       folder=folder)
    bad = 0
    for path in paths:
        done, total = t.counts(path)
        found = t.problems(path)
        bad += len(found)
        print(f"{path.stem:20} {done:4} of {total:4} translated"
              + (f", {len(found)} to do" if found else ""))
        if verbose:
            for problem in found:
                print(f"  {problem}")
    return 1 if bad else 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("command", choices=["extract", "update", "status"])
    p.add_argument("--language", default="zh", choices=sorted(t.LOCALES))
    p.add_argument("-v", "--verbose", action="store_true", help="status: list every entry to do")
    args = p.parse_args(argv)
    try:
        if args.command == "status":
            return status(args.language, args.verbose)
        counts = t.extract(CHECKOUT, POT_DIR)
        print(f"templates in {POT_DIR}: "
              + ", ".join(f"{name} {n}" for name, n in counts.items()))
        if args.command == "update":
            locale = t.LOCALES[args.language]
            for name, done in t.update(POT_DIR, CHECKOUT.locale, locale).items():
                print(f"locale/{locale}/LC_MESSAGES/{name}.po: {done}")
    except LabError as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
