"""Anthropic Messages form of a conversation, and the pairing rules Anthropic enforces.

Calls are `tool_use` blocks in an assistant message; their results are `tool_result` blocks,
all of them in the *next* user message. The error texts are the ones Anthropic's API returns.
Two shapes of a streamed turn replayed without assembling it are rejected too: a raw
`input_json_delta` block (a stream event, not a content block; 1Panel-dev/MaxKB#6480) and a
`tool_use` whose `input` is not an object, such as the joined `partial_json` text
(anthropics/anthropic-sdk-typescript#648, anthropics/claude-code#6696).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from keel_lab._core.errors import LabError
from keel_lab._core.history import HistoryProblem, ProblemKind
from keel_lab._core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from keel_lab._core.protocol import ToolCall
from keel_lab._i18n import N_
from keel_lab.providers._fields import need, strict_dumps, string_field, wrong
from keel_lab.providers._openai_messages import PART_TYPES
from keel_lab.providers._turns import arguments_object, request_turns

MISSING = ("messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately "
           "after: {ids}. Each `tool_use` block must have a corresponding `tool_result` block "
           "in the next message.")
ORPHAN = ("messages.{n}.content.{k}: unexpected `tool_use_id` found in `tool_result` blocks: "
          "{id}. Each `tool_result` block must have a corresponding `tool_use` block in the "
          "previous message.")
DUPLICATE = "messages.{n}.content.{k}: `tool_use` ids must be unique"
STREAM_DELTA = ("messages.{n}.content.{k}: Input tag 'input_json_delta' found using 'type' does "
                "not match any of the expected tags")  # 1Panel-dev/MaxKB#6480
NOT_AN_OBJECT = "messages.{n}.content.{k}.tool_use.input: Input should be a valid dictionary"
MISPLACED = ("messages.{n}.content.{k}: a `{kind}` block cannot appear in a {role} message "
             "(the lab's check)")
SECOND_RESULT = ("messages.{n}.content.{k}: a second `tool_result` block for `tool_use_id` {id}; "
                 "each `tool_use` gets exactly one (the lab's check)")
NOT_AT_START = ("messages.{n}: Did not find {count} `tool_result` block(s) at the beginning of "
                "this message. Messages following `tool_use` blocks must begin with a matching "
                "number of `tool_result` blocks.")  # anthropics/claude-code#37 (live API, 400)
RESULTS_FIRST = ("messages.{n}.content.{k}: a `{kind}` block before the `tool_result` block at "
                 "content.{j}; Anthropic's docs require `tool_result` blocks first in the content "
                 "array, any text after them, and answer 400 otherwise (the lab's check)")


def to_anthropic(messages: Iterable[Message]) -> dict[str, Any]:
    """A Messages API request body (`system` and `messages`)."""
    system, turns = request_turns(messages)
    out: list[dict[str, Any]] = []
    for m in turns:
        if isinstance(m, list):
            out.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": r.tool_call_id, "content": r.content}
                for r in m]})
        elif isinstance(m, AssistantMessage):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content \
                else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name,
                        "input": arguments_object(c, "Anthropic needs `input`")}
                       for c in m.tool_calls]
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": "user", "content": m.content})
    return {"messages": out} | ({"system": "\n\n".join(system)} if system else {})


def from_anthropic(messages: Sequence[Mapping[str, Any]], system: str | None = None
                   ) -> list[Message]:
    """Lab messages from Anthropic messages; each `tool_result` block becomes a tool message.
    A malformed message raises `LabError` naming the message, the block and the field."""
    out: list[Message] = [SystemMessage(system)] if system else []
    names: dict[str, str] = {}
    for n, m in enumerate(messages):
        role, content = _message(m, n)
        text = _text(content)
        if role == "assistant":
            calls = []
            for k, b in enumerate(content):
                if b["type"] == "tool_use":
                    names[b["id"]] = b["name"]
                    where = f"messages.{n}.content.{k}.input"
                    need(b["input"], Mapping, where, "input_not_an_object", N_(
                        "{where}: a tool_use block needs an object, got {type}"))
                    calls.append(ToolCall(b["id"], b["name"], strict_dumps(b["input"], where)))
            out.append(AssistantMessage(text, tuple(calls)))
            continue
        out += [ToolMessage(b["tool_use_id"], names.get(b["tool_use_id"], ""),
                            _text(b.get("content"))) for b in content
                if b["type"] == "tool_result"]
        if text:
            out.append(UserMessage(text))
    return out


def _message(m: Any, n: int) -> tuple[str, list[Mapping[str, Any]]]:
    """The role and blocks of one message, every field the pairing rules read checked; other
    block types (images, thinking, ...) are kept but take no part in pairing."""
    where = f"messages.{n}"
    need(m, Mapping, where, "not_a_message", N_("{where}: expected an object (a message), got "
                                                "{type}"))
    role = m.get("role")
    if role == "tool":
        raise LabError("foreign_role", N_("{where}: role 'tool' is OpenAI chat's, not "
                                          "Anthropic's (results are tool_result blocks in a "
                                          "user message; a history cannot mix both)"), where=where)
    for field in ("tool_calls", "tool_call_id"):
        if field in m:
            raise LabError("foreign_field", N_(
                "{where}.{field}: OpenAI chat's field, not Anthropic's (calls are tool_use "
                "blocks; a history cannot mix both formats)"), where=where, field=field)
    if role not in ("user", "assistant"):
        raise wrong(where, role, "bad_role", N_("{where}: role must be 'user' or 'assistant', "
                                                "got {got}"))
    content = m.get("content")
    if isinstance(content, str):
        return role, [{"type": "text", "text": content}]
    need(content, list, where, "bad_content", N_(
        "{where}.content: expected a string or a list of blocks, got {type}"))
    for k, b in enumerate(content):
        _block(b, f"{where}.content.{k}")
    return role, content


def _block(b: Any, where: str) -> None:
    kind = b.get("type") if isinstance(b, Mapping) else None
    if not isinstance(kind, str):
        raise LabError("bad_block", N_("{where}: expected a block object with a string 'type'"),
                       where=where)
    if kind in PART_TYPES and kind != "text":  # a part only Chat Completions has
        raise LabError("foreign_part", N_("{where}: a {kind!r} part is OpenAI chat's format, "
                                          "not Anthropic's"), where=where, kind=kind)
    if kind == "text":
        string_field(b, "text", where, "block", empty=True)
    elif kind == "tool_use":
        string_field(b, "id", where, "block")
        string_field(b, "name", where, "block")
        if "input" not in b:
            raise LabError("no_input", N_("{where}.input: a tool_use block needs an object, got "
                                          "nothing"), where=where)
    elif kind == "tool_result":
        string_field(b, "tool_use_id", where, "block")
        content = b.get("content")
        if content is not None and not isinstance(content, str):
            need(content, list, where, "bad_content", N_(
                "{where}.content: expected a string or a list of blocks, got {type}"))
            for j, inner in enumerate(content):
                if isinstance(inner, Mapping) and inner.get("type") in ("tool_use", "tool_result"):
                    raise LabError("nested_call_block", N_(
                        "{where}.content.{j}: a tool_result holds text or images, not a {type} "
                        "block"), where=where, j=j, type=inner["type"])
                _block(inner, f"{where}.content.{j}")
        need(b.get("is_error", False), bool, where, "wrong_type", N_(
            "{where}.is_error: expected true or false"))


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(b["text"] for b in content if b["type"] == "text")
    return content or ""


def _results_first(n: int, content: Sequence[Mapping[str, Any]], uses: int
                   ) -> list[HistoryProblem]:
    """The first block of a user message that comes before one of its `tool_result` blocks,
    if any: the docs' ordering rule, reported once per message; in Anthropic's words when the
    message follows `uses` tool_use blocks, the case the API's error speaks of."""
    last = max((j for j, b in enumerate(content) if b["type"] == "tool_result"), default=0)
    for k, b in enumerate(content[:last]):
        if b["type"] != "tool_result":
            j = next(j for j in range(k + 1, last + 1) if content[j]["type"] == "tool_result")
            text = NOT_AT_START.format(n=n, count=uses) if uses else RESULTS_FIRST.format(
                n=n, k=k, kind=b["type"], j=j)
            return [HistoryProblem("results_not_first", text, (content[j]["tool_use_id"],), n)]
    return []


