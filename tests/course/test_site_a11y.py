"""The course site has no accessibility violation axe-core finds: every page of both editions
(English and Chinese, as `make site` builds them, into a temporary folder) and the first page,
opened in the headless Chromium the other browser tests use, axe-core's rules run in each.

axe-core comes from npm, pinned by tests/course/a11y/package-lock.json; `make install` puts it
in tests/course/a11y/node_modules with `npm ci`."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from browser import chromium, sync_playwright

pytestmark = [pytest.mark.lab_wide, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "tests" / "course" / "a11y" / "node_modules" / "axe-core" / "axe.min.js"

# Each violating node as "rule (impact): its selector: its HTML", cut to a line.
RUN = """async () => (await axe.run(document, {resultTypes: ["violations"]})).violations
    .flatMap(rule => rule.nodes.map(node =>
        `${rule.id} (${rule.impact}): ${node.target.join(" ")}: ${node.html.slice(0, 120)}`))"""


def site_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("site_script_a11y", ROOT / "scripts" / "site.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def test_no_page_of_the_site_has_an_axe_violation(tmp_path: Path) -> None:
    if not AXE.is_file():
        pytest.skip("no axe-core: run `make install` with npm on the PATH (sudo apt-get install "
                    "npm) to check the site's accessibility")
    executable = chromium()
    site = site_script()
    out = tmp_path / "site"
    assert [e.code for e in site.build(out)] == ["en", "zh"]
    pages = sorted(out.rglob("*.html"))
    found: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True)
        try:
            page = browser.new_context().new_page()
            for path in pages:
                page.goto(path.as_uri())
                page.add_script_tag(path=str(AXE))
                found += [f"{path.relative_to(out)}: {line}" for line in page.evaluate(RUN)]
        finally:
            browser.close()
    assert len(pages) > 30
    assert found == [], f"{len(found)} nodes violate axe-core's rules:\n" + "\n".join(found)
