"""The lab's assembler beside the accumulators people use, on the same streams (the real recordings
of data/recordings/ and the generated ones): which of them runs exactly the calls a stream means,
and nothing it must not run.

Each accumulator is fed as its own client feeds it: the official `openai` SDK's
`ChatCompletionStreamState` and `ResponseStreamState` up to `data: [DONE]`, where the SDK stops
reading; the `anthropic` SDK's `accumulate_event`; langchain-core's chunk merging, fed the
`AIMessageChunk`s langchain-openai would build (its `_convert_delta_to_message_chunk` is mirrored
here, since langchain-openai is not installed); pydantic-ai's parts manager, fed by index as its
OpenAI model feeds it. None of them refuses: every call whose arguments
parse as a JSON object is run (langchain-core's `invalid_tool_calls` excepted). An accumulator
runs nothing itself, though: beside the calls it exposes how the turn ended (`finish_reason`,
`stop_reason`, `status`), so where the lab refuses a turn for its ending, a call runs only in a
client that ignores that field - the verdict says so, and counts the accumulator correct.

The Ollama and Gemini clients are not installed here (and both formats send whole calls):
those streams are not compared. The reference is what the lab runs
(tests/lab/test_expected_calls.py holds the lab to what each stream was generated to mean;
bench/assemblers.py compares them all with that directly).
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import takewhile
from typing import Any, cast

from keel_lab._i18n import _
from keel_lab.course import _data as data
from keel_lab.course._experiments.providers import shape_group, stream_names
from keel_lab.course._experiments.report import Report
from keel_lab.providers._diagnosis import Diagnosis, diagnose, read_stream
from keel_lab.providers._formats import DONE

Records = list[dict[str, Any]]


@dataclass(frozen=True)
class RunCall:
    id: str | None
    name: str | None
    arguments: Any

    def key(self) -> tuple[str | None, str | None, str]:
        return self.id, self.name, json.dumps(self.arguments, sort_keys=True)


COMPARED = ("openai-chat", "openai-responses", "anthropic")  # an accumulator is installed here
TURN_ENDINGS = ("unusual_finish", "truncated")  # the lab's refusals of a turn for how it ended


class Returned(list[RunCall]):
    """The calls an accumulator returns, and the turn's ending it exposes beside them: a client
    gets both, and whether a call runs is the client's decision, not the accumulator's."""

    def __init__(self, calls: Iterable[RunCall], field: str, ending: str | None) -> None:
        super().__init__(calls)
        self.field, self.ending = field, ending

    def exposes(self) -> str:
        return (f"{self.field} {self.ending!r}" if self.ending
                else _("no {field}").format(field=self.field))


def recordings() -> list[tuple[str, str, Records]]:
    """Every generated stream of a compared format: name, format, payloads (`[DONE]` a marker)."""
    streams = [(name, *read_stream(data.path("streams", name))) for name in stream_names()]
    return [(name, fmt, records) for name, fmt, records in streams if fmt in COMPARED]


def sources() -> list[dict[str, Any]]:
    """The real recordings' entries (data/recordings/SOURCES.json): file, repository, path,
    commit, license, vendor, model, format, what the turn holds, where its meaning comes from."""
    return cast(list[dict[str, Any]], data.load("recordings/SOURCES"))


def real_recordings() -> list[tuple[str, str, Records]]:
    """Every real recording of a compared format, named `recordings/<vendor>/<file>`."""
    return [(f"recordings/{e['file']}", e["format"],
             read_stream(data.path("recordings", e["file"]), e["format"])[1])
            for e in sources() if e["format"] in COMPARED]


def meant(entry: dict[str, Any]) -> Got:
    """The calls a real recording's turn means, never from the lab: the source test's own
    assertion where SOURCES.json has it, else the official SDK's accumulator (None when that
    SDK is not installed, or what it raised)."""
    if "calls" in entry["expected"]:
        return [RunCall(c["id"], c["name"], c["arguments"]) for c in entry["expected"]["calls"]]
    fmt, records = read_stream(data.path("recordings", entry["file"]), entry["format"])
    got = others(records, fmt)["sdk"]
    return list(got) if isinstance(got, list) else got


def lab_calls(records: Records, fmt: str = "openai-chat") -> list[RunCall]:
    """The calls the lab's assembler lets run."""
    return lab_runs(diagnose(records, fmt))


