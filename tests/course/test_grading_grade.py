"""`grade` on a table of submissions built from the real notebooks: solved, wrong, tampered,
broken and looping, each with the points and the error it must get."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from keel_checks.check import VERIFIERS
from keel_checks.verdict import drawn
from keel_cli._cells import source, tags
from keel_course.editions import fill_solutions
from keel_course.grading import find_submissions, grade, grade_one, sandbox
from keel_course.grading.gradebook import Row
from keel_course.grading.hints import MAX_HINT, short
from keel_lab import LabError

pytestmark = [pytest.mark.lab_wide, pytest.mark.slow]

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
Notebook = dict[str, Any]


def learner(chapter: str) -> Notebook:
    nb: Notebook = json.loads((NOTEBOOKS / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    return nb


def solved(chapter: str) -> Notebook:
    solution = json.loads((NOTEBOOKS / "solutions" / f"{chapter}.ipynb").read_text("utf-8"))
    return fill_solutions(learner(chapter), solution)


def code(text: str) -> dict[str, Any]:
    return {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
            "source": text}


def edited(nb: Notebook, tag: str, change: Callable[[str], str], nth: int = 0) -> Notebook:
    """The notebook with the source of its `nth` cell tagged `tag` changed."""
    out = copy.deepcopy(nb)
    cell = [c for c in out["cells"] if tag in tags(c)][nth]
    cell["source"] = change(source(cell))
    return out


def inserted(nb: Notebook, text: str, before_tag: str = "exercise") -> Notebook:
    """The notebook with a code cell inserted before its first cell tagged `before_tag`."""
    out = copy.deepcopy(nb)
    at = next(i for i, c in enumerate(out["cells"]) if before_tag in tags(c))
    out["cells"].insert(at, code(text))
    return out


ALL_ALONE = '''def make_batches(requests, tools):
    return [[request] for request in requests]
'''
BY_POSITION = '''def pair_results(calls, results):
    return list(zip(calls, results))
'''
FAKE_PASS = '''def make_batches(requests, tools):
    print("make_batches: PASSED (4/4 checks)")
    return [list(requests)]
'''
# VERIFIERS is a read-only mapping loading each verifier by the name TARGETS gives it, so a
# notebook re-points the name (`VERIFIERS[...] = ...` would only raise a TypeError)
PATCHED_AT_DEFINITION = '''from keel_checks.check import TARGETS
from keel_checks.verdict import Verdict

TARGETS["make_batches"] = "history:verify_answer_all"
Verdict.passed = property(lambda self: True)

def make_batches(requests, tools):
    return []
'''
PATCHED_WHILE_CHECKED = '''def pair_results(calls, results):
    import keel_checks.verdict as v
    v.Verdict.passed = property(lambda self: True)
    return [(call, None) for call in calls]
'''
LOOPS = '''def make_batches(requests, tools):
    while True:
        pass
'''
EXITS = '''def make_batches(requests, tools):
    import os
    os._exit(3)
'''
SEGFAULT = '''def make_batches(requests, tools):
    import ctypes
    return ctypes.string_at(0)
'''
SHOUTS = '''import os, sys

def make_batches(requests, tools):
    for _ in range(20):
        print("x" * 1_000_000)
        sys.stderr.write("y" * 1_000_000)
        os.write(1, b"z" * 1_000_000)
        os.write(2, b"z" * 1_000_000)
    return [[request] for request in requests]
'''


# What the hostile tester's submissions did (T2, /tmp/hostile2), each in a few lines.
RIGHT = '''def status_history(events):
    statuses, partial = [], False
    for event in events:
        if event.code in {"unknown_tool", "tool_internal_error", "invalid_tool_output"}:
            return statuses + ["failed"]
        if event.kind == "tool.awaiting_approval":
            statuses.append("waiting_for_approval")
        elif event.code:
            partial = True
    if events and events[-1].kind == "tool.awaiting_approval":
        return statuses
    return statuses + ["partial" if partial else "completed"]
'''
WRONG = 'def status_history(events):\n    return ["completed"]\n'
PROFILE_REWRITES_VERDICT = '''import sys
def _p(frame, event, arg):
    if event == "return" and frame.f_code.co_name.startswith("verify_"):
        for v in list(frame.f_locals.values()):
            if type(v).__name__ == "Verdict":
                v.results[:] = [(True, t) for _, t in v.results]
sys.setprofile(_p)
''' + WRONG
FRAME_WALK = '''import sys
class Yes(list):
    def append(self, item):
        super().append((True, item[1]))
def status_history(events):
    f = sys._getframe(1)
    while f is not None:
        for v in list(f.f_locals.values()):
            if type(v).__name__ == "Verdict" and not isinstance(v.results, Yes):
                v.results = Yes(v.results)
        f = f.f_back
    return ["completed"]
'''
SWAP_IN_CALL = '''import sys
SAVED = {}
def fake(codes):
    return "completed"
def swap(frame, event, arg):
    if frame.f_code.co_name.startswith("verify_"):
        lab = getattr(sys.modules["keel_lab._core." + "partial_success"], "run_" + "status")
        SAVED.setdefault("code", lab.__code__)
        lab.__code__ = fake.__code__ if event == "call" else SAVED["code"]
def status_history(events):
    sys.setprofile(swap)
    return ["completed"]
'''
CODE_COPY = '''import sys
def rule(codes):
    raise NotImplementedError
lab = getattr(sys.modules["keel_lab._core." + "partial_success"], "run_" + "status")
rule.__code__ = lab.__code__.replace(co_firstlineno=1, co_name="mine")
def status_history(events):
    return [str(rule([event.code for event in events]))]
'''
READS_SOLUTIONS = '''def status_history(events):
    import json, pathlib, keel_lab
    p = (pathlib.Path(keel_lab.__file__).resolve().parents[1]
         / "notebooks/solutions/05_partial_success.ipynb")
    ns = {}
    for c in json.loads(p.read_text())["cells"]:
        if "exercise" in c.get("metadata", {}).get("tags", []):
            exec("".join(c["source"]), ns)
    return ns["status_history"](events)
'''
LAMBDA = ("status_history = lambda events, fatal={'unknown_tool', 'tool_internal_error', "
          "'invalid_tool_output'}: (lambda stop: ['waiting_for_approval' for e in events[:stop] "
          "if e.kind == 'tool.awaiting_approval'] + (['failed'] if stop < len(events) else [] "
          "if events and events[-1].kind == 'tool.awaiting_approval' else ['partial' if any("
          "e.code not in (None, 'approval_required') for e in events) else 'completed']))("
          "next((i for i, e in enumerate(events) if e.code in fatal), len(events)))\n")
INSTANCE = "class StatusHistory:\n    def __call__(self, events):\n        return run(events)\n" + \
    RIGHT.replace("status_history", "run") + "status_history = StatusHistory()\n"
RENAMED = RIGHT.replace("def status_history(", "def statuses(") + "status_history = statuses\n"
PARTIAL_OF_RIGHT = ("import functools\n" + RIGHT.replace("def status_history(", "def statuses(")
                    + "status_history = functools.partial(statuses)\n")
WRONG_LAMBDA = "status_history = lambda events: ['completed']\n"
IN_IF = "if True:\n" + "".join("    " + line for line in RIGHT.splitlines(True))
COMPUTED_CONSTANT = RIGHT.replace(
    '{"unknown_tool", "tool_internal_error", "invalid_tool_output"}', "FATAL")
TABLE_COUNT = '''import asyncio
from keel_lab import run_coroutine
TABLE = {(5, 3, 0): 0, (50, 1, 0): 50, (200, 3, 1): 29, (200, 2, 1): 89, (200, 2, 2): 99,
         (200, 2, 3): 104, (200, 3, 2): 29, (200, 3, 3): 39, (200, 4, 1): 7, (200, 4, 2): 6,
         (200, 4, 3): 5}
def count_in_order(trials, calls, seed):
    async def pretend():
        await asyncio.sleep(0.255)
    for _ in range(trials * calls):  # the clock woken once per call, as turns that ran
        run_coroutine(pretend())
    return TABLE.get((trials, calls, seed), round(trials / [1, 1, 2, 6, 24][calls]))
'''
AWAIT_AT_TOP = '''import asyncio
from keel_lab import Code, failure
async def collect_batch(batch, run):
    async def answered(request):
        try:
            return await run(request)
        except Exception as error:
            return failure(request, Code.TOOL_INTERNAL_ERROR, repr(error))

    outcomes = await asyncio.gather(*(answered(request) for request in batch))
    by_id = {outcome.call_id: outcome for outcome in outcomes}
    return [(request.call_id, by_id[request.call_id]) for request in batch]

print(await asyncio.sleep(0, "a cell can await at top level, as in Jupyter"))
'''


def _status(text: str, nb: Notebook | None = None) -> Notebook:
    return edited(nb or solved("05_partial_success"), "exercise", lambda s: text)


def appended(nb: Notebook, text: str) -> Notebook:
    out = copy.deepcopy(nb)
    out["cells"].append(code(text))
    return out


def untagged(nb: Notebook) -> Notebook:
    out = copy.deepcopy(nb)
    for cell in out["cells"]:
        cell["metadata"] = {}
    return out


def _fake_outputs(nb: Notebook) -> Notebook:
    out = copy.deepcopy(nb)
    for cell in out["cells"]:
        if "check" in tags(cell):
            cell["outputs"] = [{"output_type": "stream", "name": "stdout",
                                "text": ["make_batches: PASSED (4/4 checks)\n"]}]
    return out


def _solved_with(text: str, nb: Notebook | None = None, nth: int = 0) -> Notebook:
    return edited(nb or solved("03_batching"), "exercise", lambda s: text, nth)


# name: (notebook or file text, points, max points, hints by exercise, pieces of the error)
CASES: dict[str, tuple[Notebook | str, int, int, dict[str, str | None], list[str]]] = {
    "solved": (solved("03_batching"), 2, 2, {"make_batches": None}, []),
    "solution_edition": (json.loads((NOTEBOOKS / "solutions" / "03_batching.ipynb")
                                    .read_text("utf-8")), 2, 2, {"make_batches": None}, []),
    "unsolved": (learner("03_batching"), 0, 2, {"make_batches": "not attempted"},
                 ["not started"]),
    "wrong": (_solved_with(ALL_ALONE), 0, 2, {"make_batches": "EXPECTED"}, []),
    "half_right": (_solved_with(BY_POSITION, solved("02_pairing"), 1), 1, 3,
                   {"count_in_order": None, "pair_results": "EXPECTED"}, []),
    "tampered_fake_passed": (_fake_outputs(_solved_with(FAKE_PASS)), 0, 2,
                             {"make_batches": "case 0"}, []),
    "tampered_monkeypatch": (inserted(_solved_with(PATCHED_AT_DEFINITION),
                                      "check = lambda fn: print('PASSED')"), 0, 2,
                             {"make_batches": "refused: the notebook changed the lab's code"},
                             ["changed the lab's code: keel_checks"]),
    # the verdict is the grader's: a Verdict patched in the submission's process changes nothing
    "tampered_while_checked": (_solved_with(PATCHED_WHILE_CHECKED, solved("02_pairing"), 1), 1,
                               3, {"count_in_order": None, "pair_results": "paired with nothing"},
                               []),
    "tampered_check_cell": (edited(solved("03_batching"), "check",
                                   lambda s: 'print("make_batches: PASSED (4/4 checks)")'),
                            0, 2, {"make_batches": "check cell of make_batches was edited"},
                            ["check cell of make_batches was edited"]),
    "broken_not_a_notebook": ('{"hello": "world"}', 0, 0, {}, ["not a notebook"]),
    "broken_invalid_json": (json.dumps(solved("03_batching"))[:5000], 0, 0, {}, ["not valid JSON"]),
    "broken_deleted_function": (_solved_with(""), 0, 2,
                                {"make_batches": "no function make_batches"},
                                ["no function make_batches in the notebook"]),
    "broken_renamed_function": (_solved_with(ALL_ALONE.replace("make_batches", "batches")), 0, 2,
                                {"make_batches": "no function make_batches"},
                                ["deleted or renamed"]),
    "broken_exit": (_solved_with(EXITS), 0, 2, {"make_batches": "not checked"},
                    ["the process ended (exit code 3) before grading finished while checking "
                     "make_batches"]),
    "broken_segfault": (_solved_with(SEGFAULT), 0, 2, {"make_batches": "not checked"},
                        ["the process crashed (SIGSEGV) while checking make_batches"]),
    "broken_import": (_solved_with("import keel_lab_no_such_module\n" + ALL_ALONE), 0, 2,
                      {"make_batches": "make_batches was not defined"},
                      ["raised ModuleNotFoundError: No module named 'keel_lab_no_such_module'"]),
    "unused_broken_import": (inserted(solved("03_batching"), "import keel_lab_no_such_module"),
                             2, 2, {"make_batches": None}, []),  # not imported: nothing uses it
    "broken_raises_at_definition": (_solved_with('raise RuntimeError("boom")\n' + ALL_ALONE), 0,
                                    2, {"make_batches": "make_batches was not defined"},
                                    ["raised RuntimeError: boom"]),
    "broken_gigantic_output": (_solved_with(SHOUTS), 0, 2, {"make_batches": "EXPECTED"}, []),
    "no_chapter": (learner("08a_screen_frames"), 0, 0, {}, ["no exercise of the course"]),
    "unsolved_last_chapter": (learner("08_production"), 0, 2,
                              {"calls_to_resume": "not attempted"}, ["not started"]),
    # T2's submissions
    "t2_profile_rewrites_verdict": (_status(PROFILE_REWRITES_VERDICT), 0, 3,
                                    {"status_history": "refused"}, ["sys.getprofile()"]),
    "t2_frame_walk_swaps_results": (_status(FRAME_WALK), 0, 3,
                                    {"status_history": "a lookup of a missing incident"}, []),
    "t2_swap_during_verify": (_status(SWAP_IN_CALL), 0, 3,
                              {"status_history": "a lookup of a missing incident"}, []),
    "t2_code_copy": (_status(CODE_COPY), 0, 3, {"status_history": "refused"},
                     ["ran a copy of the lab's own run_status"]),
    "t2_reads_solutions": (_status(READS_SOLUTIONS), 0, 3,
                           {"status_history": "FileNotFoundError"}, []),
    "t2_table_of_counts": (_solved_with(TABLE_COUNT, solved("02_pairing")), 2, 3,
                           {"count_in_order": "count_in_order(", "pair_results": None}, []),
    # every fair spelling is judged as the exercise it is bound to, here as in the notebook
    "fair_lambda": (_status(LAMBDA), 3, 3, {"status_history": None}, []),
    "fair_callable_instance": (_status(INSTANCE), 3, 3, {"status_history": None}, []),
    "fair_partial": (_status(PARTIAL_OF_RIGHT), 3, 3, {"status_history": None}, []),
    "fair_renamed": (_status(RENAMED), 3, 3, {"status_history": None}, []),
    "wrong_lambda_gets_the_exercises_hint": (_status(WRONG_LAMBDA), 0, 3,
                                             {"status_history": "got ['completed']"}, []),
    "fair_def_inside_if": (_status(IN_IF), 3, 3, {"status_history": None}, []),
    "fair_no_tags": (untagged(solved("05_partial_success")), 3, 3, {"status_history": None},
                     []),
    "fair_top_level_await": (edited(solved("06_faults"), "exercise", lambda s: AWAIT_AT_TOP), 3,
                             3, {"collect_batch": None}, []),
    "right_at_check_wrong_after": (appended(_status(RIGHT), WRONG), 3, 3,
                                   {"status_history": None}, []),
    "wrong_at_check_right_after": (appended(_status(WRONG), RIGHT), 0, 3,
                                   {"status_history": "got ['completed']"}, []),
    "constant_from_other_cell": (inserted(_status(COMPUTED_CONSTANT), "FATAL = frozenset("
                                          "{'unknown_tool', 'tool_internal_error', "
                                          "'invalid_tool_output'})"), 3, 3,
                                 {"status_history": None}, []),
}


def _expected_hint(exercise: str, text: str) -> str:
    """The hint the grader gives: the check's, on the inputs it drew for this run."""
    namespace: dict[str, Any] = {}
    exec(text, namespace)
    with drawn(sandbox._SEED):
        hint = VERIFIERS[exercise](namespace[exercise]).hints[0]
        return short(hint, MAX_HINT)  # as a row holds it


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Row]:
    folder = tmp_path_factory.mktemp("class")
    paths = []
    for name, (content, *_) in CASES.items():
        path = folder / f"{name}.ipynb"
        path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")
        paths.append(path)
    rows = grade(paths, timeout=60, jobs=2)
    return {Path(row.path).stem: row for row in rows}


