"""The checkout of the keel-lab repository a command works on, given by its caller
(`keel-course --checkout`, a script from where it lives, a test): an installed keel_course has
no checkout beside its own files, so no module finds one from `__file__`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from keel_lab._core.errors import LabError
from keel_lab._i18n import N_

# The folders of a checkout the course's tools read and write, relative to its root:
FOLDERS = {
    "notebooks": "notebooks",  # the English learner edition, its glossary, the students' conftest
    "solutions": "notebooks/solutions",  # the English solution notebooks: every edition's source
    "locale": "locale",  # the notebooks' catalogs: locale/<locale>/LC_MESSAGES/<name>.po
    "classroom": "classroom",  # the hub's configuration and the proxy's npm pins
    "build": "build",  # what the Makefile and the scripts generate (templates, proxy, site)
    "package": "keel_lab",  # the learners' package, as the handout copies it
    "cli": "keel_cli",  # the `keel-lab` command beside it, which the handout copies too
    "checks": "keel_checks",  # the exercises, their checks and the progress log, copied too
    "data": "data",  # the package's data sets (installed as `keel_lab.data`)
}


@dataclass(frozen=True)
class Checkout:
    """A checkout's root and its folders (FOLDERS says what each holds)."""

    root: Path
    notebooks: Path = field(init=False)
    solutions: Path = field(init=False)
    locale: Path = field(init=False)
    classroom: Path = field(init=False)
    build: Path = field(init=False)
    package: Path = field(init=False)
    cli: Path = field(init=False)
    checks: Path = field(init=False)
    data: Path = field(init=False)

    def __post_init__(self) -> None:
        for name, folder in FOLDERS.items():
            object.__setattr__(self, name, self.root / folder)

    @classmethod
    def at(cls, root: Path) -> Checkout:
        """The checkout at `root`; `LabError` when it has no solution notebooks' folder."""
        checkout = cls(root.resolve())
        if not checkout.solutions.is_dir():
            raise LabError("not_a_checkout", N_("{root} is not a keel-lab checkout (no "
                                                "notebooks/solutions/)"), root=checkout.root)
        return checkout

    def edition(self, language: str) -> Path:
        """A translated edition (learner notebooks, glossary, its solutions/): notebooks/zh/."""
        return self.notebooks / language

    @property
    def sources(self) -> tuple[Path, ...]:
        """What a command that writes a course must never write into: the packages and their data
        (a handout would ship itself into itself), the notebooks (answers would mix into the
        learner edition)."""
        return self.package, self.cli, self.checks, self.data, self.notebooks
