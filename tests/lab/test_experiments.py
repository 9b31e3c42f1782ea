import json
import math
import random

import pytest

from keel_lab import LabError
from keel_lab._core.clock import run_coroutine
from keel_lab._core.ids import RunIds
from keel_lab._core.streaming import cancel_after
from keel_lab.course._experiments.batching import timeline
from keel_lab.course._experiments.block_close import (
    POLICIES,
    Close,
    block_close,
    call_boundaries,
    plan_turn,
    play,
)
from keel_lab.course._experiments.faults import eager_executions, faults
from keel_lab.course._experiments.pairing import (
    calls_sweep,
    exceptions,
    order,
    pairing,
    spread_sweep,
    theory,
)
from keel_lab.course._experiments.partial_success import partial_success
from keel_lab.course._experiments.providers import STREAMS, stream_report
from keel_lab.course._experiments.registry import EXPERIMENTS, Params
from keel_lab.course._experiments.streaming import (
    bad_sibling,
    cancellation,
    chunk_rows,
    chunk_table,
)
from keel_lab.course._scenarios import compare_question, offline_stream
from keel_lab.providers._diagnosis import diagnose_file

pytestmark = pytest.mark.lab_wide


def test_pairing_counts_follow_the_lesson():
    r = pairing(2000, 3, seed=1)
    s = r.data["strategies"]
    assert s["position_over_gather"] == {"trials_with_mismatch": 0, "mismatched_pairs": 0}
    assert s["by_call_id"] == {"trials_with_mismatch": 0, "mismatched_pairs": 0}
    assert s["position_with_skip"]["trials_with_mismatch"] == 2000
    rate = s["position_over_completion"]["trials_with_mismatch"] / 2000
    assert abs(rate - theory(3)) < 0.03  # 1 - 1/3! within sampling error
    assert r.to_dict()["trials"] == 2000 and r.to_dict()["seed"] == 1


def test_pairing_is_reproducible_and_seed_dependent():
    assert pairing(300, seed=5).data == pairing(300, seed=5).data
    assert pairing(300, seed=5).data != pairing(300, seed=6).data


def test_acceptance_criterion_positional_errs_in_ten_runs_call_id_never():
    r = pairing(10, 3, seed=0).data["strategies"]
    assert r["position_over_completion"]["trials_with_mismatch"] >= 1
    assert r["by_call_id"]["trials_with_mismatch"] == 0


def test_spread_sweep_rises_from_zero_towards_theory():
    rows = spread_sweep((0.0, 0.002, 0.49), trials=400, seed=2).rows
    rates = [row["position_over_completion"] for row in rows]
    assert rates[0] == 0 and rates[0] < rates[1] < rates[2]
    assert abs(rates[2] - theory(3)) < 0.06
    assert all(row["by_call_id"] == 0 for row in rows)


def test_calls_sweep_tracks_one_minus_one_over_n_factorial():
    rows = calls_sweep((1, 2, 4), trials=600, seed=3).rows
    for row in rows:
        assert abs(row["position_over_completion"] - row["theory"]) < 0.06
        assert row["by_call_id"] == 0
    assert rows[0]["position_over_completion"] == 0


def test_order_gather_always_as_completed_about_one_over_n_factorial():
    r = order(1200, 3, seed=4).data["in_request_order"]
    assert r["gather"] == 1200
    assert abs(r["as_completed"] / 1200 - 1 / math.factorial(3)) < 0.04


def test_exceptions_experiment():
    s = exceptions(500, 3, seed=0, failure_rate=0.3).data["strategies"]
    assert s["by_call_id"] == {"trials_with_mismatch": 0, "mismatched_pairs": 0,
                               "unanswered_calls": 0}
    assert s["position_over_gather"]["unanswered_calls"] > 0
    assert s["position_over_gather"]["unanswered_calls"] % 3 == 0  # the whole turn is lost
    filtered = s["position_over_gather_filtered"]
    assert filtered["mismatched_pairs"] > filtered["unanswered_calls"] > 0


def test_trials_must_be_positive():
    with pytest.raises(LabError, match="at least 1"):
        pairing(0)


def test_chunk_table_first_executable_is_the_finish():
    r = chunk_table("Look up INC-001", seed=0, chunk_size=4)
    rows = r.rows
    assert [row["executable"] for row in rows].count(True) == 1
    assert rows[-1]["executable"] and rows[-1]["chunk"] == r.data["events"]
    assert rows[-2]["parses"] and not rows[-2]["executable"]
    assert rows[-1]["arguments"] == '{"incident_id": "INC-001"}'