@pytest.mark.parametrize("name", list(CASES))
def test_each_submission_gets_its_points_hints_and_error(graded, name):
    _, points, max_points, hints, errors = CASES[name]
    row = graded[name]
    assert (row.points, row.max_points) == (points, max_points), row
    assert {x.name: x.hint is None for x in row.exercises} == {
        x: h is None for x, h in hints.items()}, row
    for x in row.exercises:
        expected = hints[x.name]
        if expected == "EXPECTED":
            text = ALL_ALONE if x.name == "make_batches" else BY_POSITION
            expected = _expected_hint(x.name, text)
        assert expected is None or (x.hint is not None and expected in x.hint), (x, expected)
        assert x.passed is (x.hint is None) and x.points == (x.max_points if x.passed else 0)
    if errors:
        assert row.error is not None and all(e in row.error for e in errors), row.error
    else:
        assert row.error is None, row.error


def test_rows_come_back_in_the_order_given(graded):
    assert list(graded) == list(CASES)


def test_a_chapter_is_named_by_its_notebook(graded):
    assert graded["solved"].chapter == "03_batching"
    assert graded["half_right"].chapter == "02_pairing"
    assert graded["broken_renamed_function"].chapter == "03_batching"  # by its check cell
    assert graded["broken_invalid_json"].chapter is None


