"""The live course in a real browser, Chinese edition: test_live_lab.py's tests on notebooks/zh/
(a module of its own so that `make test`'s two workers run the two editions side by side)."""

from test_live_lab import (  # noqa: F401 - collected and used here
    live,
    pytest_generate_tests,
    pytestmark,
    test_a_chapter_runs_clean_and_its_explorers_redraw,
    test_the_learners_lab_shows_no_instructor_tooling_and_asks_no_news,
)

EDITION = "zh"
