"""One shape for every experiment's result: JSON-ready data, a table, and findings."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from keel_lab.core.tables import format_table

Progress = Callable[[int], None]


@dataclass
class Report:
    name: str
    params: dict[str, Any]
    data: dict[str, Any]  # measured results beyond the rows, JSON-ready
    rows: list[dict[str, Any]] = field(default_factory=list)  # the table, stored only here
    findings: list[str] = field(default_factory=list)  # one-line conclusions, computed

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": self.name, **self.params, **self.data, "rows": self.rows}

    def table(self, width: int | None = None) -> str:
        """The title, the table and the findings; with `width` (the CLI's terminal), no line
        is wider: the title and findings wrap, the table narrows its widest columns."""
        title = f"{self.name}: " + ", ".join(f"{k}={v}" for k, v in self.params.items())
        if width is None:
            return "\n".join([title, format_table(self.rows), *self.findings])
        return "\n".join([textwrap.fill(title, width, subsequent_indent="  "),
                          format_table(self.rows, width=width),
                          *(textwrap.fill(f, width, subsequent_indent="  ")
                            for f in self.findings)])

    def __str__(self) -> str:
        return self.table()
