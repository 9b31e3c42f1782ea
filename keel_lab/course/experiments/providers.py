"""Real providers' streams: each format's fragments, and what the quirk policies decide."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.course import data
from keel_lab.course.experiments.report import Report
from keel_lab.course.experiments.streaming import chunk_rows
from keel_lab.providers.diagnosis import diagnose, diagnose_file, read_stream, to_events
from keel_lab.providers.streams.diagnostics import Diagnostics

STREAMS = data.DATA_DIR / "streams"


def stream_names(folder: str = "") -> list[str]:
    """Recorded streams (relative to keel_lab/data/streams), optionally of one folder."""
    return sorted(str(p.relative_to(STREAMS)) for p in data.path("streams", folder).rglob("*.*"))


def stream_report(name: str) -> Report:
    """The chunk table of a recorded stream, through its format's converter: name, arguments,
    parses?, executable? after every event - the same view as the lab's own streams."""
    fmt, records = read_stream(data.path("streams", name))
    diagnosis = diagnose(records, fmt)
    rows = chunk_rows(to_events(records, fmt, Diagnostics()))
    first = next((r["chunk"] for r in rows if r["executable"]), None)
    findings = [f"format {fmt}: {len(records)} wire events; "
                f"{sum(c.executable for c in diagnosis.calls)} of {len(diagnosis.calls)} "
                "calls may run"]
    findings += [f"{d.action} {d.quirk}: {d.message}" for d in diagnosis.diagnostics]
    return Report("streaming", {"stream": name, "format": fmt},
                  {"events": len(records), "first_executable_chunk": first}, rows, findings)


def quirks_report() -> Report:
    """Every quirk stream: what was noticed, what the policy did, how many calls may run."""
    rows, refused = [], 0
    for name in stream_names("quirks"):
        d = diagnose_file(data.path("streams", name))
        noticed = sorted({f"{x.quirk} ({x.action})" for x in d.diagnostics})
        may_run = sum(c.executable for c in d.calls)
        refused += may_run < len(d.calls)
        rows.append({"stream": Path(name).stem, "noticed": ", ".join(noticed) or "-",
                     "calls": len(d.calls), "may_run": may_run})
    return Report("quirks", {"streams": len(rows)}, {}, rows,
                  [f"{len(rows) - refused} streams tolerated with the exact calls, {refused} "
                   "refused: no wrong call runs"])


def response_items(name: str) -> list[dict[str, Any]]:
    """The `output` items of a recorded Responses stream, as its `response.output_item.done`
    events gave them, in `output_index` order."""
    fmt, records = read_stream(data.path("streams", name))
    if fmt != "openai-responses":
        raise LabError(f"{name} is a {fmt} stream, not a Responses stream")
    done = [r for r in records if isinstance(r, dict) and r.get("type") ==
            "response.output_item.done"]
    return [r["item"] for r in sorted(done, key=lambda r: r["output_index"])]


# What each field of a tool message means, and its name in the lab and in LangChain.
TOOL_MESSAGE_FIELDS = [
    ("which call it answers", "tool_call_id", "tool_call_id"),
    ("the tool's name (informative; the id pairs)", "name", "name"),
    ("the result the model reads", "content", "content"),
    ("the message kind", "role ('tool')", "type ('tool')"),
    ("success or error", "- (the outcome's code; the error JSON in content)", "status"),
    ("data for the program, not the model", "-", "artifact"),
    ("the message's own id", "-", "id"),
]


def tool_message_fields() -> Report:
    """The lab's `ToolMessage` beside langchain-core's, read from the real classes."""
    from dataclasses import fields

    from langchain_core.messages import ToolMessage as LCToolMessage

    from keel_lab.core.messages import ToolMessage

    lab = {f.name for f in fields(ToolMessage)}
    lc = set(LCToolMessage.model_fields)
    rows = []
    for meaning, ours, theirs in TOOL_MESSAGE_FIELDS:
        if ours.split()[0] not in lab | {"-"} or theirs.split()[0] not in lc:
            raise LabError(f"field table out of date: {ours} / {theirs}")
        rows.append({"meaning": meaning, "keel_lab": ours, "langchain_core": theirs})
    rest = sorted(lc - {t.split()[0] for _, _, t in TOOL_MESSAGE_FIELDS})
    return Report("tool_message_fields", {}, {"langchain_only": rest}, rows,
                  [f"langchain-core also has: {', '.join(rest)}"])
