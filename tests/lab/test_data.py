import json
from pathlib import Path

import pytest

from keel_cli._command import main
from keel_lab import LabError, incident_tools
from keel_lab.course import data, fonts
from keel_lab.course._experiments.providers import stream_names, stream_report

pytestmark = pytest.mark.lab_wide


def test_incidents_data_set():
    incidents = data.incidents()
    assert len(incidents) >= 12
    assert list(incidents)[:2] == ["INC-001", "INC-002"]
    fields = {"id", "service", "title", "severity", "status", "started_at", "summary"}
    assert all(set(i) == fields for i in incidents.values())
    assert {i["service"] for i in incidents.values()} <= set(data.services())


def test_every_service_with_logs_has_log_lines():
    for name, s in data.services().items():
        assert (name in data.logs()) == s["logs_available"]


@pytest.fixture
def empty_install(tmp_path, monkeypatch):
    """`keel_lab/data` as an install that lost its package data; caches cleared around it."""
    data.cache_clear()
    monkeypatch.setattr(data, "root", lambda: tmp_path)
    yield tmp_path
    data.cache_clear()


def test_a_missing_data_set_is_an_incomplete_install(empty_install):
    with pytest.raises(LabError, match=r"keel_lab/data/incidents\.json is missing .*"
                                       r"install is incomplete"):
        data.incidents()


def test_incident_tools_refuse_to_build_without_their_data(empty_install):
    """Not a toolset whose every call would end as tool_internal_error."""
    for name in ("incidents", "services"):
        (empty_install / f"{name}.json").write_text(json.dumps([]))
    with pytest.raises(LabError, match=r"keel_lab/data/logs\.json is missing"):
        incident_tools()


def test_the_cli_says_so_with_exit_2_instead_of_a_failed_scenario(empty_install, capsys):
    assert main(["experiments", "partial"]) == 2
    err = capsys.readouterr().err
    assert "keel_lab/data/incidents.json is missing" in err and "install is incomplete" in err


def test_missing_streams_are_an_incomplete_install_too(empty_install):
    with pytest.raises(LabError, match=r"keel_lab/data/streams/quirks is missing"):
        stream_names("quirks")
    with pytest.raises(LabError, match=r"keel_lab/data/streams/openai-chat/one_call\.sse is"):
        stream_report("openai-chat/one_call.sse")


def test_path_returns_what_exists():
    assert data.path("streams", "quirks").is_dir()
    assert data.path("scripts", "two_lookups.json") == data.root() / "scripts/two_lookups.json"


def test_the_data_is_the_package_keel_lab_data_read_from_the_checkout():
    """The editable install (`make install`) maps keel_lab.data to the repository's data/."""
    assert data.root() == Path(__file__).resolve().parents[2] / "data"
    assert data.path("fonts", fonts.FONT).is_file()


def test_a_lost_data_package_is_an_incomplete_install(monkeypatch):
    monkeypatch.setattr(data, "PACKAGE", "keel_lab.no_such_data")
    monkeypatch.setattr(data, "root", data.root.__wrapped__)  # uncached
    with pytest.raises(LabError, match=r"the package keel_lab\.no_such_data is missing: the "
                                       r"keel-lab install is incomplete"):
        data.path("incidents.json")
