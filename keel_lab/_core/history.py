"""The history rules providers enforce, with the messages they answer when a rule is broken.

One assistant message may carry N tool calls; before the next assistant or user message the
history must hold exactly one tool message for each of them, matched by `tool_call_id`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from keel_lab._core.errors import LabError
from keel_lab._core.messages import MESSAGE_TYPES, AssistantMessage, Message, ToolMessage
from keel_lab._i18n import N_, _

# OpenAI's own texts, verbatim. They are message ids too: a translation keeps the text as it
# is and puts an explanation in the learner's language before it.
MISSING_RESULTS = N_(
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}")
ORPHAN_RESULT = (  # the provider's own spelling of "preceding"
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'.")
ORPHAN_AT = N_(  # ORPHAN_RESULT, then where
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'. (messages[{pos}], tool_call_id {id})")


# The rules every provider has, then the ones only some have: Anthropic (misplaced_block,
# results_not_first, stream_delta_block, input_not_an_object), the Responses API
# (invalid_item_id) and Gemini (name_mismatch).
ProblemKind = Literal["missing_results", "orphan_result", "duplicate_result", "duplicate_id",
                      "misplaced_block", "results_not_first", "stream_delta_block",
                      "input_not_an_object", "invalid_item_id", "name_mismatch",
                      "empty_tool_calls"]


@dataclass(frozen=True, slots=True)
class HistoryProblem:
    """One broken rule. `message` is what the learner reads: a provider's verbatim text where
    one exists (in a translated edition, after an explanation in the learner's language);
    `verbatim` is that provider text alone, always as the provider writes it ("" where the
    message is the lab's own wording)."""

    kind: ProblemKind
    message: str
    ids: tuple[str, ...]
    position: int  # index of the message where the problem shows
    verbatim: str = ""


def validate_history(messages: Sequence[Message]) -> list[HistoryProblem]:
    """Every problem in the history, in order (none: a provider would accept it). Anything but
    the lab's messages raises `LabError`: skipped, it would make an unchecked history valid."""
    problems: list[HistoryProblem] = []
    first_seen: dict[str, int] = {}
    # calls of the last assistant message still owed a result, with how many results each is
    # owed (a repeated id is owed one per call); a dict keeps lookups constant-time
    pending: dict[str, int] = {}
    answered: set[str] = set()
    open_at = -1

    def close() -> None:
        if pending:
            ids = tuple(i for i, owed in pending.items() for _n in range(owed))
            listed = ", ".join(ids)
            problems.append(HistoryProblem(
                "missing_results", _(MISSING_RESULTS).format(ids=listed), ids, open_at,
                MISSING_RESULTS.format(ids=listed)))
        pending.clear()

    for pos, m in enumerate(messages):
        _check(m, pos)
        if isinstance(m, ToolMessage):
            if m.tool_call_id in pending:
                pending[m.tool_call_id] -= 1
                if not pending[m.tool_call_id]:
                    del pending[m.tool_call_id]
                answered.add(m.tool_call_id)
            elif m.tool_call_id in answered:
                problems.append(HistoryProblem("duplicate_result", _(
                    "messages[{pos}]: a second tool message responds to tool_call_id {id}; each "
                    "call gets exactly one (the lab's check)").format(pos=pos, id=m.tool_call_id),
                    (m.tool_call_id,), pos))
            else:
                problems.append(HistoryProblem(
                    "orphan_result", _(ORPHAN_AT).format(pos=pos, id=m.tool_call_id),
                    (m.tool_call_id,), pos, ORPHAN_RESULT))
            continue
        close()
        answered.clear()
        if isinstance(m, AssistantMessage):
            open_at = pos
            for j, call in enumerate(m.tool_calls):
                if call.id in first_seen:
                    problems.append(HistoryProblem("duplicate_id", _(
                        "messages[{pos}].tool_calls[{j}]: tool call ids must be unique; {id} was "
                        "already used in messages[{first}]").format(
                            pos=pos, j=j, id=call.id, first=first_seen[call.id]), (call.id,), pos))
                first_seen.setdefault(call.id, pos)
                pending[call.id] = pending.get(call.id, 0) + 1  # still owed its one result
    close()
    return problems


def _check(m: object, pos: int) -> None:
    where = f"messages[{pos}]"
    if isinstance(m, dict):
        raise LabError("dict_message", N_(
            "{where}: a dict, not a lab message; convert OpenAI chat dicts with "
            "keel_lab.from_openai(messages) first, or check Anthropic ones with "
            "keel_lab.providers.anthropic_messages.validate_anthropic(messages)"), where=where)
    if not isinstance(m, MESSAGE_TYPES):
        raise LabError("not_a_message", N_("{where}: expected a lab message (keel_lab.Message), "
                                           "got {type}"), where=where, type=type(m).__name__)
