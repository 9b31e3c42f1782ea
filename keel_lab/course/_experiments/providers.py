"""Real providers' streams: each format's fragments, and what the quirk policies decide."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from keel_lab._core.errors import LabError
from keel_lab._core.streaming import Notice
from keel_lab._i18n import N_, _, language, listing
from keel_lab.course import _data as data
from keel_lab.course._experiments.report import Report
from keel_lab.course._experiments.streaming import chunk_rows
from keel_lab.providers._diagnosis import (
    Diagnosis,
    diagnose,
    diagnose_file,
    read_stream,
    to_events,
)

STREAMS = data.root() / "streams"  # the generated streams, for a chapter to list or open


def answer_stream() -> Path:
    """Chapter 7's replayed final answer, `openai-chat/answer.sse`, in the learner's language:
    the Chinese edition replays its Chinese twin (generated alike, data/zh/streams/)."""
    twin = data.root() / language() / "streams" / "openai-chat" / "answer.sse"
    return twin if twin.exists() else STREAMS / "openai-chat" / "answer.sse"


def stream_names(folder: str = "") -> list[str]:
    """Generated streams (relative to keel_lab/data/streams), optionally of one folder."""
    return sorted(str(p.relative_to(STREAMS)) for p in data.path("streams", folder).rglob("*.*"))


def stream_report(name: str) -> Report:
    """The chunk table of a recorded stream, through its format's converter (notices aside)."""
    fmt, records = read_stream(data.path("streams", name))
    diagnosis = diagnose(records, fmt)
    rows = chunk_rows(e for e in to_events(records, fmt) if not isinstance(e, Notice))
    first = next((r["chunk"] for r in rows if r["executable"]), None)
    findings = [_("format {format}: {events} wire events; {runnable} of {calls} calls may run")
                .format(format=fmt, events=len(records),
                        runnable=sum(c.executable for c in diagnosis.calls),
                        calls=len(diagnosis.calls))]
    findings += [_("{action} {quirk}: {message}").format(
                     action=_(ACTIONS.get(d.action, d.action)), quirk=d.quirk, message=d.message)
                 for d in diagnosis.diagnostics]
    return Report("streaming", {"stream": name, "format": fmt},
                  {"events": len(records), "first_executable_chunk": first}, rows, findings)


# What a shape bends, read from the words of its recording's name (each is named after its
# quirk); the first group with a matching word wins ("call_in_text" is a leak, not an id
# shape). The groups keep chapter 7's plot readable as shapes are added. A group's name is
# data (English); a table or a plot shows it translated.
GROUP_WORDS = [
    (N_("content leaks"), {"leak", "leaked", "text", "tag"}),
    (N_("name"), {"name", "names"}),
    (N_("index and id"), {"index", "indices", "id", "ids", "call", "interleaved", "drift",
                          "drifting", "identical"}),
    (N_("framing and finish"), {"finish", "truncated", "usage", "type", "length", "choices",
                                "done", "parallel", "burst"}),
    (N_("arguments text"), {"arguments", "utf8", "escape", "escapes", "snapshots", "snapshot",
                            "repeat", "repeated", "packed", "parameterless", "control", "key",
                            "keys", "surrogate"}),
]
GROUP_ORDER = (N_("ordinary"), N_("index and id"), N_("name"), N_("arguments text"),
               N_("framing and finish"), N_("content leaks"), N_("other shapes"),
               N_("other formats"))  # as tables and plots show them
QUIRK_FOLDERS = ("quirks", "token_limit")
POLICIES = ("tolerated", "reported", "refused")
# a policy, or a notice's action, as a table or a finding shows it
ACTIONS = {"tolerated": N_("tolerated"), "reported": N_("reported"), "refused": N_("refused")}


def shape_group(name: str) -> str:
    """The group of a stream's shape: what it bends; "ordinary" for the Chat Completions
    streams as OpenAI documents them, "other formats" for the other four formats, "real
    recording" for a stream a provider sent (data/recordings/)."""
    folder, stem = name.split("/")[0], Path(name).stem
    if folder == "recordings":
        return N_("real recording")
    if folder == "openai-chat":
        return N_("ordinary")
    if folder not in QUIRK_FOLDERS:
        return N_("other formats")
    words = set(stem.split("_")) | ({"finish"} if folder == "token_limit" else set())
    return next((group for group, keys in GROUP_WORDS if words & keys), N_("other shapes"))


def policy(d: Diagnosis) -> str:
    """A recording's policy: refused, reported (shown to the user, nothing runs) or tolerated."""
    if not d.ok or any(x.action == "refused" for x in d.diagnostics):
        return "refused"
    return "reported" if any(x.action == "reported" for x in d.diagnostics) else "tolerated"


