"""One real turn of a provider, its stream saved byte for byte (`keel-lab record`).

The only code of the lab that reaches the network, and only when a person runs it: one request
with a toolset and a prompt (the CLI's: the incident tools, two lookups at once). No retry (a
retried turn is another turn, and is paid twice). Each format goes through the client a user of
that API reaches for:

- openai-chat, openai-responses, and any OpenAI-compatible server given by `base_url` (vLLM,
  LM Studio, OpenRouter, Groq): the official openai SDK, whose `with_streaming_response` hands
  over the body's bytes before it parses anything;
- anthropic: the official anthropic SDK, the same way;
- gemini: plain HTTP (httpx), as Google's REST documentation shows it: the lab does not depend
  on Google's SDK, and its stream gives parsed objects, never the bytes;
- ollama: plain HTTP (httpx): Ollama's API is JSON lines over HTTP, and its Python client too
  gives parsed objects only.

A key is read from the provider's usual environment variable and sent only in the header its
provider reads; with `base_url` only from the variable the user names (a provider's key never
goes to another host unasked), and never when no header can carry it (a line break, a blank,
a character that is not ASCII). No redirect is followed, for the same reason. Every line this
module says is scrubbed of the key, in the forms a server may echo it in.

Nothing half-written: the bytes go to a hidden file beside the output, renamed to it only when
the stream ended whole (an older recording stays until then). A stream that breaks off after
some bytes (a cut connection, a pause longer than the timeout, Ctrl-C, more than 32 MiB, more
than `MAX_SECONDS` in all) is kept as `<out>.partial`, which `keel-lab assemble` reads: a cut
stream is worth seeing.
"""

from __future__ import annotations

import contextlib
import json
import operator
import os
import re
import secrets
import stat
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, Protocol
from urllib.parse import quote, quote_plus

from keel_lab._core.errors import LabError, Said
from keel_lab._core.messages import Message, UserMessage
from keel_lab._core.streaming import StreamEvent
from keel_lab._core.strict_json import read_json
from keel_lab._core.tables import printable
from keel_lab._core.tools import Toolset
from keel_lab._i18n import N_
from keel_lab.providers._diagnosis import to_events
from keel_lab.providers._formats import PROVIDERS, StreamFormat
from keel_lab.providers._gemini_messages import to_gemini
from keel_lab.providers._openai_messages import to_openai
from keel_lab.providers._responses_messages import to_responses
from keel_lab.providers._streams.records import MAX_BYTES, decode, parse_records
from keel_lab.providers._switches import anthropic_request, openai_chat_request

TIMEOUT = 60.0  # seconds to connect, and between two pieces of the answer
MAX_SECONDS = 1800.0  # the longest one turn may take, however steadily its bytes trickle in
NO_KEY = "none"  # what an SDK that insists on a key sends to a server that needs none
ERROR_CHARS = 300  # of a provider's error message, on its one line


class RecordFailed(LabError):
    """The request went out and no whole stream came back (the CLI's exit 69)."""


@dataclass(frozen=True)
class Request:
    """One turn to record: where it goes and what it asks (the key is never in its repr)."""

    format: StreamFormat
    model: str
    tools: Toolset = field(repr=False)
    prompt: str
    base_url: str
    key: str | None = field(repr=False)
    timeout: float = TIMEOUT
    max_seconds: float = MAX_SECONDS
    history: tuple[Message, ...] = field(default=(), repr=False)  # sent instead of the prompt

    @property
    def url(self) -> str:
        name = quote(self.model.removeprefix("models/"), safe="")
        return self.base_url + PROVIDERS[self.format].path.format(model=name)

    def body(self) -> dict[str, Any]:
        """The JSON body, tools and prompt (or a whole history) in the format's own shape."""
        history = list(self.history) or [UserMessage(self.prompt)]
        return _BODIES[self.format](self.model, history, self.tools)

    def scrub(self, text: object) -> str:
        """`text` safe to print: without the key, and without terminal escapes. A server may
        echo the key in another form: split across lines, JSON-escaped (`\\/`, `\\u0073`),
        URL-encoded, or in base64 (as an Authorization header is); each is masked too."""
        said = str(text)
        return printable(_key_forms(self.key).sub("***", said) if self.key else said)


