"""Chapter 1, history: every call answered exactly once, failures included.

Tool-message content is free text, so the check asks only what the model needs, in any wording
or format: a success carries its own result (verbatim, or as a value inside the answer's own
JSON envelope) and no other call's; a failure names what went wrong - the exception's message,
its type (`ConnectionError`) or its code (`incident_not_found`), any one of them.

Chapter 1 imports no exception class, so the hints lead to `except Exception as exc:`,
`str(exc)` and `type(exc).__name__`, never to a class the learner cannot name (`ToolError`).
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from keel_checks.delegation import watched
from keel_checks.verdict import Verdict, describe, listed
from keel_lab._core.executor import Executor
from keel_lab._core.history import validate_history
from keel_lab._core.messages import AssistantMessage, Message, ToolMessage, UserMessage
from keel_lab._core.protocol import ToolCall
from keel_lab._core.tools import ToolError, invoke
from keel_lab._i18n import N_, _

AnswerAll = Callable[[Sequence[ToolCall], Callable[[ToolCall], str]], Sequence[ToolMessage]]


def _calls(*specs: tuple[str, str, dict[str, Any]]) -> list[ToolCall]:
    return [ToolCall(i, n, json.dumps(a)) for i, n, a in specs]


SCENARIOS: list[tuple[str, list[ToolCall], dict[str, Exception]]] = [
    (N_("three successful calls, the same tool twice"), _calls(
        ("call_Qm4TzX8bLw2RkN7dYp0sJv1c", "lookup_incident", {"incident_id": "INC-001"}),
        ("call_3HfGvA9eUo6WiKc2MxZr5TqB", "lookup_incident", {"incident_id": "INC-002"}),
        ("call_L0pSn7JdYb4CtRw8EaVk1XgF", "get_service_status", {"service": "auth-api"})),
     {}),
    (N_("a business error and a crash beside a success"), _calls(
        ("toolu_01Wd8fKq2NzR5vXy7TbLmJ3h", "lookup_incident", {"incident_id": "INC-999"}),
        ("toolu_01Ab6PcE9sGu1YoHn4VxQw2D", "search_logs", {"service": "billing"}),
        ("toolu_01Kt3MiZ5jRe8LfWb0CsNy7U", "lookup_incident", {"incident_id": "INC-003"})),
     {"toolu_01Wd8fKq2NzR5vXy7TbLmJ3h": ToolError("incident_not_found",
                                                   "there is no incident INC-999"),
      "toolu_01Ab6PcE9sGu1YoHn4VxQw2D": ConnectionError("log index for billing is unreachable")}),
]


class _Tools:
    """The `execute` a check hands the learner: distinct results, chosen failures, and a count
    of how often each call ran (a call run twice doubles its side effects)."""

    def __init__(self, failures: dict[str, Exception]) -> None:
        self.failures = failures
        self.runs: Counter[str] = Counter()

    def __call__(self, call: ToolCall) -> str:
        self.runs[call.id] += 1
        if call.id in self.failures:
            raise self.failures[call.id].with_traceback(None)  # no frames of an earlier run
        return self.result(call)

    def explain(self, exc: Exception) -> str:
        """What the check knows about an exception that escaped the learner's function: whether
        a tool raised it through `execute`, and how to catch it without naming its class."""
        raised = [i for i, e in self.failures.items() if e is exc]
        if not raised:
            return ""
        return _(" - execute(call) raised it for {id}: a tool may fail, so catch any "
                 "failure with `try: ... except Exception as exc:` and answer that call with "
                 "what went wrong, e.g. str(exc)").format(id=raised[0])

    @staticmethod
    def result(call: ToolCall) -> str:
        return json.dumps({"for": call.id[-6:], "echo": json.loads(call.arguments)})


def _strings(value: Any) -> list[Any]:
    """Every value inside a JSON value, nested ones included."""
    if isinstance(value, dict):
        return [value, *(x for v in value.values() for x in _strings(v))]
    if isinstance(value, list):
        return [value, *(x for v in value for x in _strings(v))]
    return [value]


def _carries(content: str, text: str) -> bool:
    """Whether `content` holds `text`: verbatim, or wrapped in the answer's own JSON."""
    if text.lower() in content.lower():
        return True
    try:
        inside = _strings(json.loads(content))
    except ValueError:
        return False
    wanted: list[Any] = [text]
    with contextlib.suppress(ValueError):
        wanted.append(json.loads(text))
    return any(x == w or (isinstance(x, str) and text.lower() in x.lower())
               for x in inside for w in wanted)


