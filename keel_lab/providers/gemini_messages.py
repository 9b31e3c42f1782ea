"""Gemini `contents` form of a conversation, and the pairing rule Gemini enforces.

Calls are `functionCall` parts of a `model` content; their results are `functionResponse`
parts, all of them in the next `user` content. Gemini counts: the turn after a call turn must
hold one response part per call part, and its error text says so. A call's `id` is optional;
the lab's policy for one without an id is `gemini-call-<n>-<k>` (content n, call k of it), and
a response without an id answers the call at its own position among the id-less calls.
A `thoughtSignature` travels on the call's part: `thought_signatures` reads them and
`to_gemini` puts them back, so a round trip keeps them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
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

COUNT = ("Please ensure that the number of function response parts is equal to the number of "
         "function call parts of the function call turn.")  # google-gemini/gemini-cli#4217
UNKNOWN_ID = ("contents.{n}.parts.{k}: functionResponse id {id} answers no functionCall of "
              "the previous turn (the lab's check)")


def to_gemini(messages: Iterable[Message], signatures: Mapping[str, str] | None = None
              ) -> dict[str, Any]:
    """A `generateContent` request body (`contents`, and `systemInstruction` when there is a
    system message). Consecutive tool results share one user content, one part per result;
    a result is sent as `{"result": <text>}` (the lab's choice of key)."""
    signatures = signatures or {}
    system, rest = system_apart(messages)
    out: list[dict[str, Any]] = []
    for m in rest:
        if isinstance(m, AssistantMessage):
            parts: list[dict[str, Any]] = [{"text": m.content}] if m.content else []
            for c in m.tool_calls:
                value, error = parse_arguments(c.arguments)
                if value is None:
                    raise LabError(f"call {c.id}: Gemini needs `args` as a JSON object; {error}")
                part: dict[str, Any] = {"functionCall": {"id": c.id, "name": c.name,
                                                         "args": value}}
                if c.id in signatures:
                    part["thoughtSignature"] = signatures[c.id]
                parts.append(part)
            out.append({"role": "model", "parts": parts})
        elif isinstance(m, ToolMessage):
            part = {"functionResponse": {"id": m.tool_call_id, "name": m.name,
                                         "response": {"result": m.content}}}
            if out and out[-1]["role"] == "user" and all(
                    "functionResponse" in p for p in out[-1]["parts"]):
                out[-1]["parts"].append(part)
            else:
                out.append({"role": "user", "parts": [part]})
        else:
            out.append({"role": "user", "parts": [{"text": m.content}]})
    body: dict[str, Any] = {"contents": out}
    if system:
        body["systemInstruction"] = {"parts": [{"text": "\n\n".join(system)}]}
    return body


@dataclass(frozen=True, slots=True)
class _Content:
    role: str
    calls: tuple[tuple[int, str, Mapping[str, Any]], ...]  # (part k, id, part)
    responses: tuple[tuple[int, str, Mapping[str, Any]], ...]
    text: str


def from_gemini(contents: Sequence[Mapping[str, Any]],
                system_instruction: Mapping[str, Any] | None = None) -> list[Message]:
    """Lab messages from Gemini contents; each `functionResponse` part becomes a tool message.
    A malformed content raises `LabError` naming the content, the part and the field."""
    out: list[Message] = []
    if system_instruction:
        text = _content(system_instruction, "systemInstruction", "user").text
        out.append(SystemMessage(text))
    for n, c in enumerate(_contents(contents)):
        if c.role == "model":
            calls = tuple(ToolCall(i, p["functionCall"]["name"], strict_dumps(
                p["functionCall"].get("args") or {}, f"contents.{n}.parts.{k}.functionCall.args"))
                for k, i, p in c.calls)
            out.append(AssistantMessage(c.text, calls))
            continue
        for _, i, p in c.responses:
            fr = p["functionResponse"]
            out.append(ToolMessage(i, fr["name"], _result_text(fr.get("response"))))
        if c.text:
            out.append(UserMessage(c.text))
    return out


def thought_signatures(contents: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Each call's thought signature, by the call's id (as `from_gemini` names it)."""
    return {i: p["thoughtSignature"] for c in _contents(contents) for _, i, p in c.calls
            if isinstance(p.get("thoughtSignature"), str)}


def validate_gemini(contents: Sequence[Mapping[str, Any]]) -> list[HistoryProblem]:
    """Every pairing problem Gemini reports for these contents, with its wording: a call turn
    must be followed by a user turn with as many function response parts. A response whose
    id names no call of the previous turn is a problem in the lab's words."""
    parsed = list(_contents(contents))
    problems: list[HistoryProblem] = []
    for n, c in enumerate(parsed):
        prev = parsed[n - 1] if n > 0 and parsed[n - 1].role == "model" else None
        calls = prev.calls if prev else ()
        if c.role == "model" and c.calls and (n + 1 == len(parsed) or
                                              parsed[n + 1].role != "user"):
            problems.append(HistoryProblem("missing_results", COUNT,
                                           tuple(i for _, i, _ in c.calls), n))
        if c.role != "user":
            continue
        if (calls or c.responses) and len(calls) != len(c.responses):
            answered = {i for _, i, _ in c.responses}
            kind = "missing_results" if len(calls) > len(c.responses) else "orphan_result"
            ids = [i for _, i, _ in calls if i not in answered] if kind == "missing_results" \
                else [i for _, i, _ in c.responses]
            problems.append(HistoryProblem(kind, COUNT, tuple(ids), n))
        known = {i for _, i, _ in calls}
        problems += [HistoryProblem("orphan_result", UNKNOWN_ID.format(n=n, k=k, id=i), (i,), n)
                     for k, i, _ in c.responses if calls and i not in known]
    return problems


def _contents(contents: Sequence[Mapping[str, Any]]) -> Iterator[_Content]:
    """The contents read and checked, with every call and response named by its id."""
    if not isinstance(contents, Sequence) or isinstance(contents, str):
        raise LabError("contents: expected a list of content objects")
    previous: _Content | None = None
    for n, raw in enumerate(contents):
        c = _content(raw, f"contents.{n}")
        calls = tuple((k, _id(p["functionCall"]) or f"gemini-call-{n}-{j}", p)
                      for j, (k, p) in enumerate(c.calls_raw))
        unnamed = iter([i for _, i, p in previous.calls if not _id(p["functionCall"])]
                       if previous else [])
        responses = tuple((k, _id(p["functionResponse"])
                           or next(unnamed, f"gemini-response-{n}-{k}"), p)
                          for k, p in c.responses_raw)
        previous = _Content(c.role, calls, responses, c.text)
        yield previous


@dataclass(frozen=True, slots=True)
class _Raw:
    role: str
    calls_raw: tuple[tuple[int, Mapping[str, Any]], ...]
    responses_raw: tuple[tuple[int, Mapping[str, Any]], ...]
    text: str


def _content(c: Any, where: str, role: str | None = None) -> _Raw:
    if not isinstance(c, Mapping):
        raise LabError(f"{where}: expected an object (a content), got {type(c).__name__}")
    for field in ("tool_calls", "tool_call_id", "content"):
        if field in c:
            raise LabError(f"{where}.{field}: not Gemini's (a content has `role` and `parts`; "
                           "a history cannot mix formats)")
    role = role or c.get("role")
    if role not in ("user", "model"):
        raise LabError(f"{where}: role must be 'user' or 'model', got {shown(role)}")
    parts = c.get("parts")
    if not isinstance(parts, list):
        raise LabError(f"{where}.parts: expected a list of parts, got {type(parts).__name__}")
    calls, responses, text = [], [], []
    for k, p in enumerate(parts):
        here = f"{where}.parts.{k}"
        if not isinstance(p, Mapping):
            raise LabError(f"{here}: expected an object (a part), got {type(p).__name__}")
        if isinstance(p.get("text"), str) and not p.get("thought"):
            text.append(p["text"])
        if "functionCall" in p:
            _part(p, "functionCall", "args", here)
            if role != "model":
                raise LabError(f"{here}: a functionCall part belongs in a model content")
            calls.append((k, p))
        if "functionResponse" in p:
            _part(p, "functionResponse", "response", here)
            if role != "user":
                raise LabError(f"{here}: a functionResponse part belongs in a user content")
            responses.append((k, p))
    return _Raw(role, tuple(calls), tuple(responses), "".join(text))


def _part(p: Mapping[str, Any], kind: str, body: str, where: str) -> None:
    value = p[kind]
    if not isinstance(value, Mapping):
        raise LabError(f"{where}.{kind}: expected an object, got {type(value).__name__}")
    if not isinstance(value.get("name"), str) or not value["name"]:
        raise LabError(f"{where}.{kind}.name: a non-empty string is needed, got "
                       f"{shown(value.get('name'))}")
    if value.get("id") is not None and not isinstance(value["id"], str):
        raise LabError(f"{where}.{kind}.id: expected a string, got {shown(value['id'])}")
    if value.get(body) is not None and not isinstance(value[body], Mapping):
        raise LabError(f"{where}.{kind}.{body}: expected an object, got "
                       f"{type(value[body]).__name__}")


def _id(value: Mapping[str, Any]) -> str | None:
    return value.get("id") or None


def _result_text(response: Any) -> str:
    """`{"result": text}` (what `to_gemini` sends) gives the text back; any other response
    object is its JSON."""
    if isinstance(response, Mapping) and list(response) == ["result"] \
            and isinstance(response["result"], str):
        return str(response["result"])
    return strict_dumps(response or {}, "functionResponse.response")