def test_a_loop_is_stopped_at_the_time_limit_and_keeps_earlier_verdicts(tmp_path):
    nb = edited(solved("02_pairing"), "exercise", lambda s: LOOPS.replace(
        "make_batches(requests, tools)", "pair_results(calls, results)"), 1)
    path = tmp_path / "loops.ipynb"
    path.write_text(json.dumps(nb), "utf-8")
    row = grade_one(path, timeout=20)
    assert row.error == "timed out after 20 s while checking pair_results"
    assert [(x.name, x.passed) for x in row.exercises] == [("count_in_order", True),
                                                         ("pair_results", False)]
    assert row.exercises[1].hint == "not checked: " + row.error


def test_folders_are_searched_without_checkpoints_or_links(tmp_path):
    (tmp_path / "a" / ".ipynb_checkpoints").mkdir(parents=True)
    (tmp_path / "a" / "one.ipynb").write_text("{}")
    (tmp_path / "a" / ".ipynb_checkpoints" / "one-checkpoint.ipynb").write_text("{}")
    (tmp_path / "a" / "notes.txt").write_text("")
    (tmp_path / "b.json").write_text("{}")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    warnings: list[str] = []
    found = find_submissions([tmp_path, tmp_path / "b.json", tmp_path / "a" / "one.ipynb",
                              tmp_path / "missing.ipynb"], warnings.append)
    assert found == [tmp_path / "a" / "one.ipynb", tmp_path / "b.json"]
    assert warnings == [f"{tmp_path / 'missing.ipynb'}: no such file or folder"]


