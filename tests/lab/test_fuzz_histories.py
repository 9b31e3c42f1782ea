"""Fuzzing `keel-lab validate`'s reader: single-field mutations of the lab's own histories.

Every mutated file must end in a `LabError` (unreadable) or a list of problems (readable),
never in any other exception. Deterministic (derandomized) and bounded in examples.
"""

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

from keel_cli._conversation import read_conversation, validate_conversation
from keel_lab import LabError, OfflineAdapter, Runner, SystemMessage
from keel_lab.course._scenarios import compare_question
from keel_lab.providers._anthropic_messages import to_anthropic
from keel_lab.providers._gemini_messages import to_gemini
from keel_lab.providers._openai_messages import to_openai
from keel_lab.providers._responses_messages import to_responses

pytestmark = [pytest.mark.ch1, pytest.mark.slow]

QUESTIONS = [compare_question(3), "Which is more severe, INC-001 or INC-999?"]
RUNS = [Runner(OfflineAdapter()).run(q) for q in QUESTIONS]
HISTORIES: list[Any] = [
    *(to_openai([SystemMessage("You are on call."), *r.messages]) for r in RUNS),
    *({"model": "gpt-4o", "messages": to_openai(r.messages)} for r in RUNS),
    *(to_anthropic([SystemMessage("You are on call."), *r.messages]) for r in RUNS),
    *(to_anthropic(r.messages)["messages"] for r in RUNS),
    *({"model": "gpt-4.1", "input": to_responses([SystemMessage("On call."), *r.messages])}
      for r in RUNS),
    *(to_gemini([SystemMessage("You are on call."), *r.messages]) for r in RUNS),
]
DEEP = "[" * 100_000 + "]" * 100_000
REPLACEMENTS: list[Any] = [None, True, 0, -1, 10**40, 1.5, "", "x", "\ud800", [], {}, [1],
                           {"type": "tool_use"}, {"role": "tool"}]
KINDS = ("drop", "duplicate", "retype", "renest", "truncate", "deep", "huge_int",
         "dup_key", "nan", "cut_text")




def mutate(history: Any, path: tuple[Any, ...], kind: str, pick: int) -> str:
    """The text of `history` with one field mutated."""
    value = copy.deepcopy(history)
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    raw: str | None = None
    if kind == "drop":
        del parent[key]
    elif kind == "duplicate":
        if isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        else:
            raw = f'"{key}": {json.dumps(parent[key])}, "{key}"'  # the key twice
            text = json.dumps(value)
            return text.replace(f'"{key}"', raw, 1)
    elif reshape(parent, key, kind, REPLACEMENTS[pick % len(REPLACEMENTS)], pick):
        pass
    else:
        parent[key] = MARK
        raw = {"deep": DEEP, "huge_int": "9" * 5000, "nan": "NaN", "dup_key":
               '{"a": 1, "a": 2}', "cut_text": '"unterminated'}[kind]
    text = json.dumps(value)
    return text.replace(json.dumps(MARK), raw, 1) if raw else text


def error_site(text: str, fmt: str, file: Path) -> str | None:
    """None when reading and validating ended in a LabError or in problems; else where and
    what the unexpected exception was."""
    file.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        found, messages = read_conversation(file, fmt)
        validate_conversation(messages, found)
    except LabError as exc:
        assert str(exc) and "\n" not in str(exc)  # one line, naming what is wrong
    except Exception as exc:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        return f"{type(exc).__name__} at {Path(frame.filename).name}:{frame.lineno}"
    return None


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, str]:
    history = HISTORIES[draw(st.integers(0, len(HISTORIES) - 1))]
    every = list(paths(history))
    path = every[draw(st.integers(0, len(every) - 1))]
    kind = draw(st.sampled_from(KINDS))
    fmt = draw(st.sampled_from(["auto", "openai-chat", "anthropic", "openai-responses", "gemini"]))
    return mutate(history, path, kind, draw(st.integers(0, 100))), fmt


@settings(max_examples=2000, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_every_single_field_mutation_ends_in_a_lab_error_or_problems(case):
    text, fmt = case
    with tempfile.TemporaryDirectory() as tmp:
        assert error_site(text, fmt, Path(tmp) / "h.json") is None


def test_the_unmutated_histories_are_valid(tmp_path):
    for history in HISTORIES:
        (tmp_path / "h.json").write_text(json.dumps(history))
        fmt, messages = read_conversation(tmp_path / "h.json")
        assert validate_conversation(messages, fmt) == []
