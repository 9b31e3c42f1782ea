"""Proofs by re-chunking: how a stream is cut into chunks must not change what it means.

Every recorded stream is rewritten the ways a server or a proxy may legitimately chunk the same
turn: an argument fragment split in two at a character boundary, two adjacent fragments of one
call merged, one call's payload moved before another call's (each call keeps its own order).
The assembled calls (index, id, name, arguments, executable) and the diagnostics' (quirk,
action) pairs must stay what the recording gives. The raw file read through a FIFO in chunks
cut at arbitrary byte boundaries (UTF-8 characters included) must give the same payloads as
the file read whole. Derandomized and bounded; the exhaustive sweep over every boundary is
`bench/rechunking.py`.

One shape means what its fragment boundaries say: cumulative snapshots (each fragment repeats
everything before it) are read from the fragments as they came, so re-cutting them makes a
different stream, not the same one chunked differently; a test states it
(`test_snapshots_are_read_from_their_fragments`). Their fragments are never split or merged;
moving them still must not matter. A repeat of the whole arguments is judged on the text alone
and takes every rewrite.
"""

from __future__ import annotations

import copy
import itertools
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keel_lab.providers._diagnosis import diagnose, read_stream

pytestmark = pytest.mark.ch4

STREAMS = Path(__file__).resolve().parents[2] / "data" / "streams"
Record = Any  # a payload dict, or the "[DONE]" sentinel
FRAGMENT_BOUND = {"cumulative_snapshots"}  # quirks read from the fragments as they came
ARRIVAL_BOUND = {"index_drift",  # fragments placed by arrival order, whatever their index says
                 "item_id_reused"}  # ... or by the item id two items share

def stream_files() -> list[str]:
    return sorted(str(p.relative_to(STREAMS)) for p in STREAMS.rglob("*.*")
                  if p.parent.name != "gemini")


# --- what a payload is: an argument fragment, and which call it belongs to -------------------

def _chat_entry(record: Record) -> dict[str, Any] | None:
    """The one tool-call entry of a chunk that carries nothing else (no text, no finish)."""
    if not isinstance(record, dict) or len(record.get("choices") or []) != 1:
        return None
    choice = record["choices"][0]
    delta = choice.get("delta") or {}
    entries = delta.get("tool_calls")
    if choice.get("finish_reason") or delta.get("content") or not isinstance(entries, list) \
            or len(entries) != 1 or not isinstance(entries[0], dict):
        return None
    entry: dict[str, Any] = entries[0]
    return entry


def _text_field(record: Record, fmt: str) -> tuple[dict[str, Any], str] | None:
    """The dict and key holding this payload's argument text, when it is a plain fragment."""
    if not isinstance(record, dict):
        return None
    if fmt == "openai-chat":
        entry = _chat_entry(record)
        fn = entry.get("function") if entry else None
        if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
            return fn, "arguments"
    elif fmt == "anthropic" and record.get("type") == "content_block_delta":
        delta = record.get("delta") or {}
        if delta.get("type") == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            return delta, "partial_json"
    elif fmt == "openai-responses" and record.get("type") == \
            "response.function_call_arguments.delta" and isinstance(record.get("delta"), str):
        return record, "delta"
    return None


def text_of(record: Record, fmt: str) -> str | None:
    found = _text_field(record, fmt)
    return None if found is None else found[0][found[1]]


def with_text(record: Record, fmt: str, text: str, *, continuation: bool = False) -> Record:
    """A copy of a fragment carrying `text`; a continuation drops the id and name it opened."""
    out = copy.deepcopy(record)
    holder, key = _text_field(out, fmt) or ({}, "")
    holder[key] = text
    if continuation and fmt == "openai-chat":
        entry = _chat_entry(out) or {}
        for k in ("id", "type"):
            entry.pop(k, None)
        entry["function"] = {"arguments": text}
    return out


