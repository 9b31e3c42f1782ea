"""`pip install .` (not editable) carries the package data, offline: the wheel is built with the
venv's own setuptools (no build isolation, no index) from a copy of the sources, so the working
tree gets no build/ folder. The data is the repository's data/, which pyproject.toml maps to the
package keel_lab.data: in the wheel it is keel_lab/data/. (tests/lab/test_data.py checks that the
editable install reads data/ itself.)"""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from keel_lab.course import data
from keel_lab.course.experiments.providers import stream_report

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
SOURCES = ("keel_lab", "keel_course", "data")  # what pyproject.toml's packages come from
STREAM = "openai-chat/parallel_calls.sse"
SCENARIO = ("import sys; from keel_lab.cli import main; "
            "sys.exit(main(['experiments', 'partial', '--json']))")


def _pip(*args: str, cwd: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args, "--no-deps", "--no-index",
                    "--no-build-isolation", "--disable-pip-version-check", "-q"],
                   cwd=cwd, check=True, timeout=120)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copy(ROOT / "README.md", src)
    for folder in SOURCES:
        shutil.copytree(ROOT / folder, src / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _pip("wheel", "-w", "dist", ".", cwd=src)
    [built] = (src / "dist").glob("keel_lab-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The wheel installed into a bare folder, the way `pip install .` lays it out."""
    target = tmp_path_factory.mktemp("site")
    _pip("install", "--target", str(target), str(wheel), cwd=target)
    return target


def _run(code: str, site: Path) -> subprocess.CompletedProcess[str]:
    """Python with only the installed copy importable as keel_lab (not the editable one)."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, "-c", code], cwd=site, env=env,
                          capture_output=True, text=True, timeout=60)


def test_every_data_file_is_in_the_wheel(wheel):
    expected = {f"keel_lab/data/{p.relative_to(DATA).as_posix()}" for p in DATA.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts}
    assert len(expected) > 30  # incidents, services, logs, a script, the recorded streams
    names = set(zipfile.ZipFile(wheel).namelist())
    assert expected - names == set()


def test_every_module_is_in_the_wheel(wheel):
    """pyproject.toml lists the packages (a find would miss keel_lab.data): none forgotten."""
    modules = {p.relative_to(ROOT).as_posix() for package in ("keel_lab", "keel_course")
               for p in (ROOT / package).rglob("*.py")}
    assert modules - set(zipfile.ZipFile(wheel).namelist()) == set()


def test_the_installed_copy_reads_its_own_data(installed):
    done = _run("import keel_lab; from keel_lab.course import data, fonts; "
                "from keel_lab.course.experiments.providers import stream_names, stream_report; "
                "print(keel_lab.__file__); print(data.root()); print(fonts.font_path()); "
                "print(len(data.incidents()), len(stream_names()), "
                f"len(stream_report({STREAM!r}).rows))", installed)
    assert done.returncode == 0, done.stderr
    *where, counts = done.stdout.splitlines()
    assert [Path(w).relative_to(installed).as_posix() for w in where] == [
        "keel_lab/__init__.py", "keel_lab/data", "keel_lab/data/fonts/NotoSansSC-keel-subset.ttf"]
    assert counts == (f"{len(data.incidents())} {len(list((DATA / 'streams').rglob('*.*')))} "
                      f"{len(stream_report(STREAM).rows)}")
    scenario = _run(SCENARIO, installed)
    assert scenario.returncode == 0, scenario.stderr
    assert "tool_internal_error: FileNotFoundError" not in scenario.stdout


def test_a_lost_data_file_is_an_error_not_a_failed_scenario(installed, tmp_path):
    broken = shutil.copytree(installed, tmp_path / "site")
    (broken / "keel_lab" / "data" / "incidents.json").unlink()
    done = _run(SCENARIO, broken)
    assert done.returncode == 2 and done.stdout == ""
    assert "keel_lab/data/incidents.json is missing" in done.stderr
    assert "install is incomplete" in done.stderr

