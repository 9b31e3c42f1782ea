"""Published client code with the bugs this lab teaches, run over the recorded streams.

Each naive reading is one step of a client written the way public code was written, put in
place of the same step of the lab's assembly; everything else stays the lab's, so what a
reading costs on a recording is that step's alone. Readings of the wire (each argument fragment
parsed alone; index 0 read as "no index") read the recorded chunks themselves and run every
named call they assemble once the stream finished; readings of the finished message (the last
block taken as the call; calls deduplicated or keyed by name) read the calls the lab would run.

The lab's assembly is the reference: a call is *lost* when the lab runs it and the reading does
not, *wrong* when the reading runs it and the lab does not - other arguments, or a call the lab
refuses. Both are counted by comparing (name, input) multisets, never typed in.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from keel_lab._core.streaming import ToolCallDelta
from keel_lab._i18n import _
from keel_lab.course import _data as data
from keel_lab.course._experiments.report import Report
from keel_lab.providers._diagnosis import diagnose, read_stream, to_events
from keel_lab.providers._formats import StreamFormat

Call = tuple[str, str]  # (name, its input as JSON text; text that is no JSON object as it is)
# formats that stream arguments
FRAGMENTS: tuple[StreamFormat, ...] = ("anthropic", "openai-chat", "openai-responses")


@dataclass(frozen=True)
class Turn:
    name: str  # a recording
    format: str
    records: list[Any]
    finished: bool
    lab: list[Call]  # the calls the lab runs, in index order


@dataclass(frozen=True)
class Reading:
    name: str
    source: str  # where the code was published
    bug: str  # what it does, in one line
    formats: tuple[StreamFormat, ...] | None  # what it reads (None: any; it reads the message)
    read: Callable[[Turn], list[Call]]


def _call(name: str, value: Any) -> Call:
    return name, json.dumps(value) if isinstance(value, dict) else str(value)


def _parsed(text: str) -> Any:
    """What a client that calls `json.loads` gets: the object, or the text when it fails."""
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return text


def fragment_alone(turn: Turn) -> list[Call]:
    """bojieli/ai-agent-book#194: `input = json.loads(fragment)` for each fragment, failures
    swallowed; a call keeps the last fragment that parsed alone, else its empty start input."""
    if not turn.finished:
        return []
    names: dict[int, str] = {}
    inputs: dict[int, Any] = {}
    for event in to_events(turn.records, turn.format):
        if not isinstance(event, ToolCallDelta):
            continue
        names[event.index] = names.get(event.index, "") + (event.name or "")
        inputs.setdefault(event.index, {})
        value = _parsed(event.arguments_delta) if event.arguments_delta else None
        if isinstance(value, dict):
            inputs[event.index] = value
    return [_call(names[i], inputs[i]) for i in sorted(names) if names[i]]


def index_zero_falsy(turn: Turn) -> list[Call]:
    """langchain-ai/langchain#38677: `if not index and not id`, a chunk gets a fresh id of its
    own, so every continuation of the call at index 0 becomes a call apart."""
    if not turn.finished:
        return []
    groups: dict[Any, list[str]] = {}  # key -> [name, arguments]
    for n, entry in enumerate(_chat_entries(turn.records)):
        fn = entry.get("function")
        fn = fn if isinstance(fn, dict) else {}
        key = ("fresh", n) if not entry.get("index") and not entry.get("id") \
            else ("index", json.dumps(entry.get("index")))
        group = groups.setdefault(key, ["", ""])
        name = fn.get("name")
        group[0] += name if isinstance(name, str) else ""
        args = fn.get("arguments")
        group[1] += args if isinstance(args, str) else json.dumps(args) if args else ""
    return [_call(name, _parsed(args)) for name, args in groups.values() if name]


def _chat_entries(records: list[Any]) -> list[dict[str, Any]]:
    out = []
    for r in records:
        choices = r.get("choices") if isinstance(r, dict) else None
        for choice in choices if isinstance(choices, list) else []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            entries = delta.get("tool_calls") if isinstance(delta, dict) else None
            out += [e for e in entries or [] if isinstance(e, dict)]
    return out


def last_block(turn: Turn) -> list[Call]:
    """anthropics/courses, tool_use chapter 6: `tool_use = response.content[-1]`, one call."""
    return turn.lab[-1:]


def dedupe_name_arguments(turn: Turn) -> list[Call]:
    """run-llama/llama_index#22464: a call whose (name, arguments) was seen is dropped."""
    return list(dict.fromkeys(turn.lab))


