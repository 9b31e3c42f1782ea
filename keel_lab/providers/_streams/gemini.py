"""Gemini's `streamGenerateContent` stream into lab deltas, sent as SSE (`alt=sse`) or, without
it, as one JSON array (`records.py` reads both into the same payloads).

Every event is a whole `GenerateContentResponse`. A call is a `functionCall` part, sent whole
(`name`, `args` as a JSON object and, only on some models, an `id`) or, on Vertex AI, streamed
(below). There is no index, and two calls of one turn may share a name, so calls are numbered
here in order of arrival. A call's id is the provider's `id` when it carries one; one without
gets `gemini-call-<n>` (noted as assigned): results are still paired by id, and same-name calls
stay apart. A part's `thoughtSignature` belongs to the call on that part (on parallel calls,
only the first carries one); it is kept as a diagnostic of that call, because the history sent
back must carry it on the same part. The finish is candidate 0's `finishReason` (`STOP` even
when calls were made); `STOP` and `MAX_TOKENS` close the turn, any other refuses its calls (the
lab's policy), `MALFORMED_FUNCTION_CALL` by name, so the lost call is not taken for no call.

A streamed call (Vertex AI's `streamFunctionCallArguments`) opens with a part that has the
`name` (with the `id` and signature, if any) and `willContinue: true`; the parts after it have
no name, only `partialArgs` (values at JSON paths: `partial_args.py`) or nothing at all, and
`willContinue: true`; it ends at its first part without `willContinue`: an empty
`functionCall: {}`, or its last values. The lab's policies: its arguments are the object its
values build, sent whole when it ends (tolerated, `partial_args`). One that never ends (the
stream ends, or another call starts, first) is refused (`partial_args_unfinished`): values may
be missing and nothing says which; a call that starts while it is open is refused too, unless
it is whole with its `args` (`partial_args_conflict`): its parts may be the open call's, the
name repeated. Values that cannot be placed refuse their call (`partial_args_conflict`). Values
with no call open (its first part never came) make a call without a name, which refuses the
turn (`partial_args_without_call`). An empty `functionCall: {}` with no call open ends nothing:
reported (`stray_call_end`), skipped.

A part that is neither text nor a function call (`executableCode`, `codeExecutionResult`,
`inlineData`, a server tool's `toolCall` / `toolResponse`, anything new) holds nothing the lab
runs or shows: reported once (`other_part`) and skipped. Fields the lab does not read are
ignored, so neither makes a stream unreadable.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from keel_lab._core.errors import Said
from keel_lab._core.streaming import StreamEvent, TextDelta, ToolCallDelta
from keel_lab._i18n import N_
from keel_lab.providers._fields import Fields, preview, shown
from keel_lab.providers._streams.common import Labelled, Reading, WireCall, closing, id_for
from keel_lab.providers._streams.diagnostics import Diagnostics
from keel_lab.providers._streams.partial_args import Conflict, PartialArguments

NORMAL = ("stop", "max_tokens")  # SAFETY, RECITATION, MALFORMED_FUNCTION_CALL, ...: refused
READ = ("text", "thought", "thoughtSignature", "functionCall")  # the part fields read here


def convert(records: Labelled, diag: Diagnostics) -> Iterator[StreamEvent]:
    turn = _Turn(Reading(records, error_field="error"), diag)
    finish: str | None = None
    for r in turn.stream:
        for cand in r.objs("candidates"):
            if cand.index("index") not in (None, 0):
                diag.note(None, None, "other_candidate", N_(
                    "{where}: a candidate other than 0 (candidateCount > 1); only candidate 0 "
                    "is the turn"), where=r.where)
                continue
            for part in cand.obj("content").objs("parts"):
                yield from turn.part(part)
            reason = cand.text("finishReason")
            if reason and turn.stream.ended is None:
                finish = reason.lower()
                turn.stream.end(Said("finish_event", N_("the event with finishReason")))
                if reason == "MALFORMED_FUNCTION_CALL":
                    _malformed(cand, diag)
    turn.unfinished(Said("stream_ended", N_("the stream ended")))
    yield from closing(turn.calls, finish, diag,
                       Said("a_finish_event", N_("an event with finishReason")), NORMAL)


def _malformed(cand: Fields, diag: Diagnostics) -> None:
    """The model wrote a call Gemini could not read: it is dropped, never sent, so the turn
    lost a call that nothing can run; said, so the loss is not read as a plain answer."""
    told = cand.text("finishMessage")
    said = Said("malformed_function_call", N_(
        "the finish reason MALFORMED_FUNCTION_CALL says the model wrote a function call Gemini "
        "could not read; Gemini drops it, so a call of this turn is lost and cannot run (ask "
        "again for it to be sent)"))
    if told:
        said = Said(said.code, N_("{said}; Gemini's message: {message}"),
                    {"said": said, "message": preview(told)})
    diag.note(None, None, "malformed_function_call", said, "refused")


def _overlap(cut: int) -> tuple[str, Said]:
    """Why a call that began while call `cut` was still streaming is refused too."""
    return _conflict(N_("it began while call {cut} was still streaming: its parts may be call "
                        "{cut}'s with the name repeated, so which values are whose cannot be "
                        "known"), cut=cut)


def _conflict(template: str, **params: object) -> tuple[str, Said]:
    """A refusal for values of a streamed call that cannot be placed without a guess."""
    return ("partial_args_conflict", Said("partial_args_conflict", template, params))


@dataclass
class _Turn:
    """The calls of one turn so far, and the streamed call still open (its index and values)."""

    stream: Reading
    diag: Diagnostics
    calls: dict[int, WireCall] = field(default_factory=dict)
    named: dict[str, int] = field(default_factory=dict)  # a name -> the first call that has it
    open: tuple[int, PartialArguments] | None = None

    def part(self, part: Fields) -> Iterator[StreamEvent]:
        text = part.text("text")
        thought = part.flag("thought")
        if part.raw("functionCall") is None:
            if text and not thought and not self.stream.ended:  # a thought summary is no answer
                yield TextDelta(text)
            elif text is None:
                self._other(part)
            return
        fn = part.obj("functionCall")
        pieces = fn.objs("partialArgs")
        more = bool(fn.flag("willContinue"))
        whole = fn.text("name") is not None or fn.raw("args") is not None
        if pieces or more or (self.open is not None and not whole):
            yield from self._streamed(part, fn, pieces, more)
        elif whole or fn.text("id") is not None:
            cut = self.unfinished(Said("whole_call_came", N_("a whole call came")))
            fn.obj("args")  # Gemini's args are an object, never a string: checked first
            index, call = self._start(part, fn)
            if cut is not None and fn.raw("args") is None:  # `{name}` alone may end call `cut`
                call.refusal = _overlap(cut)
            call.add(fn.arguments("args") or "{}")
            yield ToolCallDelta(index, call.id, call.name or None, call.arguments)
        else:
            self.diag.note(None, None, "stray_call_end", N_(
                "{where}: an empty functionCall (the end of a streamed call) with no streamed "
                "call open: it ends nothing and is skipped"), "reported", where=part.where)

    def _streamed(self, part: Fields, fn: Fields, pieces: list[Fields],
                  more: bool) -> Iterator[StreamEvent]:
        """One part of a streamed call: its first (with the name), or one that continues it."""
        if fn.text("name") is not None or self.open is None:
            cut = self.unfinished(Said("call_started", N_("another call started")))
            index, call = self._start(part, fn)
            if cut is not None:
                call.refusal = _overlap(cut)
            if not call.name:
                self.diag.note(index, call.id, "partial_args_without_call", N_(
                    "{where}: streamed arguments with no call open (the part with the call's "
                    "name never came): they belong to no known call"), "refused",
                    where=part.where)
            self.open = (index, PartialArguments())
            yield ToolCallDelta(index, call.id, call.name or None, None)
        else:
            call = self.calls[self.open[0]]
            self.stream.arrived(call, part.where)
        index, values = self.open
        given = fn.text("id")
        if given is not None and given != call.id:
            call.refusal = call.refusal or _conflict(N_(
                "{where}: a part of this call names another id, {id}"), where=part.where,
                id=shown(given))
        if fn.raw("args") is not None:
            call.refusal = call.refusal or _conflict(N_(
                "{where}: the part has both args and partialArgs"), where=part.where)
        for piece in pieces:
            if call.refusal:
                break
            try:
                values.add(piece)
            except Conflict as exc:
                call.refusal = _conflict(N_("{where}: {reason}"), where=piece.where,
                                         reason=exc.said)
        if not more:
            self.open = None
            yield from self._end(index, call, values)

    def _end(self, index: int, call: WireCall, values: PartialArguments
             ) -> Iterator[StreamEvent]:
        """A streamed call has ended: its arguments are the object its values built."""
        if values.unfinished is not None:
            call.refusal = call.refusal or ("partial_args_unfinished", Said(
                "partial_args_unfinished", N_("the call ended while the string at {path} was "
                                              "said to go on: its text may be cut"),
                {"path": shown(values.unfinished)}))
        if call.refusal:
            return
        call.add(values.text())
        self.diag.note(index, call.id, "partial_args", N_(
            "the arguments were streamed as {n} value at JSON paths (Vertex AI's partialArgs), "
            "read as one object when the call ended") if values.values == 1 else N_(
            "the arguments were streamed as {n} values at JSON paths (Vertex AI's "
            "partialArgs), read as one object when the call ended"), n=values.values)
        yield ToolCallDelta(index, call.id, None, call.arguments)

    def unfinished(self, why: Said) -> int | None:
        """An open streamed call that never ended is refused, since values may be missing; its
        index (None when no call was open)."""
        if self.open is None:
            return None
        index = self.open[0]
        self.open = None
        call = self.calls[index]
        call.refusal = call.refusal or ("partial_args_unfinished", Said(
            "partial_args_unfinished", N_("the call's arguments were still streaming "
                                          "(willContinue) when {why}: values may be missing and "
                                          "nothing says which"), {"why": why}))
        return index

    def _start(self, part: Fields, fn: Fields) -> tuple[int, WireCall]:
        index = len(self.calls)
        call_id = id_for(fn.text("id"), "gemini-call", index, self.diag)
        call = self.calls[index] = WireCall(call_id, fn.text("name") or "")
        twin = self.named.setdefault(call.name, index)
        if twin != index and call.name:
            self.diag.note(index, call_id, "same_name", N_(
                "call {twin} has the same name {name}; the two are kept apart by index and id, "
                "never by name"), twin=twin, name=shown(call.name))
        signature = part.text("thoughtSignature")
        if signature:
            shown_signature = (signature if len(signature) <= 80 else  # real ones: 1 KB and more
                               Said("cut_text", N_("{start}... ({count:,} characters)"),
                                    {"start": signature[:24], "count": len(signature)}))
            self.diag.note(index, call_id, "thought_signature", N_(
                "this call's part carries the thought signature {signature}; send it back "
                "unchanged on this call's part"), signature=shown_signature)
        self.stream.arrived(call, part.where)
        return index, call

    def _other(self, part: Fields) -> None:
        kinds = [k for k in part.value if k not in READ]
        if kinds:
            self.diag.note(None, None, "other_part", N_(
                "{where}: a part with {fields}, neither text nor a function call, holds "
                "nothing the lab runs or shows: skipped, as is every such part after "
                "it"), "reported", where=part.where, fields=", ".join(map(shown, kinds[:3])))
