"""Reading a conversation file and checking it with the rules of the provider it is meant for.

A file is untrusted: it is parsed as strict JSON (`keel_lab._core.strict_json`), and every field
the pairing rules read is type-checked by the converters, so a malformed file ends in one
`LabError` line and never in "valid". The line names the file, and, as `assemble`'s do, what the
file is and the command that reads it: a stream is for `assemble`, another format's
conversation for `validate --format` of its format.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from keel_lab._core.errors import LabError, Said
from keel_lab._core.history import HistoryProblem, validate_history
from keel_lab._core.strict_json import read_json
from keel_lab._i18n import N_
from keel_lab.providers._anthropic_messages import validate_anthropic
from keel_lab.providers._fields import shown
from keel_lab.providers._formats import HISTORY_FORMATS, article, detect_history, record_format
from keel_lab.providers._gemini_messages import validate_gemini
from keel_lab.providers._openai_messages import empty_tool_calls, from_openai
from keel_lab.providers._responses_messages import validate_responses
from keel_lab.providers._sniff import BODY_KEYS, stream_format
from keel_lab.providers._streams.records import read_file, source


def read_conversation(path: str | Path, fmt: str = "auto") -> tuple[str, list[dict[str, Any]]]:
    """The format and the messages of a JSON file (`-`: standard input): a list of messages or
    a request body (`messages`, Gemini's `contents` or the Responses API's `input`)."""
    fmt, messages, _previous = read_body(path, fmt)
    return fmt, messages


def read_body(path: str | Path, fmt: str = "auto"
              ) -> tuple[str, list[dict[str, Any]], str | None]:
    """`read_conversation`, and the `previous_response_id` a Responses request body continues
    (its outputs may answer calls that only that stored response holds)."""
    text, name = read_file(path), source(path)
    previous = None
    try:
        value = read_json(text, name)
        if isinstance(value, dict) and isinstance(value.get("previous_response_id"), str):
            previous = value["previous_response_id"]
        messages = _history(value, name) if isinstance(value, dict) else value
        if (not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages)
                or any(record_format(m) for m in messages)):
            raise LabError("not_a_history", N_(
                "{path}: expected a list of message objects, or an object with 'messages', "
                "'contents' or 'input' (got {got})"), path=name, got=_got(value))
    except LabError as exc:
        found = stream_format(text)
        if found is None:
            raise
        raise LabError("stream_not_history", N_(
            "{path}: this is {format} stream, not a conversation: `keel-lab assemble` reads "
            "streams"), path=name, format=article(found)) from exc
    return _format(messages, fmt), messages, previous


def validate_file(path: str | Path, fmt: str = "auto"
                  ) -> tuple[str, list[HistoryProblem], str | None]:
    """The format of a conversation file, its pairing problems and the previous response it
    continues, if any; a message the format does not allow is a `LabError` naming the file
    and, when the file is another format's, that format and the `--format` that reads it."""
    fmt, messages, previous = read_body(path, fmt)
    try:
        return fmt, validate_conversation(messages, fmt, previous), previous
    except LabError as exc:
        found = detect_history(messages)
        if found == fmt:
            raise LabError(exc.code, N_("{path}: {error}"), path=source(path),
                           error=exc.said) from exc
        raise LabError("wrong_format", N_(
            "{path}: this is not {format}: it is {found} conversation ({error}); `keel-lab "
            "validate --format {name}` reads it"), path=source(path), format=fmt,
            found=article(found), error=exc.said, name=found) from exc


def _history(body: dict[str, Any], path: str) -> Any:
    """The history a request body holds; a body with two of them is refused, since which one
    a reader takes would decide the verdict (the lab's policy)."""
    found = [k for k in BODY_KEYS if k in body]
    if len(found) > 1:
        raise LabError("ambiguous_body", N_("{path}: ambiguous: the body has both {first} and "
                                            "{second}; keep the one the provider reads"),
                       path=path, first=shown(found[0]), second=shown(found[1]))
    return body[found[0]] if found else None


def _got(value: Any) -> Said | str:
    if isinstance(value, dict):
        return (Said("keys", N_("an object with keys {keys}"),
                     {"keys": ", ".join(shown(k) for k in list(value)[:5])})
                if value else Said("empty_object", N_("an empty object")))
    return shown(value)


def _format(messages: list[dict[str, Any]], fmt: str) -> str:
    if fmt == "auto":
        return detect_history(messages)
    if fmt not in HISTORY_FORMATS:
        raise LabError("unknown_format", N_("unknown history format {format}; one of {formats}"),
                       format=repr(fmt), formats=", ".join(HISTORY_FORMATS))
    return fmt


def validate_conversation(messages: list[dict[str, Any]], fmt: str,
                          previous: str | None = None) -> list[HistoryProblem]:
    """The provider's pairing problems; a message the format does not allow raises `LabError`.
    `previous`: the Responses request's `previous_response_id` (see `validate_responses`)."""
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise LabError("not_a_history", N_("expected a list of message objects"))
    fmt = _format(messages, fmt)
    if fmt == "anthropic":
        return validate_anthropic(messages)
    if fmt == "gemini":
        return validate_gemini(messages)
    if fmt == "openai-responses":
        return validate_responses(messages, previous)
    return [*empty_tool_calls(messages), *validate_history(from_openai(messages))]
