"""Tool calls written into a turn's text instead of sent as calls: found, reported, never run.

Some servers' tool parsers miss a call and pass the model's call syntax on as content (a second
parallel call, a model whose format the parser does not know). The text is the model's answer;
the lab's policy is not to guess calls out of it, only to say what it found and where. Two forms
count: a `<tool_call>...</tool_call>` tag whose body is a call, and a call object standing on
lines of its own. A call is a JSON object with a string `name` and `arguments` or `parameters`.
Code is no call: fenced blocks and inline code spans are skipped, and so is a call object in the
middle of a sentence. Every line that opens with "{" is tried, wherever it stands; a line inside
an object already read is not tried again, so a long answer is read in near-linear time.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from keel_lab._core.errors import Said
from keel_lab._core.streaming import Joined
from keel_lab._core.strict_json import unterminated
from keel_lab._i18n import N_

OPEN, CLOSE = "<tool_call>", "</tool_call>"
TAG, OBJECT = N_("<tool_call> tag"), N_("JSON object")  # a leak's form, translated where shown
WINDOW = 256  # characters a call object is first decoded in (more when it is longer)
CODE = re.compile(r"^[ \t]*```.*?(?:^[ \t]*```[^\n]*$|\Z)|`[^`\n]*`", re.MULTILINE | re.DOTALL)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class Leak:
    name: str
    form: str  # "<tool_call> tag" | "JSON object"
    char: int  # where it starts in the text
    line: int  # counted from 1


def leaked_calls(text: str) -> list[Leak]:
    """Every call written into the text, in order."""
    plain = CODE.sub(lambda m: " " * len(m.group()), text)  # positions kept
    found: list[tuple[int, str, str]] = []
    tags: list[range] = []  # in order of their starts, which do not overlap
    at, close = plain.find(OPEN), plain.find(CLOSE)
    while at >= 0:  # a tag's body ends at its closing tag, the next tag or the end of the text
        if 0 <= close < at:
            close = plain.find(CLOSE, at)
        following = plain.find(OPEN, at + len(OPEN))
        end = min(p for p in (close, following, len(plain)) if p >= 0)
        name = _call_name(plain[at + len(OPEN): end].strip())
        if name is not None:
            found.append((at, name, TAG))
            tags.append(range(at, end))
        at = following
    starts = [r.start for r in tags]
    read_to = 0  # the end of the last call object read: lines before it are inside it
    for line in re.finditer(r"^[ \t]*\{", plain, re.MULTILINE):  # a line opening with "{"
        start = line.end() - 1
        tag = bisect_right(starts, start) - 1
        if start < read_to or (tag >= 0 and start in tags[tag]):
            continue
        name, stop = _standing_call(plain, start)
        if name is not None:
            found.append((start, name, OBJECT))
        read_to = stop
    return _located(text, sorted(found))


def _located(text: str, found: list[tuple[int, str, str]]) -> list[Leak]:
    """The leaks with their line numbers, counted in one pass over the text."""
    leaks, line, counted = [], 1, 0
    for at, name, form in found:
        line += text.count("\n", counted, at)
        counted = at
        leaks.append(Leak(name, form, at, line))
    return leaks


def describe(leaks: list[Leak]) -> Said:
    """The diagnostic's message: what was found, where, and why it does not run."""
    each = Joined(tuple(Said("leak", N_("{name} ({form}, line {line}, char {char})"),
                             {"name": repr(leak.name), "form": Said("form", leak.form),
                              "line": leak.line, "char": leak.char})
                        for leak in leaks), ", ")
    return Said("call_in_text", N_(
        "the turn's text holds {n} tool call written as text, not sent as a call: {each}; the "
        "text is the model's answer and the lab does not guess calls out of it, so it never runs; "
        "only calls sent as calls may (a server whose tool parser reads this model's call syntax "
        "would send it as one)")
        if len(leaks) == 1 else N_(
        "the turn's text holds {n} tool calls written as text, not sent as calls: {each}; the "
        "text is the model's answer and the lab does not guess calls out of it, so none of them "
        "runs; only calls sent as calls may (a server whose tool parser reads this model's call "
        "syntax would send them as calls)"),
        {"n": len(leaks), "each": each})


def _standing_call(plain: str, start: int) -> tuple[str | None, int]:
    """The call's name when a call object starts here and stands alone on its last line, and
    where the next candidate may start (after the call, or after text nested too deep)."""
    try:
        value, end = _decode(plain, start)
    except ValueError:
        return None, start
    if _name_of(value) is None:  # no call (None: nested too deep, read up to `end`)
        return None, start if value is not None else end
    line_end = plain.find("\n", end)
    rest = plain[end: line_end if line_end >= 0 else len(plain)]
    return (_name_of(value) if not rest.strip() else None), end


def _decode(plain: str, start: int) -> tuple[Any, int]:
    """`raw_decode` at `start`, on a window of the text that doubles only while the decoder
    runs into its end: a failed decode costs what it read, not the length of the text (a
    `JSONDecodeError` counts the lines before its position). A value nested too deep for the
    decoder is None, with the end of the window it was read in (`start` is a "{": no value
    read there is null)."""
    window = WINDOW
    while True:
        chunk = plain[start:start + window]
        try:
            value, end = _DECODER.raw_decode(chunk)
            return value, start + end
        except RecursionError:
            return None, start + window
        except json.JSONDecodeError as exc:
            cut = exc.pos >= len(chunk) - 8 or unterminated(chunk, exc.pos)
            if not cut or start + window >= len(plain):
                raise
        window *= 2


def _call_name(body: str) -> str | None:
    try:
        value, end = _DECODER.raw_decode(body)
    except (ValueError, RecursionError):
        return None
    return _name_of(value) if not body[end:].strip() else None


def _name_of(value: Any) -> str | None:
    if isinstance(value, dict) and isinstance(value.get("name"), str) and value["name"] and \
            ("arguments" in value or "parameters" in value):
        return str(value["name"])
    return None
