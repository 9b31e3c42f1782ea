"""A notebook cell as the course reads it: its source, its tags, the function an exercise cell
defines. Shared by the learner's `make check` (notebooks/conftest.py, which a handout carries
with keel_cli but without keel_course) and the instructor's tools (keel_course), so both name an
exercise the same way."""

from __future__ import annotations

import ast
from typing import Any

CHECK_MARK = "# NBVAL_CHECK_OUTPUT"  # a solution's check cell: nbval compares its output


def source(cell: dict[str, Any]) -> str:
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else str(text)


def tags(cell: dict[str, Any]) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def function_name(text: str) -> str:
    """The one top-level function an exercise cell defines, or "" if it defines another number."""
    defs = [n for n in ast.parse(text).body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    return defs[0].name if len(defs) == 1 else ""
