"""The README and docs/*.md link each other, and the files and sections they name, so that a reader
who follows a link lands: every relative link names a file of the checkout, and a `#section` one
of that page's headings (as GitHub makes their anchors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, blanks as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {anchor(m) for m in re.findall(r"^#+ (.*)$", text, re.M)}


def broken(path: Path) -> list[str]:
    found = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue  # another site's page
            file, _, section = target.partition("#")
            where = (path.parent / file).resolve() if file else path
            if not where.exists() or (section and where.suffix == ".md"
                                      and section not in anchors(where)):
                found.append(f"{path.relative_to(ROOT)}:{n}: {target}")
    return found


def test_the_anchor_is_githubs():
    assert anchor("Grading a class: `keel-course grade`") == "grading-a-class-keel-course-grade"
    assert anchor("The instructor's guide") == "the-instructors-guide"


def test_every_relative_link_lands():
    assert [b for path in DOCUMENTS for b in broken(path)] == []


def test_the_readme_links_a_page_for_each_reader():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in ("learners", "instructors", "practitioners", "cli", "authors", "performance"):
        assert f"](docs/{page}.md)" in readme, page
