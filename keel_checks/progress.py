"""A learner's progress: which exercises of which chapters they have passed, kept in a small
file next to their notebooks, so it shows without re-running everything.

Every `check(fn)` records its verdict in `.keel-progress.json` in the kernel's working folder
(the notebook's folder): exercise -> passed, chapter, when (wall-clock time: this is a log, not
an experiment output) and the last hint. `make check` records its verdicts there too.

Recording never breaks a check and never prints on stdout (a check cell's output stays the same
for everyone): a folder that cannot be written or a file that cannot be read is ignored, and said
once per session on stderr. Reading the file for `show_progress()` or `keel-lab progress` is
strict: anything odd is one `LabError` line.

`KEEL_PROGRESS=off` records nothing: the grader, `make notebooks` and the course's own test runs
set it, so no run over `notebooks/solutions/` leaves a file there; `KEEL_PROGRESS=FILE` keeps
the log in FILE instead.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keel_checks.exercises import EXERCISES, PREDICTIONS
from keel_lab._core.errors import LabError
from keel_lab._core.strict_json import read_json
from keel_lab._core.tables import format_table, printable
from keel_lab._i18n import ENV, LOCALES, N_, _
from keel_lab.providers._fields import json_type, shown

if TYPE_CHECKING:  # checks import this module: `check` records its verdicts here
    from keel_checks.verdict import Verdict

FILE = ".keel-progress.json"
WORKSPACE = "workspace"  # the learner's copy of the course, where `make check` runs
SWITCH = "KEEL_PROGRESS"
OFF = frozenset({"off", "0", "no", "false"})
MAX_BYTES = 1024 * 1024  # eight exercises take a few hundred bytes
WIDTH = 100
UNREADABLE = N_("{path}: cannot read ({error})")
COLUMNS = [N_("chapter"), N_("exercise"), N_("status"), N_("when"), N_("last hint")]

# The course's exercises in course order, each with its chapter (the notebook's name without
# `.ipynb`), from the exercise table; tests/lab/test_progress.py keeps it equal to the notebooks.
CHAPTERS: dict[str, str] = {x.name: x.chapter for x in EXERCISES}


@dataclass(frozen=True)
class Entry:
    """The last verdict on one exercise."""

    passed: bool
    chapter: str
    when: str  # ISO 8601, UTC
    hint: str | None  # the first hint of the last failed check; None once passed


@dataclass(frozen=True)
class Made:
    """A prediction the learner wrote, and whether it matched once answered back."""

    chapter: str
    right: bool | None  # None: made, not answered back yet
    when: str  # ISO 8601, UTC


@dataclass(frozen=True)
class Progress:
    path: Path
    entries: Mapping[str, Entry]
    predictions: Mapping[str, Made] = field(default_factory=dict)

    def rows(self) -> list[dict[str, Any]]:
        """Every exercise of the course in order (then any other the file holds)."""
        names = [*CHAPTERS, *sorted(set(self.entries) - set(CHAPTERS))]
        return [_row(name, self.entries.get(name)) for name in names]

    @property
    def passed(self) -> int:
        return sum(e.passed for name, e in self.entries.items() if name in CHAPTERS)

    def table(self, width: int = WIDTH) -> str:
        """The exercises under one line: how many passed, and - where nothing shows - whether
        no check ran or recording is off here, so none would show."""
        off = switched_off()
        note = (_(" (recording is off, {switch}={value}: no check is kept)").format(
                    switch=SWITCH, value=printable(off)) if off is not None
                else "" if self.entries else _(" (no check has run here yet)"))
        head = (printable(self.path) + ": "
                + _("{n} of {total} exercises passed").format(n=self.passed,
                                                              total=len(CHAPTERS))
                + _("; {n} of {total} predictions made, {right} right").format(
                    n=len(self.made), total=len(PREDICTIONS),
                    right=sum(1 for m in self.made.values() if m.right)) + note)
        rows = [{_(k): _(v) if k == "status" else v for k, v in row.items()}
                for row in self.rows()]
        return head + "\n" + format_table(rows, [_(c) for c in COLUMNS], width)

    @property
    def made(self) -> dict[str, Made]:
        """The course's predictions among those kept."""
        return {name: m for name, m in self.predictions.items() if name in PREDICTIONS}

    def to_dict(self) -> dict[str, Any]:
        return {"exercises": {name: asdict(e) for name, e in self.entries.items()},
                "predictions": {name: asdict(m) for name, m in self.predictions.items()}}


def _row(name: str, entry: Entry | None) -> dict[str, Any]:
    if entry is None:
        return {"chapter": CHAPTERS.get(name, ""), "exercise": name, "status": N_("not tried")}
    return {"chapter": entry.chapter, "exercise": name,
            "status": N_("passed") if entry.passed else N_("not yet"),
            "when": entry.when.replace("T", " ")[:16], "last hint": _short(entry.hint)}


