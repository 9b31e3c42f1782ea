"""Plain-text tables: what the CLI prints and what notebooks show as deterministic text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def cell(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    return "" if value is None else str(value)


def format_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> str:
    """Rows of dicts as aligned columns; column order from `columns` or the first row."""
    if not rows:
        return "(no rows)"
    cols = list(columns or rows[0].keys())
    text = [[cell(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(t[i]) for t in text)) for i, c in enumerate(cols)]
    line = "  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)).rstrip()
    body = ["  ".join(v.ljust(w) for v, w in zip(t, widths, strict=True)).rstrip() for t in text]
    return "\n".join([line, "  ".join("-" * w for w in widths), *body])
