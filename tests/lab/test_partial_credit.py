"""Partial credit (issue 35): an exercise's `parts` give its points to check lines; a verdict
earns a line's points only when it and every line before it passed, so a wrong answer never
earns more than its passing lines, and a check that stopped early only the lines before."""

from __future__ import annotations

import pytest

from keel_checks.batching import ALONE, WALL, verify_make_batches
from keel_checks.exercises import BATCHES_SHARED, BATCHES_UNKNOWN, EXERCISES
from keel_checks.verdict import Verdict

pytestmark = pytest.mark.ch3


def batcher(safe):
    """A `make_batches` whose one rule is `safe(tool)` (tool None for a name no tool has):
    safe neighbours share a batch, every other call runs alone, in order."""
    def make_batches(requests, tools):
        batches, together = [], False
        for request in requests:
            shares = safe(tools.get(request.name))
            if shares and together:
                batches[-1].append(request)
            else:
                batches.append([request])
            together = shares
        return batches
    return make_batches


right = batcher(lambda tool: tool is not None and tool.concurrency_safe
                and not tool.requires_approval)
# the chapter's table right, a name no tool has wrong
unknown_is_safe = batcher(lambda tool: tool is None or (tool.concurrency_safe
                                                        and not tool.requires_approval))
# a name no tool has alone, approval forgotten
unknown_only = batcher(lambda tool: tool is not None and tool.concurrency_safe)


def todo(requests, tools):
    raise NotImplementedError


@pytest.mark.parametrize(("fn", "points"), [
    (right, 2), (unknown_is_safe, 1), (unknown_only, 0), (todo, 0),
    (lambda requests, tools: [[r] for r in requests], 0),  # every call alone: nothing shared
    (lambda requests, tools: [list(requests)], 0),  # all together: declarations ignored
], ids=["right", "unknown_is_safe", "approval_forgotten", "todo", "one_by_one", "together"])
def test_make_batches_earns_the_points_of_its_passing_lines(fn, points):
    verdict = verify_make_batches(fn)
    assert (verdict.passed, verdict.points) == (points == 2, points), verdict.hints[:1]


def test_every_exercise_parts_sum_to_its_points():
    for x in EXERCISES:
        assert not x.parts or sum(x.parts.values()) == x.points, x.name
        assert all(p >= 0 for p in x.parts.values()), x.name


def test_make_batches_parts_name_lines_of_its_check():
    verdict = verify_make_batches(right)
    assert len(verdict.results) == len(verdict.checks)  # one result a line: labels line up
    assert {BATCHES_SHARED, BATCHES_UNKNOWN} <= set(verdict.checks)


LINES = ["every call once", ALONE, BATCHES_SHARED, BATCHES_UNKNOWN, WALL]


@pytest.mark.parametrize(("results", "points"), [
    ([True, True, True], 1),  # stopped (a crash) after the shared line: the lines before
    ([True, True], 0),
    ([True, False, True, True], 0),  # a line after a failure earns nothing
    ([True, True, True, False, True], 1),
    ([True, True, True, True, True], 2),
])
def test_a_verdict_earns_only_the_lines_before_its_first_failure(results, points):
    verdict = Verdict("make_batches", LINES, [(ok, "") for ok in results])
    assert verdict.points == points


def test_an_exercise_without_parts_is_all_or_nothing():
    assert Verdict("status_history", ["a", "b"], [(True, ""), (False, "")]).points == 0
    assert Verdict("status_history", ["a", "b"], [(True, ""), (True, "")]).points == 3
