"""One shape for every experiment's result: JSON-ready data, a table, and findings."""

from __future__ import annotations

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

    def table(self) -> str:
        title = f"{self.name}: " + ", ".join(f"{k}={v}" for k, v in self.params.items())
        return "\n".join([title, format_table(self.rows), *self.findings])

    def __str__(self) -> str:
        return self.table()
