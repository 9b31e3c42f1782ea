"""One shape for every experiment's result: JSON-ready data, a table, and findings."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from keel_lab._core.tables import format_table
from keel_lab._i18n import N_, _

Progress = Callable[[int], None]

# The experiments' column headers in a translated edition. A row's keys are data (plots, tests
# and the CLI's JSON read them), so only the table shows a translated header; English shows the
# key itself. A key not listed (an id such as `call-0`, a library such as `sdk`) stays as it is.
COLUMNS = {  # each key's header, marked for the catalog one by one (make messages reads them)
    "chunk": N_("chunk"), "index": N_("index"), "name": N_("name"), "arguments": N_("arguments"),
    "parses": N_("parses"), "executable": N_("executable"), "stream": N_("stream"),
    "calls_executed": N_("calls executed"), "note": N_("note"), "call_id": N_("call id"),
    "parse_error": N_("parse error"), "outcome": N_("outcome"), "policy": N_("policy"),
    "turns_completed": N_("turns completed"), "ms_to_all_results": N_("ms to all results"),
    "calls_run": N_("calls run"), "run_in_cancelled_turns": N_("run in cancelled turns"),
    "run_in_refused_turns": N_("run in refused turns"), "event": N_("event"), "type": N_("type"),
    "says": N_("says"), "fault": N_("fault"), "symptom": N_("symptom"),
    "group": N_("group"), "noticed": N_("noticed"), "calls": N_("calls"),
    "may_run": N_("may run"), "meaning": N_("meaning"), "reading": N_("reading"),
    "recording": N_("recording"), "lab_calls": N_("lab calls"), "naive_calls": N_("naive calls"),
    "lost": N_("lost"), "wrong": N_("wrong"), "mode": N_("mode"), "call": N_("call"),
    "batch": N_("batch"), "start_ms": N_("start ms"), "end_ms": N_("end ms"), "step": N_("step"),
    "row": N_("row"), "by position": N_("by position"), "by call id": N_("by call id"),
    "reader": N_("reader"), "got": N_("got"), "events": N_("events"),
    "note tool": N_("note tool"), "process": N_("process"), "runs": N_("runs"),
    "notes on INC-001": N_("notes on INC-001"), "strategy": N_("strategy"),
    "trials_with_mismatch": N_("trials with mismatch"), "mismatch_rate": N_("mismatch rate"),
    "mismatched_pairs": N_("mismatched pairs"), "spread_ms": N_("spread ms"),
    "theory": N_("theory"), "unanswered_calls": N_("unanswered calls"),
    "collector": N_("collector"), "in_request_order": N_("in request order"),
    "share": N_("share"), "caller_gets": N_("caller gets"), "results_lost": N_("results lost"),
    "scenario": N_("scenario"), "status": N_("status"), "partial": N_("partial"),
    "codes": N_("codes"), "shown": N_("shown"), "failure_rate": N_("failure rate"),
    "completed": N_("completed"), "failed": N_("failed"),
    "failed_if_fail_fast": N_("failed if fail fast"),
    "ms_block_close_to_result": N_("ms from block close to result"),
    "model": N_("model"), "provider_calls": N_("provider calls"),
    "correct": N_("correct code"), "faulty": N_("faulty code"), "lab_runs": N_("the lab runs"),
    "sdk": N_("official SDK"), "langchain_core": N_("langchain-core"),
    "pydantic_ai": N_("pydantic-ai"),
    "yours": N_("yours"),  # the learner's own function beside the lab's (`mine.YOURS`)
}
REPORT_COLUMNS = {  # where one key means different things
    "scheduling": {"after": N_("waits for")},
    "rendering": {"after": N_("arrivals")},
    "event_store": {"after": N_("cursor")},
}


@dataclass
class Report:
    name: str
    params: dict[str, Any]
    data: dict[str, Any]  # measured results beyond the rows, JSON-ready
    rows: list[dict[str, Any]] = field(default_factory=list)  # the table, stored only here
    findings: list[str] = field(default_factory=list)  # one-line conclusions, computed
    width: int | None = None  # the table's widest line wherever shown (long cells wrap)

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": self.name, **self.params, **self.data, "rows": self.rows}

    def table(self, width: int | None = None) -> str:
        """The title, the table and the findings; with `width` (the CLI's terminal) or the
        report's own, the narrower, no line is wider: the title and findings wrap, the table
        narrows its widest columns."""
        title = _("{name}: {params}").format(
            name=self.name, params=", ".join(f"{k}={v}" for k, v in self.params.items()))
        rows = self.shown_rows()
        width = min((w for w in (width, self.width) if w is not None), default=None)
        if width is None:
            return "\n".join([title, format_table(rows), *self.findings])
        return "\n".join([textwrap.fill(title, width, subsequent_indent="  "),
                          format_table(rows, width=width),
                          *(textwrap.fill(f, width, subsequent_indent="  ")
                            for f in self.findings)])

    def shown_rows(self) -> list[dict[str, Any]]:
        """The rows as the table shows them, in the learner's language: each column under its
        translated header (two keys that would show alike keep their own names), yes/no for a
        flag. The rows themselves, and `to_dict`, keep their keys."""
        labels = {**COLUMNS, **REPORT_COLUMNS.get(self.name, {})}
        keys = list(dict.fromkeys(k for row in self.rows for k in row))
        shown = [_header(k, labels) for k in keys]
        header = {k: h if shown.count(h) == 1 else k for k, h in zip(keys, shown, strict=True)}
        return [{header[k]: (_("yes") if v else _("no")) if isinstance(v, bool) else v
                 for k, v in row.items()} for row in self.rows]

    def __str__(self) -> str:
        return self.table()


def _header(key: str, labels: dict[str, str]) -> str:
    """A column's header: its label translated, or the key itself (in English, or unlisted)."""
    label = labels.get(key)
    shown = _(label) if label else key
    return key if shown == label else shown
