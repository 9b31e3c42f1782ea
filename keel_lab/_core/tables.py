"""Plain-text tables: what the CLI prints and what notebooks show as deterministic text."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from wcwidth import wcwidth

from keel_lab._i18n import _

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


_TOKENS = re.compile(r"\s+|[^\s\u1100-\uffff]+|.")  # spaces, a narrow word, one wide character
# the Chinese punctuation that never begins a line (comma, full stop, colons, closing marks),
# and the opening marks that never end one
_NO_LINE_START = set("\uff0c\u3002\uff1b\uff1a\u3001\uff09\u300b\u300d\u300f\uff01\uff1f\u2026")
_NO_LINE_END = set("\uff08\u300a\u300c\u300e")


def wrap(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` cells (a table's column, a help's line): as `textwrap`
    breaks it where each character takes one cell; else (Chinese, or Chinese and English) at a
    space or between two Chinese characters, never inside an English word that fits a line,
    before a closing Chinese punctuation mark or after an opening one."""
    if width_of(text) == len(text):
        return textwrap.wrap(text, width) or [""]
    lines: list[str] = []
    line: list[str] = []
    used = 0
    for token in (piece for found in _TOKENS.findall(" ".join(text.split()))
                  for piece in _cells(found, width)):
        cells = width_of(token)
        if token == " ":
            if line and used + 1 < width:
                line.append(token)
                used += 1
            elif line:  # a break: the space goes with it
                lines.append("".join(line).rstrip())
                line, used = [], 0
            continue
        if line and used + cells > width:
            carried: list[str] = []
            if token in _NO_LINE_START:  # the closing marks before it, and the word they close
                while len(line) > 1 and line[-1] in _NO_LINE_START:
                    carried.insert(0, line.pop())
                if len(line) > 1:
                    carried.insert(0, line.pop())
            while len(line) > 1 and line[-1] in _NO_LINE_END:
                carried.insert(0, line.pop())
            if (sum(map(width_of, carried)) + cells > width  # they would not fit, or would
                    or all(t in _NO_LINE_END for t in line)):  # leave an opening mark alone:
                line += carried  # break here
                carried = []
            lines.append("".join(line).rstrip())
            line = [t for t in carried if t != " "]
            used = sum(map(width_of, line))
        line.append(token)
        used += cells
    if line or not lines:
        lines.append("".join(line).rstrip())
    return lines


def _cells(word: str, width: int) -> list[str]:
    """`word` whole when it fits in `width` cells, else cut into pieces that do."""
    pieces, piece, used = [], "", 0
    for c in word:
        size = max(wcwidth(c), 0)
        if piece and used + size > width:
            pieces.append(piece)
            piece, used = "", 0
        piece += c
        used += size
    return [*pieces, piece]


def cell(value: Any) -> str:
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, float):
        return f"{value:.3f}"
    return "" if value is None else printable(value)


def format_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None,
                 width: int | None = None, keep: Collection[str] = ()) -> str:
    """Rows of dicts as aligned columns, in the order of `columns` or the first row; with
    `width`, the widest columns narrow and wrap until no line is wider (if they can), the
    `keep` columns (a path, say) only once the others cannot."""
    if not rows:
        return "(no rows)"
    cols = list(columns or rows[0].keys())
    text = [[cell(r.get(c)) for c in cols] for r in rows]
    widths = [max(width_of(c), *(width_of(t[i]) for t in text)) for i, c in enumerate(cols)]
    if width is not None:
        widths = _narrowed(widths, width, [c in keep for c in cols])
    lines = [*_wrapped_row(cols, widths), "  ".join("-" * w for w in widths)]
    for t in text:
        lines += _wrapped_row(t, widths)
    return "\n".join(lines)


def _narrowed(widths: list[int], width: int, kept: Sequence[bool]) -> list[int]:
    """The widest column narrows first; a kept one only once no other can."""
    widths = list(widths)
    for others_first in (True, False):
        while sum(widths) + 2 * (len(widths) - 1) > width:
            free = [i for i in range(len(widths)) if not (others_first and kept[i])]
            widest = max(free, key=widths.__getitem__, default=None)
            if widest is None or widths[widest] <= MIN_COLUMN:
                break
            widths[widest] -= 1
    return widths


def _wrapped_row(values: Sequence[str], widths: Sequence[int]) -> list[str]:
    parts = [wrap(v, w) if width_of(v) > w else [v] for v, w in zip(values, widths, strict=True)]
    height = max(len(p) for p in parts)
    return ["  ".join(pad(p[n] if n < len(p) else "", w)
                      for p, w in zip(parts, widths, strict=True)).rstrip()
            for n in range(height)]
