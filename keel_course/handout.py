"""The handout a class receives: the learner edition, the package it imports, requirements and a
README for students - and no solution anywhere, which `find_leaks` proves before it is given out.
The packages are keel_lab, with its data/, keel_checks (the exercises' checks) and keel_cli
(the `keel-lab` command, whose `progress` a learner runs): the handout's pyproject.toml is the
repository's without keel_course (`keel_course.pyproject`), so `pip install .` gives a student
`keel-lab` and nothing of the instructor's tools. The notebooks are all the course's: the
chapters and the optional deeper notebooks beside them (`00_asyncio_primer`, `04a_...`), which
the chapters link.

A handout is in one language: English is made from notebooks/solutions/, Chinese ("zh") from the
Chinese solutions notebooks/zh/solutions/ (built by `make notebooks` from the English ones and
the catalogs in locale/), with its glossary and the translated learner text; either way the
student's folder is notebooks/, and the Chinese README checks answers with `KEEL_LAB_LANG=zh`,
so `make check`'s summary is Chinese too. The search for solution lines covers both languages'
solutions (their code cells are the same; a translated one could hold an answer in a comment).

A solution line is a line between `### BEGIN SOLUTION` and `### END SOLUTION` in an exercise
cell of `notebooks/solutions/`, or a prediction cell's line (chapter 6's letters), compared with
whitespace collapsed and only when at least `MIN_LINE` characters long: shorter lines are idioms
the lab's own code shares (`except Exception as exc:`, `rng = random.Random(seed)`,
`tool = tools.get(request.name)`), so matching them would flag the package, not a leak.
A line occurs in a file when it equals one of the file's lines or one of the lines of any string
in it when it is JSON (a notebook's sources, outputs and metadata); a zip is searched member by
member. Chapter 6's observe cells are not answers: the faults they ask for are the lab's own
fault experiment (`keel_lab/course/_experiments/faults.py`), which the chapters show.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keel_cli._cells import source, tags
from keel_course import translation
from keel_course.checkout import Checkout
from keel_course.editions import (
    BEGIN,
    END,
    Notebook,
    learner_edition,
    notebook_text,
    read_notebook,
    solution_paths,
)
from keel_course.pyproject import learner_pyproject
from keel_course.sources import check_outside, failure, reading
from keel_lab._core.errors import LabError
from keel_lab._i18n import N_

MANIFEST = "handout.json"  # marks a folder as a handout, so a rebuild may replace it
MIN_LINE = 32
# What a student installs: the package's runtime, the SDKs chapter 7 uses, Jupyter and the
# notebook tests of `make check`; versions are taken from the repository's requirements.txt.
STUDENT_PACKAGES = ("jsonschema", "matplotlib", "tqdm", "babel", "openai", "langchain-core",
                    "anthropic", "pydantic-ai-slim", "httpx",
                    "jupyterlab", "ipywidgets", "ipykernel", "nbval", "nbclient", "nbformat",
                    "wcwidth", "pytest")
CHECK_COMMAND = ("pytest --nbval-lax --nbval-current-env --continue-on-collection-errors "
                 "--disable-plugin-autoload -p keel_checks.pytest_plugin -p nbval "
                 "-p no:cacheprovider --tb=no -rN -qq notebooks/*.ipynb")  # as make check
CHECK_ENV = {"en": "", "zh": "KEEL_LAB_LANG=zh "}  # the summary's language, as `make check` sets

README = {"en": f"""# keel-lab: parallel and streamed tool calls

A hands-on course in eight chapters and a capstone, each a Jupyter notebook, about what goes wrong
when a language model asks for several tool calls in one turn, and when those calls arrive as
streamed fragments; optional deeper notebooks beside the chapters (`02a_...`, `04a_...`, and an
asyncio primer, `00_...`) go further. Everything runs offline on your machine once it is installed.

## Install (once)

You need Python 3.11 or newer. In this folder:

```bash
python3 -m venv .venv
.venv/bin/pip install -r requirements.txt .
```

(On Windows: `py -m venv .venv`, then `.venv\\Scripts\\pip install -r requirements.txt .`)

## Open the course

```bash
.venv/bin/jupyter lab notebooks
```

Open the URL it prints, then `01_history.ipynb`, and work through the chapters in order, running
each notebook from the top (Run > Run All Cells); each chapter links the optional notebooks that
go with it. Words the chapters use are explained in `notebooks/glossary.md`.

## Check your answers

Each exercise is a cell with one function to write; the cell after it checks what your function
does and tells you what is still wrong. To check every exercise at once, from this folder:

