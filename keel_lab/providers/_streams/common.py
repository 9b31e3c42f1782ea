"""What every wire format shares: typed access to a payload's fields, the calls seen so far,
and the checks made at the finish.

Turn-level rules (ids missing, reused or changed) are the core assembler's; a converter only
refuses what the wire itself corrupted. A field of the wrong JSON type is a `LabError` that
names the event, the field and the type expected: the stream cannot be read as its format.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from keel_lab._core.errors import Said
from keel_lab._core.streaming import Arguments, Finish, Refuse, StreamEvent
from keel_lab._i18n import N_
from keel_lab.providers._fields import Fields, json_preview
from keel_lab.providers._formats import CUT_FINISHES, DONE
from keel_lab.providers._streams.arguments import shape
from keel_lab.providers._streams.diagnostics import Diagnostics

Labelled = Iterable[tuple[str, dict[str, Any]]]  # ("line 3" or "event 2", payload)


@dataclass
class Reading:
    """A converter's pass over a stream: each payload as `Fields`, and what has ended the turn
    so far (`ended`; a call or text after it came too late). `data: [DONE]` ends it too."""

    records: Labelled
    ended: str | Said | None = None  # what ended it: an event's name, or said
    error_field: str | None = None  # a payload carrying this field is the server's error

    def __iter__(self) -> Iterator[Fields]:
        for where, record in self.records:
            if record is DONE:
                self.ended = self.ended or "data: [DONE]"
                continue
            fields = Fields(record, where)
            if self.error_field is not None and self.error_field in record:
                raise ConnectionError(server_error(fields.raw(self.error_field)))
            yield fields

    def end(self, why: str | Said) -> None:
        """The turn ends here, unless something ended it already."""
        self.ended = self.ended or why

    def arrived(self, call: WireCall, where: str) -> None:
        """A fragment of `call` arrived at `where`: after the end of the turn, the call never
        runs."""
        if self.ended:
            call.late = Said("after_finish", N_("a fragment of this call arrived after {ended} "
                                                "({where}): the turn was over, so the call is "
                                                "never run"), {"ended": self.ended, "where": where})


@dataclass
class WireCall:
    """What a converter has seen of one call, to check it before the finish is passed on."""

    id: str | None = None
    name: str = ""
    parts: list[str] = field(default_factory=list)  # argument fragments, joined only on demand
    late: Said | None = None  # why a fragment of it came after the turn had ended
    refusal: tuple[str, Said] | None = None  # (quirk, why) the wire leaves this call unknown
    free_form: bool = False  # a custom tool's: its text is the one argument `input`, not JSON
    # formats that close each call (Anthropic's content_block_stop, the Responses API's
    # output_item.done): the event still awaited, None once it came (or for formats that don't)
    unclosed: str | None = None
    closes: bool = False  # whether its format closes calls one by one

    @property
    def arguments(self) -> str:
        return "".join(self.parts)

    def add(self, fragment: str | None) -> None:
        if fragment:
            self.parts.append(fragment)


def closing(calls: dict[int, WireCall], finish: str | None, diag: Diagnostics,
            end: str | Said, normal: tuple[str, ...], *,
            inferred: bool = False) -> Iterator[StreamEvent]:
    """Checks every format shares at the finish, then the finish itself: each call's fragments
    judged once for the shapes of `arguments.py` (a tolerated one hands the core its reading,
    `Arguments`; `inferred`: no finish reason came, the lab read one from the stream's end).
    Without a finish (`end` names the event that should have come) the turn never finished and
    nothing may run. `normal` are the format's documented finish reasons that close a
    tool turn; the lab's policy is that any other one (a content filter, a refusal, a value
    nobody documents) leaves its calls unknown or unwanted, so none of them runs."""
    if finish is None:
        diag.note(None, None, "truncated", N_("the stream ended before {end}: the turn never "
                                              "finished, so none of its calls may run"),
                  "refused", end=end)
        return
    if calls and finish == "stop" and "tool_calls" in normal:  # Gemini's, Ollama's normal end
        diag.note(None, None, "finish_stop_with_calls",
                  N_("finish reason 'stop' although calls were made; the calls are closed by "
                     "it"))
    unusual = None if finish in normal else Said("unusual_finish", N_(
        "the turn ended with the finish reason {finish}, which does not close a tool turn "
        "normally (that is {normal}): its calls may be cut, withheld or unwanted, so none of "
        "them runs"), {"finish": repr(finish), "normal": ", ".join(map(repr, normal))})
    if unusual:
        diag.note(None, None, "unusual_finish", unusual, "refused" if calls else "reported")
    for index, call in sorted(calls.items()):
        refusal = ("after_finish", call.late) if call.late else call.refusal
        if refusal is None and any("\ufffd" in part for part in call.parts):
            refusal = ("split_utf8", Said("split_utf8", N_(
                "arguments contain U+FFFD: a UTF-8 character was split between chunks and each "
                "half encoded on its own, so the arguments are corrupted")))
        found = None if refusal or call.free_form else shape(call.parts, finish, inferred=inferred)
        if found and found.reading is None:  # a shape the lab refuses says best why
            refusal = (found.quirk, found.said)
        if refusal is None and call.unclosed:
            refusal = ("not_closed", Said("not_closed", N_(
                "the stream never closed this call ({event} never came for it): its arguments "
                "may be cut, so it never runs"), {"event": call.unclosed}))
        if refusal is None and not call.parts and not call.closes and finish in CUT_FINISHES:
            refusal = ("arguments_cut", Said("arguments_cut", N_(
                "no argument text arrived before the output limit cut the turn (the finish "
                "reason {finish}): the arguments may have been cut before their first "
                "character, so the call never runs"), {"finish": repr(finish)}))
        if refusal:
            yield Refuse(index, refusal[1], refusal[0], call.id)
            continue
        if call.free_form:
            yield Arguments(index, json.dumps({"input": call.arguments}, ensure_ascii=False))
        if found and found.reading is not None:
            diag.note(index, call.id, found.quirk, found.said)
            yield Arguments(index, found.reading)
        if unusual:
            yield Refuse(index, unusual)
    yield Finish(finish)


def server_error(error: Any) -> Said:
    """What a stream that carries the server's error raises (as a `ConnectionError`): the
    error as the server sent it, JSON."""
    return Said("server_error", N_("the server sent an error: {error}"),
                {"error": json_preview(error)})


def id_for(given: str | None, prefix: str, index: int, diag: Diagnostics) -> str:
    """A call's id, or a stable one made at the boundary (`<prefix>-<index>`) for a format
    whose calls may come without one, noted so the user knows it is the lab's."""
    if given:
        return given
    made = f"{prefix}-{index}"
    diag.note(index, made, "id_assigned", N_("the call came without an id; it is {id} from "
                                             "here on"), id=made)
    return made
