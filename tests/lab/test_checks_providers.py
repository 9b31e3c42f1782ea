"""Chapter 7's check: wrong answers fail with the hint that names the mistake, right answers
written in other styles pass."""

import json
import random

import pytest

from keel_lab.course.checks import check
from keel_lab.course.checks.providers import Recorder, response_output, verify_answer_responses


def answer_responses(output, run):
    return [{"type": "function_call_output", "call_id": i["call_id"],
             "output": run(i["name"], i["arguments"])}
            for i in output if i["type"] == "function_call"]


def right_loop_with_envelope(output, run):
    answers = []
    for item in output:
        if item.get("type") != "function_call":
            continue
        result = run(item["name"], json.loads(item["arguments"]))  # parsed arguments
        answers.append(dict(type="function_call_output", call_id=item["call_id"],
                            output=json.dumps({"ok": True, "data": result})))
    return list(reversed(answers))  # any order: the call_id pairs them


def right_generator(output, run):
    for item in output:
        if item["type"] == "function_call":
            yield {"call_id": item["call_id"], "type": "function_call_output",
                   "output": run(item["name"], item["arguments"])}


def wrong_item_id(output, run):
    return [{"type": "function_call_output", "call_id": i["id"],
             "output": run(i["name"], i["arguments"])}
            for i in output if i["type"] == "function_call"]


def wrong_sorted_pairing(output, run):
    calls = [i for i in output if i["type"] == "function_call"]
    results = [run(c["name"], c["arguments"]) for c in calls]
    ordered = sorted(calls, key=lambda c: c["call_id"])
    return [{"type": "function_call_output", "call_id": c["call_id"], "output": r}
            for c, r in zip(ordered, results, strict=True)]


def wrong_runs_twice(output, run):
    calls = [i for i in output if i["type"] == "function_call"]
    for c in calls:
        run(c["name"], c["arguments"])  # "check it works" first
    return [{"type": "function_call_output", "call_id": c["call_id"],
             "output": run(c["name"], c["arguments"])} for c in calls]


def wrong_dict_output(output, run):
    return [{"type": "function_call_output", "call_id": i["call_id"],
             "output": json.loads(run(i["name"], i["arguments"]))}
            for i in output if i["type"] == "function_call"]


def wrong_every_item(output, run):
    return [{"type": "function_call_output", "call_id": i.get("call_id", i["id"]),
             "output": run(i.get("name", ""), i.get("arguments", "{}"))} for i in output]


def wrong_stops_at_message(output, run):
    answers = []
    for item in output[1:]:
        if item["type"] != "function_call":
            break
        answers.append({"type": "function_call_output", "call_id": item["call_id"],
                        "output": run(item["name"], item["arguments"])})
    return answers


def wrong_type(output, run):
    return [{"type": "function_call", "call_id": i["call_id"],
             "output": run(i["name"], i["arguments"])}
            for i in output if i["type"] == "function_call"]


WRONG = [
    (wrong_item_id, "not the output item's id (fc_...)"),
    (wrong_sorted_pairing, "got the result of call_"),
    (wrong_runs_twice, "each call runs exactly once"),
    (wrong_dict_output, "the API takes text"),
    (wrong_every_item, "only function_call items get an output"),
    (wrong_stops_at_message, "got 0 outputs: every call gets exactly one"),
    (wrong_type, "'function_call_output'"),
]


@pytest.mark.parametrize("fn,hint", WRONG, ids=[f.__name__ for f, _ in WRONG])
def test_wrong_answers_fail_with_their_hint(fn, hint):
    verdict = verify_answer_responses(fn)
    assert not verdict.passed
    assert hint in str(verdict), str(verdict)


@pytest.mark.parametrize("fn", [answer_responses, right_loop_with_envelope, right_generator])
def test_right_answers_pass_with_the_same_lines(fn):
    verdict = verify_answer_responses(fn)
    assert verdict.passed, str(verdict)
    assert verdict.lines() == verify_answer_responses(answer_responses).lines()


def test_unsolved_and_raising_answers_say_so():
    def answer_responses(output, run):
        raise NotImplementedError

    assert "not implemented yet" in str(verify_answer_responses(answer_responses))

    def crashing(output, run):
        return [output[0]["call_id"]]

    text = str(verify_answer_responses(crashing))
    assert "KeyError" in text and "NOT YET" in text


def test_check_finds_the_exercise_by_name(capsys):
    check(answer_responses)
    assert "answer_responses: PASSED" in capsys.readouterr().out


def test_generated_outputs_look_like_the_api():
    output = response_output(random.Random(0), 3)
    calls = [i for i in output if i["type"] == "function_call"]
    assert output[0]["type"] == "reasoning" and len(calls) == 3
    assert all(c["id"].startswith("fc_") and c["call_id"].startswith("call_") for c in calls)
    assert len({c["call_id"] for c in calls}) == 3
    run = Recorder()
    assert json.loads(run("lookup_incident", '{"incident_id": "INC-001"}'))["result"]
    assert run.runs == [("lookup_incident", '{"incident_id": "INC-001"}')]