```bash
.venv/bin/{CHECK_COMMAND}
```

It ends with one line per exercise (PASSED or NOT YET and a hint) and a table of your progress
over the whole course. The last cell of each chapter shows the same table: every check you run is
kept in `notebooks/.keel-progress.json`.

The solutions are not in this folder: try each exercise yourself, then ask your instructor.
""", "zh": f"""# keel-lab：并行与流式工具调用

一门由八章和一个综合项目组成的动手课程（每章一个 Jupyter notebook），讲语言模型在一轮中请求
多个工具调用、而这些调用又以流式片段到达时，会出什么问题；各章旁边的选读 notebook
（`02a_...`、`04a_...`，以及 asyncio 入门 `00_...`）讲得更深入。
安装之后，一切都在你自己的机器上离线运行。

## 安装（一次即可）

需要 Python 3.11 或更新版本。在这个文件夹中运行：

```bash
python3 -m venv .venv
.venv/bin/pip install -r requirements.txt .
```

（Windows 上：先 `py -m venv .venv`，再 `.venv\\Scripts\\pip install -r requirements.txt .`）

## 打开课程

```bash
.venv/bin/jupyter lab notebooks
```

打开它打印出的网址，再打开 `01_history.ipynb`，按顺序学习各章，每个 notebook 都从头运行
（Run > Run All Cells）；每一章都链接了与它配套的选读 notebook。各章用到的术语在
`notebooks/glossary.md` 中有解释。

## 检查你的答案

每个练习是一个单元格，里面有一个要你写的函数；它后面的单元格检查你的函数实际做了什么，并告诉
你还有哪里不对。要一次检查所有练习，在这个文件夹中运行：

```bash
{CHECK_ENV["zh"]}.venv/bin/{CHECK_COMMAND}
```

它的最后几行是每个练习一行（通过，或尚未通过和一条提示），前面是你在整个课程中的进度表。
每一章的最后一个单元格也显示这张表：你运行的每次检查都记录在 `notebooks/.keel-progress.json` 中。

这个文件夹里没有答案：先自己尝试每个练习，再去问你的老师。
"""}  # noqa: RUF001


def chapters(checkout: Checkout, language: str) -> tuple[list[Path], Path]:
    """The solution notebooks a handout in `language` is made from, and its glossary;
    `LabError` when that edition has not been built (or lacks a chapter)."""
    english = solution_paths(checkout)
    if language == "en":
        return english, checkout.notebooks / "glossary.md"
    folder = translation.edition(checkout, language)
    paths = [folder / "solutions" / p.name for p in english]
    missing = [p for p in [*paths, folder / "glossary.md"] if not p.is_file()]
    if missing:
        raise LabError("edition_not_built", N_("{path} is missing: build the {language} "
                                               "edition with `make notebooks` first"),
                       path=missing[0], language=language)
    return paths, folder / "glossary.md"


def learner(solution: Notebook, language: str, checkout: Checkout) -> Notebook:
    """A chapter's learner edition in `language` (its "Your progress" text translated by the
    checkout's catalogs)."""
    if language == "en":
        return learner_edition(solution)
    return translation.learner(solution, language, checkout.locale)


def learner_text(path: Path, language: str, checkout: Checkout) -> str:
    """The learner edition of the solution at `path`, as saved; `LabError` naming a file that
    is no notebook the course made (half-written, or a generated edition damaged since)."""
    with reading(path):
        return notebook_text(learner(read_notebook(path), language, checkout))


def build_handout(checkout: Checkout, out: Path, language: str = "en") -> Path:
    """Write the handout of `checkout` into the folder `out` and return it. `out` may be new,
    empty or a previous handout, which is replaced only once the new one is written in full and
    searched for solutions. `LabError` for an unknown language, a damaged solution notebook, a
    folder that holds anything a handout did not write, or a leak."""
    if language not in README:
        raise LabError("unknown_handout_language", N_("no handout in language {language!r}; "
                                                      "languages: {languages}"),
                       language=language, languages=", ".join(README))
    solutions, glossary = chapters(checkout, language)
    lines = solution_lines({*solution_paths(checkout), *solutions})
    previous = _replaceable(out, checkout)
    fresh = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".handout-", dir=out,
                                         ignore_cleanup_errors=True) as staging:
            _write(checkout, Path(staging), language, solutions, glossary)
            leaks = find_leaks(Path(staging), lines)
            if leaks:
                raise LabError("handout_leak", N_("the handout would give away a solution: "
                                                  "{leak}"), leak=leaks[0])
            _swap(out, previous, Path(staging))
    except OSError as exc:
        raise LabError("handout_unwritable", N_("cannot write the handout to {out}: {reason}"),
                       out=out, reason=failure(exc)) from exc
    finally:
        if fresh and not (out / MANIFEST).is_file():  # a folder made here that got no handout
            shutil.rmtree(out, ignore_errors=True)
    return out


