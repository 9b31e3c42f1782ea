"""One public face per package, httpx's way: `keel_lab`, `keel_lab.providers`, `keel_lab.course`
and `keel_cli` are what notebooks import; every other module has a private name; and every path
a learner's saved notebook imported before the modules took those names still works."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import keel_cli
import keel_lab
import keel_lab.course
import keel_lab.providers
from keel_lab._legacy import MOVED

ROOT = Path(__file__).resolve().parents[2]
FACES = {"keel_lab": keel_lab, "keel_lab.providers": keel_lab.providers,
         "keel_lab.course": keel_lab.course, "keel_cli": keel_cli}
# Every keel_lab import of the notebooks before the faces (the saved copies of that time):
# module -> the names imported from it
SAVED_COPIES = {
    "keel_lab.cli": ["main"],
    "keel_lab.core.clock": ["now"],
    "keel_lab.core.executor": ["RunCall"],
    "keel_lab.core.messages": ["AssistantMessage", "UserMessage"],
    "keel_lab.core.pairing": ["Result", "by_call_id", "position_over_completion",
                              "position_over_gather", "position_with_skip"],
    "keel_lab.core.streaming": ["StreamAssembler", "ToolCallDelta", "assemble", "cancel_after"],
    "keel_lab.course": ["data"],
    "keel_lab.course.checks": ["check"],
    "keel_lab.course.diagrams": ["message_format", "turn_pipeline"],
    "keel_lab.course.experiments.accumulators": ["anthropic_sdk_calls", "comparison_report"],
    "keel_lab.course.experiments.batching": ["timeline"],
    "keel_lab.course.experiments.block_close": ["block_close", "call_boundaries"],
    "keel_lab.course.experiments.faults": ["eager_executions", "observe",
                                           "zip_over_completion"],
    "keel_lab.course.experiments.naive_clients": ["naive_clients"],
    "keel_lab.course.experiments.pairing": ["calls_sweep", "exceptions", "gather_siblings",
                                            "pairing", "spread_sweep"],
    "keel_lab.course.experiments.partial_success": ["outcome_mix", "partial_success"],
    "keel_lab.course.experiments.production": ["crash_and_resume", "crashed_log",
                                               "event_store", "rendering", "scheduling",
                                               "screen"],
    "keel_lab.course.experiments.providers": ["STREAMS", "quirks_report", "recordings_report",
                                              "response_items", "stream_report",
                                              "tool_message_fields"],
    "keel_lab.course.experiments.streaming": ["bad_sibling", "cancellation", "chunk_table"],
    "keel_lab.course.explorers": ["batching_explorer", "pairing_explorer"],
    "keel_lab.course.i18n": ["set_language"],
    "keel_lab.course.notebook": ["show"],
    "keel_lab.course.plots": ["plot", "stream_plot"],
    "keel_lab.course.progress": ["show_progress"],
    "keel_lab.course.scenarios": ["PARTIAL", "offline_stream", "scenarios", "slow_first",
                                  "turn_requests"],
    "keel_lab.providers.anthropic_messages": ["to_anthropic", "validate_anthropic"],
    "keel_lab.providers.diagnosis": ["diagnose_file", "read_stream"],
    "keel_lab.providers.gemini_messages": ["from_gemini"],
    "keel_lab.providers.langchain_messages": ["from_langchain", "to_langchain"],
    "keel_lab.providers.langchain_tools": ["to_langchain_tool"],
    "keel_lab.providers.openai_adapter": ["OpenAIChatAdapter"],
    "keel_lab.providers.replay": ["ReplayServer"],
    "keel_lab.providers.switches": ["anthropic_request", "anthropic_results",
                                    "openai_chat_request"],
}

pytestmark = pytest.mark.lab_wide


def notebook_imports() -> list[tuple[str, str]]:
    found = []
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            lines = "".join(cell["source"]).splitlines()
            code = "\n".join("" if line.lstrip().startswith(("!", "%")) else line
                             for line in lines)
            for node in ast.walk(ast.parse(code)):
                if isinstance(node, ast.ImportFrom) and node.module:
                    found.append((path.relative_to(ROOT).as_posix(), node.module))
                elif isinstance(node, ast.Import):
                    found += [(path.relative_to(ROOT).as_posix(), a.name) for a in node.names]
    return found


def test_notebooks_import_through_the_faces_only() -> None:
    through = [(nb, module) for nb, module in notebook_imports()
               if module.startswith("keel_") and module not in FACES]
    assert through == []


@pytest.mark.parametrize("face", FACES)
def test_every_name_of_a_face_is_there(face: str) -> None:
    module = FACES[face]
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == []
    assert set(module.__all__) <= set(dir(module))


def test_the_lesson_is_on_the_front_face() -> None:
    for name in ("Result", "by_call_id", "position_over_gather", "position_over_completion",
                 "position_with_skip", "assemble", "readiness", "make_batches", "run_status",
                 "validate_history", "LabError", "Said"):
        assert name in keel_lab.__all__, name


def test_every_other_module_has_a_private_name() -> None:
    public = []
    for package in ("keel_lab", "keel_cli"):
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts).removesuffix(".__init__")
            if name not in FACES and not any(p.startswith("_") and p != "__init__"
                                             for p in parts[1:]):
                public.append(name)
    assert public == []


def test_import_keel_lab_loads_no_course_and_no_provider() -> None:
    probe = ("import json, sys, keel_lab; print(json.dumps(sorted(m for m in sys.modules "
             "if m.startswith(('keel_lab.course.', 'keel_lab.providers.', 'keel_cli', "
             "'matplotlib', 'openai', 'anthropic')))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", probe], check=True, cwd=ROOT,
                                       capture_output=True, text=True).stdout)
    assert loaded == []


@pytest.mark.parametrize("module", SAVED_COPIES)
def test_a_saved_copy_imports_from_the_old_paths(module: str) -> None:
    old = importlib.import_module(module)
    for name in SAVED_COPIES[module]:
        value = getattr(old, name)
        face = next((f for f in FACES.values() if name in getattr(f, "__all__", ())), None)
        if face is not None:  # the very object the face offers, never a copy
            assert value is getattr(face, name), (module, name)


@pytest.mark.parametrize("old", MOVED)
def test_every_old_path_still_imports(old: str) -> None:
    assert importlib.import_module(old).__name__ == MOVED[old]


def test_an_old_path_is_the_module_itself() -> None:
    import keel_lab.core.streaming as old  # type: ignore[import-not-found]

    import keel_lab._core.streaming as new

    assert old is new
    assert new.__spec__ is not None and new.__spec__.name == "keel_lab._core.streaming"
