"""The course's sources as the handout and nbgrader commands meet them."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from keel_course.checkout import Checkout
from keel_course.editions import read_notebook
from keel_course.sources import check_outside, failure, reading
from keel_lab._core.errors import LabError

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
CHECKOUT = Checkout.at(ROOT)


def test_the_sources_are_the_package_its_data_and_the_notebooks():
    assert CHECKOUT.sources == (ROOT / "keel_lab", ROOT / "keel_cli", ROOT / "keel_checks",
                                ROOT / "data", ROOT / "notebooks")


@pytest.mark.parametrize("folder", ["keel_lab", "keel_lab/new/deeper", "notebooks", "data/x",
                                    "notebooks/zh/solutions", "keel_lab/../notebooks/x"])
def test_a_folder_inside_the_sources_is_refused(folder):
    with pytest.raises(LabError, match=r"is inside .*: give a folder outside the course's "
                       r"sources") as err:
        check_outside(ROOT / folder, CHECKOUT)
    assert err.value.code == "inside_sources"


@pytest.mark.parametrize("folder", ["build/handout", "", "keel_lab_copy", "notebooks2"])
def test_a_folder_beside_them_is_fine(folder):
    assert check_outside(ROOT / folder, CHECKOUT) is None


def test_a_link_into_the_sources_is_refused(tmp_path):
    (tmp_path / "course").symlink_to(ROOT / "notebooks")
    with pytest.raises(LabError, match="is inside"):
        check_outside(tmp_path / "course" / "x", CHECKOUT)


def test_a_link_loop_is_a_lab_error(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    try:
        outcome = check_outside(tmp_path / "a" / "x", CHECKOUT)
    except LabError as exc:  # Python 3.11 raises on the loop; later versions resolve leniently
        assert str(exc).startswith(f"{tmp_path / 'a' / 'x'}: cannot tell where it is")
    else:
        assert outcome is None  # outside the sources, wherever the loop points


@pytest.mark.parametrize(("text", "kind"), [('{"cells": [', "JSONDecodeError"),
                                            ("[1]", "TypeError"), ("{}", "KeyError"),
                                            ("[" * 100_000, "RecursionError")])
def test_reading_a_damaged_notebook_is_one_line_naming_it(tmp_path, text, kind):
    path = tmp_path / "01_history.ipynb"
    path.write_text(text)
    with pytest.raises(LabError) as caught, reading(path):
        read_notebook(path)["cells"]
    message = str(caught.value)
    assert message.startswith(f"{path} is not a notebook the course can read ({kind})")
    assert caught.value.code == "unreadable_notebook" and caught.value.params["error"] == kind
    assert "\n" not in message


def test_reading_a_missing_file_or_a_folder_names_it(tmp_path):
    for path in (tmp_path / "missing.ipynb", tmp_path):
        with pytest.raises(LabError, match=f"^{path}: cannot read \\(") as err, reading(path):
            read_notebook(path)
        assert err.value.code == "cannot_read"


def test_a_lab_error_passes_through_reading(tmp_path):
    with pytest.raises(LabError, match=r"^its own words$") as err, reading(tmp_path):
        raise LabError("its_own", "its own words")
    assert err.value.code == "its_own"


def test_a_good_notebook_reads(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps({"cells": []}))
    with reading(path):
        assert read_notebook(path) == {"cells": []}


def test_failure_names_the_file_when_the_system_does():
    assert failure(IsADirectoryError(errno.EISDIR, "Is a directory", "/x/a.ipynb")) == (
        "/x/a.ipynb: Is a directory")
    assert failure(OSError(errno.ENOSPC, "No space left on device")) == (
        "No space left on device")
    assert failure(OSError("odd")) == "odd"
