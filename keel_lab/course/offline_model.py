"""The offline model: a deterministic, rule-based stand-in for an LLM, over the incident tools.

It reads its tool results by `tool_call_id`, the way a real model matches them: if an executor
pairs results by position and swaps them, its answer states swapped facts.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator, Sequence
from typing import Any

from keel_lab.core.errors import LabError
from keel_lab.core.messages import AssistantMessage, Message, ToolMessage, UserMessage
from keel_lab.core.model import Turn
from keel_lab.core.protocol import ToolCall, parse_arguments
from keel_lab.core.streaming import Finish, StreamEvent, TextDelta, ToolCallDelta
from keel_lab.core.tools import Toolset
from keel_lab.course import data
from keel_lab.course.incident_tools import incident_tools

SEVERITY_RANK = {"low": 0, "medium": 1, "high": 2, "critical": 3}


class OfflineAdapter:
    """A deterministic model with no network: it decides calls from the question by rules.
    `stream()` cuts the same turn into deltas of seeded random size (1..chunk_size characters)
    and, with `interleave`, mixes the fragments of parallel calls as real providers do."""

    def __init__(self, seed: int = 0, chunk_size: int = 6, interleave: bool = True) -> None:
        if chunk_size < 1:
            raise LabError(f"chunk_size must be at least 1, got {chunk_size}")
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
    raise LabError("the offline model needs a user message to answer")


def _plan(question: str, step: int, earlier: list[ToolCall], results: dict[str, ToolMessage]
          ) -> list[tuple[str, dict[str, Any]]]:
    """The calls to make at this step of the question; empty when it is time to answer."""
    low = question.lower()
    if step == 1 and re.search(r"\b(its|their) service", low):
        found = [_content(results.get(c.id)) for c in earlier if c.name == "lookup_incident"]
        services = list(dict.fromkeys(f["service"] for f in found if "service" in f))
        return [("get_service_status", {"service": s}) for s in services]
    if step > 0:
        return []
    ids = list(dict.fromkeys(re.findall(r"INC-\d{3}", question)))
    services = sorted((s for s in data.services() if re.search(rf"\b{re.escape(s)}\b", low)),
                      key=low.index)
    if "restart" in low:
        return [("restart_service", {"service": s}) for s in services]
    calls: list[tuple[str, dict[str, Any]]] = []
    note = re.search(r"note:\s*(.+)$", question, re.IGNORECASE)
    if note:
        calls += [("add_incident_note", {"incident_id": i, "note": note.group(1).strip()})
                  for i in ids]
    else:
        calls += [("lookup_incident", {"incident_id": i}) for i in ids]
    if "log" in low:
        query = re.search(r"[\"']([^\"']+)[\"']", question)
        calls += [("search_logs", {"service": s, "query": query.group(1) if query else ""})
                  for s in services]
    elif "status" in low:
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
        return ("I can look up incidents (INC-001 to INC-014), service status and logs; "
                "ask me about one of them.")
    facts: list[str] = []
    severities: list[tuple[int, str, str]] = []
    for call in calls:
        args = parse_arguments(call.arguments)[0] or {}
        subject = str(args.get("incident_id") or args.get("service") or call.name)
        r = _content(results.get(call.id))
        if "error" in r:
            facts.append(f"{subject}: no information ({r['error'].get('code', 'error')}).")
        elif call.name == "lookup_incident":
            facts.append(f"{subject} ({r['severity']}, {r['status']}): {r['title']}.")
            severities.append((SEVERITY_RANK.get(r["severity"], -1), subject, r["severity"]))
        elif call.name == "get_service_status":
            facts.append(f"{subject} is {r['status']} (version {r['version']}).")
        elif call.name == "search_logs":
            lines = r.get("lines", [])
            facts.append(f"{subject} logs: {len(lines)} matching lines"
                         + (f", latest '{lines[-1]}'." if lines else "."))
        elif call.name == "add_incident_note":
            facts.append(f"Note added to {subject}.")
        elif call.name == "restart_service":
            facts.append(f"{subject} was restarted.")
        else:
            facts.append(f"{subject}: {json.dumps(r)}.")
    if "severe" in question.lower() and len(severities) >= 2:
        top = max(severities)
        ties = [s for s in severities if s[0] == top[0]]
        lead = (f"{' and '.join(s[1] for s in ties)} are equally severe ({top[2]})."
                if len(ties) > 1 else f"{top[1]} is the most severe ({top[2]}).")
        facts.insert(0, lead)
    return " ".join(facts)
