"""A learner's working copy of the course: the notebooks they write their answers in, kept apart
from the tracked learner edition so that their work never touches a tracked file.

`make lab` and `make check` call `prepare`: the learner edition (the repository's `notebooks/`,
and `notebooks/zh/` for the Chinese edition) is copied into the working folder (`workspace/` at
the repository's root, git-ignored, and `workspace/zh/`) the first time, and after that only what
the working folder lacks is added - a chapter that came with `git pull`, the glossary. A file
that is there is never overwritten: it holds the learner's work. The one exception is
`conftest.py`, the machinery of `make check`'s summary, which is nobody's work: it is kept equal
to the course's, so an older copy never breaks `make check` after an update.

`make restore CHAPTER=04` calls `restore`: one chapter back to its start, the learner's copy
first kept in the working folder's `.backup/` as `<name>.<UTC time>.ipynb`, so nothing is ever
lost. A chapter is named by its number (`4`, `04`: the core chapter, not the deeper notebook
beside it), a deeper notebook by its number and letter (`04a`), either by a part of its file
name (`stream`). `make check CHAPTER=02` calls `chapter`, which names a chapter the same way
and prints the path of the learner's copy of it: the one notebook that `make check` then checks.

Every path comes in as an argument (the edition's folder and the working folder): the module
never looks for the course relative to its own file.

What it prints is in the edition's language with `--language zh`, else in KEEL_LAB_LANG's.

Run: python -m keel_course.workspace prepare NOTEBOOKS WORKSPACE [--language zh] [--quiet]
     python -m keel_course.workspace restore NOTEBOOKS WORKSPACE CHAPTER [--language zh]
     python -m keel_course.workspace chapter NOTEBOOKS WORKSPACE CHAPTER [--language zh]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from keel_cli._command import FilledHelpFormatter
from keel_course.sources import failure
from keel_lab._core.errors import LabError
from keel_lab._i18n import N_, _, speaking

CHAPTERS = "[0-9][0-9]*_*.ipynb"  # a chapter NN_name.ipynb or a deeper notebook NNa_name.ipynb
COMPANIONS = ("glossary.md",)  # beside the chapters, copied when missing, never overwritten
MACHINERY = ("conftest.py",)  # `make check`'s summary and progress: kept equal to the course's
BACKUP = ".backup"
STAMP = "%Y%m%dT%H%M%SZ"  # a backup's UTC time, sortable


@dataclass(frozen=True)
class Prepared:
    """What `prepare` did to one working folder."""

    folder: Path
    created: bool  # the folder did not exist before
    added: list[Path]  # files copied because the folder lacked them
    updated: list[Path]  # machinery replaced by the course's newer version


@dataclass(frozen=True)
class Restored:
    """What `restore` did: the chapter put back, and where the learner's copy was kept."""

    chapter: Path
    backup: Path | None  # None: there was no copy, or it was already the chapter's start
    changed: bool  # False: the copy was already the chapter's start


def chapters(edition: Path) -> list[Path]:
    """The chapters of the edition in `edition`, in course order."""
    return sorted(p for p in edition.glob(CHAPTERS) if p.is_file())


def edition_folders(notebooks: Path, workspace: Path, language: str) -> tuple[Path, Path]:
    """The learner edition in `language` and its working folder: `notebooks`/`workspace` for
    English, their `<language>/` subfolders for another; `LabError` when there is no such
    edition."""
    if language == "en":
        edition, folder = notebooks, workspace
    else:
        if not language or any(c in language for c in "/\\.") or language != language.strip():
            raise LabError("not_a_language_code", N_("{language} is not a language code (en, "
                                                     "zh, ...)"), language=repr(language))
        edition, folder = notebooks / language, workspace / language
    if not chapters(edition):
        raise LabError("no_learner_edition", N_("no learner edition in language {language}: "
                                                "{edition}/ has no chapters (NN_name.ipynb)"),
                       language=repr(language), edition=edition)
    return edition, folder


