"""Chapter 7, providers: answering a Responses API turn - one `function_call_output` per
`function_call` item, keyed by the call's `call_id`, never by the item's own `id` (`fc_...`)."""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from keel_checks.verdict import Verdict, describe, guard, labelled, seeded
from keel_lab._i18n import N_, _

Run = Callable[[str, Any], str]
AnswerResponses = Callable[[Sequence[dict[str, Any]], Run], Any]

CALLS = [("lookup_incident", {"incident_id": "INC-001"}),
         ("lookup_incident", {"incident_id": "INC-002"}),
         ("get_service_status", {"service": "checkout"}),
         ("search_logs", {"service": "auth-api", "query": "timeout"}),
         ("get_service_status", {"service": "reports"})]


def _token(rng: random.Random, n: int = 24) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def response_output(rng: random.Random, calls: int, extras: bool = True,
                    twins: bool = False) -> list[dict[str, Any]]:
    """A Responses `output` list shaped like the API's, with random `fc_` and `call_` ids
    (`twins`: two calls with the same name and arguments)."""
    chosen = rng.sample(CALLS, calls)
    if twins:
        chosen[-1] = chosen[0]
    items: list[dict[str, Any]] = [
        {"id": f"fc_{_token(rng)}", "type": "function_call", "status": "completed",
         "call_id": f"call_{_token(rng)}", "name": name, "arguments": json.dumps(args)}
        for name, args in chosen]
    if extras:
        items.insert(0, {"id": f"rs_{_token(rng)}", "type": "reasoning", "summary": []})
        items.insert(rng.randint(1, len(items) - 1), {
            "id": f"msg_{_token(rng)}", "type": "message", "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Let me check.", "annotations": []}]})
    return items


class Recorder:
    """The `run` a learner's function receives: it counts executions and answers each call
    with a result that names its arguments, so a swapped result is visible."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, str]] = []

    def __call__(self, name: str, arguments: Any) -> str:
        if isinstance(arguments, str):
            arguments = json.loads(arguments or "{}")
        self.runs.append((name, json.dumps(arguments, sort_keys=True)))
        return json.dumps({"result": _label(name, arguments)})


def _label(name: str, arguments: dict[str, Any]) -> str:
    """A call's unique result text, free of characters JSON would escape."""
    return f"{name}({', '.join(f'{k}={v}' for k, v in sorted(arguments.items()))})"


def result_text(item: dict[str, Any]) -> str:
    """What `Recorder` answers for a function_call item (its result's unique part)."""
    return _label(item["name"], json.loads(item["arguments"] or "{}"))


ONE_EACH = N_("{n} responses: one function_call_output per function_call item, none for "
              "reasoning or message items")
CALL_IDS = N_("each output carries its call's call_id (not the item id fc_...)")
OWN = N_("each output holds its own call's result; each call ran exactly once")


def _cases() -> list[list[dict[str, Any]]]:
    rng = random.Random(seeded(7))
    return [response_output(rng, 3)] + [
        response_output(rng, rng.randint(1, 5), extras=rng.random() < 0.8)
        for _ in range(12)] + [response_output(rng, 3, twins=True)]


def _shown(n: int, output: list[dict[str, Any]]) -> str:
    """A case's items, compactly: `reasoning, function_call lookup_incident call_x1...`."""
    items = ", ".join(f"function_call {i['name']} {i['call_id'][:12]}..."
                      if i["type"] == "function_call" else i["type"] for i in output)
    return _("case {n} [{items}]").format(n=n, items=items)


