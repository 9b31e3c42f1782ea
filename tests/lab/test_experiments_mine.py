"""The learner's own function beside the lab's in the five experiments that compare strategies
(`mine=`): the default output is the chapters' saved one; the solution notebook's answer shows
as "yours" with the lab's numbers; a wrong answer with other numbers; the stub, or an answer
that raises, as one line, the lab's part whole."""

import ast
import asyncio
import json
from pathlib import Path

import pytest

from keel_lab import (
    CallState,
    Code,
    RunCall,
    StreamAssembler,
    ToolOutcome,
    ToolRequest,
    failure,
)
from keel_lab._core.streaming import Finish
from keel_lab.course._experiments.batching import timeline
from keel_lab.course._experiments.faults import faults, observe
from keel_lab.course._experiments.pairing import pairing
from keel_lab.course._experiments.partial_success import partial_success
from keel_lab.course._experiments.report import Report
from keel_lab.course._experiments.streaming import cancellation
from keel_lab.course._plots import plot

pytestmark = pytest.mark.lab_wide

SOLUTIONS = Path(__file__).parents[2] / "notebooks" / "solutions"
UNWRITTEN = "is not written yet"


def _cells(chapter: str) -> list[dict]:
    return json.loads((SOLUTIONS / f"{chapter}.ipynb").read_text())["cells"]


def _functions(source: str) -> ast.Module:
    """A code cell's function definitions alone: the helpers an answer may call."""
    tree = ast.parse(source)
    return ast.Module([n for n in tree.body if isinstance(n, (ast.FunctionDef,
                                                              ast.AsyncFunctionDef))], [])


def solution(chapter: str, name: str):
    """The exercise's answer as the solution notebook writes it, with the functions the chapter
    defines before it (chapter 4's `next_event`)."""
    namespace = {"asyncio": asyncio, "StreamAssembler": StreamAssembler, "Finish": Finish,
                 "ToolRequest": ToolRequest, "RunCall": RunCall,
                 "ToolOutcome": ToolOutcome, "CallState": CallState, "Code": Code,
                 "failure": failure}
    for cell in _cells(chapter):
        source = "".join(cell["source"])
        if "exercise" in cell["metadata"].get("tags", ()) and (
                f"def {name}(" in source):
            exec(source, namespace)  # the course's own solution
            return namespace[name]
        if cell["cell_type"] == "code":
            exec(compile(_functions(source), chapter, "exec"), namespace)
    raise LookupError(f"{chapter} has no exercise {name}")


def saved_output(chapter: str, call: str) -> str:
    """The text the chapter saved for the cell that shows `call`."""
    for cell in _cells(chapter):
        if cell["cell_type"] == "code" and call in "".join(cell["source"]):
            return "".join(next(o["text"] for o in cell["outputs"] if o.get("name") == "stdout"))
    raise LookupError(call)


def stub(*args):
    raise NotImplementedError


async def async_stub(*args):
    raise NotImplementedError


def lab_part(report: Report) -> tuple[list[dict], list[str]]:
    """The rows and findings without the learner's part."""
    rows = [{k: v for k, v in row.items() if k != "yours"} for row in report.rows
            if "yours" not in str(row.get("strategy", "")) + str(row.get("mode", ""))
            + str(row.get("stream", ""))]
    return rows, [f for f in report.findings if "yours" not in f and "your batches" not in f]


# (a) without `mine`, what each chapter saved


@pytest.mark.parametrize(("chapter", "call", "report"), [
    ("02_pairing", "pairing(1000, 3, seed=0)", lambda: pairing(1000, 3, seed=0)),
    ("03_batching", "timeline(seed=0, limit=4)", lambda: timeline(seed=0, limit=4)),
    ("04_streaming", "cancellation(seed=0)", lambda: cancellation(seed=0)),
    ("05_partial_success", "show(partial_success())", partial_success),
])
def test_without_mine_the_chapters_output_is_unchanged(chapter, call, report):
    r = report()  # the cell may say after the table whether a prediction was right
    assert saved_output(chapter, call).startswith(r.table() + "\n")
    assert "yours" not in json.dumps(r.to_dict(), default=str)


def test_faults_without_mine_has_no_column_of_yours():
    r = faults()
    assert [list(row) for row in r.rows] == [
        ["fault", "symptom", "correct", "faulty"]] * 5
    assert len(r.findings) == 1


# (b) the solution's answer, (c) a wrong one, (d) the stub: chapter by chapter


def zipped(calls, results):
    return list(zip(calls, results, strict=False))


def test_pairing_counts_the_learners_pairing():
    right = pairing(1000, 3, seed=0, mine=solution("02_pairing", "pair_results"))
    lab = right.data["strategies"]
    assert lab["yours"] == lab["by_call_id"] == {"trials_with_mismatch": 0,
                                                 "mismatched_pairs": 0}
    assert right.rows[-1]["strategy"] == "yours"
    assert lab_part(right) == lab_part(pairing(1000, 3, seed=0))
    wrong = pairing(1000, 3, seed=0, mine=zipped).data["strategies"]
    assert wrong["yours"] == wrong["position_over_completion"] != wrong["by_call_id"]
    assert plot(right) is not None


