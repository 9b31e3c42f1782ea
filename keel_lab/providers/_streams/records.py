"""Reading a recorded stream: raw SSE text, JSON lines, or one JSON array of payloads (Gemini's
`streamGenerateContent` without `alt=sse`: `[{...}\n,\r\n{...}]`, pretty-printed or not),
into JSON payloads, one at a time.

Everything read here is untrusted: it is read in bounded chunks (a FIFO or `/dev/zero` has no
size to trust; a FIFO nothing writes to is refused after a short wait, never waited on forever),
parsed as strict JSON only (`keel_lab._core.strict_json`), and any problem raises `LabError`
naming the line. A leading UTF-8 byte order mark is dropped, as SSE says to. An array is read
element by element, as the other formats are read payload by payload; one cut off (an element
unfinished, or no closing `]`) is a truncated stream and refused in one line, as a cut JSON line
is: the turn may have lost anything after the cut, so nothing of it runs.
"""

from __future__ import annotations

import json
import os
import re
import select
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from keel_lab._core.errors import LabError, Said
from keel_lab._core.strict_json import NOT_JSON, read_json, unterminated
from keel_lab._i18n import N_, _
from keel_lab.providers._formats import DONE

MAX_BYTES = 32 * 1024 * 1024  # a recorded turn is kilobytes; anything near this is not one
CHUNK = 1024 * 1024
_LINE = N_("{where}, line {line}")  # where a payload is: names it in every message about it
WAIT_SECONDS = 2  # how long a FIFO may keep keel-lab waiting for its first byte
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")  # a line and its break, if any


STDIN = "-"  # the file name that means standard input, as in most commands


def source(path: str | Path) -> str:
    """How messages name a file: standard input (`-`) as `<stdin>`."""
    return "<stdin>" if str(path) == STDIN else str(path)


