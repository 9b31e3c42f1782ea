from keel_lab.course import data


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