def test_chunk_rows_for_interleaved_calls_touch_each_index():
    rows = chunk_rows(offline_stream(compare_question(3), seed=1, chunk_size=3))
    assert {row["index"] for row in rows} == {0, 1, 2}
    finish = [row for row in rows if row["executable"]]
    assert [row["index"] for row in finish] == [0, 1, 2]


@pytest.mark.parametrize("cut", [0, 1, 7, None])
def test_cancellation_runs_nothing_wherever_it_cuts(cut):
    r = cancellation(seed=0, cut_at=cut)
    executed = list(r.data["executed"].values())
    assert executed == [2, 0]


def test_bad_sibling_runs_the_good_call_and_answers_both():
    r = bad_sibling(broken=0)
    assert [row["outcome"] for row in r.rows] == ["invalid_arguments", "ok"]
    assert r.data["history_valid"] is True


def test_partial_success_three_statuses():
    rows = {row["scenario"]: row for row in partial_success().rows}
    assert (rows["business error"]["status"], rows["business error"]["partial"]) == (
        "completed", True)
    assert rows["approval"]["status"] == "waiting_for_approval"
    assert rows["internal error"]["status"] == "failed"


def test_each_injected_fault_changes_what_is_observed():
    report = faults()
    rows = report.rows
    assert report.data["changed"] == [True] * len(rows)
    zip_row, append_row, eager_row, failfast_row, deadline_row = rows
    assert "INC-002 is the most severe (critical)" in zip_row["faulty"]
    assert "INC-001 is the most severe (critical)" in zip_row["correct"]
    assert append_row["faulty"] == "history valid; tool messages call-1, call-0"
    assert eager_row["correct"] == "0 calls executed"
    assert failfast_row["correct"].startswith("completed")
    assert failfast_row["faulty"].startswith("failed")
    assert eager_row["faulty"] == "1 call executed (add_incident_note); run cancelled"
    assert deadline_row["correct"] == "history valid; tool messages call-0, call-1"
    assert deadline_row["faulty"] == "history invalid; tool messages call-1"


def test_eager_execution_fires_before_the_finish():
    events = offline_stream("Look up INC-001", chunk_size=3)
    assert eager_executions(events) == [len(events) - 1]
    assert eager_executions(cancel_after(events, len(events) - 1)) == [len(events) - 1]


def test_timeline_concurrent_is_faster_and_the_write_runs_alone():
    r = timeline(seed=0)
    wall = r.data["wall_s"]
    assert wall["concurrent(limit=4)"] < wall["sequential"]
    assert wall["sequential"] == pytest.approx(r.data["sum_of_latencies_s"])
    assert ["call-3"] in r.data["batches"]
    spans = {(s["mode"], s["call"]): s for s in r.rows}
    write = spans[("concurrent(limit=4)", "call-3")]
    before = [spans[("concurrent(limit=4)", f"call-{i}")]["end_ms"] for i in range(3)]
    assert write["start_ms"] >= max(before)


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_every_experiment_runs_and_is_json_ready(name):
    report = EXPERIMENTS[name].run(Params(50, 3, 0))
    assert json.loads(json.dumps(report.to_dict()))["experiment"] == report.name
    assert report.table().splitlines()[0].startswith(report.name)
    assert report.rows


def test_compare_question():
    assert compare_question(1) == "Which is more severe, INC-001?"
    assert compare_question(3) == "Which is more severe, INC-001, INC-002 or INC-003?"


def test_outcome_mix_business_errors_complete_crashes_fail():
    from keel_lab.course._experiments.partial_success import outcome_mix
    rows = outcome_mix((0.0, 0.3), runs=60, seed=1).rows
    assert rows[0] == {"failure_rate": 0.0, "completed": 1.0, "partial": 0.0, "failed": 0.0,
                       "failed_if_fail_fast": 0.0}
    busy = rows[1]
    assert busy["partial"] > 0 and busy["failed"] > 0
    assert busy["completed"] + busy["partial"] + busy["failed"] == pytest.approx(1.0)
    assert busy["failed_if_fail_fast"] == pytest.approx(busy["partial"] + busy["failed"])


def test_chunk_table_findings_call_parsed_arguments_complete_and_the_wait_a_policy():
    findings = " ".join(chunk_table("Look up INC-001", seed=0, chunk_size=4).findings)
    assert "half a call" not in findings
    assert "complete" in findings and "policy" in findings


