"""Reading a recorded stream: raw SSE text or JSON lines, into a list of JSON payloads.

Everything read here is untrusted: it is parsed as JSON only, bounded in size, and any problem
raises `LabError` with the line it was found on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.providers.formats import DONE

MAX_BYTES = 32 * 1024 * 1024  # a recorded turn is kilobytes; anything near this is not one


def read_file(path: str | Path) -> str:
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_BYTES:
            raise LabError(f"{p}: {size / 1e6:.1f} MB is too large for one streamed turn "
                           f"(keel-lab reads at most {MAX_BYTES // (1024 * 1024)} MiB)")
        raw = p.read_bytes()
    except OSError as exc:
        raise LabError(f"{p}: cannot read ({exc.strerror})") from exc
    return decode(raw, str(p))


def decode(raw: bytes, where: str) -> str:
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise LabError(f"{where}: binary data (a NUL byte at offset {nul}), not a text stream")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LabError(f"{where}: not UTF-8 text (invalid byte at offset {exc.start})") from exc


def is_sse(text: str) -> bool:
    for line in text.splitlines():
        if line.strip():
            return line.startswith(("data:", "event:", ":", "id:", "retry:"))
    return False


def sse_events(text: str) -> Iterator[tuple[str, str, int]]:
    """(event name, data, line number) for every complete SSE event.

    Follows the SSE rules: `data:` lines of one event are joined with newlines, a blank line
    dispatches the event, lines starting with `:` are comments, and an event still open at the
    end of the text (a cut-off stream) is discarded.
    """
    name, start = "", 0
    data: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line:
            if data:
                yield name or "message", "\n".join(data), start
            name, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            name = value
        elif field == "data":
            start = start if data else number
            data.append(value)


def parse_records(text: str, where: str = "stream") -> list[dict[str, Any]]:
    """JSON payloads of a stream given as SSE text or as one JSON object per line."""
    records: list[dict[str, Any]] = []
    if is_sse(text):
        items: Iterator[tuple[str, int]] = ((d, n) for _, d, n in sse_events(text))
    else:
        items = ((line, n) for n, line in enumerate(text.splitlines(), 1) if line.strip())
    for payload, number in items:
        if payload.strip() == "[DONE]":
            records.append(DONE)
            continue
        try:
            value = json.loads(payload)
        except json.JSONDecodeError as exc:
            raise LabError(f"{where}, line {number}: not JSON: {exc.msg} (char {exc.pos})"
                           ) from exc
        if not isinstance(value, dict):
            raise LabError(f"{where}, line {number}: expected a JSON object, got "
                           f"{type(value).__name__}")
        records.append(value)
    return records
