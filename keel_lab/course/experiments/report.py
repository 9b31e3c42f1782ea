"""One shape for every experiment's result: JSON-ready data, a table, and findings."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from keel_lab.core.tables import format_table
from keel_lab.i18n import N_, _

Progress = Callable[[int], None]

# The experiments' column headers in a translated edition. A row's keys are data (plots, tests
# and the CLI's JSON read them), so only the table shows a translated header; English shows the
# key itself. A key not listed (an id such as `call-0`, a library such as `sdk`) stays as it is.
COLUMNS = {key: N_(key.replace("_", " ")) for key in (
    "chunk", "index", "name", "arguments", "parses", "executable", "stream", "calls_executed",
    "note", "call_id", "parse_error", "outcome", "policy", "turns_completed",
    "ms_to_all_results", "calls_run", "run_in_cancelled_turns", "run_in_refused_turns", "event",
    "type", "says", "fault", "symptom", "differs", "group", "noticed", "calls", "may_run",
    "meaning", "reading", "recording", "lab_calls", "naive_calls", "lost", "wrong", "mode",
    "call", "batch", "start_ms", "end_ms", "step", "row", "by position", "by call id", "reader",
    "got", "events", "note tool", "process", "runs", "notes on INC-001", "strategy",
    "trials_with_mismatch", "mismatch_rate", "mismatched_pairs", "spread_ms", "theory",
    "unanswered_calls", "collector", "in_request_order", "share", "caller_gets", "results_lost",
    "scenario", "status", "partial", "codes", "shown", "failure_rate", "completed", "failed",
    "failed_if_fail_fast")}
COLUMNS |= {"ms_block_close_to_result": N_("ms from block close to result"),
            "correct": N_("correct code"), "faulty": N_("faulty code"),
            "lab_runs": N_("the lab runs")}
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

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": self.name, **self.params, **self.data, "rows": self.rows}

    def table(self, width: int | None = None) -> str:
        """The title, the table and the findings; with `width` (the CLI's terminal), no line
        is wider: the title and findings wrap, the table narrows its widest columns."""
        title = _("{name}: {params}").format(
            name=self.name, params=", ".join(f"{k}={v}" for k, v in self.params.items()))
        rows = self.shown_rows()
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
