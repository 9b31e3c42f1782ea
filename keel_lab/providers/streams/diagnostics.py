"""A converter's notepad: what it noticed, said in its stream (`Notice`) before its next event."""

from __future__ import annotations

from keel_lab.core.streaming import Action, Notice


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
