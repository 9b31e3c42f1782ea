"""Every third-party module the lab imports is declared in pyproject.toml, so `pip install` of the
lab gives a lab that imports (issue 30: `wcwidth` was only in requirements.txt, which a wheel
never reads). Read with `ast` from the modules of every package the wheel ships, at every level,
and mapped to distributions by the development venv's metadata. Where a module may be declared:

- imported by anything in keel_lab.course (what the notebooks import) or by a notebook's own
  cells: `[project] dependencies`, since a chapter runs wherever the lab is installed;
- imported when a module of another package loads (keel_lab, the `keel-lab` command): the
  dependencies too; imported inside one of its functions (an optional feature: `keel-lab
  record`'s HTTP client), the dependencies or an extra;
- imported anywhere in keel_course (the instructors' commands): the dependencies or an extra.

tests/lab/test_install.py proves the declarations enough: the wheel, with what it declares, in a
fresh venv runs the CLI and a chapter."""

from __future__ import annotations

import ast
import json
import re
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from keel_cli import _record as record
from keel_lab._core.errors import LabError

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
NOTEBOOKS = ROOT / "notebooks"
ALWAYS_CORE = ("notebooks/", "keel_lab.course")  # what a chapter runs
INSTRUCTORS = "keel_course"  # extras may hold all it imports
# Calls that import the module a string names: __import__, importlib's import_module and
# find_spec, and the recorder's `_import` (which names the extra when the module is missing).
DYNAMIC = {"__import__", "import_module", "find_spec", "_import"}


@dataclass(frozen=True)
class Import:
    module: str  # the top-level module
    where: str  # path:line, or path#cellN:line
    lazy: bool  # imported inside a function: when it runs, not when its module loads
    owner: str  # the importing module's package (dotted), or the notebook's path

    @property
    def core(self) -> bool:
        """Must be a dependency, not only an extra."""
        if self.owner.startswith(ALWAYS_CORE):
            return True
        return not self.lazy and self.owner.split(".")[0] != INSTRUCTORS


def _canonical(requirement: str) -> str:
    """The distribution a requirement names, in PEP 503's normal form."""
    name = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert name, requirement
    return re.sub(r"[-_.]+", "-", name.group(0)).lower()


def declared() -> tuple[set[str], dict[str, set[str]]]:
    """pyproject.toml's dependencies, and each extra's."""
    project = PYPROJECT["project"]
    return ({_canonical(r) for r in project["dependencies"]},
            {extra: {_canonical(r) for r in requirements}
             for extra, requirements in project.get("optional-dependencies", {}).items()})


def packages() -> dict[str, Path]:
    """Each package the wheel ships, and its folder (`package-dir` mapped as setuptools maps it)."""
    mapped = SETUPTOOLS.get("package-dir", {})

    def folder(package: str) -> Path:
        parts = package.split(".")
        n = next(n for n in range(len(parts), -1, -1) if ".".join(parts[:n]) in mapped or n == 0)
        return ROOT / mapped.get(".".join(parts[:n]), "") / "/".join(parts[n:])

    return {package: folder(package) for package in SETUPTOOLS.get("packages", [])}


def sources() -> dict[Path, str]:
    """Each module the wheel ships, and the package it belongs to (a top-level module: itself)."""
    found = {path: package for package, folder in packages().items()
             for path in folder.glob("*.py")}
    root = ROOT / SETUPTOOLS.get("package-dir", {}).get("", "")
    return found | {root / f"{module}.py": module for module in SETUPTOOLS.get("py-modules", [])}


def ours() -> set[str]:
    return {package.split(".")[0] for package in sources().values()}


def imported(tree: ast.AST, where: str, owner: str) -> Iterator[Import]:
    """The top-level modules `tree` imports, each said lazy when a function imports it."""

    def visit(node: ast.AST, lazy: bool) -> Iterator[Import]:
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif (isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) in DYNAMIC):
            names, lazy = [node.args[0].value], True
        for name in names:
            yield Import(name.split(".")[0], f"{where}:{getattr(node, 'lineno', 0)}", lazy,
                         owner)
        inside = lazy or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            yield from visit(child, inside)

    yield from visit(tree, False)