def _replaceable(out: Path, checkout: Checkout) -> list[Path]:
    """The entries of `out` a build replaces: none of a new or empty folder, all of a previous
    handout (a folder whose MANIFEST lists every file in it); `LabError` for anything else,
    before anything is written."""
    check_outside(out, checkout)
    if not out.exists() and not out.is_symlink():
        return []
    try:
        if not out.is_dir():
            raise LabError("not_a_handout", N_("{out} exists and is not a handout: give a new "
                                               "or empty folder"), out=out)
        entries = sorted(out.iterdir())
        if not entries:
            return []
        listed = _listed(_read_manifest(out / MANIFEST))
        if listed is None:
            raise LabError("no_handout_manifest", N_("{out} exists and is not a handout (it "
                                                     "has no {manifest} of one): give a new or "
                                                     "empty folder"), out=out, manifest=MANIFEST)
        stray = next((f for f in _files(out) if f not in listed), None)
    except OSError as exc:
        raise LabError("folder_unreadable", N_("cannot read {path}: {reason}"),
                       path=out, reason=failure(exc)) from exc
    if stray is not None:
        raise LabError("stray_in_handout", N_("{out} exists and is not a handout: {stray} is "
                                              "not in its {manifest} (move it away, or give a "
                                              "new folder)"), out=out, stray=stray,
                       manifest=MANIFEST)
    return entries


def _read_manifest(path: Path) -> bytes:
    """The manifest's bytes; empty when there is no such file."""
    return path.read_bytes() if path.is_file() else b""


def _listed(manifest: bytes) -> set[str] | None:
    """The files a handout's manifest lists (itself included); None when it is not one."""
    try:
        value = json.loads(manifest)
    except (ValueError, RecursionError):
        return None
    if not (isinstance(value, dict) and set(value) == {"language", "files"}
            and isinstance(value["language"], str) and value["language"] in README
            and isinstance(value["files"], list)
            and all(isinstance(f, str) for f in value["files"])):
        return None
    return {*value["files"], MANIFEST}


def _files(folder: Path) -> Iterator[str]:
    """Every entry under `folder` that is not a folder (a link to one included), relative."""
    def fail(exc: OSError) -> None:
        raise exc

    for root, dirs, files in os.walk(folder, onerror=fail):
        for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(root, d)))]:
            yield Path(root, name).relative_to(folder).as_posix()


def _swap(out: Path, previous: list[Path], staging: Path) -> None:
    """The new handout in `staging` takes the place of the previous one's entries."""
    for entry in previous:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    for entry in sorted(staging.iterdir()):
        entry.replace(out / entry.name)