def lab_runs(diagnosis: Diagnosis) -> list[RunCall]:
    return [RunCall(c.id, c.name, c.input) for c in diagnosis.calls if c.executable]


def sdk_chunks(records: Records) -> list[Any]:
    """The SDK's `ChatCompletionChunk`s of a stream, built as its `Stream` builds them."""
    from openai.types.chat import ChatCompletionChunk

    return [ChatCompletionChunk.construct(**r) for r in takewhile(lambda r: r is not DONE, records)]


def sdk_calls(chunks: Sequence[Any]) -> Returned:
    """The calls the SDK's accumulator returns whose arguments parse as a JSON object."""
    from openai.lib.streaming.chat import ChatCompletionStreamState

    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(chunk)
    choice = state.get_final_completion().choices[0]
    return Returned((RunCall(c.id, c.function.name, args) for c in choice.message.tool_calls or []
                     if isinstance(args := _json_object(c.function.arguments), dict)),
                    "finish_reason", choice.finish_reason)


def responses_sdk_calls(records: Records) -> Returned:
    """The function calls of the SDK's final Responses object (`get_final_response` reads the
    same state) whose arguments parse as a JSON object."""
    from openai import omit
    from openai._models import construct_type
    from openai.lib.streaming.responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent

    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
    for r in takewhile(lambda r: r is not DONE, records):
        state.handle_event(cast(ResponseStreamEvent,
                                construct_type(type_=ResponseStreamEvent, value=r)))
    response = state._completed_response
    if response is None:
        raise RuntimeError("Didn't receive a `response.completed` event.")
    return Returned((RunCall(o.call_id, o.name, args) for o in response.output
                     if o.type == "function_call"
                     and isinstance(args := _json_object(o.arguments), dict)),
                    "status", response.status)


def anthropic_sdk_calls(records: Records) -> Returned:
    """The `tool_use` blocks of the anthropic SDK's final message (its `get_final_message`)."""
    from anthropic.lib.streaming._messages import accumulate_event

    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    for r in records:
        if r.get("type") == "ping" or (snapshot is None and r.get("type") != "message_start"):
            continue  # the SDK's stream passes these on without accumulating them
        if r.get("type") == "error":
            raise RuntimeError(f"the stream sent an error: {r.get('error')}")
        snapshot = accumulate_event(event=cast(Any, r), current_snapshot=snapshot,
                                    json_bufs=buffers)
    if snapshot is None:
        raise RuntimeError("no message_start: the SDK has no message")
    return Returned((RunCall(b.id, b.name, b.input) for b in snapshot.content
                     if b.type == "tool_use" and isinstance(b.input, dict)),
                    "stop_reason", snapshot.stop_reason)


def _json_object(text: Any) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None


def pydantic_ai_calls(sdk: Sequence[Any]) -> Returned:
    """The tool calls of pydantic-ai's parts manager whose arguments parse as a JSON object (no
    text is `{}`, as it reads it; its agent sends the others back to the model as a retry), fed
    each SDK chunk's tool-call deltas as its OpenAI model feeds them (keyed by `index`); the
    finish reason is the chunk's, which its model maps onto the response."""
    from pydantic_ai._parts_manager import ModelResponsePartsManager
    from pydantic_ai.messages import ToolCallPart
    from pydantic_ai.models import ModelRequestParameters

    parts = ModelResponsePartsManager(ModelRequestParameters())
    finish = None
    for chunk in sdk:
        for choice in chunk.choices[:1]:
            finish = choice.finish_reason or finish
            for d in choice.delta.tool_calls or []:
                parts.handle_tool_call_delta(vendor_part_id=d.index, tool_call_id=d.id,
                                             tool_name=d.function and d.function.name,
                                             args=d.function and d.function.arguments)
    return Returned((RunCall(p.tool_call_id, p.tool_name, args) for p in parts.get_parts()
                     if isinstance(p, ToolCallPart)
                     and isinstance(args := p.args if isinstance(p.args, dict)
                                    else _json_object(p.args or "{}"), dict)),
                    "finish_reason", finish)


