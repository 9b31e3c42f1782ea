"""What a converter noticed about a stream: each quirk, the call it concerns, and the policy."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Diagnostic:
    index: int | None  # the call's index in the lab's assembly (None: the whole stream)
    id: str | None
    quirk: str
    message: str
    # tolerated | refused (never run) | reported (nothing to run; the user should see it)
    action: str = "tolerated"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Diagnostics(list[Diagnostic]):
    """Diagnostics in order of discovery, each quirk reported once per call (kept in a set,
    so a stream of thousands of calls is noted in linear time)."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[tuple[str, int | None]] = set()

    def note(self, index: int | None, id: str | None, quirk: str, message: str,
             action: str = "tolerated") -> None:
        if (quirk, index) not in self._seen:
            self._seen.add((quirk, index))
            self.append(Diagnostic(index, id, quirk, message, action))
