"""Chapter 7's check: wrong answers fail with the hint that names the mistake, right answers
written in other styles pass."""

import json
import random

import pytest

from keel_checks import check
from keel_checks.providers import (
    Recorder,
    _cases,
    recorded_output,
    response_output,
    verify_answer_responses,
)

pytestmark = pytest.mark.ch7


def answer_responses(output, run):
    return [{"type": "function_call_output", "call_id": i["call_id"],
             "output": '{"error": "item incomplete: not run"}'
             if i.get("status") == "incomplete" else run(i["name"], i["arguments"])}
            for i in output if i["type"] == "function_call"]


def right_loop_with_envelope(output, run):
    answers = []
    for item in output:
        if item.get("type") != "function_call":
            continue
        if item.get("status") == "incomplete":
            body = {"ok": False, "error": {"code": "item_incomplete", "message": "not run"}}
        else:
            body = {"ok": True, "data": run(item["name"], json.loads(item["arguments"]))}
        answers.append(dict(type="function_call_output", call_id=item["call_id"],
                            output=json.dumps(body)))
    return list(reversed(answers))  # any order: the call_id pairs them


def right_generator(output, run):
    for item in output:
        if item["type"] == "function_call":
            yield {"call_id": item["call_id"], "type": "function_call_output",
                   "output": run(item["name"], item["arguments"])
                   if item["status"] == "completed" else "Refused: Incomplete item."}


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



# --- a tester's answers who had not read the check (issue 22) ---


def item_id_not_call_id(output, run):
    return [{"type": "function_call_output", "call_id": item["id"],
             "output": run(item["name"], item["arguments"])}
            for item in output if item["type"] == "function_call"]


def answers_every_item(output, run):
    answers = []
    for item in output:
        if item["type"] == "function_call":  # noqa: SIM108
            result = run(item["name"], item["arguments"])
        else:
            result = ""
        answers.append({"type": "function_call_output",
                        "call_id": item.get("call_id", item.get("id")),
                        "output": result})
    return answers


def runs_twice(output, run):
    answers = []
    for item in output:
        if item["type"] == "function_call":  # noqa: SIM102
            if run(item["name"], item["arguments"]) is not None:
                answers.append({"type": "function_call_output", "call_id": item["call_id"],
                                "output": run(item["name"], item["arguments"])})
    return answers


def wrong_type_name(output, run):
    return [{"type": "function_call_result", "call_id": item["call_id"],
             "output": run(item["name"], item["arguments"])}
            for item in output if item["type"] == "function_call"]


def cache_by_name(output, run):
    cache = {}
    answers = []
    for item in output:
        if item["type"] == "function_call":
            if item["name"] not in cache:
                cache[item["name"]] = run(item["name"], item["arguments"])
            answers.append({"type": "function_call_output", "call_id": item["call_id"],
                            "output": cache[item["name"]]})
    return answers


def dict_by_call_id(output, run):
    return {item["call_id"]: run(item["name"], item["arguments"])
            for item in output if item["type"] == "function_call"}


def attribute_access(output, run):
    return [{"type": "function_call_output", "call_id": item.call_id,
             "output": run(item.name, item.arguments)}
            for item in output if item.type == "function_call"]


def first_call_only(output, run):
    item = next(i for i in output if i["type"] == "function_call")
    return [{"type": "function_call_output", "call_id": item["call_id"],
             "output": run(item["name"], item["arguments"])}]


def items_rewritten_in_place(output, run):
    answers = []
    for item in output:
        if item["type"] == "function_call":
            item["output"] = run(item["name"], item["arguments"])
            item["type"] = "function_call_output"
            answers.append(item)
    return answers


def call_id_derived_from_item_id(output, run):
    return [{"type": "function_call_output", "call_id": "call_" + item["id"][3:],
             "output": run(item["name"], item["arguments"])}
            for item in output if item["type"] == "function_call"]


def prints_outputs(output, run):
    for item in output:
        if item["type"] == "function_call":
            print({"type": "function_call_output", "call_id": item["call_id"],
                   "output": run(item["name"], item["arguments"])})


def results_zipped_with_calls_reversed(output, run):
    calls = [i for i in output if i["type"] == "function_call"]
    results = [run(c["name"], c["arguments"]) for c in reversed(calls)]
    return [{"type": "function_call_output", "call_id": c["call_id"], "output": r}
            for c, r in zip(calls, results)]  # noqa: B905