def _key_forms(key: str) -> re.Pattern[str]:
    """The key as a server may repeat it: its characters (each one itself or a `\\uXXXX` escape,
    as a text body may carry it) with blanks or backslashes between them, URL-encoded, or in any
    base64 text that holds it (one form for each of base64's three alignments, its edge
    characters included, which the key shares with its neighbours; none for a key too short
    to tell apart)."""
    each = (f"(?:{re.escape(c)}|\\\\u(?i:{ord(c):04x}))" for c in key)
    forms = [r"[\s\\]*".join(each), re.escape(quote(key, safe="")),
             re.escape(quote_plus(key, safe=""))]
    for pad in range(3):
        classes = _base64_classes(key.encode(), pad)
        if sum(len(c) == 1 for c in classes) >= 8:
            for alphabet in (_BASE64, _BASE64_URL):
                forms.append("".join(
                    "[" + re.escape("".join(alphabet[v] for v in c)) + "]" for c in classes))
    return re.compile("|".join(forms))


_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_BASE64_URL = _BASE64[:-2] + "-_"


def _base64_classes(key: bytes, pad: int) -> list[list[int]]:
    """For each base64 character that holds a bit of `key` (coming after `pad` other bytes),
    the six-bit values it may have: one where the key decides all its bits, several at the
    edges, where the bits of the bytes around it are unknown."""
    bits = "".join(f"{b:08b}" for b in key)
    start = pad * 8
    out = []
    for at in range(start // 6 * 6, start + len(bits), 6):
        known = {i: bits[at + i - start] for i in range(6) if 0 <= at + i - start < len(bits)}
        out.append([v for v in range(64)
                    if all(f"{v:06b}"[i] == bit for i, bit in known.items())])
    return out


def plan(fmt: StreamFormat, tools: Toolset, prompt: str, *, model: str | None = None,
         base_url: str | None = None, key_env: str | None = None, timeout: float = TIMEOUT,
         environ: Mapping[str, str] = os.environ) -> Request:
    """The request `record` sends, or a `LabError` before anything is sent (a missing key)."""
    provider = PROVIDERS[fmt]
    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise LabError("bad_url", N_("--base-url {url!r}: expected an http:// or https:// URL"),
                       url=printable(base_url))
    names = (key_env,) if key_env else () if base_url else provider.keys
    name, key = next(((n, environ[n]) for n in names if environ.get(n)), ("", None))
    if names and key is None:
        raise LabError("no_key", N_("record {format}: no key: set {names}") if key_env else
                       N_("record {format}: no key: set {names} (or name another variable: "
                          "--api-key-env NAME)"), format=fmt, names=" or ".join(names))
    if key is not None and (bad := _HEADER_UNSAFE.search(key)):
        # never sent: a line break would end the header early (h11 refuses it, and its error
        # repeats the key); never shown either, only what is wrong and where
        raise LabError("bad_key", N_("record {format}: the key in {name} has {kind} at "
                                     "character {at} of {count}: an HTTP header cannot carry "
                                     "it; a key is printable ASCII without spaces (how was the "
                                     "variable set?)"), format=fmt, name=name, kind=_kind(bad[0]),
                       at=bad.start() + 1, count=len(key))
    return Request(fmt, model or provider.model, tools, prompt,
                   (base_url or provider.url).rstrip("/"), key, timeout)


_HEADER_UNSAFE = re.compile(r"[^\x21-\x7e]")  # a key is visible ASCII, blank-free


def _kind(char: str) -> str:
    if char in "\r\n":
        return "a line break"
    if char.isspace():
        return "a blank"
    return "a control character" if char.isascii() else "a character that is not ASCII"


@dataclass(frozen=True)
class Recording:
    path: Path
    size: int  # bytes


class _Answer(Protocol):
    """A streamed HTTP answer, as httpx and the SDKs' raw responses both give it."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    def iter_bytes(self) -> Iterator[bytes]: ...


def record(request: Request, out: Path, say: Callable[[str], None] | None = None) -> Recording:
    """Send `request` and save its stream's bytes to `out`; `say` hears the request and the
    answer's status (scrubbed). Raises `RecordFailed` for a refused, unreachable, silent or
    cut-off provider and for an answer that is not a stream, `LabError` when `out` cannot be
    written (checked before anything is sent)."""
    def tell(text: str) -> None:
        if say is not None:
            say(request.scrub(text))

    sink = _Sink(out, request.max_seconds)
    try:
        tell(f"POST {request.url}")
        tell(json.dumps(request.body(), ensure_ascii=False))
        with _OPENERS[request.format](request) as answer:
            kind = answer.headers.get("content-type", "")
            tell(f"answer: HTTP {answer.status_code}, {kind or 'no Content-Type'}")
            stream_type = PROVIDERS[request.format].stream_type
            if kind.split(";")[0].strip().lower() != stream_type:
                first = next(iter(answer.iter_bytes()), b"")[:200]
                raise RecordFailed("not_a_stream", N_("{url} answered {kind}, not a stream "
                                                      "({stream_type}): {start!r}"),
                                   url=request.url, kind=kind or "no Content-Type",
                                   stream_type=stream_type,
                                   start=_one_line(first.decode("utf-8", "replace")))
            for chunk in answer.iter_bytes():
                sink.write(chunk, request.url)
            if not sink.size:
                raise RecordFailed("no_stream", N_("{url} answered HTTP {status} with no bytes: "
                                                   "no stream came"), url=request.url,
                                   status=answer.status_code)
    except BaseException as exc:
        size, kept = sink.size, sink.discard()
        failure = exc if isinstance(exc, RecordFailed) else _failure(exc, request, size)
        if failure is None:
            raise
        raise RecordFailed(failure.code, N_("{failure}{kept}"),
                           failure=_scrubbed(failure.said, request), kept=kept) from None
    tell(f"{sink.size} bytes")
    return Recording(sink.keep(), sink.size)


def _failure(exc: BaseException, request: Request, size: int) -> RecordFailed | None:
    """What went wrong on the wire, in one line, `size` bytes into the stream; None for an
    error that is not the network's. httpx and the SDKs' copy of it (httpx2) name their errors
    alike: names are compared. An SDK may wrap what the status hook raised: the chain is read."""
    chain = [exc]
    while (inner := chain[-1].__cause__ or chain[-1].__context__) and len(chain) < 10:
        chain.append(inner)
    refused = next((e for e in chain if isinstance(e, _Refused)), None)
    if refused is not None and refused.location is not None:
        return RecordFailed("redirect", N_("{url} answered HTTP {status}, a redirect to "
                                           "{location!r}: keel-lab follows none (the key and "
                                           "the prompt go only where --base-url says; give it "
                                           "that URL)"), url=request.url, status=refused.status,
                            location=_one_line(refused.location))
    if refused is not None:
        return RecordFailed("refused", N_("{url} refused the request: HTTP {status}: {message} "
                                          "(keel-lab sent no key: --api-key-env NAME sends one)")
                            if refused.status in (401, 403) and request.key is None else
                            N_("{url} refused the request: HTTP {status}: {message}"),
                            url=request.url, status=refused.status,
                            message=_provider_message(refused.body))
    at: str | Said = Said("after_bytes", N_("{url}, after {size} bytes,"),
                          {"url": request.url, "size": size}) if size else request.url
    where = Said("stream_from", N_("the stream from {at}"), {"at": at}) if size else at
    if isinstance(exc, KeyboardInterrupt):
        return RecordFailed("interrupted", N_("{where}: interrupted"), where=where)
    names = {c.__name__ for e in chain for c in type(e).__mro__}
    detail = _one_line(next((str(e) for e in reversed(chain) if str(e)), type(exc).__name__))
    if names & {"TimeoutException", "APITimeoutError"}:
        return RecordFailed("timed_out", N_("{where}: nothing came for {timeout:g} s "
                                            "({detail}); --timeout SECONDS waits longer"),
                            where=where, timeout=request.timeout, detail=detail)
    if names & {"TransportError", "APIConnectionError"}:
        return RecordFailed("broke_off", N_("{where} broke off: {detail}"), where=where,
                            detail=detail) if size else RecordFailed(
            "unreachable", N_("cannot reach {where}: {detail}"), where=where, detail=detail)
    if "RequestError" in names:  # e.g. a body its Content-Encoding does not describe
        return RecordFailed("undecodable", N_("the answer of {at} cannot be decoded: {detail}"),
                            at=at, detail=detail)
    return None


def _scrubbed(said: Said, request: Request) -> Said:
    """`said` with every text in it scrubbed: a server may echo the key in any of them."""
    return Said(said.code, said.template, {
        k: _scrubbed(v, request) if isinstance(v, Said) else
        request.scrub(v) if isinstance(v, str) else v for k, v in said.params.items()})


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= ERROR_CHARS else line[:ERROR_CHARS] + "..."


def _provider_message(body: bytes) -> str:
    """The message in a provider's error body: OpenAI's, Anthropic's and Gemini's
    `{"error": {"message": ...}}` (Gemini's sometimes in a list), Ollama's `{"error": "..."}`;
    else the body's text."""
    text = body.decode("utf-8", "replace")
    try:
        value = read_json(text, "error body")
    except LabError:
        return _one_line(text) or "(no body)"
    value = value[0] if isinstance(value, list) and value else value
    error = value.get("error") if isinstance(value, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    return _one_line(message if isinstance(message, str) else text)


class _Refused(Exception):
    """An HTTP status that is no stream (an error, a redirect), with the start of its body."""

    def __init__(self, status: int, body: bytes, location: str | None = None) -> None:
        super().__init__(status)
        self.status, self.body, self.location = status, body, location


class _Sink:
    """The recording as it comes: a hidden file beside `out`, made `out` only when whole."""

    def __init__(self, out: Path, seconds: float) -> None:
        self.out, self.size = out, 0
        self.seconds, self.deadline = seconds, time.monotonic() + seconds
        try:
            mode = out.stat().st_mode
        except OSError:
            mode = stat.S_IFREG  # a new file (a missing folder is found when writing)
        if stat.S_ISDIR(mode) or not out.name:
            raise LabError("unwritable", N_("cannot write {out}: it is a folder"), out=out)
        if not stat.S_ISREG(mode):  # renaming onto it would replace the device or FIFO itself
            raise LabError("unwritable", N_("cannot write {out}: not a regular file (a device, "
                                            "FIFO or socket); record writes a file of its own"),
                           out=out)
        self.temp = out.with_name(f".{out.name}.{secrets.token_hex(4)}.tmp")
        try:
            self.file: BinaryIO = self.temp.open("xb")
        except OSError as exc:
            raise LabError("unwritable", N_("cannot write {out}: {reason}"), out=out,
                           reason=exc.strerror or exc) from None

    def write(self, chunk: bytes, url: str) -> None:
        if time.monotonic() > self.deadline:
            raise RecordFailed("too_long", N_("the stream from {url} still went on after "
                                              "{seconds:g} s, too long for one turn"), url=url,
                               seconds=self.seconds)
        if self.size + len(chunk) > MAX_BYTES:
            self.file.write(chunk[:MAX_BYTES - self.size])
            self.size = MAX_BYTES
            raise RecordFailed("too_large", N_("{url} sent more than {mib} MiB, too much for "
                                               "one turn"), url=url, mib=MAX_BYTES // 2**20)
        try:
            self.file.write(chunk)
        except OSError as exc:
            raise LabError("unwritable", N_("cannot write {out}: {reason}"), out=self.out,
                           reason=exc.strerror or exc) from None
        self.size += len(chunk)

    def keep(self) -> Path:
        self.file.close()
        os.replace(self.temp, self.out)
        return self.out

    def discard(self) -> Said | str:
        """Drop an empty start, keep a cut-off one as `<out>.partial`; says which."""
        with contextlib.suppress(OSError):
            self.file.close()
        if self.size:
            partial = self.out.with_name(self.out.name + ".partial")
            with contextlib.suppress(OSError):
                os.replace(self.temp, partial)
                return Said("kept", N_("; the {size} bytes that came are kept in {partial} "
                                       "(keel-lab assemble reads it)"),
                            {"size": self.size, "partial": partial})
        with contextlib.suppress(OSError):
            self.temp.unlink()
        return ""


# The request bodies, one per format: the same user turn and tools in each provider's shape.

def _chat_body(model: str, messages: list[Message], tools: Toolset) -> dict[str, Any]:
    return {**openai_chat_request(model, messages, tools), "stream": True}


def _responses_body(model: str, messages: list[Message], tools: Toolset) -> dict[str, Any]:
    # `strict` defaults to true in the Responses API, which needs every property required:
    # an optional argument (search_logs's `query`) would be refused
    declared = [{"type": "function", "name": t.name, "description": t.description,
                 "parameters": t.parameters, "strict": False} for t in tools.tools.values()]
    return {"model": model, "input": to_responses(messages), "tools": declared, "stream": True}


def _anthropic_body(model: str, messages: list[Message], tools: Toolset) -> dict[str, Any]:
    return {**anthropic_request(model, messages, tools), "stream": True}


def _gemini_body(model: str, messages: list[Message], tools: Toolset) -> dict[str, Any]:
    # the model is in the URL; `parametersJsonSchema` takes the JSON Schema as it is
    # (`parameters` takes an OpenAPI subset)
    declared = [{"name": t.name, "description": t.description,
                 "parametersJsonSchema": t.parameters} for t in tools.tools.values()]
    return {**to_gemini(messages), "tools": [{"functionDeclarations": declared}]}


def _ollama_body(model: str, messages: list[Message], tools: Toolset) -> dict[str, Any]:
    return {"model": model, "messages": to_openai(messages), "tools": tools.schemas(),
            "stream": True}


_BODIES: dict[StreamFormat, Callable[[str, list[Message], Toolset], dict[str, Any]]] = {
    "openai-chat": _chat_body, "openai-responses": _responses_body,
    "anthropic": _anthropic_body, "gemini": _gemini_body, "ollama": _ollama_body}


# The clients, one per format: each yields the answer with its status checked, by the hook
# every client (httpx, and the SDKs' copy of it) calls before anything reads the body.

def _status_hook(request: Request) -> Callable[[Any], None]:
    """Raise `_Refused` for an answer that is not 2xx, with at most the first 64 KiB of its
    body that came within the timeout: an SDK would read all of it, however long or slow. No
    redirect is followed: the key and the prompt go only where the user said."""
    def check(answer: Any) -> None:
        if answer.status_code < 300:
            return
        try:
            body = _head(answer.iter_bytes(), time.monotonic() + request.timeout)
        except Exception:  # the body only words the error; the status is the error
            body = b"(a body that cannot be read)"
        finally:
            answer.close()
        redirect = answer.headers.get("location") if answer.status_code < 400 else None
        raise _Refused(answer.status_code, body, redirect)

    return check


# The official SDK of each format it serves: its module, client class, and the client's API.
_SDKS = {"openai-chat": ("openai", "OpenAI", "chat.completions"),
         "openai-responses": ("openai", "OpenAI", "responses"),
         "anthropic": ("anthropic", "Anthropic", "messages")}


@contextlib.contextmanager
def _sdk(request: Request) -> Iterator[_Answer]:
    """The turn sent through the provider's official SDK, as a user of it would send it (no
    retry, no redirect, the status checked by the shared hook)."""
    module, client_class, api_path = _SDKS[request.format]
    sdk = _import(module, request.format)
    client = getattr(sdk, client_class)(
        base_url=request.base_url, api_key=request.key or NO_KEY, timeout=request.timeout,
        max_retries=0, http_client=sdk.DefaultHttpxClient(
            follow_redirects=False, event_hooks={"response": [_status_hook(request)]}))
    api = operator.attrgetter(api_path)(client)
    with client, api.with_streaming_response.create(**request.body()) as answer:
        yield answer


@contextlib.contextmanager
def _http(request: Request) -> Iterator[_Answer]:
    httpx = _import("httpx", request.format)
    headers = {"content-type": "application/json"}
    if request.key and request.format == "gemini":
        headers["x-goog-api-key"] = request.key
    elif request.key:  # an Ollama behind a proxy that asks for one (--api-key-env)
        headers["authorization"] = f"Bearer {request.key}"
    content = json.dumps(request.body()).encode()
    with httpx.Client(timeout=request.timeout, event_hooks={
            "response": [_status_hook(request)]}) as client, client.stream(
            "POST", request.url, content=content, headers=headers) as answer:
        yield answer


def _head(chunks: Iterator[bytes], deadline: float, limit: int = 64 * 1024) -> bytes:
    """The first `limit` bytes of an error body that came by `deadline`: enough for its
    message, bounded in size and time."""
    got = b""
    for chunk in chunks:
        got += chunk
        if len(got) >= limit or time.monotonic() > deadline:
            break
    return got[:limit]


def _import(name: str, fmt: str) -> Any:
    try:
        return __import__(name)
    except ImportError:
        raise LabError("missing_extra", N_("record {format} needs the {package} package: "
                                           "pip install 'keel-lab[record]'"),
                       format=fmt, package=name) from None


_OPENERS: dict[StreamFormat, Callable[[Request], contextlib.AbstractContextManager[_Answer]]] = {
    "openai-chat": _sdk, "openai-responses": _sdk, "anthropic": _sdk,
    "gemini": _http, "ollama": _http}


def turn_events(request: Request, history: Sequence[Message]) -> list[StreamEvent]:
    """One streamed turn of a provider for `history`, sent as `record` sends its request and
    read into the lab's events: a loop's model, on a live provider or the replay server."""
    asked = replace(request, history=tuple(history))
    with _OPENERS[asked.format](asked) as answer:
        raw = b"".join(answer.iter_bytes())
    return list(to_events(parse_records(decode(raw, asked.url), asked.url), asked.format))


def provider_model(fmt: StreamFormat, tools: Toolset, **where: Any
                   ) -> Callable[[list[Message]], AsyncIterator[StreamEvent]]:
    """A live provider as a turn loop's `model` (the capstone's): its key from the provider's
    usual variable; `where` is `plan`'s model, base_url, key_env. Each turn is one paid
    request."""
    request = plan(fmt, tools, "", **where)

    async def model(history: list[Message]) -> AsyncIterator[StreamEvent]:
        for event in turn_events(request, history):
            yield event

    return model
