"""Chapter 7, providers: answering a Responses API turn - one `function_call_output` per
`function_call` item, keyed by the call's `call_id`, never by the item's own `id` (`fc_...`);
none for the items of tools the provider ran itself (real ones, from `data/recordings/openai/`);
and, the lab's policy (`item_incomplete`, docs/stream-quirks.md), a call whose item ended
`incomplete` is answered with an error that says so and never run."""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from keel_checks.verdict import Verdict, describe, guard, labelled, seeded
from keel_lab._i18n import N_, _
from keel_lab.course import _data as data
from keel_lab.providers._diagnosis import read_stream

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


def recorded_output(name: str, *kinds: str) -> list[dict[str, Any]]:
    """A real turn's `output` items (`data/recordings/openai/NAME`), as its
    `output_item.done` events carry them; with `kinds`, only the items of those types."""
    records = read_stream(data.path("recordings", "openai", name))[1]
    done = sorted((r for r in records if isinstance(r, dict)
                   and r.get("type") == "response.output_item.done"),
                  key=lambda r: r["output_index"])
    return [r["item"] for r in done if not kinds or r["item"]["type"] in kinds]


def cut(output: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """The turn with one function call's item ended `incomplete`, its arguments whole: no
    recording holds one, so the status is the lab's edit of a real or generated item."""
    rng.choice([i for i in output if i["type"] == "function_call"])["status"] = "incomplete"
    return output


def incomplete(item: dict[str, Any]) -> bool:
    return item["type"] == "function_call" and item.get("status") == "incomplete"


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


def _key(item: dict[str, Any]) -> tuple[str, str]:
    """A function_call item as `Recorder.runs` records it when it runs."""
    return item["name"], json.dumps(json.loads(item["arguments"] or "{}"), sort_keys=True)


ONE_EACH = N_("{n} responses: one function_call_output per function_call item, none for "
              "other items (reasoning, message, a tool the provider ran)")
CALL_IDS = N_("each output carries its call's call_id (not the item id fc_...)")
OWN = N_("each output holds its own call's result; each call ran exactly once")
INCOMPLETE = N_("a call whose item is incomplete never ran; its output says so (the lab's "
                "policy)")


def _cases() -> list[list[dict[str, Any]]]:
    """Generated turns, then real ones: a tool search the provider ran beside a call; a real
    web search and MCP call among generated calls, one of them incomplete; a real turn whose
    one call is incomplete. The generated ones come first, drawn as they always were."""
    rng = random.Random(seeded(7))
    cases = [response_output(rng, 3)] + [
        response_output(rng, rng.randint(1, 5), extras=rng.random() < 0.8)
        for _ in range(12)] + [response_output(rng, 3, twins=True)]
    mixed = response_output(rng, 3)
    for item in (recorded_output("responses_web_search.sse", "web_search_call")
                 + recorded_output("responses_mcp_call.sse", "mcp_call")):
        mixed.insert(rng.randint(0, len(mixed)), item)
    return [*cases, recorded_output("responses_tool_search_then_call.jsonl"), cut(mixed, rng),
            cut(recorded_output("responses_reasoning_then_call.sse"), rng)]


def _shown(n: int, output: list[dict[str, Any]]) -> str:
    """A case's items, compactly: `reasoning, function_call lookup_incident call_x1...`, a
    call's status when it is `incomplete`."""
    items = ", ".join(f"function_call {i['name']} {i['call_id'][:12]}..."
                      + (" incomplete" if incomplete(i) else "")
                      if i["type"] == "function_call" else i["type"] for i in output)
    return _("case {n} [{items}]").format(n=n, items=items)


def verify_answer_responses(fn: AnswerResponses) -> Verdict:
    cases = _cases()
    v = Verdict("answer_responses", [_(ONE_EACH).format(n=len(cases)), CALL_IDS, OWN,
                                     INCOMPLETE])
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
                          for label, output, items, _ in answers)) and \
            v.first(OWN, (labelled(label, _own(output, items, run))
                          for label, output, items, run in answers)):
        v.first(INCOMPLETE, (labelled(label, _incomplete(output, items, run))
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
        kind = by_item_id[key]["type"] if key in by_item_id else "function_call"
        if key not in by_call_id and kind in ("reasoning", "message"):
            return _("an output answers the {type} item {id}: only function_call items get "
                     "an output").format(type=kind, id=key)
        if key not in by_call_id and kind != "function_call":
            return _("an output answers the {type} item {id}, the provider's own tool item (it "
                     "ran and answered it itself): only function_call items get an output"
                     ).format(type=kind, id=key)
        if key not in by_item_id and key not in by_call_id:
            return _("an output carries call_id {id}, which no function_call item has").format(
                id=repr(key))
    answered = [by_item_id[k]["call_id"] if k in by_item_id else k
                for k in (item.get("call_id") for item in got)]
    for c in calls:
        count = answered.count(c["call_id"])
        if count == 0 and incomplete(c):
            return _("call {id} ({name}) got no output: its item is incomplete, yet every call "
                     "gets exactly one output").format(id=c["call_id"], name=c["name"])
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
    """The calls that may run (an incomplete one is `_incomplete`'s): each ran once, and its
    output holds its own result."""
    calls = [i for i in output if i["type"] == "function_call" and not incomplete(i)]
    by_call_id = {c["call_id"]: c for c in calls}
    refused = {_key(i) for i in output if incomplete(i)}
    runs = [r for r in run.runs if r not in refused]
    if len(runs) != len(calls):
        return (_("run was called {n} times for {calls} calls: each call runs exactly once")
                .format(n=len(runs), calls=len(calls))
                + (_(" (side effects would repeat)") if len(runs) > len(calls)
                   else _(" - some call was never run")))
    for item in (i for i in got if i["call_id"] in by_call_id):
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


def _incomplete(output: list[dict[str, Any]], got: list[dict[str, Any]], run: Recorder) -> str:
    """An incomplete call never ran (not even once beside its output), and its output, text,
    gives the model the reason."""
    for call in filter(incomplete, output):
        text = next(i.get("output") for i in got if i["call_id"] == call["call_id"])
        if _key(call) in run.runs:
            return _("call {id} ran, though its item is incomplete: its arguments may be cut "
                     "even when they parse (the lab's policy: such a call never runs)").format(
                         id=call["call_id"])
        if not isinstance(text, str):
            return _("output of {id} is {value}: the API takes text").format(
                id=call["call_id"], value=describe(text))
        if not text.strip():  # what it says is the learner's to word: judged by code, not text
            return _("the output of {id}, {text}, does not say why the call did not run: the "
                     "model reads it").format(id=call["call_id"], text=repr(text))
    return ""
