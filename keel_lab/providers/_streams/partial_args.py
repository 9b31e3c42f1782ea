"""Vertex AI's streamed call arguments (`FunctionCall.partialArgs`): values at JSON paths, built
into the one arguments object they describe.

Each piece names one place in the arguments with a JSON path (RFC 9535, as Google documents
it: `$.foo.bar[0].data`) and gives one value: `stringValue`, `numberValue`, `boolValue` or
`nullValue`. A string may come in several pieces: a piece that says `willContinue: true` is
continued by the next piece, which names the same path (the recordings end each string with an
empty piece). The paths read here are the ones that point at one value: `$` then `.name`,
`['name']`, `["name"]` or `[n]` steps. Anything that cannot be placed without a guess is a
`Conflict` that refuses the call carrying it: a path of another shape, a value where an object
or a list already is, a list index past the end of its list, a value set twice, a piece with no
value or with two, a string said to go on that another value interrupts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from keel_lab._core.errors import LabError, Said
from keel_lab._core.strict_json import MAX_DEPTH
from keel_lab._i18n import N_
from keel_lab.providers._fields import Fields, json_type, shown

VALUES = ("stringValue", "numberValue", "boolValue", "nullValue")
Key = str | int
_STEP = re.compile(r"""\.([^\W\d]\w*)  # .name
                      |\[(0|[1-9]\d{0,9})\]  # [n]
                      |\[('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\]  # ['name'] or ["name"]""",
                   re.VERBOSE)
_QUOTED = re.compile(r"""\\'|\\.|\"""")  # escapes and quotes in a quoted name, made JSON's


class Conflict(Exception):
    """A piece that cannot be placed without a guess; `said` says why, in one line."""

    def __init__(self, template: str, **params: Any) -> None:
        super().__init__(template)
        self.said = Said("partial_args_conflict", template, params)


@dataclass
class _Text:
    """A string that came in pieces, joined once when the arguments are written."""

    pieces: list[str] = field(default_factory=list)


@dataclass
class PartialArguments:
    """The arguments of one streamed call as its pieces have built them so far."""

    root: dict[str, Any] = field(default_factory=dict)
    values: int = 0  # pieces placed, for the notice
    going_on: tuple[str, _Text] | None = None  # (path, text) of a string said to continue

    def add(self, piece: Fields) -> None:
        """Place one piece, or raise `Conflict` (a `LabError` for a field of the wrong type)."""
        path = piece.text("jsonPath") or ""
        value = _value(piece)
        more = piece.flag("willContinue")
        if self.going_on and self.going_on[0] == path and isinstance(value, str):
            self.going_on[1].pieces.append(value)
        elif self.going_on:
            raise Conflict(N_("the string at {path} was said to go on, but a value at {other} "
                              "came next"), path=shown(self.going_on[0]), other=shown(path))
        else:
            text = _Text([value]) if isinstance(value, str) else None
            _place(self.root, _keys(path), value if text is None else text, path)
            self.going_on = (path, text) if text is not None and more else None
            self.values += 1
        if not more:
            self.going_on = None

    @property
    def unfinished(self) -> str | None:
        """The path of a string still said to go on, when the call ends there."""
        return self.going_on[0] if self.going_on else None

    def text(self) -> str:
        return json.dumps(self.root, ensure_ascii=False,
                          default=lambda t: "".join(t.pieces))


def _value(piece: Fields) -> Any:
    """The one value of a piece, each field of its own JSON type."""
    # null reads as absent, but for `nullValue`, whose value is null in proto3's JSON
    given = [k for k in VALUES
             if piece.raw(k) is not None or (k == "nullValue" and k in piece.value)]
    if len(given) != 1:
        said = N_("a piece at {path} has {fields} (exactly one of {values} is the value)") \
            if given else N_("a piece at {path} has no value (exactly one of {values} is the "
                             "value)")
        raise Conflict(said, path=shown(piece.text("jsonPath")),
                       fields=_and(given) if given else "",
                       values=", ".join(VALUES))
    kind, raw = given[0], piece.raw(given[0])
    if kind == "stringValue":
        return piece.text(kind) or ""
    if kind == "boolValue":
        return piece.flag(kind)
    ok = (isinstance(raw, int | float) and not isinstance(raw, bool) if kind == "numberValue"
          else raw in (None, "NULL_VALUE"))
    if not ok:
        said = N_("{where}: field {field} must be a number, got {type}") \
            if kind == "numberValue" else \
            N_("{where}: field {field} must be null or 'NULL_VALUE', got {type}")
        raise LabError("wrong_type", said, where=piece.where,
                       field=repr(piece.path + "." + kind), type=json_type(raw))
    return None if kind == "nullValue" else raw


def _keys(path: str) -> list[Key]:
    """The steps of a path to one value, or `Conflict` for a path of another shape."""
    if not path.startswith("$"):
        raise Conflict(N_("the path {path} does not start at the arguments ($)"),
                       path=shown(path))
    keys: list[Key] = []
    pos = 1
    while pos < len(path):
        step = _STEP.match(path, pos)
        if step is None or len(keys) >= MAX_DEPTH:
            raise Conflict(N_("the path {path} is no path to one value the lab reads (from "
                              "character {pos}; at most {steps} steps)"),
                           path=shown(path), pos=pos, steps=MAX_DEPTH)
        name, index, quoted = step.groups()
        keys.append(name if name is not None else int(index) if index is not None
                    else _unquoted(quoted, path))
        pos = step.end()
    if not keys:
        raise Conflict(N_("a value for the whole arguments ($), which must be an object"))
    return keys


def _unquoted(quoted: str, path: str) -> str:
    """A quoted name's text: its escapes are JSON's, `\\'` and `"` made JSON's too."""
    body = _QUOTED.sub(lambda m: {"\\'": "'", '"': '\\"'}.get(m[0], m[0]), quoted[1:-1])
    try:
        name = json.loads(f'"{body}"')
    except ValueError:
        raise Conflict(N_("the path {path} has a name with an invalid escape"),
                       path=shown(path)) from None
    return str(name)


def _place(root: dict[str, Any], keys: list[Key], value: Any, path: str) -> None:
    node: Any = root
    for key, after in pairwise(keys):
        node = _step(node, key, [] if isinstance(after, int) else {}, path)
    last = keys[-1]
    if isinstance(node, dict) and isinstance(last, str) and last not in node:
        node[last] = value
    elif isinstance(node, list) and isinstance(last, int) and last == len(node):
        node.append(value)
    else:
        raise Conflict(N_("the value at {path} cannot be placed: {why}"), path=shown(path),
                       why=_why(node, last))


def _step(node: Any, key: Key, empty: list[Any] | dict[str, Any], path: str) -> Any:
    """The container at `key` in `node`, made when it is new; it must be of `empty`'s kind."""
    if isinstance(node, dict) and isinstance(key, str):
        child = node.setdefault(key, empty)
    elif isinstance(node, list) and isinstance(key, int) and key <= len(node):
        if key == len(node):
            node.append(empty)
        child = node[key]
    else:
        raise Conflict(N_("the path {path} cannot be followed: {why}"), path=shown(path),
                       why=_why(node, key))
    if type(child) is not type(empty):
        said = N_("the path {path} goes through a value that is not a list") \
            if isinstance(empty, list) else \
            N_("the path {path} goes through a value that is not an object")
        raise Conflict(said, path=shown(path))
    return child


def _why(node: Any, key: Key) -> Said:
    if isinstance(key, int) != isinstance(node, list):
        said = N_("step {key} into a list") if isinstance(node, list) else \
            N_("step {key} into an object")
        return Said("wrong_step", said, {"key": shown(key)})
    if isinstance(key, int) and key > len(node):
        return Said("past_the_end", N_("index {index} is past the end of a list of {size}"),
                    {"index": key, "size": len(node)})
    return Said("set_twice", N_("a value is already set at step {key} (set twice)"),
                {"key": shown(key)})


def _and(names: list[str]) -> str | Said:
    """Names as one: "a", "a and b", "a and b and c"."""
    said: str | Said = names[0]
    for name in names[1:]:
        said = Said("and", N_("{first} and {second}"), {"first": said, "second": name})
    return said
