"""Fuzzing the grader's reading of a notebook: single-field mutations of the course's own
notebooks must end in a `LabError` line or a plan, never in another exception (the plan is what
the grader makes of a readable notebook before anything runs). Deterministic and bounded."""

from __future__ import annotations

import copy
import json
import tempfile
import traceback
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_fields import MARK, paths, reshape

from keel_course.grading.plan import plan
from keel_course.grading.submission import read_submission
from keel_lab import LabError

pytestmark = [pytest.mark.lab_wide, pytest.mark.slow]

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
SOURCES: list[Any] = []
for name in ("02_pairing", "05_partial_success", "solutions/03_batching"):
    nb = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text("utf-8"))
    for cell in nb["cells"]:  # outputs are never read; keep the walk on what the grader reads
        cell.pop("outputs", None)
    SOURCES.append(nb)
DEEP = "[" * 100_000 + "]" * 100_000
REPLACEMENTS: list[Any] = [None, True, 0, -1, 10**40, 1.5, "", "x", "\ud800", [], {}, [1],
                           {"cell_type": "code"}, "def status_history(events):\n  return (",
                           ["check(", "make_batches)"], "\x00", "%%time\n" * 3, "(" * 500]
KINDS = ("drop", "retype", "renest", "truncate", "deep", "huge_int", "dup_key", "nan",
         "cut_text")


def mutate(nb: Any, path: tuple[Any, ...], kind: str, pick: int) -> str:
    value = copy.deepcopy(nb)
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    raw = None
    if kind == "drop":
        del parent[key]
    elif not reshape(parent, key, kind, REPLACEMENTS[pick % len(REPLACEMENTS)], pick):
        parent[key] = MARK
        raw = {"deep": DEEP, "huge_int": "9" * 5000, "nan": "NaN", "dup_key": '{"a": 1, "a": 2}',
               "cut_text": '"unterminated'}[kind]
    text = json.dumps(value)
    return text.replace(json.dumps(MARK), raw, 1) if raw else text


def error_site(text: str, file: Path) -> str | None:
    file.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        plan(read_submission(file))
    except LabError as exc:
        assert str(exc) and "\n" not in str(exc)
    except Exception as exc:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        return f"{type(exc).__name__} at {Path(frame.filename).name}:{frame.lineno}"
    return None


@st.composite
def cases(draw: st.DrawFn) -> str:
    nb = SOURCES[draw(st.integers(0, len(SOURCES) - 1))]
    every = list(paths(nb))
    path = every[draw(st.integers(0, len(every) - 1))]
    return mutate(nb, path, draw(st.sampled_from(KINDS)), draw(st.integers(0, 100)))


@settings(max_examples=600, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_every_single_field_mutation_ends_in_a_lab_error_or_a_plan(text):
    with tempfile.TemporaryDirectory() as tmp:
        assert error_site(text, Path(tmp) / "s.ipynb") is None


def test_the_unmutated_notebooks_are_planned(tmp_path):
    for nb in SOURCES:
        (tmp_path / "s.ipynb").write_text(json.dumps(nb))
        assert plan(read_submission(tmp_path / "s.ipynb")).chapter is not None