def prepare(edition: Path, folder: Path) -> Prepared:
    """Copy into `folder` every chapter and companion file of `edition` it lacks (making the
    folder if need be); bring its machinery up to the course's. A file already in `folder` is
    never overwritten."""
    sources = chapters(edition)
    if not sources:
        raise LabError("no_chapters", N_("{edition}/ has no chapters (NN_name.ipynb) to copy"),
                       edition=edition)
    created = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        added = [folder / s.name for s in [*sources, *_present(edition, COMPANIONS)]
                 if _copy_if_missing(s, folder / s.name)]
        updated = []
        for source in _present(edition, MACHINERY):
            target = folder / source.name
            if _copy_if_missing(source, target):
                added.append(target)
            elif target.read_bytes() != source.read_bytes():
                _write(target, source.read_bytes())
                updated.append(target)
    except OSError as exc:  # the system's words, naming the file; the caller says what failed
        raise LabError("cannot_prepare", "{reason}", reason=failure(exc)) from exc
    return Prepared(folder, created, added, updated)


NUMBER = re.compile(r"([0-9]+)([a-z]?)", re.ASCII | re.IGNORECASE)


def _number(text: str) -> tuple[int, str] | None:
    """`(4, "")` for `4` or `04`, a core chapter's number; `(4, "a")` for `04a`, a deeper
    notebook's; None for what is no number."""
    match = NUMBER.fullmatch(text)
    return (int(match[1]), match[2].casefold()) if match else None


def find_chapter(edition: Path, chapter: str) -> Path:
    """The chapter of `edition` that `chapter` names: its number (`4`, `04`: the core chapter
    04_streaming, not the deeper notebook 04a_where_calls_close beside it), a deeper notebook's
    number and letter (`04a`), or a part of its file name (`stream`, `04_streaming.ipynb`),
    case aside; `LabError` when it names none or more than one."""
    given = chapter.strip()
    names = chapters(edition)
    listed = ", ".join(p.stem for p in names)
    if not given:
        raise LabError("no_chapter_given", N_("no chapter given: name one by its number or a "
                                              "part of its file name, e.g. CHAPTER=04 "
                                              "({chapters})"), chapters=listed)
    if (number := _number(given)) is not None:
        found = [p for p in names if _number(p.name.split("_", 1)[0]) == number]
    else:
        found = [p for p in names if given.casefold() in p.name.casefold()]
    if not found:
        raise LabError("no_chapter_matches", N_("no chapter matches {given}: give its number "
                                                "or a part of its file name ({chapters})"),
                       given=repr(given), chapters=listed)
    if len(found) > 1:
        raise LabError("chapter_ambiguous", N_("{given} matches {n} chapters ({chapters}): "
                                               "give its number"),
                       given=repr(given), n=len(found), chapters=", ".join(p.stem for p in found))
    return found[0]


def restore(edition: Path, folder: Path, chapter: str, now: datetime | None = None) -> Restored:
    """Put the chapter `chapter` names (`find_chapter`) back to its start in `folder`, keeping
    the learner's copy first in `folder/.backup/` as `<name>.<UTC time>.ipynb` (a copy already
    at the start needs no backup)."""
    source = find_chapter(edition, chapter)
    target = folder / source.name
    try:
        start = source.read_bytes()
        mine = target.read_bytes() if target.exists() else None
        backup = None
        if mine is not None and mine != start:  # kept before anything is replaced
            backup = _backup_path(folder / BACKUP, source, now or datetime.now(UTC))
            backup.parent.mkdir(parents=True, exist_ok=True)
            _write(backup, mine)
        if mine != start:
            folder.mkdir(parents=True, exist_ok=True)
            _write(target, start)
    except OSError as exc:
        raise LabError("cannot_restore", N_("cannot restore {chapter}: {reason}"),
                       chapter=target, reason=failure(exc)) from exc
    return Restored(target, backup, mine != start)


def _present(edition: Path, names: Sequence[str]) -> list[Path]:
    return [edition / n for n in names if (edition / n).is_file()]


def _backup_path(backups: Path, chapter: Path, now: datetime) -> Path:
    """`<name>.<UTC time>.ipynb` in `backups`, a free name (`-2`, `-3`, ... within a second)."""
    stamp = now.astimezone(UTC).strftime(STAMP)
    path, n = backups / f"{chapter.stem}.{stamp}{chapter.suffix}", 1
    while path.exists() or path.is_symlink():
        n += 1
        path = backups / f"{chapter.stem}.{stamp}-{n}{chapter.suffix}"
    return path


def _copy_if_missing(source: Path, target: Path) -> bool:
    """Copy `source` to `target` unless `target` exists (a dangling link counts as existing:
    it is the learner's); whether it was copied."""
    if target.exists() or target.is_symlink():
        return False
    _write(target, source.read_bytes())
    return True


