"""A converter's notepad: what it noticed, said in its stream (`Notice`) before its next event."""

from __future__ import annotations

from typing import Any

from keel_lab._core.errors import Said
from keel_lab._core.streaming import Action, Notice
from keel_lab._i18n import N_
from keel_lab.providers._fields import shown


class Diagnostics:
    """Notices in order of discovery, each quirk said once per call (kept in a set, so a
    stream of thousands of calls is noted in linear time)."""

    def __init__(self) -> None:
        self._seen: set[tuple[str, int | None]] = set()
        self._unsaid: list[Notice] = []

    def note(self, index: int | None, id: str | None, quirk: str, message: str | Said,
             action: Action = "tolerated", /, **params: Any) -> None:
        """Say `quirk` about call `index` (None: the stream): `message` a template, with its
        `params`, coded by the quirk, or a message already coded."""
        if (quirk, index) not in self._seen:
            self._seen.add((quirk, index))
            said = message if isinstance(message, Said) else Said(quirk, message, params)
            self._unsaid.append(Notice(index, id, quirk, said, action))

    def said(self) -> list[Notice]:
        said, self._unsaid = self._unsaid, []
        return said

    def unknown(self, what: str, kind: str, where: str) -> None:
        """A type the reader does not know (a block, delta, event or item): said once per kind of
        thing, then skipped. Providers add types, and say so (Anthropic: code should handle
        unknown event types gracefully): a new one must not make a whole turn unreadable."""
        self.note(None, None, f"unknown_{what}_type", N_(
            "{where}: {what} type {kind}, which this reader does not know (the first such "
            "{what}): skipped, it adds no call and no text"), "reported",
            where=where, what=what, kind=shown(kind))
