# ruff: noqa: RUF001 - Chinese text takes Chinese punctuation
"""The Chinese edition speaks Chinese when the code speaks: no English prose in the saved outputs
of the Chinese solutions, except what must stay English - the providers' verbatim error texts,
Python's own JSON error texts, wire data (JSON, SSE lines), what a model says in a recorded or
generated stream, identifiers and quoted strings."""

import json
import re
from functools import cache
from pathlib import Path

import pytest

from keel_lab._core import history
from keel_lab.course import _data as data
from keel_lab.providers import anthropic_messages, gemini_messages, responses_messages
from keel_lab.providers._diagnosis import diagnose_file

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
ZH = sorted((ROOT / "notebooks" / "zh" / "solutions").glob("*.ipynb"))

# Texts that stay English, each a template whose {fields} match anything: what a provider
# answers (quoted verbatim so a learner can search for it), and Python's json error messages.
VERBATIM = [
    history.MISSING_RESULTS, history.ORPHAN_RESULT,
    anthropic_messages.MISSING, anthropic_messages.ORPHAN, anthropic_messages.DUPLICATE,
    anthropic_messages.STREAM_DELTA, anthropic_messages.NOT_AN_OBJECT,
    gemini_messages.COUNT,
    responses_messages.MISSING, responses_messages.ORPHAN, responses_messages.ITEM_ID,
    "{json error}: line {l} column {c} (char {n})",
]
_WORD = r"(?<![\w.\-/@$])[A-Za-z][a-z']*(?![\w\-/@])"  # not part of an identifier, path or id
_RUN = re.compile(rf"{_WORD}(?:[ ,;:()]+{_WORD}){{3,}}")  # four words or more
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`|“[^”\n]*”|「[^」\n]*」")
_WIRE = re.compile(r"\s*([{\[]|data:|event:|id:)")


def _template(text: str) -> re.Pattern[str]:
    parts = re.split(r"\{[^{}]*\}", text)
    return re.compile(".*?".join(re.escape(p) for p in parts))


_VERBATIM = [_template(t) for t in VERBATIM]


@cache
def model_texts() -> tuple[str, ...]:
    """Every line a model says in the streams the chapters replay (recorded from a live API or
    generated): a model's words are data, in the language it answered in."""
    files = [p for folder in ("streams", "recordings") for p in data.path(folder).rglob("*")
             if p.is_file() and p.suffix in (".sse", ".jsonl", ".json", ".txt")
             and p.name != "SOURCES.json"]
    lines = set()
    for path in files:
        try:
            text = diagnose_file(path).text
        except Exception:  # a file that is no stream (a sidecar): no model text in it
            continue
        lines |= {line.strip() for line in text.splitlines() if len(line.strip()) > 20}
    return tuple(sorted(lines, key=len, reverse=True))


def english_runs(text: str) -> list[str]:
    """The runs of four or more English words in `text` that are prose: outside quoted
    strings, wire lines, identifiers, a model's own words and the verbatim texts."""
    out = []
    for line in text.splitlines():
        if _WIRE.match(line) or not _RUN.search(line):
            continue
        for pattern in _VERBATIM:
            line = pattern.sub(" ", line)
        runs = [m.group(0) for m in _RUN.finditer(_QUOTED.sub(" ", line))]
        if runs:  # a model's words are the rarest exception: looked for last
            for said in model_texts():
                line = line.replace(said, " ") if said in line else line
            runs = [m.group(0) for m in _RUN.finditer(_QUOTED.sub(" ", line))]
        out += runs
    return out


def outputs(path: Path) -> list[tuple[str, str]]:
    """(cell id, text) of every text output of a notebook's code cells."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            texts = [o["text"]] if o["output_type"] == "stream" else [
                v for k, v in o.get("data", {}).items()
                if k in ("text/plain", "text/markdown", "text/html")]
            out += [(cell.get("id", "?"), "".join(t)) for t in texts]
    return out


def test_the_detector_finds_prose_and_spares_what_stays_english():
    assert english_runs("a batch costs its slowest call") == ["a batch costs its slowest call"]
    assert english_runs("批次耗时取决于最慢的调用：call_1 lookup_incident INC-001 run-abc") == []
    assert english_runs('{"error": "a message from the server here"}') == []
    assert english_runs("OpenAI 会拒绝：" + history.MISSING_RESULTS.format(ids="call_1")) == []
    assert english_runs("不是合法 JSON：Expecting ',' delimiter: line 1 column 5 (char 4)") == []
    assert english_runs("工具返回 'no information for this one'") == []


@pytest.mark.parametrize("path", ZH, ids=lambda p: p.stem)
def test_chinese_solutions_print_no_english_prose(path):
    found = [f"cell {cid}: {run}" for cid, text in outputs(path) for run in english_runs(text)]
    assert not found, f"{len(found)} English runs in {path.name}:\n" + "\n".join(found[:40])
