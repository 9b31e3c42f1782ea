"""Old import paths, kept: a learner's saved notebook imports from where modules stood before
they took private names (`keel_lab.core.streaming`, `keel_lab.course.checks`, `keel_lab.cli`),
and a saved copy is never overwritten. An old path gives the module itself, never a copy, so
its classes and state are the ones the lab uses."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib import import_module
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType

# old name (a module, or a package and everything under it) -> where it is now
MOVED = {
    "keel_lab.cli": "keel_cli._command",
    "keel_lab.i18n": "keel_lab._i18n",
    "keel_lab.core": "keel_lab._core",
    "keel_lab.course.i18n": "keel_lab._i18n",
    "keel_lab.course.checks": "keel_checks",
    "keel_lab.course.progress": "keel_checks.progress",
    **{f"keel_lab.course.{name}": f"keel_lab.course._{name}" for name in (
        "experiments", "production", "data", "diagrams", "explorers",
        "fonts", "incident_tools", "named", "notebook", "offline_model", "plots",
        "sampling", "scenarios")},
    **{f"keel_lab.providers.{name}": f"keel_lab.providers._{name}" for name in (
        "streams", "anthropic_messages", "diagnosis", "fields", "formats", "gemini_messages",
        "langchain_messages", "langchain_tools", "leaks", "openai_adapter", "openai_messages",
        "replay", "responses_messages", "switches", "turns")},
}


def moved(name: str) -> str | None:
    """Where the module once called `name` is now, or None when it never moved. The finder asks
    this of every import of the process, so a name is looked up by its own dotted prefixes, not
    compared with every old name."""
    parts = name.split(".")
    for n in range(len(parts), 1, -1):
        new = MOVED.get(".".join(parts[:n]))
        if new is not None:
            return ".".join([new, *parts[n:]])
    return None


class _OldPaths(MetaPathFinder, Loader):
    """Asked first, before the path finder, so an old name never loads a second copy."""

    def __init__(self) -> None:
        self.specs: dict[str, ModuleSpec | None] = {}

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        return ModuleSpec(name, self) if moved(name) else None

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        module = import_module(moved(spec.name) or spec.name)
        self.specs[module.__name__] = module.__spec__  # the import system sets the old one next
        return module

    def exec_module(self, module: ModuleType) -> None:
        # its own spec again: nothing to run, it ran under its own name
        module.__spec__ = self.specs.pop(module.__name__)


def install() -> None:
    if not any(isinstance(finder, _OldPaths) for finder in sys.meta_path):
        sys.meta_path.insert(0, _OldPaths())
