"""What every wire format shares: the calls seen so far, and the checks made at the finish.

Turn-level rules (ids missing, reused or changed) are the core assembler's; a converter only
rejects what the wire itself corrupted.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.core.streaming import Finish, Reject, StreamEvent
from keel_lab.providers.streams.diagnostics import Diagnostics

REPLACEMENT = "\ufffd"


@dataclass
class WireCall:
    """What a converter has seen of one call, to check it before the finish is passed on."""

    id: str | None = None
    name: str = ""
    arguments: str = ""


def whole_index(value: Any, what: str, where: str) -> int:
    """A wire index that must be a whole number >= 0 (bools and floats are not)."""
    if type(value) is not int or value < 0:
        raise LabError(f"{where}: {what} {value!r} is not a whole number >= 0")
    return value


def closing(calls: dict[int, WireCall], finish: str | None, diag: Diagnostics, end: str
            ) -> Iterator[StreamEvent]:
    """Checks every format shares at the finish, then the finish itself. Without a finish
    (`end` names the event that should have come) nothing is closed and nothing may run."""
    if finish is None:
        diag.note(None, None, "truncated", f"the stream ended before {end}: no call was "
                  "closed, nothing may run", "rejected")
        return
    if calls and finish == "stop":
        diag.note(None, None, "finish_stop_with_calls",
                  "finish reason 'stop' although calls were made; the calls are closed by it")
    for index, call in sorted(calls.items()):
        if REPLACEMENT in call.arguments:
            reason = ("arguments contain U+FFFD: a UTF-8 character was split between chunks "
                      "and each half encoded on its own, so the arguments are corrupted")
            diag.note(index, call.id, "split_utf8", reason, "rejected")
            yield Reject(index, reason)
    yield Finish(finish)
