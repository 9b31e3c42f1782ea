"""`pip install .` (not editable) carries the package data, offline: the wheel is built with the
venv's own setuptools (no build isolation, no index) from a copy of the sources, so the working
tree gets no build/ folder. The data is the repository's data/, which pyproject.toml maps to the
package keel_lab.data: in the wheel it is keel_lab/data/. (tests/lab/test_data.py checks that the
editable install reads data/ itself.)

Then the lab as a learner on Colab or a practitioner gets it (issue 30): the wheel and what it
declares, from the package index, in a fresh venv, used from an empty folder outside the checkout:
`import keel_lab`, `keel-lab` on the files that ship inside the package, and a chapter executed
on a kernel of that venv. tests/lab/test_declared_imports.py says why the declarations suffice."""

import functools
import json
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from keel_lab.course import _data as data
from keel_lab.course._experiments.providers import stream_report

pytestmark = [pytest.mark.lab_wide, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
# pyproject.toml's packages come from these folders
SOURCES = ("keel_lab", "keel_checks", "keel_cli", "keel_course", "data")
STREAM = "openai-chat/parallel_calls.sse"
SCENARIO = ("import sys; from keel_cli._command import main; "
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
    modules = {p.relative_to(ROOT).as_posix() for package in ("keel_lab", "keel_cli", "keel_course")
               for p in (ROOT / package).rglob("*.py")}
    assert modules - set(zipfile.ZipFile(wheel).namelist()) == set()


def test_the_installed_copy_reads_its_own_data(installed):
    done = _run("import keel_lab; from keel_lab.course import data, fonts; "
                "from keel_lab.course._experiments.providers import stream_names, stream_report; "
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


# The fresh venv: nothing of the checkout or of the development venv reaches it.
NOT_PASSED = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "KEEL_LAB_LANG")
CHAPTER = ROOT / "notebooks" / "solutions" / "02_pairing.ipynb"  # needs no file of the checkout
KERNEL = "keel-lab-fresh"  # the fresh venv's kernel spec, in a Jupyter folder of its own
# Each command on files the package ships (data/...: inside keel_lab.data), and its documented
# exit code (docs/cli.md).
COMMANDS = {"assemble": ("assemble data/recordings/anthropic/tool_no_arguments.jsonl", 0),
            "assemble-refused": ("assemble data/streams/quirks/duplicate_id.sse", 1),
            "validate": ("validate data/histories/openai-chat/valid.json", 0),
            "validate-invalid": ("validate data/histories/anthropic/result_before_call.json", 1),
            "experiments": ("experiments pairing", 0)}


def _outside() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in NOT_PASSED}


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout


@dataclass
class Fresh:
    venv: Path
    empty: Path  # an empty folder outside the checkout, where everything runs
    jupyter: Path  # a Jupyter data folder that holds only the venv's kernel spec

    def run(self, program: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.venv / "bin" / program), *args], cwd=self.empty,
                              env=_outside(), capture_output=True, text=True, timeout=120)

    @functools.cached_property
    def data(self) -> Path:
        """keel_lab.data as the installed package finds it."""
        return Path(_ok(self.run("python", "-c", "import importlib.resources as r; "
                                                 "print(r.files('keel_lab.data'))")).strip())


@pytest.fixture(scope="module")
def fresh(wheel, tmp_path_factory) -> Fresh:
    """A venv made by the development venv's base interpreter, with the wheel and its declared
    dependencies from the package index (pip's cache makes a second run quick), and ipykernel."""
    root = tmp_path_factory.mktemp("fresh")
    venv, empty, jupyter = root / "venv", root / "empty", root / "jupyter"
    empty.mkdir()
    subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "-q"]
    probe = subprocess.run([*pip, "download", "--no-deps", "--retries", "0", "--timeout", "20",
                            "-d", str(root / "probe"), "wcwidth"], cwd=root, env=_outside(),
                           capture_output=True, text=True, timeout=120)
    if probe.returncode:
        pytest.skip("the package index cannot be reached, so the wheel's dependencies cannot be "
                    f"installed: {(probe.stderr.strip().splitlines() or ['?'])[-1]}")
    _ok(subprocess.run([*pip, "install", str(wheel), "ipykernel"], cwd=root, env=_outside(),
                       capture_output=True, text=True, timeout=600))
    _ok(subprocess.run([str(venv / "bin" / "python"), "-m", "ipykernel", "install", "--prefix",
                        str(jupyter), "--name", KERNEL], cwd=root, env=_outside(),
                       capture_output=True, text=True, timeout=120))
    return Fresh(venv, empty, jupyter / "share" / "jupyter")


