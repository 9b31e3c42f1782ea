"""Gemini `contents` form of a conversation, and the pairing rule Gemini enforces.

Calls are `functionCall` parts of a `model` content; their results are `functionResponse`
parts, all of them in the next `user` content. Gemini counts: the turn after a call turn must
hold one response part per call part, and its error text says so. A call's `id` is optional;
the lab's policy for one without an id is `gemini-call-<n>-<k>` (content n, call k of it).
Gemini documents a response's `id` as optional, "populated by the client to match the
corresponding function call id", a call's `id` as one that "must be sent back", and a response's
`name` as required and matching the call's. The lab's reading (`_pair`): a response answers the
call with its id, else by name an id-less call, the k-th response of a name the k-th call of that
name, never by position alone; a response that answers no call and a call left without one are
each reported. A `thoughtSignature` travels on the call's part: `thought_signatures` reads them
and `to_gemini` puts them back, so a round trip keeps them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import NoneType
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
from keel_lab.providers._fields import need, shown, strict_dumps, wrong
from keel_lab.providers._turns import arguments_object, request_turns

COUNT = ("Please ensure that the number of function response parts is equal to the number of "
         "function call parts of the function call turn.")  # google-gemini/gemini-cli#4217
LAB = " (the lab's check)"


def to_gemini(messages: Iterable[Message], signatures: Mapping[str, str] | None = None
              ) -> dict[str, Any]:
    """A `generateContent` request body (`contents`, and `systemInstruction` when there is a
    system message); a result is sent as `{"result": <text>}` (the lab's choice of key)."""
    signatures = signatures or {}
    system, turns = request_turns(messages)
    out: list[dict[str, Any]] = []
    for m in turns:
        if isinstance(m, list):
            out.append({"role": "user", "parts": [
                {"functionResponse": {"id": r.tool_call_id, "name": r.name,
                                      "response": {"result": r.content}}} for r in m]})
        elif isinstance(m, AssistantMessage):
            parts: list[dict[str, Any]] = [{"text": m.content}] if m.content else []
            parts += [{"functionCall": {"id": c.id, "name": c.name,
                                        "args": arguments_object(c, "Gemini needs `args`")}}
                      | ({"thoughtSignature": signatures[c.id]} if c.id in signatures else {})
                      for c in m.tool_calls]
            out.append({"role": "model", "parts": parts})
        else:
            out.append({"role": "user", "parts": [{"text": m.content}]})
    return {"contents": out} | ({"systemInstruction": {"parts": [{"text": "\n\n".join(system)}]}}
                                if system else {})


_Part = tuple[int, str, Mapping[str, Any]]  # (part k, id, part); a response's id may be ""


@dataclass(frozen=True, slots=True)
class _Content:
    role: str
    calls: tuple[_Part, ...]
    responses: tuple[_Part, ...]
    text: str


def from_gemini(contents: Sequence[Mapping[str, Any]],
                system_instruction: Mapping[str, Any] | None = None) -> list[Message]:
    """Lab messages from Gemini contents; each `functionResponse` part becomes a tool message.
    A malformed content raises `LabError` naming the content, the part and the field."""
    out: list[Message] = [SystemMessage(_content(
        system_instruction, "systemInstruction", 0, "user").text)] if system_instruction else []
    previous: _Content | None = None
    for n, c in enumerate(_contents(contents)):
        if c.role == "model":
            calls = tuple(ToolCall(i, p["functionCall"]["name"], strict_dumps(
                p["functionCall"].get("args") or {}, f"contents.{n}.parts.{k}.functionCall.args"))
                for k, i, p in c.calls)
            out.append(AssistantMessage(c.text, calls))
            previous = c
            continue
        answers = _pair(previous.calls if previous else (), c.responses).answers
        for k, i, p in c.responses:
            fr = p["functionResponse"]
            call_id = answers.get(k) or i or f"gemini-response-{n}-{k}"  # answers no call
            out.append(ToolMessage(call_id, fr["name"], _result_text(fr.get("response"))))
        previous = None
        if c.text:
            out.append(UserMessage(c.text))
    return out


def thought_signatures(contents: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Each call's thought signature, by the call's id (as `from_gemini` names it)."""
    return {i: p["thoughtSignature"] for c in _contents(contents) for _, i, p in c.calls
            if isinstance(p.get("thoughtSignature"), str)}


def validate_gemini(contents: Sequence[Mapping[str, Any]]) -> list[HistoryProblem]:
    """Every pairing problem of these contents: Gemini's own text for a call turn not followed by
    as many response parts, and, in the lab's words, each call unanswered and stray response."""
    parsed = list(_contents(contents))
    problems: list[HistoryProblem] = []
    first_seen: dict[str, str] = {}  # a call's own id -> where it was first used
    for n, c in enumerate(parsed):
        for k, i, p in c.calls:
            if _id(p["functionCall"]) and i in first_seen:
                problems.append(HistoryProblem("duplicate_id", (
                    f"contents.{n}.parts.{k}: functionCall id {shown(i)} was already used by "
                    f"{first_seen[i]}; each call needs its own{LAB}"), (i,), n))
            first_seen.setdefault(i, f"contents.{n}.parts.{k}")
        after = n + 1 < len(parsed) and parsed[n + 1].role == "user"
        if c.role == "model" and c.calls:
            problems += _turn(n, c.calls, n + 1 if after else None,
                              parsed[n + 1].responses if after else ())
        elif c.role == "user" and c.responses and not (n and parsed[n - 1].calls):
            problems += _turn(None, (), n, c.responses)
    return sorted(problems, key=lambda p: p.position)


def _turn(m: int | None, calls: tuple[_Part, ...], u: int | None,
          responses: tuple[_Part, ...]) -> list[HistoryProblem]:
    """The problems of one call turn (content m) and the user turn after it (content u)."""
    pairing = _pair(calls, responses)
    unanswered = [c for c in calls if c[1] not in pairing.answered]
    at = u if u is not None else m
    assert at is not None
    problems = []
    if len(calls) != len(responses):
        kind: ProblemKind = "missing_results" if len(calls) > len(responses) else "orphan_result"
        ids = [i for _, i, _ in unanswered] if kind == "missing_results" \
            else [i for k, i, _ in responses if k in pairing.stray and i]
        problems.append(HistoryProblem(kind, COUNT, tuple(ids), at))
    for k, i, p in unanswered:
        where = f"contents.{m}.parts.{k}"
        problems.append(HistoryProblem("missing_results", (
            f"{where}: functionCall {_named(p['functionCall'])} has no functionResponse in "
            f"{f'contents.{u}' if u is not None else 'a user turn after it'}{LAB}"), (i,),
            at if m is None else m))
    parts = {k: p["functionResponse"] for k, _, p in responses}
    for k, (kind, why) in sorted(pairing.stray.items()):
        fr = parts[k]
        rid = _id(fr)
        problems.append(HistoryProblem(kind, (
            f"contents.{u}.parts.{k}: functionResponse {_named(fr)} {why}{LAB}"),
            (rid,) if rid else (), at))
    return problems


@dataclass(frozen=True, slots=True)
class _Pairing:
    answers: dict[int, str]  # response part k -> the id of the call it answers
    answered: set[str]  # the ids of the calls answered
    stray: dict[int, tuple[ProblemKind, str]]  # response part k -> (problem kind, why)


def _pair(calls: tuple[_Part, ...], responses: tuple[_Part, ...]) -> _Pairing:
    """Which call each response answers: by id when it has one, else by name among the
    id-less calls, in order (the lab's reading of Gemini's documented fields)."""
    by_id: dict[str, Mapping[str, Any]] = {}
    id_less: dict[str, list[str]] = {}  # name -> the ids the lab gave its id-less calls
    for _, i, p in calls:
        by_id.setdefault(i, p["functionCall"])
        if not _id(p["functionCall"]):
            id_less.setdefault(p["functionCall"]["name"], []).append(i)
    names = {c["name"] for c in by_id.values()}
    queues = {name: iter(ids) for name, ids in id_less.items()}  # each consumed in call order
    answers: dict[int, str] = {}
    answered: set[str] = set()
    stray: dict[int, tuple[ProblemKind, str]] = {}
    for k, i, p in responses:
        name = p["functionResponse"]["name"]
        if not i:
            continue
        call = by_id.get(i)
        if call is None:
            stray[k] = ("orphan_result", "names an id no functionCall of the previous turn has")
        elif i in answered:
            stray[k] = ("duplicate_result", "answers a call already answered; each call gets "
                        "exactly one response")
        elif call["name"] != name:
            stray[k] = ("name_mismatch", f"names the call {shown(i)} of {shown(call['name'])}, "
                        "but a response's name must be its call's")
        else:
            answers[k] = i
            answered.add(i)
    for k, i, p in responses:
        name = p["functionResponse"]["name"]
        if i:
            continue
        waiting = next((c for c in queues.get(name, iter(())) if c not in answered), None)
        if waiting:
            answers[k] = waiting
            answered.add(waiting)
        elif name in id_less:
            stray[k] = ("orphan_result", f"is one response more than the calls named "
                        f"{shown(name)}")
        elif name in names:
            stray[k] = ("orphan_result", f"answers no call: every call named {shown(name)} "
                        "has an id, which its response must send back")
        else:
            stray[k] = ("orphan_result", f"answers no call: the previous turn has no call "
                        f"named {shown(name)}")
    return _Pairing(answers, answered, stray)


def _named(value: Mapping[str, Any]) -> str:
    """A call or response as an error line shows it: its name, and its id when it has one."""
    i = _id(value)
    return shown(value["name"]) + (f" (id {shown(i)})" if i else " (no id)")


def _contents(contents: Sequence[Mapping[str, Any]]) -> Iterator[_Content]:
    """The contents read and checked, with every call and response named by its id."""
    if not isinstance(contents, Sequence) or isinstance(contents, str):
        raise LabError("not_a_list", N_("contents: expected a list of content objects"))
    for n, raw in enumerate(contents):
        yield _content(raw, f"contents.{n}", n)


def _content(c: Any, where: str, n: int, role: str | None = None) -> _Content:
    """Content `n` read and checked; an id-less call is named `gemini-call-<n>-<k>`."""
    need(c, Mapping, where, "not_a_content", N_("{where}: expected an object (a content), got "
                                                "{type}"))
    for field in ("tool_calls", "tool_call_id", "content"):
        if field in c:
            raise LabError("foreign_field", N_(
                "{where}.{field}: not Gemini's (a content has `role` and `parts`; a history "
                "cannot mix formats)"), where=where, field=field)
    role = role or c.get("role")
    if role not in ("user", "model"):
        raise wrong(where, role, "bad_role", N_("{where}: role must be 'user' or 'model', got "
                                                "{got}"))
    parts = need(c.get("parts"), list, where, "bad_parts", N_(
        "{where}.parts: expected a list of parts, got {type}"))
    calls: list[_Part] = []
    responses: list[_Part] = []
    text = []
    for k, p in enumerate(parts):
        here = f"{where}.parts.{k}"
        need(p, Mapping, here, "not_a_part", N_("{where}: expected an object (a part), got "
                                                "{type}"))
        if isinstance(p.get("text"), str) and not p.get("thought"):
            text.append(p["text"])
        if "functionCall" in p:
            _part(p, "functionCall", "args", here)
            if role != "model":
                raise LabError("misplaced_part", N_("{where}: a functionCall part belongs in a "
                                                    "model content"), where=here)
            calls.append((k, _id(p["functionCall"]) or f"gemini-call-{n}-{len(calls)}", p))
        if "functionResponse" in p:
            _part(p, "functionResponse", "response", here)
            if role != "user":
                raise LabError("misplaced_part", N_("{where}: a functionResponse part belongs "
                                                    "in a user content"), where=here)
            responses.append((k, _id(p["functionResponse"]) or "", p))
    return _Content(role, tuple(calls), tuple(responses), "".join(text))


def _part(p: Mapping[str, Any], kind: str, body: str, where: str) -> None:
    value = need(p[kind], Mapping, where, "wrong_type", N_(
        "{where}.{kind}: expected an object, got {type}"), kind=kind)
    if not isinstance(value.get("name"), str) or not value["name"]:
        raise wrong(where, value.get("name"), "no_name", N_(
            "{where}.{kind}.name: a non-empty string is needed, got {got}"), kind=kind)
    need(value.get("id"), (str, NoneType), where, "wrong_type", N_(
        "{where}.{kind}.id: expected a string, got {got}"), kind=kind)
    need(value.get(body), (Mapping, NoneType), where, "wrong_type", N_(
        "{where}.{kind}.{body}: expected an object, got {type}"), kind=kind, body=body)


def _id(value: Mapping[str, Any]) -> str | None:
    return value.get("id") or None


def _result_text(response: Any) -> str:
    """`{"result": text}` (what `to_gemini` sends) gives the text back; any other response
    object is its JSON."""
    if isinstance(response, Mapping) and list(response) == ["result"] \
            and isinstance(response["result"], str):
        return str(response["result"])
    return strict_dumps(response or {}, "functionResponse.response")