def read_bytes(path: str | Path) -> bytes:
    """At most MAX_BYTES of a file of any kind (`-`: standard input), read in chunks; more is
    refused. The file is opened without blocking, so a FIFO no program writes to is refused
    instead of waited on."""
    p = source(path)
    chunks: list[bytes] = []
    size = 0
    try:
        fd = (os.dup(sys.stdin.fileno()) if str(path) == STDIN else
              os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)))
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
        if not regular and not _wait_for_data(fd):
            os.close(fd)
            raise LabError("nothing_to_read", N_("{path}: not a regular file, and nothing came to "
                                                 "read from it in {seconds} s (a FIFO no program "
                                                 "writes to?)"),
                           path=p, seconds=f"{WAIT_SECONDS:g}")
        with os.fdopen(fd, "rb") as f:
            while size <= MAX_BYTES:
                chunk = f.read(min(CHUNK, MAX_BYTES + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
    except (OSError, ValueError, AttributeError) as exc:  # stdin closed (`<&-`) or none
        raise LabError("unreadable", N_("{path}: cannot read ({error})"), path=p,
                       error=getattr(exc, "strerror", None) or str(exc)) from exc
    if size > MAX_BYTES:
        raise LabError("file_too_large", N_("{path}: more than {mib} MiB, too large for a "
                                            "recorded turn or history (keel-lab stops reading "
                                            "there)"),
                       path=p, mib=MAX_BYTES // (1024 * 1024))
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
    return decode(read_bytes(path), source(path))


def decode(raw: bytes, where: str) -> str:
    """The text of a file, without a leading UTF-8 byte order mark (RFC 8259 allows it)."""
    raw = raw.removeprefix(b"\xef\xbb\xbf")
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise LabError("binary", N_("{where}: binary data (a NUL byte at offset {offset}), not "
                                    "a text stream"), where=where, offset=nul)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LabError("not_utf8", N_("{where}: not UTF-8 text (invalid byte at offset "
                                      "{offset})"), where=where, offset=exc.start) from exc


def lines(text: str) -> Iterator[tuple[int, str]]:
    """(number from 1, line) split at CRLF, LF or CR only, as SSE and JSON lines define lines
    (`str.splitlines` would also split inside a JSON string at U+2028)."""
    for number, line in enumerate(_LINES.finditer(text), 1):
        yield number, line.group().rstrip("\r\n")


def is_sse(text: str) -> bool:
    for _number, line in lines(text):
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


def open_event(text: str) -> int | None:
    """The line of an SSE event the text leaves open at its end (data: lines and no blank line
    after them), which `sse_events` discards as SSE does; None when every event is closed, or
    the open one is only `data: [DONE]` (it holds nothing to read)."""
    start: int | None = None
    data: list[str] = []
    for number, line in lines(text):
        if not line:
            start, data = None, []
        elif line.startswith("data:"):
            start = number if start is None else start
            data.append(line[5:].strip())
    return None if data == ["[DONE]"] else start


def no_events(text: str, where: str) -> LabError:
    """Why a file gave no payload, in one line: an SSE text whose `data:` lines no blank line
    ever ends (one event left open: SSE discards it) is told apart from an empty file."""
    if is_sse(text):
        data = sum(1 for _number, line in lines(text) if line.startswith("data:"))
        if data:
            return LabError("no_complete_event", N_(
                "{where}: no complete event: {n} data: line, but no blank line ends an event "
                "(SSE dispatches an event at a blank line; each event needs one after it, and a "
                "stream cut in its first event looks like this)") if data == 1 else N_(
                "{where}: no complete event: {n} data: lines, but no blank line ends an event "
                "(SSE dispatches an event at a blank line; each event needs one after it, and a "
                "stream cut in its first event looks like this)"), where=where, n=data)
    return LabError("no_events", N_("{where}: no events in the file"), where=where)


_BLANK = re.compile(r"[ \t\n\r]*")  # JSON's whitespace
# finds where an element ends, keeping nothing it reads; `read_json` then parses it strictly
_EXTENT = json.JSONDecoder(object_pairs_hook=lambda _: None, parse_float=len, parse_int=len,
                           parse_constant=len)


def _skip(text: str, pos: int) -> int:
    """The position of the first non-blank character at or after `pos`."""
    return _BLANK.match(text, pos).end()  # type: ignore[union-attr]  # `*` always matches


def is_array(text: str) -> bool:
    """A JSON array of objects (or an empty or cut one); a JSON-lines `[DONE]` is none."""
    start = _skip(text, 0)
    after = _skip(text, start + 1)
    return text.startswith("[", start) and text[after:after + 1] in ("{", "]", "")


def array_items(text: str, where: str) -> Iterator[tuple[str, int]]:
    """(element text, line number) of each element of a JSON array, found one at a time."""
    pos = _skip(text, _skip(text, 0) + 1)
    line, counted = 1, 0
    if text.startswith("]", pos):
        pos += 1
    else:
        while True:
            line, counted = line + _breaks(text, counted, pos), pos
            end = _element_end(text, pos, where, line)
            yield text[pos:end], line
            pos = _skip(text, end)
            if pos == len(text):
                raise _cut(text, where, Said("cut_before_bracket", N_("before its closing ]")))
            if text[pos] == "]":
                pos += 1
                break
            if text[pos] != ",":
                raise _not_json(text, where, pos, "Expecting ',' delimiter")
            pos = _skip(text, pos + 1)
            if pos == len(text):
                raise _cut(text, where, Said("cut_after_comma", N_("after a ','")))
    pos = _skip(text, pos)
    if pos < len(text):
        raise _not_json(text, where, pos, Said("extra_data", N_("Extra data after the array's "
                                                                "closing ]")))


def _element_end(text: str, pos: int, where: str, line: int) -> int:
    try:
        return _EXTENT.raw_decode(text, pos)[1]
    except json.JSONDecodeError as exc:  # cut: it stops at the end, or in a string never closed
        if exc.pos >= len(text) or unterminated(text, exc.pos, pos):
            raise _cut(text, where, Said("cut_inside", N_("inside an element"))) from None
        raise _not_json(text, where, exc.pos, exc.msg) from None
    except RecursionError:  # deeper than Python's parser goes: the strict reader refuses it
        at = str(_line(where, line))
        read_json(text[pos:], at)  # in its words: deeper than MAX_DEPTH
        raise LabError("too_deep", N_("{where}: nested too deeply to read"),
                       where=at) from None


def _breaks(text: str, start: int, end: int) -> int:
    """Line breaks in text[start:end], counted as `lines` counts them (CRLF, LF or CR)."""
    return (text.count("\n", start, end) + text.count("\r", start, end)
            - text.count("\r\n", start, end))


def _line(where: str, line: int) -> Said:
    return Said("line", _LINE, {"where": where, "line": line})


def _not_json(text: str, where: str, pos: int, why: str | Said) -> LabError:
    """Not JSON at `pos` (`why`: Python's words for it, or the lab's)."""
    line = 1 + _breaks(text, 0, pos)
    column = pos - max(text.rfind("\n", 0, pos), text.rfind("\r", 0, pos))
    return LabError("not_json", N_("{where}: {not_json}: {why} (column {column})"),
                    where=_line(where, line), not_json=Said("not_json", NOT_JSON), why=why,
                    column=column, line=line, pos=pos)


def _cut(text: str, where: str, at: Said) -> LabError:
    return LabError("array_cut", N_("{where}: the JSON array of payloads stops {at}: the stream "
                                    "was cut off, so nothing of the turn runs (a truncated "
                                    "stream)"),
                    where=_line(where, 1 + _breaks(text, 0, len(text))), at=at)


def iter_records(text: str, where: str | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """("line N", payload) for each payload of a stream, parsed one at a time."""
    where = _("stream") if where is None else where
    if is_sse(text):
        items: Iterator[tuple[str, int]] = ((d, n) for _name, d, n in sse_events(text))
    elif is_array(text):
        items = array_items(text, where)
    else:
        items = ((line, n) for n, line in lines(text) if line.strip())
    line_at = _(_LINE)  # translated once, not once per payload
    for payload, number in items:
        at = line_at.format(where=where, line=number)
        if payload.strip() == "[DONE]":
            yield at, DONE
            continue
        value = read_json(payload, at)
        if not isinstance(value, dict):
            raise LabError("not_an_object", N_("{where}: expected a JSON object, got {type}"),
                           where=at, type=type(value).__name__)
        yield at, value


def parse_records(text: str, where: str | None = None) -> list[dict[str, Any]]:
    """JSON payloads of a stream given as SSE text, one JSON object per line, or a JSON array."""
    return [record for _where, record in iter_records(text, where)]
