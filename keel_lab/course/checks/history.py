"""Chapter 1, history: every call answered, failures included."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from keel_lab.core.history import validate_history
from keel_lab.core.messages import AssistantMessage, Message, ToolMessage, UserMessage
from keel_lab.core.protocol import ToolCall
from keel_lab.core.tools import ToolError
from keel_lab.course.checks.verdict import Verdict, calls_of, guard

AnswerAll = Callable[[Sequence[ToolCall], Callable[[ToolCall], str]], Sequence[ToolMessage]]




def _executor(failures: dict[str, Exception]) -> Callable[[ToolCall], str]:
    def execute(call: ToolCall) -> str:
        if call.id in failures:
            raise failures[call.id]
        return json.dumps({"call": call.id, "echo": json.loads(call.arguments)})
    return execute


def verify_answer_all(answer_all: AnswerAll) -> Verdict:
    v = Verdict("answer_all")
    scenarios = [
        ("three successful calls, the same tool twice", calls_of(
            ("call_a", "lookup_incident", {"incident_id": "INC-001"}),
            ("call_b", "lookup_incident", {"incident_id": "INC-002"}),
            ("call_c", "get_service_status", {"service": "auth-api"})), {}),
        ("a business error and a crash beside a success", calls_of(
            ("call_x", "lookup_incident", {"incident_id": "INC-999"}),
            ("call_y", "search_logs", {"service": "billing"}),
            ("call_z", "lookup_incident", {"incident_id": "INC-003"})),
         {"call_x": ToolError("incident_not_found", "there is no incident INC-999"),
          "call_y": ConnectionError("log index for billing is unreachable")}),
    ]
    for label, calls, failures in scenarios:
        execute = _executor(failures)
        messages = guard(v, label, answer_all, calls, execute)
        if messages is None:
            return v
        messages = list(messages)
        history: list[Message] = [UserMessage("q"), AssistantMessage("", tuple(calls)),
                                  *messages]
        problems = validate_history(history)
        v.add(not problems, f"{label}: one tool message per call, matched by tool_call_id",
              f"{label}: the provider would answer: " + " | ".join(p.message for p in problems))
        by_id = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
        wrong = [c.id for c in calls if c.id in by_id and c.id not in failures
                 and by_id[c.id].content != execute(c)]
        unexplained = [c.id for c in calls if c.id in by_id and c.id in failures
                       and str(failures[c.id]) not in by_id[c.id].content]
        names = [c.id for c in calls if c.id in by_id and by_id[c.id].name != c.name]
        v.add(not (wrong or unexplained or names),
              f"{label}: each message carries its own call's result or error",
              f"{label}: " + "; ".join(text for ids, text in [
                  (wrong, f"{wrong} carry another call's result (or changed it)"),
                  (unexplained, f"{unexplained} should say what went wrong (put the "
                                "exception's message in the content)"),
                  (names, f"{names} should copy the call's tool name")] if ids))
    return v