def recordings_report() -> Report:
    """Every turn recorded from a live API (recordings/SOURCES.json): its model, its calls, and
    what the lab's policy decides."""
    rows: list[dict[str, Any]] = []
    for entry in data.load("recordings/SOURCES"):
        d = diagnose_file(data.path("recordings", entry["file"]))
        rows.append({"recording": entry["file"], "model": entry["model"], "calls": len(d.calls),
                     "may_run": sum(c.executable for c in d.calls),
                     "provider_calls": len(d.provider_calls), "policy": _(ACTIONS[policy(d)]),
                     "noticed": ", ".join(sorted({n.quirk for n in d.diagnostics})) or "-"})
    return Report("recordings", {"recordings": len(rows)}, {}, rows)


def quirks_report() -> Report:
    """Every recorded shape: what was noticed, its policy, how many calls may run."""
    rows: list[dict[str, Any]] = []
    for name in stream_names():
        d = diagnose_file(data.path("streams", name))
        if name.split("/")[0] not in QUIRK_FOLDERS and not d.diagnostics:
            continue  # neither a quirk recording nor one whose converter noticed something
        noticed = [_("{quirk} ({action})").format(quirk=quirk, action=_(ACTIONS[action]))
                   for quirk, action in sorted({(x.quirk, x.action) for x in d.diagnostics},
                                               key=lambda q: f"{q[0]} ({q[1]})")]
        rows.append({"stream": name, "group": shape_group(name),
                     "noticed": ", ".join(noticed) or "-", "calls": len(d.calls),
                     "may_run": sum(c.executable for c in d.calls), "policy": policy(d)})
    rows.sort(key=lambda r: (GROUP_ORDER.index(r["group"]), r["stream"]))
    groups = {g: {p: sum(r["group"] == g and r["policy"] == p for r in rows) for p in POLICIES}
              for g in dict.fromkeys(r["group"] for r in rows)}
    counts = {p: sum(r["policy"] == p for r in rows) for p in POLICIES}
    shown = [{**r, "group": _(r["group"]), "policy": _(ACTIONS[r["policy"]])} for r in rows]
    return Report("quirks", {"streams": len(rows)}, {"groups": groups}, shown,
                  [_("{shapes} reported shapes in {groups} groups: {tolerated} tolerated with "
                     "the exact calls, {reported} reported, {refused} refused").format(
                         shapes=len(rows), groups=len(groups), **counts)])


def response_items(name: str) -> list[dict[str, Any]]:
    """The `output` items of a recorded Responses stream, as its `output_item.done` events say."""
    fmt, records = read_stream(data.path("streams", name))
    if fmt != "openai-responses":
        raise LabError("not_responses", N_("{name} is a {format} stream, not a Responses stream"),
                       name=name, format=fmt)
    done = [r for r in records if isinstance(r, dict) and r.get("type") ==
            "response.output_item.done"]
    return [r["item"] for r in sorted(done, key=lambda r: r["output_index"])]


# What each field of a tool message means, and its name in the lab and in LangChain (the
# meanings, and the lab's note where it has no field, translated where shown).
TOOL_MESSAGE_FIELDS = [
    (N_("which call it answers"), "tool_call_id", "tool_call_id"),
    (N_("the tool's name (informative; the id pairs)"), "name", "name"),
    (N_("the result the model reads"), "content", "content"),
    (N_("the message kind"), "role ('tool')", "type ('tool')"),
    (N_("success or error"), N_("- (the outcome's code; the error JSON in content)"), "status"),
    (N_("data for the program, not the model"), "-", "artifact"),
    (N_("the message's own id"), "-", "id"),
]


def tool_message_fields() -> Report:
    """The lab's `ToolMessage` beside langchain-core's, read from the real classes."""
    from dataclasses import fields

    from langchain_core.messages import ToolMessage as LCToolMessage

    from keel_lab._core.messages import ToolMessage

    lab = {f.name for f in fields(ToolMessage)}
    lc = set(LCToolMessage.model_fields)
    rows = []
    for meaning, ours, theirs in TOOL_MESSAGE_FIELDS:
        if ours.split()[0] not in lab | {"-"} or theirs.split()[0] not in lc:
            raise LabError("stale_field_table", N_("field table out of date: {ours} / {theirs}"),
                           ours=ours, theirs=theirs)
        rows.append({"meaning": _(meaning), "keel_lab": _(ours) if ours.startswith("- ") else ours,
                     "langchain_core": theirs})
    rest = sorted(lc - {t.split()[0] for _, _, t in TOOL_MESSAGE_FIELDS})
    return Report("tool_message_fields", {}, {"langchain_only": rest}, rows,
                  [_("langchain-core also has: {fields}").format(fields=listing(rest))])
