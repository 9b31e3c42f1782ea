"""No verdict reads a message: the CLI on every shipped stream, recording and history, and the
quirk zoo of chapter 7a, give under the pseudo-locale (`set_language("qps")`, where every message
is nonsense with its placeholders kept) what they give in English - the same codes and quirks in
`--json`, the same verdicts (which calls may run, which turns are refused), the same exit codes,
the same `LabError` codes, and text tables of the same shape."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from keel_cli._command import main
from keel_cli._conversation import read_conversation, validate_conversation
from keel_lab._core.errors import LabError
from keel_lab._i18n import language, set_language
from keel_lab.course import _data as data
from keel_lab.course._experiments.providers import quirks_report, recordings_report
from keel_lab.providers._diagnosis import diagnose_file

pytestmark = pytest.mark.lab_wide

ROOT = data.root()
PSEUDO = "\u27e6"  # how every message of the pseudo-locale begins
STREAMS = sorted(p for folder in ("streams", "recordings") for p in (ROOT / folder).rglob("*.*")
                 if p.suffix in (".sse", ".jsonl", ".json") and p.name != "SOURCES.json")
HISTORIES = sorted((ROOT / "histories").rglob("*.json"))
MESSAGES = {"message", "error"}  # the JSON fields that hold words; everything else is data


@contextmanager
def speaking(code: str) -> Iterator[None]:
    before = language()
    set_language(code)
    try:
        yield
    finally:
        set_language(before)


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal wide enough that no table wraps: a longer word must not move a line."""
    monkeypatch.setenv("COLUMNS", "100000")


def _run(capsys: pytest.CaptureFixture[str], argv: list[str], code: str) -> tuple[int, str, str]:
    with speaking(code):
        exit_code = main(argv)
    out, err = capsys.readouterr()
    return exit_code, out, err


def _data(value: Any) -> Any:
    """A `--json` result without its words: codes, quirks, verdicts, ids, inputs."""
    if isinstance(value, dict):
        return {k: (v is None) if k in MESSAGES else _data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_data(v) for v in value]
    return value


def _shape(text: str) -> tuple[int, list[int]]:
    """A text's lines, and the columns of each table in it (read from its rule of dashes)."""
    lines = text.splitlines()
    return len(lines), [len(line.split()) for line in lines
                        if line.strip() and set(line.replace(" ", "")) == {"-"}]


def _code(read: Any) -> str | None:
    try:
        read()
    except LabError as exc:
        return exc.code
    return None


def _same_run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[str, str]:
    """The command's output in English and in the pseudo-locale, checked alike."""
    english, pseudo = (_run(capsys, argv, code) for code in ("en", "qps"))
    assert english[0] == pseudo[0], argv  # the exit code
    if english[0] == 2:  # unreadable: one line, each in its language
        assert len(english[2].splitlines()) == len(pseudo[2].splitlines()) == 1
        assert PSEUDO in pseudo[2] and PSEUDO not in english[2]
    elif "--json" in argv:
        assert _data(json.loads(english[1])) == _data(json.loads(pseudo[1]))
    else:
        assert _shape(english[1]) == _shape(pseudo[1])
        assert PSEUDO in pseudo[1] and PSEUDO not in english[1]
    return english[1], pseudo[1]


def _names(row: str) -> list[str]:
    """What a row of the calls' table names: ids, names, quirks and note numbers (data, never
    words: the pseudo-locale turns every word of a message to upper and lower case swapped)."""
    return re.findall(r"\[\d+\]|\b[a-z0-9]+(?:_[a-z0-9]+)+\b", row)


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: str(p.relative_to(ROOT)))
def test_assemble_decides_alike_in_every_language(capsys, path: Path):
    english, pseudo = _same_run(capsys, ["assemble", str(path)])
    calls = json.loads(_same_run(capsys, ["assemble", str(path), "--json"])[0] or "{}")
    rows = slice(3, 3 + len(calls.get("calls", [])))  # after the title, header and rule
    assert [_names(r) for r in english.splitlines()[rows]] == [
        _names(r) for r in pseudo.splitlines()[rows]]
    verdicts = {}
    for code in ("en", "qps"):
        with speaking(code):
            try:
                d = diagnose_file(path)
            except LabError as exc:
                verdicts[code] = exc.code
                continue
            verdicts[code] = (d.ok, [(c.executable, c.verdict.code,
                                      [p.code for p in c.verdict.parts]) for c in d.calls],
                              [(n.quirk, n.said.code, n.action) for n in d.diagnostics],
                              None if d.interrupted is None else d.interrupted.code)
    assert verdicts["en"] == verdicts["qps"]


@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: str(p.relative_to(ROOT)))
def test_validate_decides_alike_in_every_language(capsys, path: Path):
    for argv in (["validate", str(path)], ["validate", str(path), "--json"]):
        _same_run(capsys, argv)

    def problems() -> list[tuple[str, tuple[str, ...]]]:
        fmt, messages = read_conversation(path)
        return [(p.kind, p.ids) for p in validate_conversation(messages, fmt)]

    found = {}
    for code in ("en", "qps"):
        with speaking(code):
            found[code] = _code(problems) or problems()
    assert found["en"] == found["qps"]


@pytest.mark.parametrize("report", [recordings_report, quirks_report], ids=lambda r: r.__name__)
def test_the_quirk_zoo_decides_alike_in_every_language(report):
    """Chapter 7a's tables: the same rows (streams, calls that may run, quirks noticed, policies
    counted), and the same shape of table."""
    english, pseudo = (_report(report, code) for code in ("en", "qps"))
    assert english[0] == pseudo[0]
    assert _shape(english[1]) == _shape(pseudo[1]) and PSEUDO in pseudo[1]


def _report(report: Any, code: str) -> tuple[Any, str]:
    with speaking(code):
        r = report()
        kept = [{k: v for k, v in row.items() if k in ("recording", "stream", "model", "calls",
                                                         "may_run", "provider_calls")}
                for row in r.rows]
        noticed = [row["noticed"] for row in r.rows if "recording" in row]  # quirks only
        return (r.data, kept, noticed), r.table()


@pytest.mark.parametrize("bad", ['{"choices": "x"}\n', "[" * 100_000 + "]" * 100_000 + "\n",
                                 'data: {"choices": []}\n', "\x00", "{}\n"])
def test_an_unreadable_stream_has_its_code_in_every_language(tmp_path, bad):
    path = tmp_path / "s.sse"
    path.write_text(bad)
    codes = set()
    for code in ("en", "qps"):
        with speaking(code):
            codes.add(_code(lambda: diagnose_file(path)))
    assert len(codes) == 1 and None not in codes
