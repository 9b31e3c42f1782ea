import os

import pytest

from keel_lab import incident_tools

# The checks the tests run (and the kernels they start) keep no learner's progress file
os.environ["KEEL_PROGRESS"] = "off"


@pytest.fixture
def raising(monkeypatch):
    """Checks as `make check`, nbval and nbgrader run them: one that does not pass fails."""
    monkeypatch.setenv("KEEL_CHECKS", "raise")


@pytest.fixture
def tools():
    return incident_tools()
