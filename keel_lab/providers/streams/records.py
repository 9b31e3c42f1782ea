"""Reading a recorded stream: raw SSE text or JSON lines, into a list of JSON payloads.

Everything read here is untrusted: it is read in bounded chunks (a FIFO or `/dev/zero` has no
size to trust; a FIFO nothing writes to is refused after a short wait, never waited on forever),
parsed as strict JSON only (`keel_lab.core.strict_json`), and any problem raises `LabError`
naming the line. A leading UTF-8 byte order mark is dropped, as SSE says to.
"""

from __future__ import annotations

import os
import select
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.core.strict_json import read_json
from keel_lab.providers.formats import DONE

MAX_BYTES = 32 * 1024 * 1024  # a recorded turn is kilobytes; anything near this is not one
CHUNK = 1024 * 1024
WAIT_SECONDS = 2  # how long a FIFO may keep keel-lab waiting for its first byte


def read_bytes(path: str | Path) -> bytes:
    """At most MAX_BYTES of a file of any kind, read in chunks; more is refused. The file is
    opened without blocking, so a FIFO no program writes to is refused instead of waited on."""
    p = Path(path)
    chunks: list[bytes] = []
    size = 0
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
        if not regular and not _wait_for_data(fd):
            os.close(fd)
            raise LabError(f"{p}: not a regular file, and nothing came to read from it in "
                           f"{WAIT_SECONDS:g} s (a FIFO no program writes to?)")
        with os.fdopen(fd, "rb") as f:
            while size <= MAX_BYTES:
                chunk = f.read(min(CHUNK, MAX_BYTES + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
    except OSError as exc:
        raise LabError(f"{p}: cannot read ({exc.strerror or exc})") from exc
    if size > MAX_BYTES:
        raise LabError(f"{p}: more than {MAX_BYTES // (1024 * 1024)} MiB, too large for a "
                       "recorded turn or history (keel-lab stops reading there)")
    return b"".join(chunks)


def _wait_for_data(fd: int) -> bool:
    """Whether a FIFO, pipe or device has something to read (or its writer hung up) within
    WAIT_SECONDS; then it is read blocking, as a writer that is there may take its time."""
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    if not poll.poll(WAIT_SECONDS * 1000):
        return False
    os.set_blocking(fd, True)
    return True


def read_file(path: str | Path) -> str:
    return decode(read_bytes(path), str(path))


def decode(raw: bytes, where: str) -> str:
    """The text of a file, without a leading UTF-8 byte order mark (RFC 8259 allows it)."""
    raw = raw.removeprefix(b"\xef\xbb\xbf")
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise LabError(f"{where}: binary data (a NUL byte at offset {nul}), not a text stream")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LabError(f"{where}: not UTF-8 text (invalid byte at offset {exc.start})") from exc


def lines(text: str) -> Iterator[tuple[int, str]]:
    """(number from 1, line) split at CRLF, LF or CR only, as SSE and JSON lines define lines
    (`str.splitlines` would also split inside a JSON string at U+2028)."""
    number, start, end = 0, 0, len(text)
    lf = cr = -1  # the next LF and CR at or after `start` (`end` when there is none)
    while start < end:
        if lf < start:
            lf = text.find("\n", start) % (end + 1)
        if cr < start:
            cr = text.find("\r", start) % (end + 1)
        stop = min(lf, cr)
        number += 1
        yield number, text[start:stop]
        start = stop + (2 if text.startswith("\r\n", stop) else 1)


def is_sse(text: str) -> bool:
    for _, line in lines(text):
        if line.strip():
            return line.startswith(("data:", "event:", ":", "id:", "retry:"))
    return False


def sse_events(text: str) -> Iterator[tuple[str, str, int]]:
    """(event name, data, line number) for every complete SSE event, by the SSE rules: an event
    still open at the end of the text (a cut-off stream) is discarded."""
    name, start = "", 0
    data: list[str] = []
    for number, line in lines(text):
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


def no_events(text: str, where: str) -> LabError:
    """Why a file gave no payload, in one line: an SSE text whose `data:` lines no blank line
    ever ends (one event left open: SSE discards it) is told apart from an empty file."""
    if is_sse(text):
        data = sum(1 for _, line in lines(text) if line.startswith("data:"))
        if data:
            return LabError(f"{where}: no complete event: {data} data: line"
                            f"{'s' * (data > 1)}, but no blank line ends an event (SSE "
                            "dispatches an event at a blank line; each event needs one after "
                            "it, and a stream cut in its first event looks like this)")
    return LabError(f"{where}: no events in the file")


def iter_records(text: str, where: str = "stream") -> Iterator[tuple[str, dict[str, Any]]]:
    """("line N", payload) for each payload of a stream, parsed one at a time."""
    if is_sse(text):
        items: Iterator[tuple[str, int]] = ((d, n) for _, d, n in sse_events(text))
    else:
        items = ((line, n) for n, line in lines(text) if line.strip())
    for payload, number in items:
        at = f"{where}, line {number}"
        if payload.strip() == "[DONE]":
            yield at, DONE
            continue
        value = read_json(payload, at)
        if not isinstance(value, dict):
            raise LabError(f"{at}: expected a JSON object, got {type(value).__name__}")
        yield at, value


def parse_records(text: str, where: str = "stream") -> list[dict[str, Any]]:
    """JSON payloads of a stream given as SSE text or as one JSON object per line."""
    return [record for _, record in iter_records(text, where)]
