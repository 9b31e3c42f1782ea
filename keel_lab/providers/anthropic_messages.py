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

from keel_lab.core.errors import LabError
from keel_lab.core.history import HistoryProblem
from keel_lab.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
    system_apart,
)
from keel_lab.core.protocol import ToolCall, parse_arguments
from keel_lab.providers.fields import shown, strict_dumps

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
RESULTS_FIRST = ("messages.{n}.content.{k}: a `{kind}` block before the `tool_result` block at "
                 "content.{j}; Anthropic's docs require `tool_result` blocks first in the content "
                 "array, any text after them, and answer 400 otherwise (the lab's check)")


def to_anthropic(messages: Iterable[Message]) -> dict[str, Any]:
    """A Messages API request body (`system` and `messages`); consecutive tool results are
    gathered into one user message, as Anthropic requires."""
    system, rest = system_apart(messages)
    out: list[dict[str, Any]] = []
    for m in rest:
        if isinstance(m, AssistantMessage):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content \
                else []
            for c in m.tool_calls:
                value, error = parse_arguments(c.arguments)
                if value is None:
                    raise LabError(f"call {c.id}: Anthropic needs `input` as a JSON object; "
                                   f"{error}")
                blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": value})
            out.append({"role": "assistant", "content": blocks})
        elif isinstance(m, ToolMessage):
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list) \
                    and all(b.get("type") == "tool_result" for b in out[-1]["content"]):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        else:
            out.append({"role": "user", "content": m.content})
    body: dict[str, Any] = {"messages": out}
    if system:
        body["system"] = "\n\n".join(system)
    return body


def from_anthropic(messages: Sequence[Mapping[str, Any]], system: str | None = None
                   ) -> list[Message]:
    """Lab messages from Anthropic messages; each `tool_result` block becomes a tool message.
    A malformed message raises `LabError` naming the message, the block and the field."""
    out: list[Message] = [SystemMessage(system)] if system else []
    names: dict[str, str] = {}
    for n, m in enumerate(messages):
        role, content = _message(m, n)
        text = "".join(b["text"] for b in content if b["type"] == "text")
        if role == "assistant":
            calls = []
            for k, b in enumerate(content):
                if b["type"] == "tool_use":
                    names[b["id"]] = b["name"]
                    where = f"messages.{n}.content.{k}.input"
                    if not isinstance(b["input"], Mapping):
                        raise LabError(f"{where}: a tool_use block needs an object, got "
                                       f"{type(b['input']).__name__}")
                    calls.append(ToolCall(b["id"], b["name"], strict_dumps(b["input"], where)))
            out.append(AssistantMessage(text, tuple(calls)))
            continue
        for b in content:
            if b["type"] == "tool_result":
                out.append(ToolMessage(b["tool_use_id"], names.get(b["tool_use_id"], ""),
                                       _result_text(b.get("content"))))
        if text:
            out.append(UserMessage(text))
    return out


OPENAI_PARTS = ("image_url", "input_audio", "file", "refusal")  # Chat Completions only