def _short(hint: str | None, limit: int = 120) -> str | None:
    """A hint as the table shows it: its start (the file and `--json` keep it whole)."""
    return hint if hint is None or len(hint) <= limit else hint[:limit - 3] + "..."


def location(folder: Path, switch: str | None) -> Path | None:
    """The progress file for notebooks in `folder` under the `KEEL_PROGRESS` value `switch`;
    None when recording is switched off."""
    if switch is not None and switch.strip().lower() in OFF:
        return None
    return Path(switch) if switch else folder / FILE


def switched_off() -> str | None:
    """The `KEEL_PROGRESS` value when it switches recording off (as `record` reads it), else
    None."""
    switch = os.environ.get(SWITCH)
    return switch if switch is not None and location(Path.cwd(), switch) is None else None


def find(where: str | Path | None = None) -> Path:
    """The progress file to show: `where`'s (a folder, or the file itself), by default the
    one `KEEL_PROGRESS` names, the working folder's, or - run from the course's folder, where
    `make check` keeps it - the learner's copy's, `workspace/`'s (`workspace/zh/`'s first when
    `KEEL_LAB_LANG` is zh), else `notebooks/`'s (a handout's folder)."""
    if where is None:
        switch = os.environ.get(SWITCH)
        named = location(Path.cwd(), switch) if switch else None
        here = Path.cwd() / FILE
        if named or here.exists():
            return named or here
        return next((p for p in _course_files(Path.cwd()) if p.is_file()), here)
    path = Path(where)
    try:
        if not path.exists():
            raise LabError("no_such_path", N_("{path}: no such folder or file"), path=path)
        return path / FILE if path.is_dir() else path
    except OSError as exc:  # a folder on the way that may not be searched
        raise LabError("unreadable", UNREADABLE, path=path, error=exc.strerror or exc) from exc


def _course_files(root: Path) -> list[Path]:
    """The progress files `make check` keeps under the course's folder: the learner's copy of
    each edition (`KEEL_LAB_LANG`'s first), then a handout's (its one edition in `notebooks/`)."""
    chosen = os.environ.get(ENV) or "en"
    codes = sorted(LOCALES, key=lambda code: (code != chosen, code != "en", code))
    folder = root / WORKSPACE
    return [*((folder if code == "en" else folder / code) / FILE for code in codes),
            root / "notebooks" / FILE]


def read(path: Path) -> Progress:
    """The progress kept in `path`; empty when there is none yet. `LabError` (one line) when
    the file cannot be read or is not a progress file."""
    try:
        if path.exists() and not path.is_file():  # a FIFO or a device would never end
            raise LabError("not_a_file", N_("{path}: not a regular file"), path=path)
        with path.open("rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return Progress(path, {})
    except OSError as exc:
        raise LabError("unreadable", UNREADABLE, path=path, error=exc.strerror or exc) from exc
    if len(raw) > MAX_BYTES:
        raise LabError("too_large", N_("{path}: more than {kib} KiB, not a progress file"),
                       path=path, kib=MAX_BYTES // 1024)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LabError("not_utf8", N_("{where}: not UTF-8 text (invalid byte at offset "
                                      "{offset})"), where=path, offset=exc.start) from exc
    value = read_json(text, str(path))
    return Progress(path, parse(value, str(path)), parse_predictions(value, str(path)))


def parse(value: Any, where: str) -> dict[str, Entry]:
    """The entries of a progress file's JSON value, every field of the type it must have."""
    exercises = value.get("exercises") if isinstance(value, dict) else None
    if not isinstance(value, dict):
        raise LabError("not_progress", N_("{where}: not a progress file (expected an object with "
                                          "an 'exercises' object, got {type})"),
                       where=where, type=json_type(value))
    if not isinstance(exercises, dict):
        raise LabError("not_progress", N_("{where}: not a progress file (expected an object with "
                                          "an 'exercises' object, got 'exercises' as {type})"),
                       where=where, type=json_type(exercises))
    return {name: _entry(fields, where, shown(name)) for name, fields in exercises.items()}


def parse_predictions(value: dict[str, Any], where: str) -> dict[str, Made]:
    """The predictions kept in a progress file's JSON value (none in a file written before the
    course answered predictions back)."""
    made = value.get("predictions", {})
    if not isinstance(made, dict):
        raise LabError("not_progress", N_("{where}: not a progress file ('predictions' must be "
                                          "an object, got {type})"),
                       where=where, type=json_type(made))
    kept = {}
    for name, fields in made.items():
        if (not isinstance(fields, dict) or not isinstance(fields.get("chapter"), str)
                or not isinstance(fields.get("when"), str)
                or not isinstance(fields.get("right"), bool | None)):
            raise LabError("prediction_fields", N_("{where}: prediction {name}: expected an "
                                                   "object with chapter, right and when"),
                           where=where, name=shown(name))
        kept[name] = Made(fields["chapter"], fields["right"], fields["when"])
    return kept