@pytest.mark.parametrize("name", ["quirks/duplicate_id.sse", "quirks/id_changed.sse"])
def test_chunk_rows_give_a_refused_turn_no_executable_call_at_the_finish(name):
    rows = stream_report(name).rows
    assert any(r["parses"] for r in rows)
    assert not any(r["executable"] for r in rows)


def test_block_close_trades_latency_for_side_effects_of_failed_turns():
    r = block_close(trials=300, calls=3, seed=2)
    lab, early = (next(row for row in r.rows if row["policy"] == p) for p in POLICIES)
    assert lab["turns_completed"] == early["turns_completed"] == r.data["fates"]["completed"]
    assert early["ms_to_all_results"] < lab["ms_to_all_results"]
    assert early["ms_block_close_to_result"] < lab["ms_block_close_to_result"]
    assert lab["run_in_cancelled_turns"] == lab["run_in_refused_turns"] == 0
    assert early["run_in_cancelled_turns"] > 0
    # a refused turn ran every call whose id was new when its block closed: all but the last
    assert early["run_in_refused_turns"] == 2 * r.data["fates"]["refused"]
    assert r.data["ms_saved_per_completed_turn"] > 0
    assert block_close(trials=300, calls=3, seed=2).to_dict() == r.to_dict()


def test_block_close_without_failures_runs_the_same_calls_under_both_policies():
    r = block_close(trials=50, calls=2, seed=1, cancel_rate=0.0, refuse_rate=0.0)
    assert [row["calls_run"] for row in r.rows] == [100, 100]
    assert r.data["calls_run_for_failed_turns"] == {"end of turn (lab)": 0, "at block close": 0}


def test_block_close_plays_one_turn_on_the_virtual_clock():
    plan = plan_turn(random.Random(0), RunIds.seeded(0), 0, 2, 0.0, 0.0)
    closes = [at for at, item in plan.items if isinstance(item, Close)]
    finish = plan.items[-1][0]
    done_lab, closed, results = run_coroutine(play(plan, early=False))
    assert done_lab and list(closed.values()) == closes
    assert results == {i: pytest.approx(finish + d) for i, d in enumerate(plan.durations)}
    _, _, early = run_coroutine(play(plan, early=True))
    assert early == {i: pytest.approx(closes[i] + d) for i, d in enumerate(plan.durations)}


def test_block_close_rejects_no_trials():
    with pytest.raises(LabError, match="at least 1"):
        block_close(trials=0)


@pytest.mark.parametrize(("name", "says"), [
    ("anthropic/parallel_calls.sse", ["opens text 0", "closes block 0", "closes block 1",
                                      "closes block 2", "stop_reason tool_use: ends the turn"]),
    ("openai-responses/parallel_calls.sse", ["arguments of item 0 are final", "closes item 0",
                                             "closes item 1", "ends the turn"]),
    ("openai-chat/parallel_calls.sse", ["opens call 0: lookup_incident",
                                        "finish_reason tool_calls: ends the turn and every call"]),
])
def test_call_boundaries_show_where_each_format_closes_a_call(name, says):
    r = call_boundaries(name)
    listed = [row["says"] for row in r.rows]
    assert all(s in listed for s in says)
    assert [row["event"] for row in r.rows] == sorted(row["event"] for row in r.rows)
    closes = [s for s in listed if "closes" in s]
    assert bool(closes) == (not name.startswith("openai-chat"))


@pytest.mark.parametrize("finish", ["length", "tool_calls"])
def test_a_call_cut_by_the_token_limit_never_runs_whatever_the_finish_says(finish):
    d = diagnose_file(STREAMS / f"token_limit/finish_{finish}.sse")
    assert d.finish_reason == finish
    assert [c.executable for c in d.calls] == [True, False]
    assert "not valid JSON" in d.calls[1].error


def test_gather_does_not_cancel_the_siblings_of_a_raising_call():
    from keel_lab.course._experiments.pairing import gather_siblings
    rows = {r["collector"]: r for r in gather_siblings().rows}
    plain, kept, group = (rows["gather"], rows["gather(return_exceptions=True)"],
                          rows["TaskGroup"])
    assert plain["caller_gets"].startswith("ToolFailure at 100 ms")
    assert plain["call-a"] == "ran to the end at 300 ms" and plain["results_lost"] == 2
    assert kept["caller_gets"] == "3 results at 300 ms" and kept["results_lost"] == 0
    assert group["call-a"] == group["call-c"] == "cancelled at 100 ms"


def test_every_experiment_names_a_function_that_exists():
    for experiment in EXPERIMENTS.values():
        assert callable(experiment.function), experiment.name
