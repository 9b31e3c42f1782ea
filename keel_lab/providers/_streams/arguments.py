"""The shape of one call's argument text, judged once the call is closed, from its fragments.

Read as deltas (the fragments joined), the text is what the model sent; most of the time it
parses and there is nothing to say. When it does not, some servers' shapes still say exactly
what the arguments are, and the lab's policy reads them - only when the reading is the one way
the text parses:

`arguments_repeated` (tolerated): a prefix of the arguments, then the whole arguments (a
trailing "summary" chunk, a parser's flush), judged on the text alone, so wherever the fragments
were cut; two identical objects, whitespace between them or not, are one call's repeat.
`cumulative_snapshots` (tolerated): each fragment extends the one before, and the last parses.

Shapes that leave the arguments unknown are refused, named, with the JSON error kept:
`packed_calls` (several objects in one call's arguments), `invalid_escape` (`"C:\\Hello"`, or a
backslash outside any string), `raw_control_character` (a raw newline inside a string) and
`arguments_cut` (the text ends inside a value: a cut, whatever the finish reason says),
and, for valid JSON the core will not run, `duplicate_key` and `lone_surrogate`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from keel_lab._core.errors import Said
from keel_lab._core.protocol import parse_arguments
from keel_lab._core.strict_json import ErrorPlace, error_place
from keel_lab._i18n import N_
from keel_lab.providers._formats import CUT_FINISHES

REPEAT_CANDIDATES = 8  # places that look like a restart, tried before it counts as no repeat
LITERAL_TAIL = re.compile(r"[-+0-9.eE]*|t(r(ue?)?)?|f(a(l(se?)?)?)?|n(u(ll?)?)?")
_DECODER = json.JSONDecoder()
# Valid JSON the core refuses to run (`parse_arguments`), by the code of its refusal.
_UNSAFE = ("duplicate_key", "lone_surrogate")


@dataclass(frozen=True, slots=True)
class Shape:
    """A named shape of one call's argument text: `reading` is the text the arguments are
    (tolerated), or None when the call must not run (refused; `said` says why, coded as the
    shape)."""

    quirk: str
    said: Said
    reading: str | None = None


def shape(parts: Sequence[str], finish: str, *, inferred: bool = False) -> Shape | None:
    """The shape of a closed call's argument fragments, or None when read as deltas they
    parse, or fail for no reason the lab can name (the core's JSON error then stands);
    `inferred`: no finish reason came, `finish` is the lab's reading of the stream's end."""
    text = "".join(parts)
    error = parse_arguments(text)[1]
    if error is None:
        return None
    found = _repeat(text, error) or _snapshots(parts, error)
    if found is None and error.code == "not_json":
        found = _broken(text, error, finish, inferred)
    return found or (Shape(error.code, error) if error.code in _UNSAFE else None)


def _repeat(text: str, error: Said) -> Shape | None:
    """The text is `D + X`: X the whole arguments, D a prefix of X (all of it, or part), and
    whitespace between them, as JSON allows between values (`{"a":1} {"a":1}` is a repeat like
    `{"a":1}{"a":1}`). There is at most one such X: an object's text never ends with another
    whole object."""
    tried, at = 0, text.find(text[0], 1)
    while 0 < at < len(text) and tried < REPEAT_CANDIDATES:
        size = at  # D is text[:size]: the text before `at`, without trailing whitespace
        while size and text[size - 1].isspace():
            size -= 1
        if size > len(text) - at:
            return None
        if text.startswith(text[:min(size, 32)], at):  # a cheap look, never a long copy
            tried += 1
            if text.startswith(text[:size], at) and parse_arguments(text[at:])[1] is None:
                break
        at = text.find(text[0], at + 1)
    else:
        return None
    said = N_("the whole arguments arrived twice (a trailing repeat or a parser's flush); "
              "read once, as the complete text (read as deltas, {error})")
    if size < len(text) - at:
        said = N_("the first {count} characters of the arguments, then all of them arrived (a "
                  "trailing repeat or a parser's flush); read once, as the complete text (read "
                  "as deltas, {error})") if size > 1 else N_(
            "the first character of the arguments, then all of them arrived (a trailing "
            "repeat or a parser's flush); read once, as the complete text (read as deltas, "
            "{error})")
    return Shape("arguments_repeated", Said("arguments_repeated", said,
                                            {"count": size, "error": error}), text[at:])


def _snapshots(parts: Sequence[str], error: Said) -> Shape | None:
    """Each fragment is everything so far: the last one is the arguments."""
    if len(parts) < 2 or any(not b.startswith(a) for a, b in pairwise(parts)):
        return None
    last_error = parse_arguments(parts[-1])[1]
    if last_error is None:
        return Shape("cumulative_snapshots", Said("cumulative_snapshots", N_(
            "each of the {count} fragments repeats everything sent before it (cumulative "
            "snapshots, not deltas); read as the last one (read as deltas, {error})"),
            {"count": len(parts), "error": error}), parts[-1])
    return Shape("cumulative_snapshots", Said("cumulative_snapshots", N_(
        "each of the {count} fragments repeats everything sent before it (cumulative snapshots, "
        "not deltas), but the last one does not parse either: {last_error}; runnable only once a "
        "complete snapshot arrives"), {"count": len(parts), "last_error": last_error}))


def _broken(text: str, error: Said, finish: str, inferred: bool) -> Shape | None:
    """Name why the text is no JSON, when the reason is a shape seen in the wild: read from
    where the parser stopped (`error_place`), never from its wording."""
    try:
        json.loads(text)
        return None
    except json.JSONDecodeError as exc:
        pos = exc.pos
    except (ValueError, RecursionError):
        return None
    packed = _objects(text)
    if packed:
        return _refused("packed_calls", N_(
            "{packed}: parallel calls packed into one call's arguments; which object is which "
            "call is not known, so none runs - runnable only when each call comes as its own tool"
            " call with its own id ({error})"), packed=packed, error=error)
    at = text.rfind("\\", 0, pos + 1)  # the backslash an escape error is about
    escape = text[at:at + (6 if text[at + 1:at + 2] == "u" else 2)]
    place = error_place(text, pos)
    inside = place.string is not None
    if _ends_inside_a_value(text, pos, place) or (
            inside and text[at + 1:at + 2] == "u" and len(text) - at < 6):
        said = N_("the arguments end inside a value - cut, not malformed - as the finish reason "
                  "{finish} says; runnable only when the whole arguments arrive (e.g. with a "
                  "larger output limit) ({error})") if finish in CUT_FINISHES else N_(
            "the arguments end inside a value - cut, not malformed - although no finish reason "
            "came (the stream ended with data: [DONE], read as {finish}); runnable only when the "
            "whole arguments arrive ({error})") if inferred else N_(
            "the arguments end inside a value - cut, not malformed - although the finish reason "
            "{finish} says the call is complete; runnable only when the whole arguments arrive "
            "(e.g. with a larger output limit) ({error})")
        return _refused("arguments_cut", said, finish=repr(finish), error=error)
    if inside and ord(text[pos]) >= 0x20:  # in a string, what is no control character: escapes
        return _refused("invalid_escape", N_(
            "`{escape}` at char {at} is no JSON escape (a backslash in a string must be doubled, "
            "e.g. in a Windows path); runnable only when the model or server escapes it "
            "({error})"), escape=escape, at=at, error=error)
    if text[pos:pos + 1] == "\\":
        return _refused("invalid_escape", N_(
            "a backslash outside any string at char {at} (`{escape}` written as two characters "
            "between values); runnable only when the model or server sends valid JSON ({error})"
        ), at=pos, escape=escape, error=error)
    if inside:
        return _refused("raw_control_character", N_(
            "a raw control character (U+{code}) inside a string at char {at}; runnable only when "
            "the model or server escapes it (e.g. as \\n) ({error})"),
            code=f"{ord(text[pos]):04X}", at=pos, error=error)
    return None


def _refused(quirk: str, template: str, **params: object) -> Shape:
    return Shape(quirk, Said(quirk, template, params))


def _ends_inside_a_value(text: str, pos: int, place: ErrorPlace) -> bool:
    """The error is the end of the text: nothing left, a string never closed (its opening quote
    where a value or name was due), or outside any string a literal or number broken off
    (`tru` where a value was due, or `1.` right after a digit)."""
    rest = text[pos:].rstrip()
    if rest == "" or place.string is not None:
        return rest == ""
    return (text.startswith('"', pos) and place.due != "delimiter") or bool(
        LITERAL_TAIL.fullmatch(rest) and (place.due == "value" or text[pos - 1:pos].isalnum()))


def _objects(text: str) -> Said | None:
    """How many JSON objects stand one after another in the text, when it is two or more (the
    last may be cut), described; None for any other text."""
    complete, at, end = 0, 0, len(text)
    while True:
        while at < end and text[at].isspace():
            at += 1
        if at == end or text[at] != "{":
            break
        try:
            value, at = _DECODER.raw_decode(text, at)
        except (ValueError, RecursionError):
            if not complete:
                return None
            return Said("objects_cut", N_("{count} complete JSON objects and the start of "
                                          "another") if complete > 1 else
                        N_("1 complete JSON object and the start of another"),
                        {"count": complete})
        if not isinstance(value, dict):
            return None
        complete += 1
    if at < end or complete < 2:
        return None
    return Said("objects", N_("{count} JSON objects one after another"), {"count": complete})
