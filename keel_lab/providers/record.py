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
goes to another host unasked). Every line this module says is scrubbed of the key.

Nothing half-written: the bytes go to a hidden file beside the output, renamed to it only when
the stream ended whole (an older recording stays until then). A stream that breaks off after
some bytes (a cut connection, a pause longer than the timeout, Ctrl-C, more than 32 MiB) is kept
as `<out>.partial`, which `keel-lab assemble` reads: a cut stream is worth seeing.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol
from urllib.parse import quote

from keel_lab.core.errors import LabError
from keel_lab.core.messages import Message, UserMessage
from keel_lab.core.strict_json import read_json
from keel_lab.core.tables import printable
from keel_lab.core.tools import Toolset
from keel_lab.providers.formats import StreamFormat
from keel_lab.providers.gemini_messages import to_gemini
from keel_lab.providers.openai_messages import to_openai
from keel_lab.providers.responses_messages import to_responses
from keel_lab.providers.streams.records import MAX_BYTES
from keel_lab.providers.switches import anthropic_request, openai_chat_request

TIMEOUT = 60.0  # seconds to connect, and between two pieces of the answer
SSE = "text/event-stream"
NO_KEY = "none"  # what an SDK that insists on a key sends to a server that needs none
ERROR_CHARS = 300  # of a provider's error message, on its one line


class RecordFailed(LabError):
    """The request went out and no whole stream came back (the CLI's exit 69)."""


@dataclass(frozen=True)
class Provider:
    """What the lab knows of one provider's streaming endpoint."""

    model: str  # the default model
    url: str  # the default base URL, as its client takes it
    path: str  # the endpoint after the base URL; `{model}` is filled in
    keys: tuple[str, ...]  # environment variables that may hold its key; the first set wins
    stream_type: str  # the Content-Type its stream comes with


_OPENAI = "https://api.openai.com/v1"
PROVIDERS: dict[StreamFormat, Provider] = {
    "openai-chat": Provider("gpt-4.1-mini", _OPENAI, "/chat/completions", ("OPENAI_API_KEY",),
                            SSE),
    "openai-responses": Provider("gpt-4.1-mini", _OPENAI, "/responses", ("OPENAI_API_KEY",),
                                 SSE),
    "anthropic": Provider("claude-haiku-4-5", "https://api.anthropic.com", "/v1/messages",
                          ("ANTHROPIC_API_KEY",), SSE),
    # GOOGLE_API_KEY first when both are set, as Google's SDK reads them
    "gemini": Provider("gemini-2.5-flash", "https://generativelanguage.googleapis.com",
                       "/v1beta/models/{model}:streamGenerateContent?alt=sse",
                       ("GOOGLE_API_KEY", "GEMINI_API_KEY"), SSE),
    "ollama": Provider("qwen3:8b", "http://localhost:11434", "/api/chat", (),
                       "application/x-ndjson"),
}


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

    @property
    def url(self) -> str:
        name = quote(self.model.removeprefix("models/"), safe="")
        return self.base_url + PROVIDERS[self.format].path.format(model=name)

    def body(self) -> dict[str, Any]:
        """The JSON body, tools and prompt in the format's own shape."""
        return _BODIES[self.format](self.model, [UserMessage(self.prompt)], self.tools)

    def scrub(self, text: object) -> str:
        """`text` safe to print: without the key, and without terminal escapes."""
        said = str(text)
        return printable(said.replace(self.key, "***") if self.key else said)


def plan(fmt: StreamFormat, tools: Toolset, prompt: str, *, model: str | None = None,
         base_url: str | None = None, key_env: str | None = None, timeout: float = TIMEOUT,
         environ: Mapping[str, str] = os.environ) -> Request:
    """The request `record` sends, or a `LabError` before anything is sent (a missing key)."""
    provider = PROVIDERS[fmt]
    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise LabError(f"--base-url {printable(base_url)!r}: expected an http:// or https:// URL")
    names = (key_env,) if key_env else () if base_url else provider.keys
    key = next((environ[n] for n in names if environ.get(n)), None)
    if names and key is None:
        raise LabError(f"record {fmt}: no key: set {' or '.join(names)}"
                       + ("" if key_env else " (or name another variable: --api-key-env NAME)"))
    return Request(fmt, model or provider.model, tools, prompt,
                   (base_url or provider.url).rstrip("/"), key, timeout)


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

    sink = _Sink(out)
    try:
        tell(f"POST {request.url}")
        tell(json.dumps(request.body(), ensure_ascii=False))
        with _OPENERS[request.format](request) as answer:
            kind = answer.headers.get("content-type", "")
            tell(f"answer: HTTP {answer.status_code}, {kind or 'no Content-Type'}")
            stream_type = PROVIDERS[request.format].stream_type
            if kind.split(";")[0].strip().lower() != stream_type:
                first = next(iter(answer.iter_bytes()), b"")[:200]
                raise RecordFailed(f"{request.url} answered {kind or 'no Content-Type'}, not a "
                                   f"stream ({stream_type}): "
                                   f"{_one_line(first.decode('utf-8', 'replace'))!r}")
            for chunk in answer.iter_bytes():
                sink.write(chunk, request.url)
    except BaseException as exc:
        size, kept = sink.size, sink.discard()
        failure = exc if isinstance(exc, RecordFailed) else _failure(exc, request, size)
        if failure is None:
            raise
        raise RecordFailed(request.scrub(f"{failure}{kept}")) from None
    tell(f"{sink.size} bytes")
    return Recording(sink.keep(), sink.size)


