"""What a file one command cannot read is, when another reads it: a conversation given to
`assemble`, a stream given to `validate`. Asked only once reading has failed, so the error can
name the command that fits instead of a format or a JSON error no option fixes."""

from __future__ import annotations

from typing import Any

from keel_lab._core.errors import LabError
from keel_lab._core.strict_json import read_json
from keel_lab.providers._formats import (
    DONE,
    RESPONSES_ITEMS,
    HistoryFormat,
    StreamFormat,
    detect_history,
    record_format,
)
from keel_lab.providers._streams.records import iter_records

BODY_KEYS = ("messages", "contents", "input")  # where a request body keeps its history


def history_format(text: str) -> HistoryFormat | None:
    """The format of the conversation `text` is (a JSON list of messages, or a request body
    with one history), or None when it is none."""
    try:
        value = read_json(text, "")
    except LabError:
        return None
    messages = stream_payloads = value
    if isinstance(value, dict):
        found = [k for k in BODY_KEYS if k in value]
        messages = value[found[0]] if len(found) == 1 else None
        stream_payloads = [value]
    if (not isinstance(messages, list) or not messages
            or not all(isinstance(m, dict) for m in messages)
            or any(record_format(r) for r in stream_payloads if isinstance(r, dict))):
        return None
    return detect_history(messages) if any(map(_message, messages)) else None


def _message(item: dict[str, Any]) -> bool:
    return "role" in item or "parts" in item or item.get("type") in RESPONSES_ITEMS


def stream_format(text: str) -> StreamFormat | None:
    """The format of the stream `text` is, told by its first payload of a known shape, or None
    when no payload before the first unreadable one has one."""
    try:
        for _where, record in iter_records(text, ""):
            found = None if record is DONE else record_format(record)
            if found:
                return found
    except LabError:
        pass
    return None
