"""OpenAI Responses API form of a conversation (`input` items), and its pairing rules.

A call is a `function_call` item with a `call_id` (`call_...`) and, when it came from the API,
an item `id` (`fc_...`); its result is a `function_call_output` item naming the same
`call_id`. The item id is not the call id (openai/openai-python#2852): an output that names
the item id answers nothing, so its call stays unanswered. Rules and where their texts come
from (OpenAI's 400 answers, `invalid_request_error` on `input`, as quoted in public threads):

- a call without an output later in the input: "No tool output found for function call ..."
  (router-for-me/CLIProxyAPI#2368);
- an output whose `call_id` names no earlier call: "No tool call found for function call output
  with call_id ..." (continuedev/continue#10092, microsoft/vscode#320060); when it names a
  call's item id instead, the lab adds which call was meant;
- a `function_call` item `id` that does not begin with `fc`: "Invalid 'input[N].id': ...
  Expected an ID that begins with 'fc'." (nodetool-ai/nodetool#4252);
- a custom tool's call (`custom_tool_call`, free-form `input` instead of `arguments`) without
  its `custom_tool_call_output`: "No tool output found for custom tool call ..."
  (diegosouzapw/OmniRoute#8946, from Codex desktop); both pair by `call_id` like a function's;
- a call_id used by two calls, or answered twice: the lab's own check.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import NoneType
from typing import Any

from keel_lab._core.errors import LabError
from keel_lab._core.history import HistoryProblem
from keel_lab._core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from keel_lab._core.protocol import ToolCall
from keel_lab._i18n import N_
from keel_lab.providers._fields import need, parts_text, shown, string_field, wrong

MISSING = "No tool output found for function call {id}."
MISSING_CUSTOM = "No tool output found for custom tool call {id}."
ORPHAN = "No tool call found for function call output with call_id {id}."
ITEM_ID = "Invalid 'input[{n}].id': {id}. Expected an ID that begins with 'fc'."
ROLES = ("user", "assistant", "system", "developer")
CALLS = ("function_call", "custom_tool_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")
CALL_ITEMS = CALLS + OUTPUTS


def to_responses(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """The `input` items of a Responses API request: a call is a `function_call` item with
    its `call_id` and no item id (the API makes one), a result a `function_call_output`."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, AssistantMessage):
            if m.content or not m.tool_calls:
                out.append({"role": "assistant", "content": m.content})
            out += [{"type": "function_call", "call_id": c.id, "name": c.name,
                     "arguments": c.arguments} for c in m.tool_calls]
        elif isinstance(m, ToolMessage):
            out.append({"type": "function_call_output", "call_id": m.tool_call_id,
                        "output": m.content})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def from_responses(items: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Lab messages from `input` items: an assistant message and the function calls after it
    are one assistant message; each output is a tool message. Other items (reasoning, ...)
    take no part. A malformed item raises `LabError` naming the item and the field."""
    out: list[Message] = []
    text = ""
    calls: list[ToolCall] = []
    names: dict[str, str] = {}
    open_turn = False
    for n, item in enumerate(items):
        kind, role = _item(item, n)
        if kind in CALLS or (role == "assistant" and not calls):
            if kind in CALLS:
                calls.append(ToolCall(item["call_id"], item["name"],
                                      item["arguments" if kind == "function_call" else "input"]))
                names[item["call_id"]] = item["name"]
            else:
                text += _text(item.get("content"))
            open_turn = True
            continue
        if open_turn:
            out.append(AssistantMessage(text, tuple(calls)))
            text, calls, open_turn = "", [], False
        if role == "assistant":
            text, open_turn = _text(item.get("content")), True
        elif kind in OUTPUTS:
            out.append(ToolMessage(item["call_id"], names.get(item["call_id"], ""),
                                   _text(item["output"])))
        elif role in ("system", "developer"):
            out.append(SystemMessage(_text(item.get("content"))))
        elif role == "user":
            out.append(UserMessage(_text(item.get("content"))))
    if open_turn:
        out.append(AssistantMessage(text, tuple(calls)))
    return out


def validate_responses(items: Sequence[Mapping[str, Any]],
                       previous: str | None = None) -> list[HistoryProblem]:
    """Every pairing problem of an `input` list, with OpenAI's wording where it is known; a
    malformed item raises `LabError` first, so nothing is skipped unread. With `previous` (the
    request's `previous_response_id`), an output may answer a call of that earlier response,
    which this input does not hold: such an output cannot be checked here, and is no problem."""
    kinds = [_item(item, n)[0] for n, item in enumerate(items)]
    problems: list[HistoryProblem] = []
    calls: dict[str, int] = {}  # call_id -> the position of its call item
    item_ids: dict[str, str] = {}  # item id -> its call_id
    answered: dict[str, int] = {}  # call_id -> the position of its output
    for n, (kind, item) in enumerate(zip(kinds, items, strict=True)):
        call_id: str = item.get("call_id") or ""
        if kind in CALLS:
            item_id = item.get("id")
            if kind == "function_call" and item_id is not None and not item_id.startswith("fc"):
                problems.append(HistoryProblem("invalid_item_id", ITEM_ID.format(
                    n=n, id=shown(item_id)), (call_id,), n))
            if call_id in calls:
                problems.append(HistoryProblem("duplicate_id", (
                    f"input[{n}]: call_id {call_id} was already used by input[{calls[call_id]}]"
                    "; each call needs its own (the lab's check)"), (call_id,), n))
            calls.setdefault(call_id, n)
            if item_id:
                item_ids.setdefault(item_id, call_id)
        elif kind in OUTPUTS:
            if call_id in answered:
                problems.append(HistoryProblem("duplicate_result", (
                    f"input[{n}]: a second {kind} for call_id {call_id} "
                    "(the lab's check: each call gets exactly one)"), (call_id,), n))
            elif call_id in calls:
                answered[call_id] = n
            elif previous is not None:
                answered[call_id] = n  # a call of the previous response, stored by OpenAI
            else:
                meant = item_ids.get(call_id)
                note = (f" (input[{n}] names the item id {call_id} of the "
                        f"{kinds[calls[meant]]} at input[{calls[meant]}], not its call_id "
                        f"{meant})" if meant else f" (input[{n}])")
                said = (ORPHAN.format(id=call_id) if kind == "function_call_output" else
                        f"no call has the call_id {call_id} this {kind} answers (the lab's "
                        "check)")
                problems.append(HistoryProblem("orphan_result", said + note, (call_id,), n))
    named = {item.get("call_id") for k, item in zip(kinds, items, strict=True)
             if k in OUTPUTS}
    item_of = {c: i for i, c in item_ids.items()}
    for call_id, n in calls.items():
        if call_id not in answered:
            misnamed = item_of.get(call_id) if item_of.get(call_id) in named else None
            note = (f" (input[{n}]: its output names the item id {misnamed}, not the call_id)"
                    if misnamed else f" (input[{n}])")
            missing = MISSING if kinds[n] == "function_call" else MISSING_CUSTOM
            problems.append(HistoryProblem("missing_results", missing.format(id=call_id) + note,
                                           (call_id,), n))
    return sorted(problems, key=lambda p: p.position)


def _item(item: Any, n: int) -> tuple[str, str | None]:
    """The kind and role of one input item, every field the pairing rules read checked."""
    where = f"input[{n}]"
    need(item, Mapping, where, "not_an_item", N_("{where}: expected an object (an input item), "
                                                 "got {type}"))
    for field in ("tool_calls", "tool_call_id"):
        if field in item:
            raise LabError("foreign_field", N_(
                "{where}.{field}: OpenAI chat's field, not the Responses API's (calls are "
                "function_call items; a history cannot mix formats)"), where=where, field=field)
    kind = need(item.get("type", "message"), str, where, "wrong_type", N_(
        "{where}.type: expected a string, got {got}"))
    if kind in ("tool_use", "tool_result"):
        raise LabError("foreign_block", N_("{where}: a {kind!r} block is Anthropic's format, "
                                           "not the Responses API's"), where=where, kind=kind)
    if kind in CALL_ITEMS:
        string_field(item, "call_id", where, "item")
    if kind == "function_call":
        string_field(item, "name", where, "item")
        need(item.get("arguments"), str, where, "wrong_type", N_(
            "{where}.arguments: a function_call needs a JSON string, got {got}"))
        need(item.get("id"), (str, NoneType), where, "wrong_type", N_(
            "{where}.id: expected a string, got {got}"))
    if kind == "custom_tool_call":
        string_field(item, "name", where, "item")
        need(item.get("input"), str, where, "wrong_type", N_(
            "{where}.input: a custom_tool_call needs its free-form input as a string, got {got}"))
    if kind in OUTPUTS:
        _text(item.get("output"), f"{where}.output", required=True)
    if kind != "message":
        return kind, None  # calls and outputs have no role; reasoning and others take no part
    role = item.get("role")
    if role == "tool":
        raise LabError("foreign_role", N_("{where}: role 'tool' is OpenAI chat's (results are "
                                          "function_call_output items; a history cannot mix "
                                          "formats)"), where=where)
    if role not in ROLES:
        raise wrong(where, role, "bad_role", N_("{where}: role must be one of {roles}, got {got}"),
                    roles=", ".join(ROLES))
    _text(item.get("content"), f"{where}.content")
    return kind, role


def _text(content: Any, where: str = "", required: bool = False) -> str:
    """The text of a content or output: a string, or a list of parts (their `text`)."""
    return parts_text(content, where, "a string or a list of parts", _part, null=not required)


def _part(part: Any, where: str) -> str:
    if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
        raise LabError("bad_part", N_("{where}: expected a part object with a string 'type'"),
                       where=where)
    if part["type"] in ("tool_use", "tool_result"):
        raise LabError("foreign_block", N_("{where}: a {kind!r} block is Anthropic's format, "
                                           "not the Responses API's (a history cannot mix "
                                           "formats)"), where=where, kind=part["type"])
    text: str | None = need(part.get("text"), (str, NoneType), where, "wrong_type", N_(
        "{where}.text: expected a string, got {got}"))
    return text or ""
