"""Chapter 7's additions: recorded Responses items, and the tool-message field table."""

import pytest

from keel_lab.core.errors import LabError
from keel_lab.course.experiments.providers import (
    quirks_report,
    response_items,
    tool_message_fields,
)
from keel_lab.course.plots import quirks_plot


def test_response_items_in_output_order():
    items = response_items("openai-responses/after_reasoning.jsonl")
    assert [i["type"] for i in items] == ["reasoning"] + ["function_call"] * 3
    calls = items[1:]
    assert all(c["id"].startswith("fc_") and c["call_id"].startswith("call_") for c in calls)
    assert calls[0]["arguments"] == '{"incident_id": "INC-003"}'
    with pytest.raises(LabError, match="not a Responses stream"):
        response_items("anthropic/parallel_calls.sse")


def test_tool_message_fields_match_the_real_classes():
    report = tool_message_fields()
    assert [r["langchain_core"] for r in report.rows][:3] == ["tool_call_id", "name", "content"]
    assert "status" in [r["langchain_core"] for r in report.rows]
    assert report.data["langchain_only"] == ["additional_kwargs", "response_metadata"]


def test_quirks_plot_has_integer_ticks_and_a_legend_beside_the_bars():
    fig = quirks_plot(quirks_report())
    ax = fig.axes[0]
    ticks = [t for t in ax.get_xticks() if t >= 0]
    assert ticks and all(float(t).is_integer() for t in ticks)
    fig.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    assert legend.x0 >= ax.get_window_extent().x1  # outside the axes: over no bar