_STRING = N_("{where}: exercise {exercise}: field {field} must be a string, got {type}")
_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "passed": ((bool,), N_("{where}: exercise {exercise}: field {field} must be true or false, "
                           "got {type}")),
    "chapter": ((str,), _STRING), "when": ((str,), _STRING),
    "hint": ((str, type(None)), N_("{where}: exercise {exercise}: field {field} must be a "
                                   "string or null, got {type}")),
}


def _entry(fields: Any, where: str, exercise: str) -> Entry:
    if not isinstance(fields, dict):
        raise LabError("entry_not_object", N_("{where}: exercise {exercise}: must be an object, "
                                              "got {type}"),
                       where=where, exercise=exercise, type=json_type(fields))
    for key, (types, template) in _TYPES.items():
        if key not in fields:
            raise LabError("field_missing", N_("{where}: exercise {exercise}: field {field} is "
                                               "missing"),
                           where=where, exercise=exercise, field=repr(key))
        if not isinstance(fields[key], types):
            raise LabError("field_type", template, where=where, exercise=exercise,
                           field=repr(key), type=json_type(fields[key]))
    return Entry(fields["passed"], fields["chapter"], fields["when"], fields["hint"])


def save(progress: Progress) -> None:
    """Write the file whole, through a temporary file and a rename: a reader never sees half."""
    folder = progress.path.parent
    fd, temp = tempfile.mkstemp(prefix=f"{FILE}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(progress.to_dict(), f, indent=1, ensure_ascii=False)
            f.write("\n")
        os.replace(temp, progress.path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def add(path: Path, verdicts: Iterable[tuple[str, bool, str | None]]) -> Progress:
    """Record (exercise, passed, first hint) verdicts in `path` (`LabError` or `OSError`)."""
    progress = read(path)
    entries = dict(progress.entries)
    when = datetime.now(UTC).isoformat(timespec="seconds")
    for name, passed, hint in verdicts:
        hint = None if passed or hint is None else printable(hint)  # no lone surrogates
        entries[name] = Entry(passed, CHAPTERS.get(name, ""), when, hint)
    updated = Progress(path, entries, progress.predictions)
    save(updated)
    return updated


def note_prediction(name: str, chapter: str, right: bool | None) -> None:
    """Keep a prediction made (`right` None) or answered back. The first answer back stays: a
    guess rewritten after the answer was seen predicts nothing. Like `record`, never raises nor
    prints on stdout."""
    def keep(path: Path) -> None:
        progress = read(path)
        kept = progress.predictions.get(name)
        right_now = kept.right if kept is not None and kept.right is not None else right
        when = datetime.now(UTC).isoformat(timespec="seconds")
        save(Progress(path, progress.entries,
                      {**progress.predictions, name: Made(chapter, right_now, when)}))
    _guarded(keep)


_said: list[str] = []  # a problem with the progress file is said once per session, not per check


def _say(problem: str) -> None:
    if not _said:
        _said.append(problem)
        print("keel-lab: " + _("your progress is not being saved ({problem}); your checks "
                               "work as before").format(problem=printable(problem)),
              file=sys.stderr)


def record(verdict: Verdict) -> None:
    """`check`'s hook: keep the verdict in the progress file; never raises nor writes on stdout."""
    hint = verdict.hints[0] if verdict.hints else None

    def keep(path: Path) -> None:
        add(path, [(verdict.exercise, verdict.passed, hint)])
    _guarded(keep)


def _guarded(write: Callable[[Path], None]) -> None:
    """Run `write` on the progress file unless recording is off; a problem is said once on
    stderr, never raised: a check or a prediction is never broken by its log."""
    try:
        path = location(Path.cwd(), os.environ.get(SWITCH))
        if path is not None:
            write(path)
    except LabError as exc:
        _say(str(exc))
    except OSError as exc:  # a folder that cannot be written, a working folder deleted
        _say(f"{exc.filename or FILE}: {exc.strerror or exc}")
    except Exception as exc:  # whatever else: a check is never broken by its log
        _say(f"{FILE}: {type(exc).__name__}: {exc}")


def show_progress(folder: str | Path | None = None) -> None:
    """Print the exercises kept in `folder` (see `find`) as a table of what has passed; a file
    that cannot be read is one line saying why."""
    try:
        print(read(find(folder)).table())
    except LabError as exc:
        print(f"keel-lab: {printable(exc)}")
