"""A converter's notepad: what it noticed, said in its stream (`Notice`) before its next event."""

from __future__ import annotations

from keel_lab.core.streaming import Action, Notice
from keel_lab.i18n import _
from keel_lab.providers.fields import shown


class Diagnostics:
    """Notices in order of discovery, each quirk said once per call (kept in a set, so a
    stream of thousands of calls is noted in linear time)."""

    def __init__(self) -> None:
        self._seen: set[tuple[str, int | None]] = set()
        self._unsaid: list[Notice] = []

    def note(self, index: int | None, id: str | None, quirk: str, message: str,
             action: Action = "tolerated") -> None:
        if (quirk, index) not in self._seen:
            self._seen.add((quirk, index))
            self._unsaid.append(Notice(index, id, quirk, message, action))

    def said(self) -> list[Notice]:
        said, self._unsaid = self._unsaid, []
        return said

    def unknown(self, what: str, kind: str, where: str) -> None:
        """A type the reader does not know (a block, delta, event or item): said once per kind of
        thing, then skipped. Providers add types, and say so (Anthropic: code should handle
        unknown event types gracefully): a new one must not make a whole turn unreadable."""
        message = _("{where}: {what} type {kind}, which this reader does not know (the first such "
                 "{what}): skipped, it adds no call and no text")
        self.note(None, None, f"unknown_{what}_type",
                  message.format(where=where, what=what, kind=shown(kind)), "reported")
