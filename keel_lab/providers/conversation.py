"""Reading a conversation file and checking it with the rules of the provider it is meant for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.core.history import HistoryProblem, validate_history
from keel_lab.providers.anthropic_messages import validate_anthropic
from keel_lab.providers.formats import detect_history
from keel_lab.providers.openai_messages import from_openai
from keel_lab.providers.streams.records import read_file


def read_conversation(path: str | Path, fmt: str = "auto") -> tuple[str, list[dict[str, Any]]]:
    """The format and the messages of a JSON file: a list of messages or a request body."""
    try:
        value = json.loads(read_file(path))
    except json.JSONDecodeError as exc:
        raise LabError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from exc
    messages = value.get("messages") if isinstance(value, dict) else value
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise LabError(f"{path}: expected a list of message objects, or an object with "
                       "'messages'")
    return (detect_history(messages) if fmt == "auto" else fmt), messages


def validate_conversation(messages: list[dict[str, Any]], fmt: str) -> list[HistoryProblem]:
    if fmt == "anthropic":
        return validate_anthropic(messages)
    return validate_history(from_openai(messages))