def _write(checkout: Checkout, out: Path, language: str, solutions: list[Path],
           glossary: Path) -> None:
    notebooks = out / "notebooks"
    notebooks.mkdir()
    for path in solutions:
        (notebooks / path.name).write_text(learner_text(path, language, checkout),
                                           encoding="utf-8")
    shutil.copy(glossary, notebooks / "glossary.md")
    # conftest: `make check`'s lines and progress (in the language KEEL_LAB_LANG names)
    shutil.copy(checkout.notebooks / "conftest.py", notebooks / "conftest.py")
    for folder in (checkout.package, checkout.cli, checkout.checks, checkout.data):
        shutil.copytree(folder, out / folder.name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (out / "pyproject.toml").write_text(learner_pyproject(
        (checkout.root / "pyproject.toml").read_text(encoding="utf-8")), encoding="utf-8")
    (out / "requirements.txt").write_text(student_requirements(
        (checkout.root / "requirements.txt").read_text(encoding="utf-8")), encoding="utf-8")
    (out / "README.md").write_text(README[language], encoding="utf-8")
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    (out / MANIFEST).write_text(json.dumps({"language": language, "files": files}, indent=1)
                                + "\n", encoding="utf-8")


def student_requirements(requirements: str) -> str:
    """The lines of requirements.txt that a student needs (`STUDENT_PACKAGES`)."""
    pinned: dict[str, str] = {}
    for line in requirements.splitlines():
        spec = line.split("#")[0].strip()
        name = re.match(r"[A-Za-z0-9_.-]+", spec)
        if name:
            pinned[name.group(0).lower()] = spec
    missing = [p for p in STUDENT_PACKAGES if p not in pinned]
    if missing:
        raise LabError("requirement_missing", N_("requirements.txt has no line for {package}"),
                       package=missing[0])
    return ("# What the course needs; install with the package itself:\n"
            "#   pip install -r requirements.txt .\n"
            + "".join(pinned[p] + "\n" for p in STUDENT_PACKAGES))


def zip_handout(folder: Path) -> Path:
    """`folder` as FOLDER.zip beside it, its files under `FOLDER/`, byte for byte the same for
    the same handout (sorted names, fixed dates and modes). It replaces only a zip of a handout
    (`check_zip`), and only once the new one is written."""
    named = check_zip(folder)
    target = named.with_name(named.name + ".zip")
    partial = target.with_name(f".{target.name}.partial")
    try:
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
            for path in sorted(p for p in folder.rglob("*") if p.is_file()):
                info = zipfile.ZipInfo(f"{named.name}/{path.relative_to(folder).as_posix()}",
                                       date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, path.read_bytes())
        partial.replace(target)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise LabError("cannot_write", N_("cannot write {path}: {reason}"),
                       path=target, reason=failure(exc)) from exc
    return target


def check_zip(folder: Path) -> Path:
    """`folder` by a name its zip can take (`.` by its real one); `LabError` when FOLDER.zip
    exists and is not a handout's zip (its members exactly those its manifest lists): that file
    is someone else's, and is never overwritten."""
    named = folder if folder.name not in ("", "..") else folder.resolve()
    target = named.with_name(named.name + ".zip")
    if not target.exists() and not target.is_symlink():
        return named
    prefix = f"{named.name}/"
    names: set[str] = set()
    try:
        with zipfile.ZipFile(target) as z:
            names = set(z.namelist())
            small = prefix + MANIFEST in names and z.getinfo(prefix + MANIFEST).file_size < 2**20
            listed = _listed(z.read(prefix + MANIFEST) if small else b"")
    except (OSError, zipfile.BadZipFile, ValueError, EOFError, NotImplementedError,
            RuntimeError, KeyError):  # not a zip, or one zipfile cannot read
        listed = None
    if listed is None or names != {prefix + f for f in listed}:
        raise LabError("not_a_handout_zip", N_("{target} exists and is not a zip of a "
                                               "handout: move it away, or give another OUT"),
                       target=target)
    return named


@dataclass(frozen=True)
class Leak:
    """A solution line found in a file of the handout."""

    file: str
    line: str

    def __str__(self) -> str:
        return f"{self.file} holds the solution line {self.line!r}"


def normalized(line: str) -> str:
    return " ".join(line.split())


def solution_lines(paths: Iterable[Path]) -> set[str]:
    """The telling solution lines of the solution notebooks at `paths` (see the module's doc)."""
    lines: set[str] = set()
    for path in paths:
        with reading(path):
            for cell in read_notebook(path)["cells"]:
                kind = tags(cell)
                if "exercise" in kind:
                    lines.update(_between_markers(source(cell)))
                elif "prediction" in kind:
                    lines.update(source(cell).splitlines())
    return {n for n in map(normalized, lines) if len(n) >= MIN_LINE}


def _between_markers(text: str) -> Iterator[str]:
    inside = False
    for line in text.splitlines():
        if line.strip() in (BEGIN, END):
            inside = line.strip() == BEGIN
        elif inside:
            yield line


def find_leaks(where: Path, lines: set[str]) -> list[Leak]:
    """Every solution line of `lines` found in a file under `where` (a folder or one file;
    zips are opened), as (file, line), in file order."""
    files = sorted(p for p in where.rglob("*") if p.is_file()) if where.is_dir() else [where]
    return [leak for path in files
            for leak in _leaks(path.relative_to(where).as_posix() if where.is_dir()
                               else path.name, path.read_bytes(), lines)]


def _leaks(name: str, data: bytes, lines: set[str]) -> list[Leak]:
    if data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                return [leak for member in sorted(z.namelist())
                        for leak in _leaks(f"{name}:{member}", z.read(member), lines)]
        except zipfile.BadZipFile:
            pass  # not a zip after all: searched as text below
    found = sorted({n for n in map(normalized, _text_lines(data)) if n in lines})
    return [Leak(name, line) for line in found]


def _text_lines(data: bytes) -> Iterator[str]:
    """A file's lines, and the lines of every string in it when it is JSON."""
    text = data.decode("utf-8", errors="replace")
    yield from text.splitlines()
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return
    for string in _strings(value):
        yield from string.splitlines()


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        if value and all(isinstance(item, str) for item in value):
            yield "".join(value)  # a notebook's source or text, however it is split
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