def owner(record: Record, fmt: str, tool_blocks: set[Any]) -> Any:
    """The call a payload belongs to (its key on the wire), or None for the turn's own."""
    if not isinstance(record, dict):
        return None
    if fmt == "openai-chat":
        entry = _chat_entry(record)
        return None if entry is None or entry.get("index") is None else ("i", entry["index"])
    if fmt == "anthropic":
        at = record.get("index")
        return ("i", at) if at in tool_blocks else None
    if fmt == "openai-responses" and str(record.get("type", "")).startswith(
            ("response.function_call_arguments.", "response.output_item.")):
        return ("i", record.get("output_index")) if record.get("output_index") in tool_blocks \
            else None
    return None


def opens(record: Record, fmt: str) -> bool:
    """The payload that opens a call (its id and name)."""
    if fmt == "openai-chat":
        entry = _chat_entry(record) or {}
        return bool(entry.get("id") or (entry.get("function") or {}).get("name"))
    return isinstance(record, dict) and record.get("type") in (
        "content_block_start", "response.output_item.added")


def tool_blocks(records: list[Record], fmt: str) -> set[Any]:
    """Anthropic block indexes and Responses output indexes that hold a call."""
    if fmt == "anthropic":
        return {r.get("index") for r in records if isinstance(r, dict)
                and r.get("type") == "content_block_start"
                and (r.get("content_block") or {}).get("type") == "tool_use"}
    return {r.get("output_index") for r in records if isinstance(r, dict)
            and r.get("type") == "response.output_item.added"
            and (r.get("item") or {}).get("type") == "function_call"}


# --- the rewrites -------------------------------------------------------------------------

@dataclass(frozen=True)
class Rewrite:
    kind: str  # split | merge | move
    at: int  # the payload's position
    arg: int  # split: the character boundary; move: how many payloads earlier

    def apply(self, records: list[Record], fmt: str) -> list[Record]:
        out = list(records)
        if self.kind == "split":
            text = text_of(out[self.at], fmt) or ""
            out[self.at: self.at + 1] = [
                with_text(out[self.at], fmt, text[:self.arg]),
                with_text(out[self.at], fmt, text[self.arg:], continuation=True)]
        elif self.kind == "merge":
            joined = (text_of(out[self.at], fmt) or "") + (text_of(out[self.at + 1], fmt) or "")
            out[self.at: self.at + 2] = [with_text(out[self.at], fmt, joined)]
        else:
            out.insert(self.at - self.arg, out.pop(self.at))
        return out


def _continues(first: Record, second: Record, fmt: str) -> bool:
    """`second` adds only text to `first`'s call (it opens nothing, repeats no name)."""
    if fmt != "openai-chat":
        return True
    a, b = _chat_entry(first) or {}, _chat_entry(second) or {}
    return not (b.get("function") or {}).get("name") and b.get("id") in (None, a.get("id"))


def fragment_bound(records: list[Record], fmt: str) -> tuple[set[Any], bool]:
    """The calls (as `owner` keys) whose meaning depends on where their fragments are cut (the
    recordings keep wire index and lab index equal, so the diagnostic's index is the key), and
    whether fragments are placed by arrival order, so that no payload may move."""
    quirks = diagnose(records, fmt).diagnostics
    return ({("i", d.index) for d in quirks if d.quirk in FRAGMENT_BOUND},
            any(d.quirk in ARRIVAL_BOUND for d in quirks))