def missing_type_key(output, run):
    return [{"call_id": item["call_id"], "output": run(item["name"], item["arguments"])}
            for item in output if item["type"] == "function_call"]


# --- answers that skip the new step (issue 31): tools the provider ran, an incomplete item ---


def one_liner(output, run):
    return [{"type": "function_call_output", "call_id": item["call_id"],
             "output": run(item["name"], item["arguments"])}
            for item in output if item["type"] == "function_call"]


def only_completed_items(output, run):
    return [{"type": "function_call_output", "call_id": item["call_id"],
             "output": run(item["name"], item["arguments"])}
            for item in output
            if item["type"] == "function_call" and item["status"] == "completed"]


def runs_when_the_arguments_parse(output, run):
    answers = []
    for item in output:
        if item["type"] != "function_call":
            continue
        try:
            json.loads(item["arguments"])
        except ValueError:
            result = json.dumps({"error": "arguments cut off"})
        else:
            result = run(item["name"], item["arguments"])
        answers.append({"type": "function_call_output", "call_id": item["call_id"],
                        "output": result})
    return answers


def an_empty_error(output, run):
    return [{"type": "function_call_output", "call_id": item["call_id"],
             "output": "" if item["status"] == "incomplete"
             else run(item["name"], item["arguments"])}
            for item in output if item["type"] == "function_call"]


def error_as_an_object(output, run):
    return [{"type": "function_call_output", "call_id": item["call_id"],
             "output": {"error": "item incomplete"} if item["status"] == "incomplete"
             else run(item["name"], item["arguments"])}
            for item in output if item["type"] == "function_call"]


def refuses_the_whole_turn(output, run):
    calls = [item for item in output if item["type"] == "function_call"]
    cut = any(c["status"] == "incomplete" for c in calls)
    return [{"type": "function_call_output", "call_id": c["call_id"],
             "output": '{"error": "turn incomplete"}' if cut else run(c["name"], c["arguments"])}
            for c in calls]


def answers_every_tool_call(output, run):
    return [{"type": "function_call_output", "call_id": item.get("call_id") or item["id"],
             "output": run(item.get("name", item["type"]), item.get("arguments") or "{}")}
            for item in output if item["type"].endswith("_call")]


def answers_items_with_a_name(output, run):
    return [{"type": "function_call_output", "call_id": item.get("call_id", item["id"]),
             "output": run(item["name"], item["arguments"])}
            for item in output if "name" in item]