def test_nothing_to_grade_is_a_lab_error(tmp_path):
    with pytest.raises(LabError, match="no notebook to grade"):
        find_submissions([tmp_path / "nope", tmp_path], lambda _: None)


def test_a_fifo_in_a_folder_gets_its_row_without_blocking_and_any_case_is_found(tmp_path):
    os.mkfifo(tmp_path / "05_partial_success.ipynb")
    (tmp_path / "SHOUTED.IPYNB").write_text("{}")
    found = find_submissions([tmp_path], lambda _: None)
    assert sorted(p.name for p in found) == ["05_partial_success.ipynb", "SHOUTED.IPYNB"]
    row = grade_one(tmp_path / "05_partial_success.ipynb")
    assert row.error is not None and "a FIFO" in row.error
    # the chapter its name gives: the gradebook sees what it was worth
    assert (row.chapter, row.points, row.max_points) == ("05_partial_success", 0, 3)


def test_count_in_order_is_graded_on_inputs_drawn_for_the_run():
    namespace: dict[str, Any] = {}
    exec(TABLE_COUNT, namespace)
    table = namespace["count_in_order"]
    assert VERIFIERS["count_in_order"](table).passed  # the notebook's own fixed inputs
    assert not VERIFIERS["count_in_order"](table, drawn_from=12345).passed
