from dataclasses import replace
from itertools import pairwise

import pytest
from matplotlib.figure import Figure

from keel_lab import OfflineAdapter, Runner
from keel_lab._core.messages import ToolMessage
from keel_lab._core.streaming import Finish
from keel_lab.course._diagrams import STAGES, message_format, turn_pipeline
from keel_lab.course._notebook import png
from keel_lab.course._scenarios import COMPARE, offline_stream

pytestmark = pytest.mark.ch1


def history():
    return Runner(OfflineAdapter()).run(COMPARE).messages


def gids(fig: Figure, prefix: str) -> list[str]:
    artists = [*fig.axes[0].patches, *fig.axes[0].texts]
    return [a.get_gid() for a in artists if (a.get_gid() or "").startswith(prefix)]


def arrow(fig: Figure, call_id: str):
    return next(p for p in fig.axes[0].patches if p.get_gid() == f"pair:{call_id}")


def test_one_arrow_per_call_from_its_box_to_its_own_tool_message():
    messages = history()
    ids = [c.id for c in messages[1].tool_calls]
    fig = message_format(messages)
    assert gids(fig, "pair:") == [f"pair:{i}" for i in ids] and len(ids) == 2
    assert gids(fig, "unanswered:") == []
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert all(f"id: {i}" in texts and f"tool_call_id: {i}" in texts for i in ids)


def ends_at(fig: Figure, call_id: str, answer_id: str) -> bool:
    """Whether the call's arrow reaches the row of the tool message answering `answer_id`."""
    row = next(t.get_position()[1] for t in fig.axes[0].texts
               if t.get_text() == f"tool_call_id: {answer_id}")
    return bool(abs(arrow(fig, call_id).get_path().vertices[:, 1] - row).min() < 0.2)


def test_arrows_follow_ids_not_positions():
    messages = history()
    first, second = (c.id for c in messages[1].tool_calls)
    swapped = [*messages[:2], messages[3], messages[2], *messages[4:]]
    for fig in (message_format(messages), message_format(swapped)):
        assert ends_at(fig, first, first) and not ends_at(fig, first, second)
        assert ends_at(fig, second, second) and not ends_at(fig, second, first)


def test_a_call_without_tool_message_is_marked_not_drawn():
    messages = history()
    missing = messages[1].tool_calls[1].id
    broken = [m for m in messages if getattr(m, "tool_call_id", None) != missing]
    fig = message_format(broken)
    assert gids(fig, "unanswered:") == [f"unanswered:{missing}"]
    assert gids(fig, "pair:") == [f"pair:{messages[1].tool_calls[0].id}"]


def test_long_contents_are_shortened():
    messages = history()
    tool = messages[2]
    assert isinstance(tool, ToolMessage)
    fig = message_format([*messages[:2], replace(tool, content="x" * 500), messages[3]])
    assert max(len(t.get_text()) for t in fig.axes[0].texts) < 120


def test_turn_pipeline_chains_every_stage_and_counts_the_real_stream():
    events = offline_stream(COMPARE)
    fig = turn_pipeline(events)
    flow = gids(fig, "flow:")
    assert flow[:-1] == [f"flow:{a}->{b}" for a, b in pairwise(STAGES)]
    assert flow[-1] == "flow:history->model"
    texts = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert isinstance(events[-1], Finish)
    assert f"streams {len(events)} events" in texts and "2 calls" in texts
    assert "run-629fd82c07cd:step-0:call-0" in fig.axes[0].get_title()


def test_pictures_are_byte_for_byte_reproducible():
    assert png(message_format(history())) == png(message_format(history()))
    events = offline_stream(COMPARE)
    assert png(turn_pipeline(events)) == png(turn_pipeline(events))
