"""How big the lab is and how much of it a learner's import loads.

Lines per package and folder (every line of every .py file), and for each entry point the
lines of the packages' modules it loads in a fresh interpreter, plus any heavy tool it pulls in
(the instructor's package, JupyterHub, nbgrader, Sphinx, matplotlib).

Run: .venv/bin/python bench/package_size.py
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("keel_lab", "keel_checks", "keel_cli", "keel_course")
HEAVY = ("keel_course", "jupyterhub", "nbgrader", "sphinx", "matplotlib")
SAMPLE = "data/streams/openai-chat/parallel_calls.sse"
ENTRY_POINTS = {
    "import keel_lab": "import keel_lab",
    "keel-lab assemble": (
        "import contextlib, io, sys; from keel_cli._command import main\n"
        "with contextlib.redirect_stdout(io.StringIO()): main(['assemble', sys.argv[1]])"),
    "check": "from keel_checks import check",
}
PROBE = """
import json, sys
{code}
print(json.dumps(sorted((n, getattr(m, '__file__', None) or '') for n, m in sys.modules.items())))
"""


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def sizes() -> dict[str, int]:
    out: Counter[str] = Counter()
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            n = lines(path)
            out[package] += n
            folder = path.parent.relative_to(ROOT).as_posix()
            if folder != package:
                out[folder] += n
    return dict(out)


def closure(code: str) -> tuple[int, list[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE.format(code=code), str(ROOT / SAMPLE)],
                          capture_output=True, text=True, check=True, cwd=ROOT)
    modules = json.loads(done.stdout.splitlines()[-1])
    total = sum(lines(Path(f)) for n, f in modules
                if n.split(".")[0] in PACKAGES and f.endswith(".py"))
    heavy = sorted({n.split(".")[0] for n, _ in modules if n.split(".")[0] in HEAVY})
    return total, heavy


def main() -> None:
    for name, n in sizes().items():
        print(f"{name:<40} {n:>6} lines")
    for label, code in ENTRY_POINTS.items():
        total, heavy = closure(code)
        print(f"{label:<40} loads {total:>6} lines of the packages; heavy: "
              + (", ".join(heavy) or "none"))


if __name__ == "__main__":
    main()
