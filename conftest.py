"""Markers for the whole test run, the way minitorch marks its tasks: `pytest -m ch4` runs
chapter 4's rule, check and notebook tests; `-m "not slow"` leaves out the hub, the browser,
nbgrader and the fuzzers. A test file belongs to the chapters named here; the exercise table in
test_checks.py goes by the exercise a test is about; a notebook by its file name."""

from __future__ import annotations

import re
from typing import Any

import pytest

CHAPTERS = {
    "ch1": ("test_history", "test_history_findings", "test_every_call_answered", "test_protocol",
            "test_conversation", "test_fuzz_histories", "test_diagrams", "test_conversions",
            "test_langchain_tools", "test_checks_accumulate"),
    "ch2": ("test_pairing", "test_checks_count_in_order", "test_checks_pair_results",
            "test_trials", "test_sampling", "test_clock"),
    "ch3": ("test_batching", "test_executor", "test_tools"),
    "ch4": ("test_streaming", "test_properties", "test_rechunking", "test_checks_read_turn"),
    "ch5": ("test_partial_success", "test_runner", "test_model", "test_checks_status_history"),
    "ch6": ("test_faults", "test_checks_collect_batch"),
    "ch7": ("test_record", "test_real_recordings", "test_chat_fast_path", "test_hostile_issue21",
            "test_real_shapes_chat", "test_real_shapes_gemini",
            "test_real_shapes_anthropic_responses", "test_server_tools", "test_accumulators",
            "test_arguments", "test_cli_wire", "test_diagnosis", "test_expected_calls",
            "test_fuzz_streams", "test_gemini", "test_leaks", "test_naive_clients",
            "test_openai_adapter", "test_provider_experiments", "test_quirk_sources",
            "test_quirks_arguments", "test_quirks_chat", "test_quirks_findings",
            "test_quirks_responses_anthropic", "test_replay", "test_responses_messages",
            "test_stream_findings", "test_switches", "test_checks_providers"),
    "ch8": ("test_production", "test_graph", "test_screen", "test_store",
            "test_checks_calls_to_resume"),
}
EXERCISES = {"accumulate": "ch1", "read_turn": "ch4",
             "answer_all": "ch1", "count_in_order": "ch2", "pair_results": "ch2",
             "make_batches": "ch3", "is_executable": "ch4", "status_history": "ch5",
             "collect_batch": "ch6", "answer_responses": "ch7",
             "calls_to_resume": "ch8"}
# Minutes, not seconds: a real hub, a browser, nbgrader, the fuzzers, installing a wheel.
SLOW = ("test_classroom_hub", "test_site", "test_nbgrader", "test_fuzz_histories",
        "test_fuzz_streams", "test_grading_fuzz", "test_install", "test_make_check",
        "test_grading_grade")
_FILE_CHAPTER = {name: chapter for chapter, names in CHAPTERS.items() for name in names}
_NOTEBOOK = re.compile(r"0([1-9])[a-z]?_\w+\.ipynb$")  # 07a_x: chapter 7's deeper notebook


def pytest_configure(config: Any) -> None:
    for chapter in CHAPTERS:
        config.addinivalue_line("markers", f"{chapter}: chapter {chapter[2:]}'s tests")
    config.addinivalue_line("markers", "slow: minutes-long tests (hub, browser, nbgrader, fuzz)")


def pytest_collection_modifyitems(items: list[Any]) -> None:
    for item in items:
        stem = item.path.stem
        notebook = _NOTEBOOK.search(item.path.name)
        chapter = (f"ch{notebook.group(1)}" if notebook else _FILE_CHAPTER.get(stem)
                   or next((c for e, c in EXERCISES.items() if e in item.name), None))
        if chapter:
            item.add_marker(getattr(pytest.mark, chapter))
        if stem in SLOW:
            item.add_marker(pytest.mark.slow)
