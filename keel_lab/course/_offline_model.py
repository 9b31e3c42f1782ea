"""The offline model: a deterministic, rule-based stand-in for an LLM, over the incident tools.

It understands the course's questions in English and in Chinese (the Chinese edition asks them
in Chinese), and answers in the learner's language (`keel_lab._i18n`): severities, statuses and
ids stay the data's identifiers.

It reads its tool results by `tool_call_id`, the way a real model matches them: if an executor
pairs results by position and swaps them, its answer states swapped facts.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator, Sequence
from typing import Any

from keel_lab._core.errors import LabError
from keel_lab._core.messages import AssistantMessage, Message, ToolMessage, UserMessage
from keel_lab._core.model import Turn
from keel_lab._core.protocol import ToolCall, parse_arguments
from keel_lab._core.streaming import Finish, StreamEvent, TextDelta, ToolCallDelta
from keel_lab._core.tools import Toolset
from keel_lab._i18n import N_, _, language
from keel_lab.course import _data as data
from keel_lab.course._incident_tools import incident_tools

SEVERITY_RANK = {"low": 0, "medium": 1, "high": 2, "critical": 3}
# What the questions ask, by keyword, in both languages of the course.
ASKS_THEIR_SERVICES = r"\b(its|their) service|(其|它的|它们的|各自的)服务"
ASKS_RESTART = ("restart", "重启")
ASKS_LOGS = ("log", "日志")
ASKS_STATUS = ("status", "状态")
ASKS_SEVERITY = ("severe", "严重")
NOTE_RE = r"(?:note:|备注[:\uff1a])\s*(.+)$"  # \uff1a: a Chinese colon
# A quoted query, in ASCII quotes or Chinese ones.
QUOTED = r"[\"'\u2018\u201c\u300c]([^\"'\u2019\u201d\u300d]+)[\"'\u2019\u201d\u300d]"


def _asks(low: str, words: tuple[str, ...]) -> bool:
    return any(w in low for w in words)


def _named(name: str, low: str) -> bool:
    """`name` as a word of the question (word characters of Latin text, as `\\b` would, so a
    service right after a Chinese character is still found)."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", low) is not None


class OfflineAdapter:
    """A deterministic model with no network: it decides calls from the question by rules.
    `stream()` cuts the same turn into deltas of seeded random size (1..chunk_size characters)
    and, with `interleave`, mixes the fragments of parallel calls as real providers do."""

    def __init__(self, seed: int = 0, chunk_size: int = 6, interleave: bool = True) -> None:
        if chunk_size < 1:
            raise LabError("bad_chunk_size", N_("chunk_size must be at least 1, got {size}"),
                           size=chunk_size)
        self.seed, self.chunk_size, self.interleave = seed, chunk_size, interleave
        self.tools = incident_tools()  # the tools it knows how to use: a Runner's default

    def complete(self, messages: Sequence[Message], tools: Toolset, turn: Turn
                 ) -> AssistantMessage:
        question, since = _last_question(messages)
        results = {m.tool_call_id: m for m in since if isinstance(m, ToolMessage)}
        earlier = [c for m in since if isinstance(m, AssistantMessage) for c in m.tool_calls]
        plan = _plan(question, len([m for m in since if isinstance(m, AssistantMessage)]),
                     earlier, results)
        if plan:
            return AssistantMessage("", tuple(
                ToolCall(turn.call_id(i), name, json.dumps(args)) for i, (name, args)
                in enumerate(plan)))
        return AssistantMessage(_answer(question, earlier, results))

    def stream(self, messages: Sequence[Message], tools: Toolset, turn: Turn
               ) -> Iterator[StreamEvent]:
        message = self.complete(messages, tools, turn)
        rng = random.Random(f"{self.seed}:{turn.step}")
        yield from (TextDelta(t) for t in _chunks(message.content, self.chunk_size, rng))
        per_call = [_call_fragments(i, c, self.chunk_size, rng)
                    for i, c in enumerate(message.tool_calls)]
        yield from (_interleave(per_call, rng) if self.interleave
                    else (d for frags in per_call for d in frags))
        yield Finish("tool_calls" if message.tool_calls else "stop")


def _chunks(text: str, size: int, rng: random.Random) -> list[str]:
    out, i = [], 0
    while i < len(text):
        n = rng.randint(1, size)
        out.append(text[i:i + n])
        i += n
    return out


def _call_fragments(index: int, call: ToolCall, size: int, rng: random.Random
                    ) -> list[ToolCallDelta]:
    names = _chunks(call.name, size, rng)
    frags = [ToolCallDelta(index, id=call.id, name=names[0])]
    frags += [ToolCallDelta(index, name=n) for n in names[1:]]
    frags += [ToolCallDelta(index, arguments_delta=a) for a in _chunks(call.arguments, size, rng)]
    return frags