@pytest.mark.parametrize("fn", [stub, lambda calls, results: 1 / 0])
def test_pairing_shows_the_lab_and_one_line_for_a_failing_answer(fn):
    r = pairing(200, 3, seed=0, mine=fn)
    assert "yours" not in r.data["strategies"]
    assert lab_part(r) == lab_part(pairing(200, 3, seed=0))
    line = r.findings[-1]
    assert "\n" not in line and line.startswith("yours: ")
    if fn is stub:
        assert UNWRITTEN in line
    else:
        assert "ZeroDivisionError" in line and "<lambda>" in line


def one_batch(requests, tools):
    return [list(requests)]


def test_timeline_runs_the_learners_batches():
    right = timeline(seed=0, limit=4, mine=solution("03_batching", "make_batches"))
    rows = {mode: [{k: v for k, v in r.items() if k != "mode"} for r in right.rows
                   if r["mode"] == mode] for mode in ("concurrent(limit=4)", "yours")}
    assert rows["yours"] == rows["concurrent(limit=4)"]
    assert right.data["wall_s"]["yours"] == right.data["wall_s"]["concurrent(limit=4)"]
    assert lab_part(right) == lab_part(timeline(seed=0, limit=4))
    wrong = timeline(seed=0, limit=4, mine=one_batch).data["wall_s"]
    assert wrong["yours"] < wrong["concurrent(limit=4)"]  # the write ran beside the reads
    assert plot(right) is not None
    unwritten = timeline(seed=0, limit=4, mine=stub)
    assert UNWRITTEN in unwritten.findings[-1] and "yours" not in unwritten.data["wall_s"]


async def runs_what_parsed_on_stop(stream, timeout):
    """On the user's Stop, closes the calls that arrived and returns them to run."""
    assembler = StreamAssembler()
    try:
        async for event in stream:
            assembler.feed(event)
            if assembler.finish_reason:
                return assembler.result()
    except asyncio.CancelledError:
        assembler.feed(Finish("stop"))
        return assembler.result()
    return assembler.interrupted("ended")


def test_cancellation_reads_with_the_learners_read_turn():
    right = cancellation(seed=0, mine=solution("04_streaming", "read_turn"))
    executed = right.data["executed"]
    assert executed == {"whole stream": 2, "cancelled after 26 events": 0,
                        "yours: whole stream": 2, "yours: cancelled after 26 events": 0}
    assert lab_part(right) == lab_part(cancellation(seed=0))
    wrong = cancellation(seed=0, mine=runs_what_parsed_on_stop).data["executed"]
    assert wrong["yours: cancelled after 26 events"] == 2
    unwritten = cancellation(seed=0, mine=async_stub)
    assert len(unwritten.rows) == 2 and UNWRITTEN in unwritten.findings[-1]


async def returns_nothing(stream, timeout):
    return None


def test_cancellation_names_an_answer_that_returns_no_assembly():
    line = cancellation(seed=0, mine=returns_nothing).findings[-1]
    assert line.startswith("yours: returns_nothing failed with TypeError")


def any_code_fails(events):
    return ["failed" if any(e.code for e in events) else "completed"]


def test_partial_success_reads_the_learners_status_history():
    right = partial_success(mine=solution("05_partial_success", "status_history"))
    lab = [("partial" if r["partial"] else r["status"]) for r in right.rows]
    assert [r["yours"] for r in right.rows] == lab
    assert lab_part(right) == lab_part(partial_success())
    wrong = partial_success(mine=any_code_fails)
    assert [r["yours"] for r in wrong.rows] != lab
    unwritten = partial_success(mine=stub)
    assert "yours" not in unwritten.rows[0] and UNWRITTEN in unwritten.findings[-1]


async def zip_as_completed(batch, run):
    finished = [await f for f in asyncio.as_completed([run(r) for r in batch])]
    return [(r.call_id, o) for r, o in zip(batch, finished, strict=True)]


def test_faults_run_the_correct_code_with_the_learners_collector():
    right = faults(mine=solution("06_faults", "collect_batch"))
    assert [r["yours"] for r in right.rows] == [r["correct"] for r in right.rows]
    assert lab_part(right) == lab_part(faults())
    assert max(len(line) for line in right.table().splitlines()) <= 120  # whole answers, wrapped
    wrong = faults(mine=zip_as_completed)
    assert wrong.rows[0]["yours"] != wrong.rows[0]["correct"]
    unwritten = faults(mine=async_stub)
    assert "yours" not in unwritten.rows[0] and UNWRITTEN in unwritten.findings[-1]


def test_observe_still_waits_for_the_fault_to_be_written():
    assert observe(1, "C", async_stub).startswith("Write the fault first")