def package_imports() -> Iterator[Import]:
    for path, package in sorted(sources().items()):
        yield from imported(ast.parse(path.read_text(encoding="utf-8")),
                            path.relative_to(ROOT).as_posix(), package)


def notebook_imports() -> Iterator[Import]:
    """A notebook's code cells, its `%magic` and `!shell` lines left out."""
    for path in sorted(NOTEBOOKS.rglob("*.ipynb")):
        where = path.relative_to(ROOT).as_posix()
        for n, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            if cell["cell_type"] == "code":
                source = "".join(line for line in "".join(cell["source"]).splitlines(True)
                                 if not line.lstrip().startswith(("%", "!")))
                yield from imported(ast.parse(source), f"{where}#cell{n}", where)


def third_party(imports: Iterator[Import]) -> list[Import]:
    first_party = ours()
    return [i for i in imports if i.module not in first_party
            and i.module not in sys.stdlib_module_names and i.module != "__future__"]


def undeclared(imports: list[Import]) -> list[str]:
    """What is wrong with `imports`, one line each."""
    core, extras = declared()
    anywhere = core.union(*extras.values())
    owners = packages_distributions()
    wrong = []
    for i in imports:
        found = {_canonical(d) for d in owners.get(i.module, ())}
        if not found:
            wrong.append(f"{i.where}: {i.module} is installed by no distribution of this venv")
        elif i.core and not found & core:
            wrong.append(f"{i.where}: {i.module} ({', '.join(sorted(found))}) is not in "
                         "[project] dependencies")
        elif not found & anywhere:
            wrong.append(f"{i.where}: {i.module} ({', '.join(sorted(found))}) is declared "
                         "nowhere in pyproject.toml, neither a dependency nor an extra")
    return wrong


def test_every_import_of_the_packages_is_declared():
    imports = third_party(package_imports())
    assert {"wcwidth", "matplotlib", "httpx", "jupyterhub"} <= {i.module for i in imports}
    assert undeclared(imports) == []


def test_every_import_of_the_notebooks_is_a_dependency():
    imports = third_party(notebook_imports())
    assert {"openai", "langchain_core"} <= {i.module for i in imports}
    assert undeclared(imports) == []


def test_the_check_sees_what_is_missing():
    """A module imported when keel_lab loads must be a dependency: an extra is not enough."""
    tree = ast.parse("import wcwidth\n\ndef record():\n    import httpx\n    _import('nope')\n")
    imports = third_party(imported(tree, "keel_lab/example.py", "keel_lab"))
    assert [(i.module, i.core) for i in imports] == [
        ("wcwidth", True), ("httpx", False), ("nope", False)]
    assert [line.split(": ", 1)[0] for line in undeclared(imports)] == ["keel_lab/example.py:5"]
    for owner in ("keel_lab.course._experiments", "notebooks/07_providers.ipynb"):
        assert undeclared([Import("httpx", "x.py:4", lazy=True, owner=owner)]) == [
            "x.py:4: httpx (httpx) is not in [project] dependencies"]
    assert undeclared([Import("tomlkit", "x.py:1", lazy=False, owner="keel_course.cli")]) == []


def test_a_feature_without_its_extra_names_the_extra(monkeypatch):
    """`keel-lab record gemini` without httpx: one line that says which extra brings it."""
    monkeypatch.setitem(sys.modules, "httpx", None)  # `import httpx` now raises ImportError
    with pytest.raises(LabError) as caught:
        record._import("httpx", "gemini")
    assert (caught.value.code, dict(caught.value.params)) == (
        "missing_extra", {"format": "gemini", "package": "httpx"})
    [extra] = re.findall(r"pip install 'keel-lab\[(\w+)\]'", str(caught.value))
    assert "httpx" in declared()[1][extra]


def test_every_extra_a_message_names_exists():
    """`pip install 'keel-lab[EXTRA]'`, wherever the package or the docs say it, names an extra
    of pyproject.toml."""
    _, extras = declared()
    texts = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *sources()]
    named = {(p.relative_to(ROOT).as_posix(), extra) for p in texts
             for extra in re.findall(r"keel-lab\[([\w,-]+)\]", p.read_text(encoding="utf-8"))}
    assert {extra for _, extra in named} >= {"record", "classroom"}
    assert [(p, e) for p, e in sorted(named) if not set(e.split(",")) <= set(extras)] == []