def _write(path: Path, data: bytes) -> None:
    """Write the file whole, through a temporary file and a rename: a reader never sees half,
    and an interrupted copy leaves no half chapter that would then be kept as the learner's."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temp.write_bytes(data)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def shown(path: Path) -> str:
    """`path` relative to the working folder when it is under it, as a learner types it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _prepare(args: argparse.Namespace) -> int:
    done = [prepare(*edition_folders(args.notebooks, args.workspace, "en"))]
    if args.language != "en":
        done.append(prepare(*edition_folders(args.notebooks, args.workspace, args.language)))
    added = [shown(p) for d in done for p in d.added if p.suffix == ".ipynb"]
    if args.quiet and not any(d.added or d.updated for d in done):
        return 0
    edition = args.notebooks if args.language == "en" else args.notebooks / args.language
    if done[-1].created:
        said = _("Your copy of the course, where your answers go: {folder}/ (made now from "
                 "{edition}/). Restore a chapter to its start: {restore}")
    elif added:
        said = _("Your copy of the course, where your answers go: {folder}/ (new chapters "
                 "added: {chapters}). Restore a chapter to its start: {restore}")
    else:
        said = _("Your copy of the course, where your answers go: {folder}/ (as you left it). "
                 "Restore a chapter to its start: {restore}")
    language = "" if args.language == "en" else f" LANGUAGE={args.language}"
    print(said.format(folder=shown(done[-1].folder), edition=shown(edition),
                      chapters=", ".join(added), restore=f"make restore CHAPTER=04{language}"))
    return 0


def _restore(args: argparse.Namespace) -> int:
    edition, folder = edition_folders(args.notebooks, args.workspace, args.language)
    find_chapter(edition, args.chapter)  # a wrong name changes nothing
    prepare(edition, folder)  # a copy made here is whole: glossary and conftest.py too
    done = restore(edition, folder, args.chapter)
    if done.backup is not None:
        print(_("Restored {chapter} to its start; your copy is kept as {backup} (in "
                "JupyterLab: File > Reload Notebook from Disk)").format(
            chapter=shown(done.chapter), backup=shown(done.backup)))
    elif done.changed:
        print(_("Restored {chapter} to its start (you had no copy of it)").format(
            chapter=shown(done.chapter)))
    else:
        print(_("{chapter} is already at its start: nothing to restore").format(
            chapter=shown(done.chapter)))
    return 0


def _chapter(args: argparse.Namespace) -> int:
    edition, folder = edition_folders(args.notebooks, args.workspace, args.language)
    print(folder / find_chapter(edition, args.chapter).name)
    return 0


COMMANDS = {"prepare": _prepare, "restore": _restore, "chapter": _chapter}


def parser() -> argparse.ArgumentParser:
    """The module's commands, their help in KEEL_LAB_LANG's language (read now, when built)."""
    helper = FilledHelpFormatter
    p = argparse.ArgumentParser(
        prog="workspace", formatter_class=helper,
        # the docstring's first line, as it always was shown
        description=_("A learner's working copy of the course: the notebooks they write their "
                      "answers in, kept apart"))
    sub = p.add_subparsers(dest="command", required=True)
    for name, text in (("prepare", _("copy into WORKSPACE what it lacks of the learner edition")),
                       ("restore", _("put one chapter of WORKSPACE back to its start")),
                       ("chapter", _("the path of one chapter in WORKSPACE, for make check"))):
        s = sub.add_parser(name, help=text, description=text, formatter_class=helper)
        s.add_argument("notebooks", type=Path,
                       help=_("the learner edition (the course's notebooks/)"))
        s.add_argument("workspace", type=Path, help=_("the learner's working folder"))
        if name != "prepare":
            s.add_argument("chapter", help=_("its number (04; 04a: the deeper notebook) or a "
                                             "part of its file name"))
        s.add_argument("--language", default="en",
                       help=_("en, or the subfolder of another edition (zh)"))
        if name == "prepare":
            s.add_argument("--quiet", action="store_true",
                           help=_("say nothing unless a file was added or updated"))
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    with speaking(args.language):
        try:
            return COMMANDS[args.command](args)
        except LabError as exc:
            said = {"restore": _("make restore: {error}"), "chapter": _("make check: {error}")}
            print(said.get(args.command, _("cannot prepare your copy of the course: {error}"))
                  .format(error=exc), file=sys.stderr)
            return 2


if __name__ == "__main__":
    sys.exit(main())
