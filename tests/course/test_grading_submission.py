"""Reading a submitted notebook: every way a file can fail to be one is one `LabError` line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from keel_course.grading.submission import read_submission
from keel_lab import LabError

pytestmark = pytest.mark.lab_wide

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def test_a_learner_edition_reads_cell_by_cell(tmp_path):
    sub = read_submission(NOTEBOOKS / "05_partial_success.ipynb")
    nb = json.loads((NOTEBOOKS / "05_partial_success.ipynb").read_text("utf-8"))
    assert len(sub.cells) == len(nb["cells"])
    assert [c.number for c in sub.cells] == list(range(1, len(nb["cells"]) + 1))
    exercise = next(c for c in sub.cells if "exercise" in c.tags)
    assert exercise.code and exercise.source.startswith("def status_history(events):")


@pytest.mark.parametrize(("content", "message"), [
    (b"hello", "not valid JSON"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "binary data"),
    (b"\xff\xfe{}", "not UTF-8 text"),
    (b'{"hello": 1}', "not a notebook (a Jupyter notebook is a JSON object with 'cells'; this "
                      "is an object without 'cells')"),
    (b"[1, 2]", "this is a list"),
    (b'{"cells": {}}', "field 'cells' must be a list of objects, got an object"),
    (b'{"cells": [1]}', "field cells[0] must be an object, got a number"),
    (b'{"cells": [{"cell_type": 3}]}', "field 'cells[0].cell_type' must be a string"),
    (b'{"cells": [{"cell_type": "code", "source": [1]}]}',
     "cells[0].source must be a string or a list of strings, got a list"),
    (b'{"cells": [{"cell_type": "code", "metadata": {"tags": "exercise"}}]}',
     "cells[0].metadata.tags must be a list of strings, got a string"),
    (b'{"cells": [{"cell_type": "code", "metadata": []}]}',
     "field 'cells[0].metadata' must be an object, got a list"),
    (b'{"cells": [], "cells": []}', "the key 'cells' appears twice"),
    (b'{"nbformat": 3, "cells": []}', "nbformat 3 is not supported"),
    (b'{"nbformat": "4", "cells": []}', "field 'nbformat' must be a whole number"),
])
def test_broken_files_are_one_line_errors(tmp_path, content, message):
    path = tmp_path / "s.ipynb"
    path.write_bytes(content)
    with pytest.raises(LabError) as error:
        read_submission(path)
    assert message in str(error.value) and "\n" not in str(error.value)
    assert str(error.value).startswith(str(path))


def test_a_gigantic_notebook_is_refused_without_reading_it_all(tmp_path):
    path = tmp_path / "big.ipynb"
    with path.open("wb") as f:
        f.truncate(40 * 1024 * 1024)
    with pytest.raises(LabError, match="more than 32 MiB"):
        read_submission(path)


def test_a_folder_or_a_missing_file_cannot_be_read(tmp_path):
    for path in (tmp_path, tmp_path / "missing.ipynb"):
        with pytest.raises(LabError, match="cannot read"):
            read_submission(path)


def test_a_fifo_or_a_device_is_never_opened_for_reading(tmp_path):
    fifo = tmp_path / "fifo.ipynb"
    os.mkfifo(fifo)  # no writer: reading it would wait forever
    for path, what in ((fifo, "a FIFO"), (Path("/dev/zero"), "a device")):
        with pytest.raises(LabError, match=f"cannot read \\({what}, not a notebook file\\)"):
            read_submission(path)


def test_an_nbformat_3_notebook_says_how_to_convert_it(tmp_path):
    path = tmp_path / "old.ipynb"
    path.write_text('{"nbformat": 3, "worksheets": [{"cells": []}]}')
    with pytest.raises(LabError, match="nbconvert --to notebook --nbformat 4"):
        read_submission(path)