def _message(m: Any, n: int) -> tuple[str, list[Mapping[str, Any]]]:
    """The role and blocks of one message, every field the pairing rules read checked; other
    block types (images, thinking, ...) are kept but take no part in pairing."""
    where = f"messages.{n}"
    if not isinstance(m, Mapping):
        raise LabError(f"{where}: expected an object (a message), got {type(m).__name__}")
    role = m.get("role")
    if role == "tool":
        raise LabError(f"{where}: role 'tool' is OpenAI chat's, not Anthropic's (results are "
                       "tool_result blocks in a user message; a history cannot mix both)")
    for field in ("tool_calls", "tool_call_id"):
        if field in m:
            raise LabError(f"{where}.{field}: OpenAI chat's field, not Anthropic's (calls are "
                           "tool_use blocks; a history cannot mix both formats)")
    if role not in ("user", "assistant"):
        raise LabError(f"{where}: role must be 'user' or 'assistant', got {shown(role)}")
    content = m.get("content")
    if isinstance(content, str):
        return role, [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise LabError(f"{where}.content: expected a string or a list of blocks, got "
                       f"{type(content).__name__}")
    for k, b in enumerate(content):
        _block(b, f"{where}.content.{k}")
    return role, content


def _block(b: Any, where: str) -> None:
    kind = b.get("type") if isinstance(b, Mapping) else None
    if not isinstance(kind, str):
        raise LabError(f"{where}: expected a block object with a string 'type'")
    if kind in OPENAI_PARTS:
        raise LabError(f"{where}: a {kind!r} part is OpenAI chat's format, not Anthropic's")
    if kind == "text":
        _string(b, "text", where, empty=True)
    elif kind == "tool_use":
        _string(b, "id", where)
        _string(b, "name", where)
        if "input" not in b:
            raise LabError(f"{where}.input: a tool_use block needs an object, got nothing")
    elif kind == "tool_result":
        _string(b, "tool_use_id", where)
        content = b.get("content")
        if content is not None and not isinstance(content, str):
            if not isinstance(content, list):
                raise LabError(f"{where}.content: expected a string or a list of blocks, got "
                               f"{type(content).__name__}")
            for j, inner in enumerate(content):
                if isinstance(inner, Mapping) and inner.get("type") in ("tool_use", "tool_result"):
                    raise LabError(f"{where}.content.{j}: a tool_result holds text or images, "
                                   f"not a {inner['type']} block")
                _block(inner, f"{where}.content.{j}")
        if not isinstance(b.get("is_error", False), bool):
            raise LabError(f"{where}.is_error: expected true or false")


def _string(b: Mapping[str, Any], field: str, where: str, empty: bool = False) -> None:
    value = b.get(field)
    if not isinstance(value, str) or not (value or empty):
        raise LabError(f"{where}.{field}: a {b['type']} block needs a "
                       f"{'' if empty else 'non-empty '}string, got {shown(value)}")


def _result_text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(b["text"] for b in content if b["type"] == "text")
    return content or ""


def _results_first(n: int, content: Sequence[Mapping[str, Any]]) -> list[HistoryProblem]:
    """The first block of a user message that comes before one of its `tool_result` blocks,
    if any: the docs' ordering rule, reported once per message."""
    last = max((j for j, b in enumerate(content) if b["type"] == "tool_result"), default=0)
    for k, b in enumerate(content[:last]):
        if b["type"] != "tool_result":
            j = next(j for j in range(k + 1, last + 1) if content[j]["type"] == "tool_result")
            return [HistoryProblem("results_not_first", RESULTS_FIRST.format(
                n=n, k=k, kind=b["type"], j=j), (content[j]["tool_use_id"],), n)]
    return []


def validate_anthropic(messages: Sequence[Mapping[str, Any]]) -> list[HistoryProblem]:
    """Every pairing problem Anthropic reports for these messages, with its wording; a
    malformed message raises `LabError` first, so nothing is skipped unread.

    A `tool_use` block outside an assistant message, or a `tool_result` outside a user
    message, is a problem in the lab's words (kind `misplaced_block`); so are a second
    `tool_result` for one `tool_use_id` (`duplicate_result`) and a block before a
    `tool_result` in its user message (`results_not_first`: Anthropic's docs say results come
    first and any text after them, and give no error text).
    """
    parsed = [_message(m, n) for n, m in enumerate(messages)]
    problems: list[HistoryProblem] = []
    seen: set[str] = set()
    for n, (role, content) in enumerate(parsed):
        for k, b in enumerate(content):
            if b["type"] == "input_json_delta":
                problems.append(HistoryProblem("stream_delta_block", STREAM_DELTA.format(
                    n=n, k=k), (), n))
            elif b["type"] == "tool_use" and not isinstance(b["input"], Mapping):
                problems.append(HistoryProblem("input_not_an_object", NOT_AN_OBJECT.format(
                    n=n, k=k), (b["id"],), n))
        stray = "tool_result" if role == "assistant" else "tool_use"
        for k, b in enumerate(content):
            if b["type"] == stray:
                call_id = b["id"] if stray == "tool_use" else b["tool_use_id"]
                problems.append(HistoryProblem("misplaced_block", MISPLACED.format(
                    n=n, k=k, kind=stray, role=role), (call_id,), n))
        if role == "assistant":
            uses = []
            for k, b in enumerate(content):
                if b["type"] != "tool_use":
                    continue
                if b["id"] in seen:
                    problems.append(HistoryProblem("duplicate_id", DUPLICATE.format(n=n, k=k),
                                                   (b["id"],), n))
                seen.add(b["id"])
                uses.append(b["id"])
            nxt = parsed[n + 1] if n + 1 < len(parsed) else ("", [])
            answered = {b["tool_use_id"] for b in nxt[1]
                        if nxt[0] == "user" and b["type"] == "tool_result"}
            missing = [u for u in uses if u not in answered]
            if missing:
                problems.append(HistoryProblem("missing_results", MISSING.format(
                    n=n, ids=", ".join(missing)), tuple(missing), n))
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
                    problems.append(HistoryProblem("duplicate_result", SECOND_RESULT.format(
                        n=n, k=k, id=call_id), (call_id,), n))
                elif call_id not in uses_before:
                    problems.append(HistoryProblem("orphan_result", ORPHAN.format(
                        n=n, k=k, id=call_id), (call_id,), n))
                results.add(call_id)
            problems += _results_first(n, content)
    return problems
