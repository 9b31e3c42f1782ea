"""The course's fixtures: the questions, turns and streams that experiments, checks, notebooks
and tests all use, so each is written once.

The questions are English message ids (`N_`): where one is sent or shown, `_(COMPARE)` asks it in
the learner's language; the offline model understands both, with the same calls and ids.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from keel_lab._core.ids import RunIds
from keel_lab._core.messages import UserMessage
from keel_lab._core.model import Turn
from keel_lab._core.protocol import ToolRequest
from keel_lab._core.streaming import StreamEvent, ToolCallDelta
from keel_lab._i18n import N_, _, listing
from keel_lab.course._offline_model import OfflineAdapter

COMPARE = N_("Which is more severe, INC-001 or INC-002?")
PARTIAL = N_("Which is more severe, INC-001 or INC-999?")
NOTE = N_("Add a note to INC-001, note: customer impact confirmed")

# One question per partial-success status.
SCENARIOS = {
    N_("business error"): PARTIAL,
    N_("approval"): N_("Restart checkout, it is stuck"),
    N_("internal error"): N_("Search the logs of billing and auth-api for 'timeout'"),
}


def scenarios() -> dict[str, str]:
    """`SCENARIOS` as the learner reads them: each name and question in the learner's language
    (the offline model makes the same calls for either)."""
    return {_(name): _(question) for name, question in SCENARIOS.items()}

# A turn that mixes independent reads with a write in the middle: the write must run alone.
TURN = [
    ("lookup_incident", {"incident_id": "INC-001"}),
    ("lookup_incident", {"incident_id": "INC-003"}),
    ("get_service_status", {"service": "auth-api"}),
    ("add_incident_note", {"incident_id": "INC-001", "note": "pool exhausted"}),
    ("search_logs", {"service": "checkout", "query": "timeout"}),
    ("get_service_status", {"service": "checkout"}),
]


def compare_question(calls: int) -> str:
    """'Which is more severe, INC-001, INC-002 or INC-003?' for `calls` incidents, in the
    learner's language."""
    ids = [f"INC-{i:03d}" for i in range(1, calls + 1)]
    if calls == 1:
        return _("Which is more severe, {id}?").format(id=ids[0])
    return _("Which is more severe, {ids} or {last}?").format(ids=listing(ids[:-1]),
                                                             last=ids[-1])


def turn_requests(seed: int = 0) -> list[ToolRequest]:
    """`TURN` as the executor receives it, with the seed's call ids."""
    ids = RunIds.seeded(seed)
    return [ToolRequest(ids.call_id(0, i), name, json.dumps(args), args)
            for i, (name, args) in enumerate(TURN)]


def offline_stream(question: str, seed: int = 0, chunk_size: int = 6,
                   interleave: bool = True) -> list[StreamEvent]:
    """The offline model's first streamed turn for `question`, as a list of events."""
    model = OfflineAdapter(seed, chunk_size, interleave)
    return list(model.stream([UserMessage(question)], model.tools,
                             Turn(RunIds.seeded(seed), 0)))


def corrupt(events: Sequence[StreamEvent], index: int) -> Iterator[StreamEvent]:
    """The same stream with the last argument fragment of call `index` dropped (bad JSON)."""
    last = max(i for i, e in enumerate(events)
               if isinstance(e, ToolCallDelta) and e.index == index and e.arguments_delta)
    return (e for i, e in enumerate(events) if i != last)


def slow_first(request: ToolRequest) -> float:
    """The first call of a turn takes 300 ms, the others 100 ms: it is made first, ends last."""
    return 0.3 if request.call_id.endswith(":call-0") else 0.1


def first_hangs(request: ToolRequest) -> float:
    """The first call of a turn hangs for 8 s, past its tool's 5 s timeout; the others take
    100 ms."""
    return 8.0 if request.call_id.endswith(":call-0") else 0.1