def key_by_name(turn: Turn) -> list[Call]:
    """vertesia/llumiverse#663: calls keyed by name, so same-name calls become one call whose
    input is their inputs merged, the later keys winning."""
    merged: dict[str, dict[str, Any]] = {}
    for name, text in turn.lab:
        merged.setdefault(name, {}).update(json.loads(text))
    return [_call(name, value) for name, value in merged.items()]


READINGS = (
    Reading("fragment_alone", "bojieli/ai-agent-book#194",
            "parses each argument fragment on its own", FRAGMENTS, fragment_alone),
    Reading("index_zero_falsy", "langchain-ai/langchain#38677",
            "reads index 0 as no index", ("openai-chat",), index_zero_falsy),
    Reading("last_block", "anthropics/courses (tool_use, chapter 6)",
            "takes the message's last block as the call", None, last_block),
    Reading("dedupe_name_arguments", "run-llama/llama_index#22464",
            "drops a call equal in name and arguments to an earlier one", None,
            dedupe_name_arguments),
    Reading("key_by_name", "vertesia/llumiverse#663",
            "keys calls by name, merging same-name calls", None, key_by_name),
)


def turn(name: str) -> Turn:
    """A recording read once: its payloads and the calls the lab's assembly runs."""
    fmt, records = read_stream(data.path("streams", name))
    d = diagnose(records, fmt)
    lab = [_call(c.name, c.input) for c in d.calls if c.executable and c.input is not None]
    return Turn(name, fmt, records, d.finish_reason is not None, lab)


def compare(lab: Sequence[Call], naive: Sequence[Call]) -> tuple[int, int]:
    """(lost, wrong): lab calls the reading does not run, and calls it runs the lab does not."""
    ours, theirs = Counter(lab), Counter(naive)
    return sum((ours - theirs).values()), sum((theirs - ours).values())


def naive_clients(names: Sequence[str] | None = None) -> Report:
    """Every reading over every recording of a format it reads: calls lost and wrong."""
    from keel_lab.course._experiments.providers import stream_names

    turns = [turn(n) for n in (names if names is not None else stream_names())]
    rows: list[dict[str, Any]] = []
    totals: dict[str, dict[str, Any]] = {}
    for reading in READINGS:
        tally: dict[str, Any] = {"source": reading.source, "bug": reading.bug,
                                 "recordings": 0, "hurt": 0, "lost": 0, "wrong": 0}
        for t in turns:
            if reading.formats is not None and t.format not in reading.formats:
                continue
            naive = reading.read(t)
            lost, wrong = compare(t.lab, naive)
            rows.append({"reading": reading.name, "recording": t.name, "lab_calls": len(t.lab),
                         "naive_calls": len(naive), "lost": lost, "wrong": wrong})
            tally["recordings"] += 1
            tally["hurt"] += bool(lost or wrong)
            tally["lost"] += lost
            tally["wrong"] += wrong
        totals[reading.name] = tally
    findings = [_("{reading} ({source}): {lost} call(s) lost, {wrong} wrong, in {hurt} of "
                  "{recordings} recordings").format(reading=name, **t)
                for name, t in totals.items()]
    return Report("naive_clients", {"recordings": len(turns)}, {"readings": totals}, rows,
                  findings)