def langchain_chunks(sdk: Sequence[Any]) -> list[Any]:
    """The `AIMessageChunk`s langchain-openai builds from the SDK's chunks; the finish reason
    goes into `response_metadata`, where langchain-core's `stream` puts langchain-openai's
    `generation_info`."""
    from langchain_core.messages import AIMessageChunk
    from langchain_core.messages.tool import tool_call_chunk

    out = []
    for chunk in sdk:
        choices = chunk.model_dump(warnings=False)["choices"]
        delta = choices[0]["delta"] if choices else {}
        entries: list[Any] = []
        try:
            entries = [tool_call_chunk(name=e["function"].get("name"),
                                       args=e["function"].get("arguments"), id=e.get("id"),
                                       index=e["index"])
                       for e in delta.get("tool_calls") or []]
        except (KeyError, AttributeError):  # langchain-openai drops the chunk's entries
            entries = []
        finish = choices[0].get("finish_reason") if choices else None
        out.append(AIMessageChunk(content=delta.get("content") or "", tool_call_chunks=entries,
                                  response_metadata={"finish_reason": finish} if finish else {}))
    return out


def langchain_calls(chunks: Sequence[Any]) -> Returned:
    """The `tool_calls` of langchain-core's merged message (its invalid ones do not run)."""
    from langchain_core.messages.ai import add_ai_message_chunks

    merged = add_ai_message_chunks(chunks[0], *chunks[1:])
    return Returned((RunCall(c["id"], c["name"], c["args"]) for c in merged.tool_calls),
                    "finish_reason", merged.response_metadata.get("finish_reason"))


def ending_refused(turn: Diagnosis) -> bool:
    """The lab refuses the whole turn for how it ended (an unusual finish reason, or none)."""
    return any(n.action == "refused" and n.quirk in TURN_ENDINGS for n in turn.diagnostics)


def verdict(got: Got, expected: list[RunCall], turn: Diagnosis | None = None) -> str:
    """"correct" when exactly the expected calls would run; else what goes wrong. With the lab's
    `turn`, calls returned from a turn the lab refuses for its ending are correct when the
    accumulator exposes that ending: running them is the mistake of a client that ignores it.
    In the learner's language; `judged` also says which kind of verdict it is."""
    return judged(got, expected, turn)[1]


def judged(got: Got, expected: list[RunCall], turn: Diagnosis | None = None
           ) -> tuple[str, str]:
    """The verdict's kind ("-", "correct", "fails" or "wrong") and its text."""
    if got is None:
        return "-", "-"
    if (turn is not None and isinstance(got, Returned) and got and not expected
            and ending_refused(turn) and got.ending == turn.finish_reason):
        return "correct", _("correct (returns {n} and {exposes}: a client that ignores it runs "
                            "{n})").format(n=len(got), exposes=got.exposes())
    if isinstance(got, BaseException):
        if expected:
            return "fails", _("fails ({error}): runs nothing, misses {missing}").format(
                error=type(got).__name__, missing=len(expected))
        return "fails", _("fails ({error}): runs nothing").format(error=type(got).__name__)
    have, want = Counter(c.key() for c in got), Counter(c.key() for c in expected)
    if have == want:
        return "correct", (_("correct") if [c.key() for c in got] == [c.key() for c in expected]
                           else _("correct (arrival order)"))
    extra, missing = sum((have - want).values()), sum((want - have).values())
    if extra and missing:
        return "wrong", _("wrong: runs {extra} it must not, misses {missing}").format(
            extra=extra, missing=missing)
    if extra:
        return "wrong", _("wrong: runs {extra} it must not").format(extra=extra)
    return "wrong", _("wrong: misses {missing}").format(missing=missing)


