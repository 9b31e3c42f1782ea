"""The quirk table (docs/stream-quirks.md, linked from the README) cites a file of the repository,
with a public report per quirk (or, for a policy no public report asked for, the documentation or
standard it rests on)."""

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.ch7

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("keel_lab", "keel_checks", "keel_cli", "keel_course")
SOURCES = "docs/stream-quirks-sources.md"
QUIRKS = "docs/stream-quirks.md"
REPORT = re.compile(r"https://(github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+|ollama\.com/"
                    r"|platform\.openai\.com/docs/|platform\.claude\.com/docs/|ai\.google\.dev/"
                    r"|www\.rfc-editor\.org/rfc/|html\.spec\.whatwg\.org/)")


def _table(path: str, header: str) -> dict[str, str]:
    """The rows of the markdown table whose header starts with `header`: first cell -> rest."""
    text = (ROOT / path).read_text(encoding="utf-8")
    rows = {}
    for line in text[text.index(header):].splitlines()[2:]:
        if not line.startswith("| "):
            break
        first, rest = line[2:].split(" | ", 1)
        rows[first] = rest
    return rows


def test_the_readme_links_the_table_and_the_table_cites_the_sources_in_the_repository():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = (ROOT / QUIRKS).read_text(encoding="utf-8")
    assert f"]({QUIRKS})" in readme
    assert "](stream-quirks-sources.md)" in table  # relative: the two live side by side in docs/
    assert "shared/reference" not in readme + table


def test_every_quirk_of_the_table_has_its_reports():
    quirks = _table(QUIRKS, "| quirk (where each was reported")
    cited = _table(SOURCES, "| quirk (stream-quirks.md's table)")
    assert len(quirks) >= 14
    assert sorted(cited) == sorted(quirks)
    assert [q for q, reports in cited.items() if not REPORT.search(reports)] == []


def test_the_code_cites_files_of_the_repository_only():
    """Docstrings and comments point at docs/ and the README, never at a folder outside the
    repository (the course's reference collection stays out of the code)."""
    outside = re.compile(r"shared/reference|\.\./shared|stream-quirks-more\.md|\b000_\w+\.txt")
    cited = [f"{path.relative_to(ROOT)}:{n}" for folder in (*PACKAGES, "scripts")
             for path in sorted((ROOT / folder).rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if outside.search(line)]
    assert cited == []
