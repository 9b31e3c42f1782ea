"""Fuzzing `keel-lab assemble`: single-field mutations of every recorded stream.

Each mutated file is run through the CLI in-process. It must end with a documented exit code
(0 every call may run, 1 some may not, 2 unreadable with one line on stderr), never with an
exception; and the converters, run directly, raise nothing but `LabError` (or the
`ConnectionError` that stands for a server's error event, which the assembler turns into an
interrupted turn). Deterministic (derandomized) and bounded in examples.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_fields import MARK, paths, reshape

from keel_cli._command import main
from keel_lab import LabError
from keel_lab.providers._diagnosis import _convert
from keel_lab.providers._formats import STREAM_FORMATS, detect_stream
from keel_lab.providers._streams.records import iter_records, read_file

pytestmark = [pytest.mark.ch7, pytest.mark.slow]

STREAMS = Path(__file__).resolve().parents[2] / "data" / "streams"
FILES = sorted(STREAMS.rglob("*.*"))
DEEP = "[" * 100_000 + "]" * 100_000
REPLACEMENTS: list[Any] = [None, True, 0, -1, 2**40, 1.5, "", "0", "x", "\x1b[2J", [], {}, [1],
                           {"index": 0}, "\ud800"]
RAW = {"deep": DEEP, "huge_int": "9" * 5000, "nan": "NaN", "overflow": "1e400",
       "dup_key": '{"a": 1, "a": 2}', "surrogate": '"\\udc00"'}
KINDS = ("drop", "duplicate", "retype", "renest", "truncate", "cut", "drop_event",
         "duplicate_event", "swap_events", *RAW)


def payloads(path: Path) -> tuple[bool, list[Any]]:
    """Whether the file is SSE, and its payloads (the string "[DONE]" for the sentinel)."""
    text = path.read_text()
    sse = text.startswith(("data:", "event:"))
    lines = [line[len("data: "):] for line in text.splitlines() if line.startswith("data: ")] \
        if sse else [line for line in text.splitlines() if line.strip()]
    return sse, [line if line == "[DONE]" else json.loads(line) for line in lines]


def mutate_field(record: Any, path: tuple[Any, ...], kind: str, pick: int) -> str:
    """The JSON text of one payload with the field at `path` mutated."""
    value = copy.deepcopy(record)
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    if kind == "drop":
        del parent[key]
    elif kind == "duplicate":
        if isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        else:  # the key twice in one object
            text = json.dumps(value, ensure_ascii=False)
            inner = json.dumps({key: parent[key]}, ensure_ascii=False)[1:-1]
            return text.replace(inner, f"{inner}, {inner}", 1)
    elif reshape(parent, key, kind, REPLACEMENTS[pick % len(REPLACEMENTS)], pick):
        pass
    else:
        parent[key] = MARK
        text = json.dumps(value, ensure_ascii=False)
        return text.replace(json.dumps(MARK, ensure_ascii=False), RAW[kind], 1)
    return json.dumps(value, ensure_ascii=False)


def render(sse: bool, items: list[str]) -> str:
    return "".join(f"data: {t}\n\n" if sse else f"{t}\n" for t in items)


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A mutated stream file's text, and the extra CLI arguments to run it with."""
    sse, records = payloads(FILES[draw(st.integers(0, len(FILES) - 1))])
    texts = [r if r == "[DONE]" else json.dumps(r, ensure_ascii=False) for r in records]
    kind = draw(st.sampled_from(KINDS))
    n = draw(st.integers(0, len(records) - 1))
    if kind == "drop_event":
        del texts[n]
    elif kind == "duplicate_event":
        texts.insert(n, texts[n])
    elif kind == "swap_events":
        m = draw(st.integers(0, len(records) - 1))
        texts[n], texts[m] = texts[m], texts[n]
    elif kind == "cut":
        text = render(sse, texts)
        return text[: draw(st.integers(0, len(text)))], _options(draw)
    elif records[n] != "[DONE]":
        every = list(paths(records[n]))
        if every:
            path = every[draw(st.integers(0, len(every) - 1))]
            texts[n] = mutate_field(records[n], path, kind, draw(st.integers(0, 100)))
    return render(sse, texts), _options(draw)


def _options(draw: st.DrawFn) -> list[str]:
    fmt = draw(st.sampled_from(["auto", "auto", *STREAM_FORMATS]))
    return ["--format", fmt, *(["--json"] if draw(st.booleans()) else [])]


def converter_error_site(path: Path, fmt: str) -> str | None:
    """None when the converter ends normally or with a LabError / server ConnectionError;
    else the exception's type and where it was raised."""
    try:
        records = list(iter_records(read_file(path), str(path)))
        fmt = detect_stream([r for _, r in records], str(path)) if fmt == "auto" else fmt
        list(_convert(iter(records), fmt, str(path)))
    except (LabError, ConnectionError):
        return None
    except Exception as exc:  # collecting every other kind is the point
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        return f"{type(exc).__name__} at {Path(frame.filename).name}:{frame.lineno}"
    return None


def check_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), (code, err)
    if code == 2:
        assert out == "" and err.startswith("keel-lab: error: ") and err.count("\n") == 1
        return
    assert err == ""
    if "--json" in argv:
        result = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in --json"))
        every_call_runs = result["finish_reason"] is not None and all(
            c["executable"] for c in result["calls"]) and not any(  # nor a lost call
            x["index"] is None and x["action"] == "refused" for x in result["diagnostics"])
        assert (code == 0) == every_call_runs
    else:
        assert "\x1b" not in out and out.startswith("format: ")
        out.encode("utf-8")  # no lone surrogate reaches the terminal


@settings(max_examples=3000, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=cases())
def test_every_single_field_mutation_gets_a_documented_answer(case, capsys):
    text, options = case
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stream.txt"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        assert converter_error_site(path, options[1]) is None
        check_cli(["assemble", str(path), *options], capsys)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_recorded_streams_themselves_are_answered(path, capsys):
    check_cli(["assemble", str(path), "--json"], capsys)


def test_a_closed_pipe_ends_quietly(tmp_path):
    big = tmp_path / "many_calls.jsonl"  # far more output than a pipe buffers
    big.write_text("".join(json.dumps({"message": {"tool_calls": [{"function": {
        "name": "lookup_incident", "arguments": {"incident_id": f"INC-{n}"}}}]},
        "done": False}) + "\n" for n in range(3000)) + '{"message": {}, "done": true}\n')
    script = Path(sys.executable).parent / "keel-lab"
    for argv in (["assemble", str(big)], ["assemble", str(big), "--json"]):
        shell = f"'{script}' {' '.join(argv)} | head -c 1 >/dev/null; echo ${{PIPESTATUS[0]}}"
        done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True,
                              check=True)
        assert (done.stderr, done.stdout.strip()) == ("", "141")
