"""Plain-text tables: what the CLI prints and what notebooks show as deterministic text."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from wcwidth import wcwidth

from keel_lab.i18n import _

# C0 and C1 controls (ESC starts terminal escape sequences), DEL, lone surrogates, the line
# and bidirectional marks that can make text display as something else, and the invisible ones
# (zero-width spaces and joiners, soft hyphen, BOM, tags) that make two ids look alike
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u2028-\u202e"
                     "\u2060-\u2069\ufeff\ufff9-\ufffb\ud800-\udfff\U000e0000-\U000e007f]")
MIN_COLUMN = 8  # the narrowest a column wraps to


def printable(text: object) -> str:
    """Text safe to print on a terminal: unsafe characters become visible escapes."""
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace")
                       .decode("ascii"), str(text))


def width_of(text: str) -> int:
    """The cells `text` takes on a terminal: two for a Chinese character, none for a combining
    mark - what lines a column up, not `len`."""
    return sum(max(wcwidth(c), 0) for c in text)


def pad(text: str, width: int) -> str:
    """`text` and spaces to fill `width` cells."""
    return text + " " * (width - width_of(text))


def cut(text: str, width: int) -> str:
    """`text` whole when it fits in `width` cells, else its start and "..." in exactly that."""
    if width_of(text) <= width:
        return text
    kept, used = [], 0
    for c in text:
        used += max(wcwidth(c), 0)
        if used > width - 3:
            break
        kept.append(c)
    return "".join(kept) + "..."


def wrap(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` cells: as `textwrap` breaks it where each character
    takes one cell, else at a space where one is, or anywhere (Chinese has no spaces between
    words)."""
    if width_of(text) == len(text):
        return textwrap.wrap(text, width) or [""]
    lines: list[str] = []
    rest = text.strip()
    while width_of(rest) > width:
        used, end, space = 0, 0, -1
        for n, c in enumerate(rest):
            used += max(wcwidth(c), 0)
            if used > width:
                break
            end = n + 1
            if c == " ":
                space = n
        end = max(end, 1)
        at = space if space > 0 else end
        lines.append(rest[:at].rstrip())
        rest = rest[at:].strip()
    return [*lines, rest] if rest or not lines else lines


def cell(value: Any) -> str:
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, float):
        return f"{value:.3f}"
    return "" if value is None else printable(value)


def format_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None,
                 width: int | None = None) -> str:
    """Rows of dicts as aligned columns, in the order of `columns` or the first row; with
    `width`, the widest columns narrow and wrap until no line is wider (if they can)."""
    if not rows:
        return "(no rows)"
    cols = list(columns or rows[0].keys())
    text = [[cell(r.get(c)) for c in cols] for r in rows]
    widths = [max(width_of(c), *(width_of(t[i]) for t in text)) for i, c in enumerate(cols)]
    if width is not None:
        widths = _narrowed(widths, width)
    lines = [*_wrapped_row(cols, widths), "  ".join("-" * w for w in widths)]
    for t in text:
        lines += _wrapped_row(t, widths)
    return "\n".join(lines)


def _narrowed(widths: list[int], width: int) -> list[int]:
    widths = list(widths)
    while sum(widths) + 2 * (len(widths) - 1) > width:
        widest = max(range(len(widths)), key=widths.__getitem__)
        if widths[widest] <= MIN_COLUMN:
            break
        widths[widest] -= 1
    return widths


def _wrapped_row(values: Sequence[str], widths: Sequence[int]) -> list[str]:
    parts = [wrap(v, w) if width_of(v) > w else [v] for v, w in zip(values, widths, strict=True)]
    height = max(len(p) for p in parts)
    return ["  ".join(pad(p[n] if n < len(p) else "", w)
                      for p, w in zip(parts, widths, strict=True)).rstrip()
            for n in range(height)]