def _failure(exc: BaseException, request: Request, size: int) -> RecordFailed | None:
    """What went wrong on the wire, in one line, `size` bytes into the stream; None for an
    error that is not the network's. httpx and the SDKs' copy of it (httpx2) name their errors
    alike: names are compared."""
    if isinstance(exc, _Refused):
        return RecordFailed(f"{request.url} refused the request: HTTP {exc.status}: "
                            f"{_provider_message(exc.body)}"
                            + (" (keel-lab sent no key: --api-key-env NAME sends one)"
                               if exc.status in (401, 403) and request.key is None else ""))
    where = f"the stream from {request.url}, after {size} bytes," if size else request.url
    if isinstance(exc, KeyboardInterrupt):
        return RecordFailed(f"{where}: interrupted")
    chain = [exc]
    while (inner := chain[-1].__cause__ or chain[-1].__context__) and len(chain) < 10:
        chain.append(inner)
    names = {c.__name__ for e in chain for c in type(e).__mro__}
    detail = _one_line(next((str(e) for e in reversed(chain) if str(e)), type(exc).__name__))
    if names & {"TimeoutException", "APITimeoutError"}:
        return RecordFailed(f"{where}: nothing came for {request.timeout:g} s ({detail}); "
                            "--timeout SECONDS waits longer")
    if names & {"TransportError", "APIConnectionError"}:
        return RecordFailed(f"{where} broke off: {detail}" if size else
                            f"cannot reach {where}: {detail}")
    return None


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
    """An HTTP error status, with the body the provider sent."""

    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(status)
        self.status, self.body = status, body


class _Sink:
    """The recording as it comes: a hidden file beside `out`, made `out` only when whole."""

    def __init__(self, out: Path) -> None:
        self.out, self.size = out, 0
        self.temp = out.with_name(f".{out.name}.{secrets.token_hex(4)}.tmp")
        if out.is_dir():
            raise LabError(f"cannot write {out}: it is a folder")
        try:
            self.file: BinaryIO = self.temp.open("xb")
        except OSError as exc:
            raise LabError(f"cannot write {out}: {exc.strerror or exc}") from None

    def write(self, chunk: bytes, url: str) -> None:
        if self.size + len(chunk) > MAX_BYTES:
            self.file.write(chunk[:MAX_BYTES - self.size])
            self.size = MAX_BYTES
            raise RecordFailed(f"{url} sent more than {MAX_BYTES // 2**20} MiB, too much "
                               "for one turn")
        try:
            self.file.write(chunk)
        except OSError as exc:
            raise LabError(f"cannot write {self.out}: {exc.strerror or exc}") from None
        self.size += len(chunk)

    def keep(self) -> Path:
        self.file.close()
        os.replace(self.temp, self.out)
        return self.out

    def discard(self) -> str:
        """Drop an empty start, keep a cut-off one as `<out>.partial`; says which."""
        with contextlib.suppress(OSError):
            self.file.close()
        if self.size:
            partial = self.out.with_name(self.out.name + ".partial")
            with contextlib.suppress(OSError):
                os.replace(self.temp, partial)
                return (f"; the {self.size} bytes that came are kept in {partial} "
                        "(keel-lab assemble reads it)")
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


# The clients, one per format: each yields the answer with its status checked.

@contextlib.contextmanager
def _openai(request: Request) -> Iterator[_Answer]:
    sdk = _import("openai", request.format)
    client = sdk.OpenAI(base_url=request.base_url, api_key=request.key or NO_KEY,
                        timeout=request.timeout, max_retries=0)
    api = client.chat.completions if request.format == "openai-chat" else client.responses
    with _sdk_status(sdk), api.with_streaming_response.create(**request.body()) as answer:
        yield answer


@contextlib.contextmanager
def _anthropic_sdk(request: Request) -> Iterator[_Answer]:
    sdk = _import("anthropic", request.format)
    client = sdk.Anthropic(base_url=request.base_url, api_key=request.key or NO_KEY,
                           timeout=request.timeout, max_retries=0)
    with _sdk_status(sdk), client.messages.with_streaming_response.create(
            **request.body()) as answer:
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
    with httpx.Client(timeout=request.timeout) as client, client.stream(
            "POST", request.url, content=content, headers=headers) as answer:
        if answer.status_code >= 400:
            raise _Refused(answer.status_code, _head(answer.iter_bytes()))
        yield answer


@contextlib.contextmanager
def _sdk_status(sdk: Any) -> Iterator[None]:
    """An SDK's error for an HTTP status as `_Refused` (the SDK has read its body)."""
    try:
        yield
    except sdk.APIStatusError as exc:
        raise _Refused(exc.status_code, exc.response.content) from None


def _head(chunks: Iterator[bytes], limit: int = 64 * 1024) -> bytes:
    """The first `limit` bytes of an error body: enough for its message, bounded."""
    got = b""
    for chunk in chunks:
        got += chunk
        if len(got) >= limit:
            break
    return got[:limit]


def _import(name: str, fmt: str) -> Any:
    try:
        return __import__(name)
    except ImportError:
        raise LabError(f"record {fmt} needs the {name} package: pip install {name}") from None


_OPENERS: dict[StreamFormat, Callable[[Request], contextlib.AbstractContextManager[_Answer]]] = {
    "openai-chat": _openai, "openai-responses": _openai, "anthropic": _anthropic_sdk,
    "gemini": _http, "ollama": _http}