def verify_answer_responses(fn: AnswerResponses) -> Verdict:
    cases = _cases()
    v = Verdict("answer_responses", [_(ONE_EACH).format(n=len(cases)), CALL_IDS, OWN])
    answers: list[tuple[str, list[dict[str, Any]], list[Any], Recorder]] = []
    for n, output in enumerate(cases):
        run, label = Recorder(), _shown(n, output)
        got = guard(v, label, fn, output, run)
        if got is None:
            return v
        items = _items(got)
        problem = items if isinstance(items, str) else _one_each(output, items)
        if problem:
            v.add(False, "", labelled(label, problem))
            return v
        answers.append((label, output, list(items), run))
    v.add(True, v.checks[0], "")
    if v.first(CALL_IDS, (labelled(label, _call_ids(output, items))
                          for label, output, items, _ in answers)):
        v.first(OWN, (labelled(label, _own(output, items, run))
                      for label, output, items, run in answers))
    return v


def _items(got: Any) -> list[dict[str, Any]] | str:
    """The learner's items as a list of output dicts, or what is wrong with their shape."""
    if isinstance(got, (dict, str)) or not isinstance(got, Iterable):
        return _("return a list of input items (one dict per call), got {value}").format(
            value=describe(got))
    items = list(got)
    for item in items:
        if not isinstance(item, dict):
            return _("each input item is a dict, got {value}").format(value=describe(item))
        if item.get("type") != "function_call_output":
            return _("an item has type {type}: a result goes back as "
                     "'function_call_output'").format(type=repr(item.get("type")))
    return items


def _one_each(output: list[dict[str, Any]], got: list[dict[str, Any]]) -> str:
    """One output per function_call item (found by its call_id or, wrongly, its item id)."""
    calls = [i for i in output if i["type"] == "function_call"]
    by_call_id = {c["call_id"]: c for c in calls}
    by_item_id = {i["id"]: i for i in output}
    for item in got:
        key = item.get("call_id")
        if key in by_item_id and key not in by_call_id and by_item_id[key]["type"] != \
                "function_call":
            return _("an output answers the {type} item {id}: only function_call items get "
                     "an output").format(type=by_item_id[key]["type"], id=key)
        if key not in by_item_id and key not in by_call_id:
            return _("an output carries call_id {id}, which no function_call item has").format(
                id=repr(key))
    answered = [by_item_id[k]["call_id"] if k in by_item_id else k
                for k in (item.get("call_id") for item in got)]
    for c in calls:
        count = answered.count(c["call_id"])
        if count != 1:
            return _("call {id} ({name}) got {n} outputs: every call gets exactly one").format(
                id=c["call_id"], name=c["name"], n=count)
    return ""


def _call_ids(output: list[dict[str, Any]], got: list[dict[str, Any]]) -> str:
    by_item_id = {i["id"]: i for i in output}
    for item in got:
        key = item.get("call_id")
        if key in by_item_id:
            return _("an output carries the item id {id}: pair by the call's call_id "
                     "({call_id}), not the output item's id (fc_...)").format(
                         id=key, call_id=by_item_id[key]["call_id"])
    return ""


def _own(output: list[dict[str, Any]], got: list[dict[str, Any]], run: Recorder) -> str:
    calls = [i for i in output if i["type"] == "function_call"]
    by_call_id = {c["call_id"]: c for c in calls}
    if len(run.runs) != len(calls):
        return (_("run was called {n} times for {calls} calls: each call runs exactly once")
                .format(n=len(run.runs), calls=len(calls))
                + (_(" (side effects would repeat)") if len(run.runs) > len(calls)
                   else _(" - some call was never run")))
    for item in got:
        text, call = item.get("output"), by_call_id[item["call_id"]]
        if not isinstance(text, str):
            return _("output of {id} is {value}: the API takes text, e.g. the string run "
                     "returned").format(id=call["call_id"], value=describe(text))
        mine = result_text(call)
        if mine not in text:
            other = next((c["call_id"] for c in calls if result_text(c) in text), None)
            template = (_("call {id} got the result of {other}") if other
                        else _("call {id} got no result of its own"))
            return (template.format(id=call["call_id"], other=other)
                    + _(": run each call and put its own result in its output"))
    return ""