def rewrites(records: list[Record], fmt: str, *, every: bool = True) -> Iterator[Rewrite]:
    """Every single rewrite of a stream (with `every=False`, splits only at the middle).

    A move never takes a call's opening before another call's opening: calls open in the
    order recorded (see `test_opening_calls_out_of_order_is_no_sparse_index`). A call whose
    fragments are snapshots is never split or merged, and a stream whose fragments are placed
    by arrival order has no moves (see `fragment_bound`)."""
    blocks = tool_blocks(records, fmt)
    bound, by_arrival = fragment_bound(records, fmt)
    for at, record in enumerate(records):
        text = text_of(record, fmt)
        key = owner(record, fmt, blocks)
        if text is None or key in bound:
            continue
        cuts = range(1, len(text)) if every else [len(text) // 2] if len(text) > 1 else []
        yield from (Rewrite("split", at, cut) for cut in cuts)
        if at + 1 < len(records) and text_of(records[at + 1], fmt) is not None \
                and owner(records[at + 1], fmt, blocks) == key and key is not None \
                and _continues(record, records[at + 1], fmt):
            yield Rewrite("merge", at, 0)
    for at, record in enumerate(records if not by_arrival else []):
        key = owner(record, fmt, blocks)
        back = 0
        while key is not None and at - back - 1 >= 0:
            other = owner(records[at - back - 1], fmt, blocks)
            if other is None or other == key or (opens(record, fmt)
                                                  and opens(records[at - back - 1], fmt)):
                break
            back += 1
            yield Rewrite("move", at, back)


def meaning(records: list[Record], fmt: str) -> tuple[Any, ...]:
    d = diagnose(records, fmt)
    return (d.finish_reason,
            [(c.index, c.id, c.name, c.arguments, c.executable) for c in d.calls],
            [(x.quirk, x.action) for x in d.diagnostics])


def rechunkable() -> list[str]:
    """Streams with at least one rewrite: Ollama sends whole calls, a text answer none."""
    out = []
    for name in stream_files():
        fmt, records = read_stream(STREAMS / name)
        if next(rewrites(records, fmt, every=False), None) is not None:
            out.append(name)
    return out


# --- the properties -----------------------------------------------------------------------

@pytest.mark.parametrize("name", rechunkable())
@settings(max_examples=25, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_rechunking_keeps_the_meaning(name: str, data: st.DataObject) -> None:
    fmt, records = read_stream(STREAMS / name)
    expected = meaning(records, fmt)
    applied = []
    for _ in range(data.draw(st.integers(1, 6), label="rewrites")):
        options = list(rewrites(records, fmt))
        if not options:
            break
        step = data.draw(st.sampled_from(options))
        records = step.apply(records, fmt)
        applied.append(step)
    assert applied
    assert meaning(records, fmt) == expected, applied


def test_every_kind_of_rewrite_is_exercised() -> None:
    kinds: dict[str, set[str]] = {}
    for name in rechunkable():
        fmt, records = read_stream(STREAMS / name)
        for r in rewrites(records, fmt, every=False):
            kinds.setdefault(fmt, set()).add(r.kind)
    assert kinds == {f: {"split", "merge", "move"}
                     for f in ("openai-chat", "anthropic", "openai-responses")}


def test_a_split_and_its_merge_give_the_recording_back() -> None:
    fmt, records = read_stream(STREAMS / "anthropic/parallel_calls.sse")
    split = next(r for r in rewrites(records, fmt) if r.kind == "split")
    once = split.apply(records, fmt)
    assert len(once) == len(records) + 1
    assert Rewrite("merge", split.at, 0).apply(once, fmt) == records


def test_a_move_puts_one_call_before_another() -> None:
    fmt, records = read_stream(STREAMS / "openai-chat/parallel_calls.sse")
    move = next(r for r in rewrites(records, fmt) if r.kind == "move")
    moved = move.apply(records, fmt)
    blocks = tool_blocks(records, fmt)
    assert owner(moved[move.at - move.arg], fmt, blocks) != \
        owner(moved[move.at - move.arg + 1], fmt, blocks)
    assert sorted(map(str, moved)) == sorted(map(str, records))


def test_opening_calls_out_of_order_is_no_sparse_index() -> None:
    """Call 1 opening before call 0 leaves the indexes dense (0 and 1); no sparse_index."""
    fmt, records = read_stream(STREAMS / "openai-chat/parallel_calls.sse")
    second = next(i for i, r in enumerate(records) if i and opens(r, fmt))
    assert meaning(Rewrite("move", second, second).apply(records, fmt), fmt) == \
        meaning(records, fmt)


def test_snapshots_are_read_from_their_fragments() -> None:
    """Cut one snapshot in two, or join two, and the fragments are no longer snapshots: read
    as deltas the text does not parse, so the call is refused. The recording means what its
    boundaries say; only moves are left, and they keep the meaning."""
    fmt, records = read_stream(STREAMS / "quirks/cumulative_snapshots.sse")
    assert fragment_bound(records, fmt) == ({("i", 0), ("i", 1)}, False)
    blocks = tool_blocks(records, fmt)
    first = next(i for i, r in enumerate(records) if text_of(r, fmt) and not opens(r, fmt))
    assert owner(records[first + 1], fmt, blocks) == owner(records[first], fmt, blocks)
    for cut in (Rewrite("split", first, 2), Rewrite("merge", first, 0)):
        call = diagnose(cut.apply(records, fmt), fmt).calls[0]
        assert (call.executable, call.error is not None) == (False, True), cut
    kinds = {r.kind for r in rewrites(records, fmt)}
    assert kinds == {"move"}


def test_a_repeat_is_judged_on_the_text_so_every_cut_keeps_it() -> None:
    fmt, records = read_stream(STREAMS / "quirks/arguments_repeated.sse")
    assert fragment_bound(records, fmt) == (set(), False)
    expected = meaning(records, fmt)
    assert ("arguments_repeated", "tolerated") in expected[2]
    splits = [r for r in rewrites(records, fmt) if r.kind == "split"]
    assert len(splits) > 50
    assert all(meaning(r.apply(records, fmt), fmt) == expected for r in splits[::7])


@pytest.mark.parametrize("name", ["quirks/index_missing.sse", "quirks/index_null.sse",
                                  "quirks/all_index_zero.sse", "quirks/index_drift.sse",
                                  "openai-responses/item_id_reused.sse"])
def test_a_call_known_only_by_arrival_order_is_never_moved(name: str) -> None:
    """Without a distinct index, moving a chunk would hand it to another call."""
    fmt, records = read_stream(STREAMS / name)
    assert [r.kind for r in rewrites(records, fmt) if r.kind == "move"] == []
    assert any(r.kind == "split" for r in rewrites(records, fmt))


def _through_fifo(path: Path, fifo: Path, cuts: list[int]) -> tuple[str, list[Record]]:
    raw = path.read_bytes()
    bounds = sorted({c % (len(raw) + 1) for c in cuts} | {0, len(raw)})

    def write() -> None:
        with fifo.open("wb") as w:
            for a, b in itertools.pairwise(bounds):
                w.write(raw[a:b])
                w.flush()

    writer = threading.Thread(target=write)
    writer.start()
    try:
        return read_stream(fifo)
    finally:
        writer.join(timeout=10)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO")
@settings(max_examples=25, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(stream_files()), cuts=st.lists(st.integers(0, 1 << 20), max_size=8))
def test_a_file_read_through_a_fifo_in_chunks_reads_as_whole(
        tmp_path: Path, name: str, cuts: list[int]) -> None:
    fifo = tmp_path / f"fifo{len(list(tmp_path.iterdir()))}"
    os.mkfifo(fifo)
    assert _through_fifo(STREAMS / name, fifo, cuts) == read_stream(STREAMS / name)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO")
@pytest.mark.parametrize("name", ["openai-chat/parallel_calls.sse", "anthropic/one_call.sse",
                                  "openai-responses/one_call.sse", "ollama/one_call.jsonl"])
def test_fifo_chunks_cut_inside_every_utf8_character(tmp_path: Path, name: str) -> None:
    """The recordings are ASCII, so this one carries raw UTF-8 (2, 3 and 4 bytes) in its tool
    name; every write ends in the middle of a character, and the file reads the same."""
    raw = (STREAMS / name).read_bytes().replace(b"lookup_incident", "lookup_é漢🙂".encode())
    path = tmp_path / Path(name).name
    path.write_bytes(raw)
    inside = [i for i, b in enumerate(raw) if b & 0xC0 == 0x80]  # continuation bytes
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    fmt, records = _through_fifo(path, fifo, inside)
    assert (fmt, records) == read_stream(path)
    assert "lookup_é漢🙂" in str(meaning(records, fmt))
