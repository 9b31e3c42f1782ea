import pytest

from keel_lab import incident_tools


@pytest.fixture
def tools():
    return incident_tools()