def _problems(calls: list[ToolCall], messages: list[Any], tools: _Tools) -> list[str]:
    """What is wrong with one answer, the most basic mistake first."""
    others = [m for m in messages if not isinstance(m, ToolMessage)]
    if others:
        kind = describe(others[0])
        return [_("your function returned {kind} where a ToolMessage belongs: build each "
                  "answer with ToolMessage(call.id, call.name, content)").format(kind=kind)]
    texts = [m for m in messages if not isinstance(m.content, str)]
    if texts:
        return [_("the content of {id}'s message is {value}: a tool message carries text - "
                  "json.dumps(...) a structure you want to send").format(
                      id=texts[0].tool_call_id, value=describe(texts[0].content))]
    history: list[Message] = [UserMessage("q"), AssistantMessage("", tuple(calls)), *messages]
    problems = validate_history(history)
    if problems:
        return [_("the provider would answer: ") + " | ".join(p.message for p in problems)]
    out = [_("{id} was executed {n} times: run each call exactly once").format(
               id=c.id, n=tools.runs[c.id])
           + (_(" (a second run repeats its side effects)") if tools.runs[c.id] > 1 else
              _(" (execute(call) is what runs it)"))
           for c in calls if tools.runs[c.id] != 1]
    by_id = {m.tool_call_id: m for m in messages}
    for c in calls:
        m = by_id[c.id]
        if m.name != c.name:
            out.append(_("{id}'s message is named {got}: copy the call's tool name {name}")
                       .format(id=c.id, got=repr(m.name), name=repr(c.name)))
        stolen = [o.id for o in calls if o.id != c.id and o.id not in tools.failures
                  and _carries(m.content, tools.result(o))]
        if stolen:
            out.append(_("{id}'s message carries the result of {other}").format(
                id=c.id, other=stolen[0]))
        elif c.id in tools.failures:
            exc = tools.failures[c.id]
            names = [str(exc), type(exc).__name__, getattr(exc, "code", "")]
            if not any(n and _carries(m.content, n) for n in names):
                out.append(_("{id}'s message {content} does not say what went wrong: "
                             "include the exception's message (str(exc): {message}) or its "
                             "type (type(exc).__name__: {type})").format(
                                 id=c.id, content=repr(m.content), message=repr(str(exc)),
                                 type=repr(type(exc).__name__)))
        elif not _carries(m.content, tools.result(c)):
            out.append(_("{id}'s message does not carry its call's result {result} (wrap "
                         "it as you like, but keep it whole)").format(id=c.id,
                                                                      result=tools.result(c)))
    order = [m.tool_call_id for m in messages]
    if order != [c.id for c in calls]:
        out.append(_("the messages answer the calls in another order ({order}): the exercise "
                     "asks for the calls' order, so the history reads like the request")
                   .format(order=order))
    return out


def _shown(calls: Sequence[ToolCall]) -> str:
    """The calls of a scenario, compactly: `lookup_incident {"incident_id": "INC-001"}, ...`."""
    return ", ".join(f"{c.name} {c.arguments}" for c in calls)


def verify_answer_all(answer_all: AnswerAll) -> Verdict:
    v = Verdict("answer_all", [label for label, _, _ in SCENARIOS])
    answer_all = watched(answer_all, (invoke, Executor))
    for label, calls, failures in SCENARIOS:
        tools, given = _Tools(failures), list(calls)  # its own copy: the scenario stays whole
        messages = listed(v, f"{_(label)} [{_shown(calls)}]", N_("a list of ToolMessage"),
                          answer_all, given, tools, explain=tools.explain)
        if messages is None:
            return v
        problems = [_("your function changed the tool_calls list it was given ({n} calls "
                      "before, {m} after): read it, do not change it - the caller's history "
                      "still needs its calls").format(n=len(calls), m=len(given))
                    ] if given != calls else _problems(calls, messages, tools)
        v.add(not problems, _("{label}: one message per call, in order, each with its own "
                              "result or error").format(label=_(label)),
              f"{_(label)}: " + "; ".join(problems))
    return v
