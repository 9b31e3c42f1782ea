"""The packages hold no import circle.

Imports are read from the source (module level and inside functions alike: an import inside a
function hides a circle from Python, not from a reader). A package's own `__init__` running
before its modules is the import system's order, not an edge."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("keel_lab", "keel_checks", "keel_cli", "keel_course")

pytestmark = pytest.mark.lab_wide


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def edges(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[:len(parts) - node.level + 1], *filter(None, [base])])
            # `from package import module` needs the module; a name that is no module, the package
            modules_named = [f"{base}.{a.name}" for a in node.names]
            targets = [m if m in known else base for m in modules_named]
        out |= {t for t in targets if t in known and t != name}
    return out


def test_no_import_circle() -> None:
    known = modules()
    graph = {name: edges(name, path, known) for name, path in known.items()}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as circle:
        pytest.fail("import circle: " + " -> ".join(circle.args[1]))
