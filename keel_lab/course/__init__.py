"""The course's own tooling: the incident scenario (data, tools, the offline model), the shared
fixtures, the experiments, plots, diagrams, explorers and notebook helpers. `check`,
`show_progress`, the capstone's `capstone_sweep` and the predictions' `predicted` (a
prediction's answer waits for it) and `answered` (right or not) are offered here too, from the
package beside the lab that judges the learner (keel_checks), so a chapter imports everything
from one face. Each name loads its module on first use: a check loads its own chapter's
verifier only, and matplotlib with the first plot."""

from keel_lab._lazy import lazy

__getattr__, __dir__ = lazy(__name__, {
    "keel_checks": ("check",),
    "keel_checks.capstone": ("capstone_sweep",),
    "keel_lab.course._incident_tools": ("incident_tools",),
    "keel_lab.course._offline_model": ("OfflineAdapter",),
    "keel_lab.course._scenarios": ("PARTIAL", "offline_stream", "scenarios", "slow_first",
                                  "turn_requests"),
    "keel_lab.course._notebook": ("show",),
    "keel_checks.predictions": ("answered", "predicted"),
    "keel_lab.course._plots": ("plot", "stream_plot"),
    "keel_lab.course._diagrams": ("message_format", "turn_pipeline"),
    "keel_checks.progress": ("show_progress",),
    "keel_lab.course._explorers": (
        "batching_explorer", "block_close_explorer", "history_explorer", "pairing_explorer",
        "partial_success_explorer", "production_explorer", "providers_explorer",
        "streaming_explorer"),
    "keel_lab.course._experiments.pairing": ("calls_sweep", "exceptions", "gather_siblings",
                                            "pairing", "spread_sweep"),
    "keel_lab.course._experiments.batching": ("timeline",),
    "keel_lab.course._experiments.streaming": ("bad_sibling", "cancellation", "chunk_table"),
    "keel_lab.course._experiments.block_close": ("block_close", "call_boundaries"),
    "keel_lab.course._experiments.partial_success": ("outcome_mix", "partial_success"),
    "keel_lab.course._experiments.faults": ("eager_executions", "faults", "observe",
                                           "zip_over_completion"),
    "keel_lab.course._experiments.providers": ("STREAMS", "answer_stream", "quirks_report",
                                              "recordings_report",
                                              "response_items", "stream_report",
                                              "tool_message_fields"),
    "keel_lab.course._experiments.accumulators": ("anthropic_sdk_calls", "comparison_report"),
    "keel_lab.course._experiments.naive_clients": ("naive_clients",),
    "keel_lab.course._experiments.production": ("crash_and_resume", "crashed_log",
                                               "event_store", "rendering", "scheduling",
                                               "screen"),
}, modules={"data": "keel_lab.course._data"})

__all__ = [
    "PARTIAL", "STREAMS", "OfflineAdapter", "answer_stream", "answered", "anthropic_sdk_calls",
    "bad_sibling",
    "batching_explorer", "block_close", "block_close_explorer", "call_boundaries", "calls_sweep",
    "cancellation", "capstone_sweep", "check", "chunk_table", "comparison_report",
    "crash_and_resume", "crashed_log", "data", "eager_executions", "event_store", "exceptions",
    "faults", "gather_siblings", "history_explorer", "incident_tools", "message_format",
    "naive_clients", "observe", "offline_stream", "outcome_mix", "pairing", "pairing_explorer",
    "partial_success", "partial_success_explorer", "plot", "predicted", "production_explorer",
    "providers_explorer", "quirks_report", "recordings_report", "rendering",
    "response_items", "scenarios", "scheduling", "screen", "show", "show_progress", "slow_first",
    "spread_sweep", "stream_plot", "stream_report", "streaming_explorer", "timeline",
    "tool_message_fields", "turn_pipeline", "turn_requests", "zip_over_completion",
]