WRONG = [
    (wrong_item_id, "not the output item's id (fc_...)"),
    (wrong_sorted_pairing, "got the result of call_"),
    (wrong_runs_twice, "each call runs exactly once"),
    (wrong_dict_output, "the API takes text"),
    (wrong_every_item, "only function_call items get an output"),
    (wrong_stops_at_message, "got 0 outputs: every call gets exactly one"),
    (wrong_type, "'function_call_output'"),
    (item_id_not_call_id, "pair by the call's call_id (call_h8oOOL8dKLzdocJ2isAjIhKt), not the "
                          "output item's id (fc_...)"),
    (answers_every_item, "an output answers the reasoning item rs_Ty4Qwb8DwkNhFdnXsiVpzz63: "
                         "only function_call items get an output"),
    (runs_twice, "call_MFLZDe1...]: run was called 6 times for 3 calls: each call runs exactly "
                 "once (side effects would repeat)"),
    (wrong_type_name, "call_MFLZDe1...]: an item has type 'function_call_result': a result goes "
                      "back as 'function_call_output'"),
    (cache_by_name, "call_MxEhh2F...]: run was called 1 times for 2 calls: each call runs "
                    "exactly once - some call was never run"),
    (dict_by_call_id, "function_call search_logs call_MFLZDe1...]: return a list of input items "
                      "(one dict per call), got a dict"),
    (attribute_access, "search_logs call_MFLZDe1...]: your function raised AttributeError: "
                       "'dict' object has no attribute 'type'"),
    (first_call_only, "call call_DL7DxtpYlSXpfKtHF4vUCsMe (lookup_incident) got 0 outputs: "
                      "every call gets exactly one"),
    (items_rewritten_in_place, "call_MFLZDe1...]: an output carries call_id "
                               "'call_h8oOOL8dKLzdocJ2isAjIhKt', which no function_call item has"),
    (call_id_derived_from_item_id, "call_MFLZDe1...]: an output carries call_id "
                                   "'call_Pde0IgxLd6GncfBAepfJBd0K', which no function_call "
                                   "item has"),
    (prints_outputs, "function_call search_logs call_MFLZDe1...]: your function returned None - "
                     "is a `return` missing?"),
    (results_zipped_with_calls_reversed, "got the result of call_MFLZDe1f8rESQedUStPKR0Cs: run "
                                         "each call and put its own result in its output"),
    (missing_type_key, "search_logs call_MFLZDe1...]: an item has type None: a result goes back "
                       "as 'function_call_output'"),
    (one_liner, "get_service_status call_6nsBvBq... incomplete, function_call search_logs "
                "call_gacm06E..., mcp_call]: call call_6nsBvBqJd0ssw0FzvGr3GwnP ran, though its "
                "item is incomplete: its arguments may be cut even when they parse (the lab's "
                "policy: such a call never runs)"),
    (only_completed_items, "call call_6nsBvBqJd0ssw0FzvGr3GwnP (get_service_status) got no "
                           "output: its item is incomplete, yet every call gets exactly one "
                           "output"),
    (runs_when_the_arguments_parse, "call call_6nsBvBqJd0ssw0FzvGr3GwnP ran, though its item is "
                                    "incomplete: its arguments may be cut even when they parse"),
    (an_empty_error, "mcp_call]: the output of call_6nsBvBqJd0ssw0FzvGr3GwnP, '', does not say "
                     "why the call did not run: the model reads it"),
    (error_as_an_object, "mcp_call]: output of call_6nsBvBqJd0ssw0FzvGr3GwnP is a dict: the API "
                         "takes text"),
    (refuses_the_whole_turn, "mcp_call]: run was called 0 times for 2 calls: each call runs "
                             "exactly once - some call was never run"),
    (answers_every_tool_call, "case 14 [tool_search_call, tool_search_output, function_call "
                              "get_weather call_pddfxhf...]: an output answers the "
                              "tool_search_call item tsc_08a14073c7135dc10069aa686296c88190bff77"
                              "ad137e79d59, the provider's own tool item (it ran and answered it "
                              "itself): only function_call items get an output"),
    (answers_items_with_a_name, "mcp_call]: an output answers the mcp_call item "
                                "mcp_00b9cc7a23d047270068faa0e67fb0819fa9e21302c398e9ac, the "
                                "provider's own tool item (it ran and answered it itself): only "
                                "function_call items get an output"),
]

# this module's tables of known-wrong answers, by exercise (the instructor's guide shows them)
WRONG_ANSWERS = {"answer_responses": WRONG}


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


def test_the_real_turns_are_read_from_the_recordings():
    cases = _cases()
    assert [i["type"] for i in cases[14]] == ["tool_search_call", "tool_search_output",
                                              "function_call"]
    assert {"web_search_call", "mcp_call"} <= {i["type"] for i in cases[15]}
    assert all(i["id"] in {r["id"] for r in recorded_output(name)} for i, name in [
        (cases[14][2], "responses_tool_search_then_call.jsonl"),
        (cases[16][1], "responses_reasoning_then_call.sse")])
    cut_calls = [[i["call_id"] for i in c if i.get("status") == "incomplete"] for c in cases]
    assert cut_calls == [[]] * 15 + [[cases[15][4]["call_id"]], [cases[16][1]["call_id"]]]
    assert all(json.loads(i["arguments"]) for c in cases for i in c if i.get("status") ==
               "incomplete")  # they parse: only the status says they may be cut


def test_generated_outputs_look_like_the_api():
    output = response_output(random.Random(0), 3)
    calls = [i for i in output if i["type"] == "function_call"]
    assert output[0]["type"] == "reasoning" and len(calls) == 3
    assert all(c["id"].startswith("fc_") and c["call_id"].startswith("call_") for c in calls)
    assert len({c["call_id"] for c in calls}) == 3
    run = Recorder()
    assert json.loads(run("lookup_incident", '{"incident_id": "INC-001"}'))["result"]
    assert run.runs == [("lookup_incident", '{"incident_id": "INC-001"}')]
