"""Streams the providers really sent (data/recordings, copied by scripts/import_recordings.py
from public test suites) are read by the lab as the providers meant them.

What each turn means never comes from the lab: for openai-chat, openai-responses and anthropic it
is what the official SDK's accumulator returns (keel_lab.course._experiments.accumulators.meant),
computed here; for the other formats it is the source test's own assertion, typed into
SOURCES.json with the file and line it comes from. Calls the provider runs itself
(`provider_calls`) must never be executable. A recording whose shape a reader cannot take yet
is in XFAIL, with the shape named, until the reader takes it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from keel_cli._command import main
from keel_lab.course._experiments.accumulators import RunCall, meant, sources
from keel_lab.providers._diagnosis import diagnose_file
from keel_lab.providers._formats import STREAM_FORMATS

pytestmark = pytest.mark.ch7

REAL = Path(__file__).resolve().parents[2] / "data" / "recordings"
SOURCES: list[dict[str, Any]] = sources()
BY_FILE = {e["file"]: e for e in SOURCES}
LICENSES = {"MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause"}  # redistributable, attributed
NOT_STREAMS = {"SOURCES.json", "README.md"}
MAX_BYTES = 100_000
XFAIL: dict[str, str] = {}  # file -> the shape its reader cannot take yet


def recorded() -> list[str]:
    return sorted(p.relative_to(REAL).as_posix() for p in REAL.rglob("*")
                  if p.is_file() and p.name not in NOT_STREAMS)


def cases() -> list[Any]:
    return [pytest.param(f, marks=pytest.mark.xfail(strict=True, reason=XFAIL[f]))
            if f in XFAIL else f for f in sorted(BY_FILE)]


def expected_calls(entry: dict[str, Any]) -> list[RunCall]:
    """The calls a client must run: typed from the source's test, or the official SDK's."""
    got = meant(entry)
    if got is None:
        pytest.skip(f"the {entry['format']} SDK is not installed")
    if isinstance(got, BaseException):
        raise AssertionError(f"{entry['file']}: the SDK's accumulator failed: {got!r}")
    return got


def test_sources_list_every_recording_and_only_those():
    assert sorted(BY_FILE) == recorded()
    assert len(BY_FILE) == len(SOURCES), "a file is listed twice"


@pytest.mark.parametrize("entry", SOURCES, ids=lambda e: e["file"])
def test_each_source_says_where_it_comes_from(entry):
    path = REAL / entry["file"]
    assert entry["license"] in LICENSES
    assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"])
    assert re.fullmatch(r"[\w.-]+/[\w.-]+", entry["repository"]) and entry["path"]
    assert entry["format"] in STREAM_FORMATS
    assert entry["vendor"] == entry["file"].split("/")[0]
    assert entry["model"] and entry["turn"] and entry["expected"]["from"]
    assert path.suffix in (".sse", ".jsonl", ".json")
    assert entry["bytes"] == path.stat().st_size < MAX_BYTES


def test_the_readme_names_every_recording():
    text = (REAL / "README.md").read_text(encoding="utf-8")
    assert all(f"`{f}`" in text for f in BY_FILE)


@pytest.mark.parametrize("name", cases())
def test_the_lab_runs_the_calls_the_provider_meant(name):
    entry = BY_FILE[name]
    d = diagnose_file(REAL / name)
    assert d.format == entry["format"]
    assert d.finish_reason is not None, d.table()
    want = expected_calls(entry)
    runs = [c for c in d.calls if c.executable]
    # Gemini sends no call ids, so its sources assert none: there the lab's own are not compared
    ids = all(w.id is not None for w in want)
    assert [RunCall(c.id if ids else None, c.name, c.input).key() for c in runs] \
        == [w.key() for w in want], d.table()
    assert all(c.id for c in runs)
    provider = {p["id"] for p in entry["expected"]["provider_calls"]}
    assert not [c for c in runs if c.id in provider], "a call the provider runs is executable"


def test_the_cli_assembles_a_real_recording(capsys):
    name = "vertex/no_arguments_then_partial_args.jsonl"
    assert main(["assemble", str(REAL / name), "--json"]) == 0
    calls = json.loads(capsys.readouterr().out)["calls"]
    assert [(c["name"], c["input"], c["executable"]) for c in calls] == [
        (c["name"], c["arguments"], True) for c in BY_FILE[name]["expected"]["calls"]]
