"""Chapter 7's additions: recorded Responses items, and the tool-message field table."""

import pytest

from keel_lab._core.errors import LabError
from keel_lab.course._experiments.providers import (
    GROUP_ORDER,
    GROUP_WORDS,
    POLICIES,
    quirks_report,
    response_items,
    shape_group,
    stream_names,
    tool_message_fields,
)
from keel_lab.course._plots import quirks_plot

pytestmark = pytest.mark.ch7


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


@pytest.mark.parametrize(("name", "group"), [
    ("quirks/index_missing.sse", "index and id"),
    ("quirks/duplicate_id.sse", "index and id"),
    ("quirks/name_repeated.sse", "name"),
    ("quirks/arguments_before_name.sse", "name"),  # what it bends is the name's arrival
    ("quirks/id_repeated.sse", "index and id"),
    ("quirks/split_utf8.sse", "arguments text"),
    ("quirks/arguments_object.jsonl", "arguments text"),
    ("quirks/truncated.sse", "framing and finish"),
    ("token_limit/finish_length.sse", "framing and finish"),
    ("quirks/call_in_text.sse", "content leaks"),
    ("quirks/finish_content_filter.sse", "framing and finish"),  # not a leak: the finish
    ("quirks/duplicate_key.sse", "arguments text"),  # a key twice in the arguments' JSON
    ("quirks/lone_surrogate.sse", "arguments text"),
    ("quirks/some_new_shape.sse", "other shapes"),
    ("openai-chat/parallel_calls.sse", "ordinary"),
    ("anthropic/parallel_calls.sse", "other formats"),
    ("gemini/one_call.sse", "other formats"),
])
def test_shape_group_reads_what_a_shape_bends_from_its_name(name, group):
    assert shape_group(name) == group


def test_every_group_has_its_place_in_tables_and_plots():
    assert {g for g, _ in GROUP_WORDS} < set(GROUP_ORDER)


def test_quirks_report_covers_every_quirk_recording_and_counts_policies_per_group():
    report = quirks_report()
    names = [r["stream"] for r in report.rows]
    assert {n for n in stream_names() if n.split("/")[0] in ("quirks", "token_limit")} \
        <= set(names)
    assert "openai-chat/parallel_calls.sse" not in names  # nothing noticed: not a shape
    assert "ollama/parallel_calls.jsonl" in names  # ids assigned: noticed
    groups = report.data["groups"]
    assert sum(sum(c.values()) for c in groups.values()) == len(report.rows)
    for group, counts in groups.items():
        assert set(counts) == set(POLICIES)
        assert all(counts[p] == sum(r["group"] == group and r["policy"] == p
                                    for r in report.rows) for p in POLICIES)
    rows = {r["stream"]: r for r in report.rows}
    assert rows["quirks/id_changed.sse"]["policy"] == "refused"
    assert rows["quirks/index_missing.sse"]["policy"] == "tolerated"
    assert rows["token_limit/finish_length.sse"]["may_run"] == 1
    assert rows["token_limit/finish_length.sse"]["policy"] == "refused"
    order = [r["group"] for r in report.rows]
    assert order == sorted(order, key=list(groups).index)  # grouped, in the plot's order


def test_quirks_plot_has_one_bar_per_group_stacked_by_policy():
    report = quirks_report()
    ax = quirks_plot(report).axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert [label.rsplit(" (", 1)[0] for label in labels] == list(report.data["groups"])
    widths = [p.get_width() for p in ax.patches]
    assert sum(widths) == len(report.rows)
