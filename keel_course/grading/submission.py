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

from keel_lab._core.errors import LabError
from keel_lab._core.strict_json import read_json
from keel_lab._i18n import N_
from keel_lab.providers._fields import Fields, json_type
from keel_lab.providers._streams.records import MAX_BYTES, decode

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
        raise LabError("nbformat_3", N_("{where}: an nbformat 3 notebook (cells in "
                                        "'worksheets'); the grader reads nbformat 4: convert it "
                                        "with `jupyter nbconvert --to notebook --nbformat 4`"),
                       where=where)
    if not isinstance(value, dict) or "cells" not in value:
        got = "an object without 'cells'" if isinstance(value, dict) else json_type(value)
        raise LabError("not_a_notebook", N_("{where}: not a notebook (a Jupyter notebook is a "
                                            "JSON object with 'cells'; this is {got})"),
                       where=where, got=got)
    fields = Fields(value, where)
    version = fields.raw("nbformat")
    if version is not None and version != 4:
        raise LabError("nbformat_unsupported", N_("{where}: nbformat {version} is not "
                                                  "supported (the course's notebooks are "
                                                  "nbformat 4)"),
                       where=where, version=fields.index("nbformat"))
    if not isinstance(value["cells"], list):
        raise LabError("cells_not_a_list", N_("{where}: field 'cells' must be a list of "
                                              "objects, got {got}"),
                       where=where, got=json_type(value["cells"]))
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
        raise LabError("cannot_read", N_("{path}: cannot read ({reason})"),
                       path=path, reason=exc.strerror or exc) from exc
    try:
        what = kind(os.fstat(fd).st_mode)
        if what is not None:
            raise LabError("not_a_regular_file", N_("{path}: cannot read ({what}, not a "
                                                    "notebook file)"), path=path, what=what)
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise LabError("cannot_read", N_("{path}: cannot read ({reason})"),
                       path=path, reason=exc.strerror or exc) from exc
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise LabError("notebook_too_large", N_("{path}: more than {mib} MiB, too large for a "
                                                "submitted notebook (not read further)"),
                       path=path, mib=MAX_BYTES // (1024 * 1024))
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
    raise LabError("bad_cell_source", N_("{where}: field {field}.source must be a string or a "
                                         "list of strings, got {got}"),
                   where=cell.where, field=cell.path, got=json_type(value))


def _tags(cell: Fields) -> list[str]:
    value = cell.obj("metadata").raw("tags")
    if value is None:
        return []
    if isinstance(value, list) and all(isinstance(tag, str) for tag in value):
        return value
    raise LabError("bad_cell_tags", N_("{where}: field {field}.metadata.tags must be a list of "
                                       "strings, got {got}"),
                   where=cell.where, field=cell.path, got=json_type(value))