def test_the_fresh_venv_imports_its_own_copy(fresh):
    assert not fresh.empty.resolve().is_relative_to(ROOT)
    where, path = _ok(fresh.run("python", "-c", "import json, sys, keel_lab; "
                                "print(keel_lab.__file__); print(json.dumps(sys.path))")
                      ).splitlines()
    assert Path(where).is_relative_to(fresh.venv)
    assert not [p for p in json.loads(path) if p and Path(p).resolve().is_relative_to(ROOT)]
    assert fresh.data == Path(where).parent / "data"


@pytest.mark.parametrize("name", COMMANDS)
def test_the_installed_command_on_the_files_it_ships(fresh, name):
    """Its documented exit code, and the output the checkout's own command prints."""
    command, code = COMMANDS[name]
    installed = fresh.data
    done = fresh.run("keel-lab", *(str(installed.parent / a) if a.startswith("data/") else a
                                   for a in command.split()))
    assert (done.returncode, done.stderr) == (code, "")
    ours = subprocess.run([str(Path(sys.executable).parent / "keel-lab"), *command.split()],
                          cwd=ROOT, env={**_outside(), "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120)
    assert ours.returncode == code and ours.stdout  # the checkout's copy, with the same files
    assert done.stdout.replace(str(installed), "data") == ours.stdout


def test_a_chapter_runs_on_a_kernel_of_the_fresh_venv(fresh, monkeypatch):
    """A copy of chapter 2 in the empty folder, with a last cell that says where keel_lab came
    from: no cell fails (nbclient raises at the first that does)."""
    for name in NOT_PASSED:
        monkeypatch.delenv(name, raising=False)  # the kernel inherits this process's environment
    monkeypatch.setenv("JUPYTER_PATH", str(fresh.jupyter))
    notebook = nbformat.read(CHAPTER, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell("import keel_lab\nprint(keel_lab.__file__)"))
    nbformat.write(notebook, fresh.empty / CHAPTER.name)
    NotebookClient(notebook, kernel_name=KERNEL, timeout=120,
                   resources={"metadata": {"path": str(fresh.empty)}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert Path(outputs[-1].text.strip()).is_relative_to(fresh.venv)


# docs/practitioners.md's install section: its `keel-lab` lines, on files in a home folder that
# is not the checkout's (the samples copied there), run as a shell would run them.
DOCS = ROOT / "docs" / "practitioners.md"
YOURS = {"agent/turns/turn-0193.sse": "streams/openai-chat/parallel_calls.sse",
         "agent/histories/history.json": "histories/openai-chat/valid.json"}


def _documented() -> list[tuple[str, int]]:
    """The offline `keel-lab` lines of the install section, each with its documented exit code
    (`# exit N`; 0 when it says none)."""
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## Installing it elsewhere"):text.index("## Using the package")]
    lines = [line for line in section.splitlines()
             if line.startswith("keel-lab ") and not line.startswith("keel-lab record")]
    return [(line.split("  #")[0].strip(), int(line.split("# exit ")[1][0])
             if "# exit " in line else 0) for line in lines]


def test_the_install_section_shows_commands_on_files_outside_the_checkout():
    documented = _documented()
    assert len(documented) >= 3
    assert all("~/" in line or " /" in line for line, _ in documented)
    assert "pip install 'keel-lab[record]'" in DOCS.read_text(encoding="utf-8")


def test_the_documented_commands_run_on_files_outside_the_checkout(fresh):
    home = fresh.empty / "home"
    for mine, sample in YOURS.items():
        (home / mine).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(fresh.data / sample, home / mine)
    env = {**_outside(), "HOME": str(home),
           "PATH": f"{fresh.venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    for line, code in _documented():
        done = subprocess.run(["/bin/sh", "-c", line], cwd=fresh.empty, env=env,
                              capture_output=True, text=True, timeout=120)
        assert (done.returncode, done.stderr) == (code, ""), line
        assert done.stdout, line
