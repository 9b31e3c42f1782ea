"""The incident-response tools the chapters use, backed by the lab's data sets (`keel_lab.data`)."""

from __future__ import annotations

from typing import Any

from keel_lab._core.tools import Tool, ToolError, Toolset
from keel_lab._i18n import _
from keel_lab.course import _data as data

_ID = {"type": "string", "pattern": "^INC-[0-9]{3}$", "description": "e.g. INC-001"}
_SERVICE = {"type": "string", "minLength": 1, "description": "service name, e.g. auth-api"}


def _object(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required),
            "additionalProperties": False}


def lookup_incident(incident_id: str) -> dict[str, Any]:
    incident = data.incidents().get(incident_id)
    if incident is None:
        raise ToolError("incident_not_found", _("there is no incident {incident_id}")
                        .format(incident_id=incident_id))
    return dict(incident)


def get_service_status(service: str) -> dict[str, Any]:
    s = data.services().get(service)
    if s is None:
        raise ToolError("service_not_found", _("there is no service {service}")
                        .format(service=service))
    return {"service": service, "status": s["status"], "version": s["version"]}


def search_logs(service: str, query: str = "") -> dict[str, Any]:
    get_service_status(service)
    if not data.services()[service]["logs_available"]:  # the lab's deterministic internal failure
        raise ConnectionError(_("log index for {service} is unreachable").format(service=service))
    lines = [line for line in data.logs().get(service, []) if query.lower() in line.lower()]
    return {"service": service, "query": query, "lines": lines}


def incident_tools() -> Toolset:
    """A fresh toolset; the write tools keep their effects in this instance only."""
    data.require()  # a missing data set is a broken install, not a tool's internal error
    notes: dict[str, list[str]] = {}
    restarts: list[str] = []

    def add_incident_note(incident_id: str, note: str) -> dict[str, Any]:
        lookup_incident(incident_id)
        notes.setdefault(incident_id, []).append(note)
        return {"incident_id": incident_id, "notes": len(notes[incident_id])}

    def restart_service(service: str) -> dict[str, Any]:
        get_service_status(service)
        restarts.append(service)
        return {"service": service, "restarted": True, "restarts": restarts.count(service)}

    incident_schema = _object({
        "id": _ID, "service": {"type": "string"}, "title": {"type": "string"},
        "severity": {"enum": ["low", "medium", "high", "critical"]},
        "status": {"type": "string"}, "started_at": {"type": "string"},
        "summary": {"type": "string"}}, "id", "service", "title", "severity", "status")
    return Toolset.of([
        Tool("lookup_incident", "Look up one incident by id.",
             _object({"incident_id": _ID}, "incident_id"), lookup_incident,
             concurrency_safe=True, output_schema=incident_schema, blocking=False),
        Tool("get_service_status", "Current status of a service.",
             _object({"service": _SERVICE}, "service"), get_service_status,
             concurrency_safe=True, blocking=False),
        Tool("search_logs", "Recent log lines of a service, filtered by a query.",
             _object({"service": _SERVICE, "query": {"type": "string"}}, "service"),
             search_logs, concurrency_safe=True, blocking=False),
        Tool("add_incident_note", "Append a note to an incident (writes the incident).",
             _object({"incident_id": _ID, "note": {"type": "string", "minLength": 1}},
                     "incident_id", "note"), add_incident_note, blocking=False),
        Tool("restart_service", "Restart a service (side effect, needs a person's approval).",
             _object({"service": _SERVICE}, "service"), restart_service,
             requires_approval=True, blocking=False),
    ])