def _interleave(lists: list[list[ToolCallDelta]], rng: random.Random) -> Iterator[ToolCallDelta]:
    """Merge the calls' fragments in a random order that keeps each call's own order."""
    queues = [list(reversed(x)) for x in lists if x]
    while queues:
        q = rng.choice(queues)
        yield q.pop()
        if not q:
            queues.remove(q)


def _last_question(messages: Sequence[Message]) -> tuple[str, list[Message]]:
    for i in reversed(range(len(messages))):
        if isinstance(messages[i], UserMessage):
            return messages[i].content, list(messages[i + 1:])
    raise LabError("no_question", N_("the offline model needs a user message to answer"))


def _plan(question: str, step: int, earlier: list[ToolCall], results: dict[str, ToolMessage]
          ) -> list[tuple[str, dict[str, Any]]]:
    """The calls to make at this step of the question; empty when it is time to answer."""
    low = question.lower()
    if step == 1 and re.search(ASKS_THEIR_SERVICES, low):
        found = [_content(results.get(c.id)) for c in earlier if c.name == "lookup_incident"]
        services = list(dict.fromkeys(f["service"] for f in found if "service" in f))
        return [("get_service_status", {"service": s}) for s in services]
    if step > 0:
        return []
    ids = list(dict.fromkeys(re.findall(r"INC-\d{3}", question)))
    services = sorted((s for s in data.services() if _named(s, low)), key=low.index)
    if _asks(low, ASKS_RESTART):
        return [("restart_service", {"service": s}) for s in services]
    calls: list[tuple[str, dict[str, Any]]] = []
    note = re.search(NOTE_RE, question, re.IGNORECASE)
    if note:
        calls += [("add_incident_note", {"incident_id": i, "note": note.group(1).strip()})
                  for i in ids]
    else:
        calls += [("lookup_incident", {"incident_id": i}) for i in ids]
    if _asks(low, ASKS_LOGS):
        query = re.search(QUOTED, question)
        calls += [("search_logs", {"service": s, "query": query.group(1) if query else ""})
                  for s in services]
    elif _asks(low, ASKS_STATUS):
        calls += [("get_service_status", {"service": s}) for s in services]
    return calls


def _content(message: ToolMessage | None) -> dict[str, Any]:
    if message is None:
        return {"error": {"code": "missing_result", "message": "no tool message"}}
    try:
        value = json.loads(message.content)
    except json.JSONDecodeError:
        return {"text": message.content}
    return value if isinstance(value, dict) else {"value": value}


def _answer(question: str, calls: list[ToolCall], results: dict[str, ToolMessage]) -> str:
    """Write the answer from each call's own result, found by its id - never by position."""
    if not calls:
        return _("I can look up incidents (INC-001 to INC-014), service status and logs; "
                 "ask me about one of them.")
    facts: list[str] = []
    severities: list[tuple[int, str, str]] = []
    for call in calls:
        args = parse_arguments(call.arguments)[0] or {}
        subject = str(args.get("incident_id") or args.get("service") or call.name)
        r = _content(results.get(call.id))
        if "error" in r:
            facts.append(_("{subject}: no information ({code}).")
                         .format(subject=subject, code=r["error"].get("code", "error")))
        elif call.name == "lookup_incident":
            facts.append(_("{subject} ({severity}, {status}): {title}.").format(
                subject=subject, severity=r["severity"], status=r["status"], title=r["title"]))
            severities.append((SEVERITY_RANK.get(r["severity"], -1), subject, r["severity"]))
        elif call.name == "get_service_status":
            facts.append(_("{subject} is {status} (version {version}).").format(
                subject=subject, status=r["status"], version=r["version"]))
        elif call.name == "search_logs":
            lines = r.get("lines", [])
            facts.append(_("{subject} logs: {n} matching lines, latest '{line}'.").format(
                subject=subject, n=len(lines), line=lines[-1]) if lines else
                _("{subject} logs: {n} matching lines.").format(subject=subject, n=len(lines)))
        elif call.name == "add_incident_note":
            facts.append(_("Note added to {subject}.").format(subject=subject))
        elif call.name == "restart_service":
            facts.append(_("{subject} was restarted.").format(subject=subject))
        else:
            facts.append(_("{subject}: {result}.").format(subject=subject, result=json.dumps(r)))
    if _asks(question.lower(), ASKS_SEVERITY) and len(severities) >= 2:
        top = max(severities)
        ties = [s for s in severities if s[0] == top[0]]
        lead = (_("{ids} are equally severe ({severity}).").format(
                    ids=_(" and ").join(s[1] for s in ties), severity=top[2])
                if len(ties) > 1 else
                _("{id} is the most severe ({severity}).").format(id=top[1], severity=top[2]))
        facts.insert(0, lead)
    # Chinese sentences end in "。" and follow each other without a space.
    return ("" if language() == "zh" else " ").join(facts)