def attempt(fn: Callable[[Any], list[RunCall]], arg: Any) -> list[RunCall] | BaseException:
    """What an assembler gives, or the exception it raises (a library that cannot assemble)."""
    try:
        return fn(arg)
    except Exception as exc:  # any failure of a third-party accumulator is its verdict
        return exc


Got = list[RunCall] | BaseException | None  # None: no such accumulator for the format


def others(records: Records, fmt: str) -> dict[str, Got]:
    """The SDK's and langchain-core's calls for one stream (or what each raised); pydantic's
    warnings about a quirk's unexpected types are silenced, the verdict says what happened."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        if fmt == "openai-responses":
            return {"sdk": attempt(responses_sdk_calls, records), "langchain": None,
                    "pydantic_ai": None}
        if fmt == "anthropic":
            return {"sdk": attempt(anthropic_sdk_calls, records), "langchain": None,
                    "pydantic_ai": None}
        chunks = attempt(sdk_chunks, records)
        if isinstance(chunks, BaseException):
            return {"sdk": chunks, "langchain": chunks, "pydantic_ai": chunks}
        return {"sdk": attempt(sdk_calls, chunks),
                "langchain": attempt(lambda c: langchain_calls(langchain_chunks(c)), chunks),
                "pydantic_ai": attempt(pydantic_ai_calls, chunks)}


def describe(calls: list[RunCall], total: int) -> str:
    """What the lab runs, in a few words."""
    if not calls:
        return _("nothing (refused)") if total else _("nothing")
    if len(calls) < total:
        return _("{n} of {total}").format(n=len(calls), total=total)
    return _("all {total}").format(total=total)


PEERS = ("sdk", "langchain_core", "pydantic_ai")  # the report's columns, as `others` names them
_KEY = {"sdk": "sdk", "langchain_core": "langchain", "pydantic_ai": "pydantic_ai"}


def comparison_report() -> Report:
    """Per stream, the real recordings first: what the lab runs, and whether the official SDK,
    langchain-core and pydantic-ai give a client just that (or the ending for which the lab
    refuses the turn). The lab's calls of a real recording are held to what its provider meant
    (tests/lab/test_real_recordings.py), of a generated one to what it was generated to mean."""
    rows, kinds, real = [], [], 0
    for name, fmt, records in [*real_recordings(), *recordings()]:
        d = diagnose(records, fmt)
        lab = lab_runs(d)
        got = others(records, fmt)
        verdicts = {peer: judged(got[_KEY[peer]], lab, d) for peer in PEERS}
        kinds.append({peer: kind for peer, (kind, _text) in verdicts.items()})
        real += shape_group(name) == "real recording"
        rows.append({"stream": name, "group": _(shape_group(name)),
                     "lab_runs": describe(lab, len(d.calls)),
                     **{peer: text for peer, (_kind, text) in verdicts.items()}})
    correct = {k: sum(r[k] == "correct" for r in kinds) for k in PEERS}
    compared = {k: sum(r[k] != "-" for r in kinds) for k in PEERS}
    return Report("accumulators", {"streams": len(rows), "real": real},
                  {"correct": correct, "compared": compared}, rows,
                  [_("the official SDKs give a client exactly the lab's calls on {sdk} of "
                     "{sdk_compared} streams ({real} of them real recordings), langchain-core on "
                     "{langchain} of {langchain_compared}, pydantic-ai on {pydantic} of "
                     "{pydantic_compared}").format(
                         sdk=correct["sdk"], sdk_compared=compared["sdk"], real=real,
                         langchain=correct["langchain_core"],
                         langchain_compared=compared["langchain_core"],
                         pydantic=correct["pydantic_ai"],
                         pydantic_compared=compared["pydantic_ai"])])
