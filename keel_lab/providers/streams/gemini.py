"""Gemini's `streamGenerateContent` stream (`alt=sse`) into lab deltas.

Every event is a whole `GenerateContentResponse`. A call is one `functionCall` part, sent
whole: `name`, `args` as a JSON object and, only on some models, an `id`. There is no index,
and two calls of one turn may share a name, so calls are numbered here in order of arrival and
one without an id gets `gemini-call-<n>`: results are still paired by id, and same-name calls
stay apart. A part's `thoughtSignature` belongs to the call on that part (on parallel calls,
only the first carries one); it is kept as a diagnostic of that call, because the history sent
back must carry it on the same part. The finish is candidate 0's `finishReason` (`STOP` even
when calls were made); `STOP` and `MAX_TOKENS` close the turn, any other refuses its calls (the
lab's policy), `MALFORMED_FUNCTION_CALL` by name, so the lost call is not taken for no call.
"""

from __future__ import annotations

from collections.abc import Iterator

from keel_lab.core.streaming import StreamEvent, TextDelta, ToolCallDelta
from keel_lab.providers.fields import Fields, preview, shown
from keel_lab.providers.streams.common import Labelled, Reading, WireCall, closing, id_for, late
from keel_lab.providers.streams.diagnostics import Diagnostics

NORMAL = ("stop", "max_tokens")  # SAFETY, RECITATION, MALFORMED_FUNCTION_CALL, ...: refused


def convert(records: Labelled, diag: Diagnostics) -> Iterator[StreamEvent]:
    calls: dict[int, WireCall] = {}
    named: dict[str, int] = {}  # a name -> the first call that has it
    finish: str | None = None
    stream = Reading(records, error_field="error")
    for r in stream:
        for cand in r.objs("candidates"):
            if cand.index("index") not in (None, 0):
                diag.note(None, None, "other_candidate", f"{r.where}: a candidate other than "
                          "0 (candidateCount > 1); only candidate 0 is the turn")
                continue
            for part in cand.obj("content").objs("parts"):
                yield from _part(part, calls, named, stream, diag)
            reason = cand.text("finishReason")
            if reason and stream.ended is None:
                finish = reason.lower()
                stream.end("the event with finishReason")
                if reason == "MALFORMED_FUNCTION_CALL":
                    _malformed(cand, diag)
    yield from closing(calls, finish, diag, "an event with finishReason", NORMAL)


def _malformed(cand: Fields, diag: Diagnostics) -> None:
    """The model wrote a call Gemini could not read: it is dropped, never sent, so the turn
    lost a call that nothing can run; said, so the loss is not read as a plain answer."""
    told = cand.text("finishMessage")
    diag.note(None, None, "malformed_function_call", "the finish reason "
              "MALFORMED_FUNCTION_CALL says the model wrote a function call Gemini could not "
              "read; Gemini drops it, so a call of this turn is lost and cannot run (ask again "
              "for it to be sent)" + (f"; Gemini's message: {preview(told)}" if told else ""),
              "refused")


def _part(part: Fields, calls: dict[int, WireCall], named: dict[str, int], stream: Reading,
          diag: Diagnostics) -> Iterator[StreamEvent]:
    text = part.text("text")
    thought = part.flag("thought")
    if part.raw("functionCall") is None:
        if text and not thought and not stream.ended:  # a thought summary is no answer text
            yield TextDelta(text)
        return
    fn = part.obj("functionCall")
    fn.obj("args")  # Gemini's args are an object, never a string: checked before serialising
    index = len(calls)
    call_id = id_for(fn.text("id"), "gemini-call", index, diag)
    call = calls[index] = WireCall(call_id, fn.text("name") or "")
    call.add(fn.arguments("args") or "{}")
    twin = named.setdefault(call.name, index)
    if twin != index and call.name:
        diag.note(index, call_id, "same_name", f"call {twin} has the same name "
                  f"{shown(call.name)}; the two are kept apart by index and id, never by name")
    signature = part.text("thoughtSignature")
    if signature:
        diag.note(index, call_id, "thought_signature", f"this call's part carries the thought "
                  f"signature {signature}; send it back unchanged on this call's part")
    if stream.ended:
        call.late = late(part.where, stream.ended)
    yield ToolCallDelta(index, call_id, call.name or None, call.arguments)