def validate_anthropic(messages: Sequence[Mapping[str, Any]]) -> list[HistoryProblem]:
    """Every pairing problem Anthropic reports for these messages, with its wording, and those
    it gives no text for in the lab's words (a misplaced block, a second result, a block before
    a result); a malformed message raises `LabError` first, so nothing is skipped unread."""
    parsed = [_message(m, n) for n, m in enumerate(messages)]
    problems: list[HistoryProblem] = []
    seen: set[str] = set()

    def add(kind: ProblemKind, text: str, *ids: str) -> None:
        problems.append(HistoryProblem(kind, text, ids, n))

    for n, (role, content) in enumerate(parsed):
        for k, b in enumerate(content):
            if b["type"] == "input_json_delta":
                add("stream_delta_block", STREAM_DELTA.format(n=n, k=k))
            elif b["type"] == "tool_use" and not isinstance(b["input"], Mapping):
                add("input_not_an_object", NOT_AN_OBJECT.format(n=n, k=k), b["id"])
        stray = "tool_result" if role == "assistant" else "tool_use"
        for k, b in enumerate(content):
            if b["type"] == stray:
                add("misplaced_block", MISPLACED.format(n=n, k=k, kind=stray, role=role),
                    b["id"] if stray == "tool_use" else b["tool_use_id"])
        if role == "assistant":
            uses = [(k, b["id"]) for k, b in enumerate(content) if b["type"] == "tool_use"]
            for k, use in uses:
                if use in seen:
                    add("duplicate_id", DUPLICATE.format(n=n, k=k), use)
                seen.add(use)
            nxt = parsed[n + 1] if n + 1 < len(parsed) else ("", [])
            answered = {b["tool_use_id"] for b in nxt[1]
                        if nxt[0] == "user" and b["type"] == "tool_result"}
            missing = [u for _, u in uses if u not in answered]
            if missing:
                add("missing_results", MISSING.format(n=n, ids=", ".join(missing)), *missing)
        else:
            prev = parsed[n - 1] if n > 0 else ("", [])
            uses_before = {b["id"] for b in prev[1]
                           if prev[0] == "assistant" and b["type"] == "tool_use"}
            results: set[str] = set()
            for k, b in enumerate(content):
                if b["type"] != "tool_result":
                    continue
                call_id = b["tool_use_id"]
                if call_id in results:
                    add("duplicate_result", SECOND_RESULT.format(n=n, k=k, id=call_id), call_id)
                elif call_id not in uses_before:
                    add("orphan_result", ORPHAN.format(n=n, k=k, id=call_id), call_id)
                results.add(call_id)
            problems += _results_first(n, content, len(uses_before))
    return problems
