"""A submitted notebook, read as untrusted input.

The file is read in bounded chunks, parsed as strict JSON (the lab's one reader of untrusted
JSON), and only the fields the grader uses are read, each with the type it must have: the
cells, their type, source and tags. Anything else is one `LabError` line naming the cell and the
field; saved outputs are never read, so a printed `PASSED` counts for nothing.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from keel_lab.core.errors import LabError
from keel_lab.core.strict_json import read_json
from keel_lab.providers.fields import Fields, json_type
from keel_lab.providers.streams.records import MAX_BYTES, decode

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


@dataclass(frozen=True)
class Cell:
    number: int  # counted from 1 in notebook order, as a reader of the notebook would count
    code: bool
    source: str
    tags: frozenset[str]


@dataclass(frozen=True)
class Submission:
    path: Path
    cells: tuple[Cell, ...]

    def code_cells(self) -> list[Cell]:
        return [c for c in self.cells if c.code]


def read_submission(path: str | Path) -> Submission:
    """The cells of a notebook file, or a `LabError` saying why it is not one."""
    where = str(path)
    value = read_json(decode(read_notebook_bytes(path), where), where)
    if isinstance(value, dict) and "worksheets" in value and "cells" not in value:
        raise LabError(f"{where}: an nbformat 3 notebook (cells in 'worksheets'); the grader "
                       "reads nbformat 4: convert it with `jupyter nbconvert --to notebook "
                       "--nbformat 4`")
    if not isinstance(value, dict) or "cells" not in value:
        got = "an object without 'cells'" if isinstance(value, dict) else json_type(value)
        raise LabError(f"{where}: not a notebook (a Jupyter notebook is a JSON object with "
                       f"'cells'; this is {got})")
    fields = Fields(value, where)
    version = fields.raw("nbformat")
    if version is not None and version != 4:
        raise LabError(f"{where}: nbformat {fields.index('nbformat')} is not supported (the "
                       "course's notebooks are nbformat 4)")
    if not isinstance(value["cells"], list):
        raise LabError(f"{where}: field 'cells' must be a list of objects, got "
                       f"{json_type(value['cells'])}")
    return Submission(Path(path), tuple(_cell(n, c) for n, c in
                                        enumerate(fields.objs("cells"), start=1)))


def kind(mode: int) -> str | None:
    """What a file that is not a regular file is ('a FIFO'), or None for a regular file."""
    return None if stat.S_ISREG(mode) else next(
        (name for test, name in _KINDS if test(mode)), "not a regular file")


def read_notebook_bytes(path: str | Path) -> bytes:
    """At most 32 MiB of a regular file. Opened without blocking and checked before a byte is
    read, so a FIFO, a device or a socket named `*.ipynb` is an error, never a wait."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise LabError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    try:
        what = kind(os.fstat(fd).st_mode)
        if what is not None:
            raise LabError(f"{path}: cannot read ({what}, not a notebook file)")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise LabError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise LabError(f"{path}: more than {MAX_BYTES // (1024 * 1024)} MiB, too large for a "
                       "submitted notebook (not read further)")
    return data


def _cell(number: int, cell: Fields) -> Cell:
    kind = cell.text("cell_type")
    return Cell(number, kind == "code", _source(cell), frozenset(_tags(cell)))


def _source(cell: Fields) -> str:
    """A cell's source: a string, or a list of strings (nbformat's two spellings)."""
    value = cell.raw("source")
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "".join(value)
    raise LabError(f"{cell.where}: field {cell.path}.source must be a string or a list of "
                   f"strings, got {json_type(value)}")


def _tags(cell: Fields) -> list[str]:
    value = cell.obj("metadata").raw("tags")
    if value is None:
        return []
    if isinstance(value, list) and all(isinstance(tag, str) for tag in value):
        return value
    raise LabError(f"{cell.where}: field {cell.path}.metadata.tags must be a list of strings, "
                   f"got {json_type(value)}")
