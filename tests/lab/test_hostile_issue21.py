"""Issue 21 attacked: `keel-lab record` against servers that answer badly, keys set oddly and
paths that are no file, each failure found once and held here; and `assemble` on the new
stream shapes, mutated. Every case ends in one line and its documented exit code."""

import base64
import contextlib
import dataclasses
import json
import os
import socket
import threading
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from raw_http import read_request

from keel_cli._command import PROMPT, UNAVAILABLE, main
from keel_cli._record import RecordFailed, plan, record
from keel_lab import incident_tools
from keel_lab._core.errors import LabError
from keel_lab.providers._diagnosis import diagnose_file

pytestmark = pytest.mark.ch7

STREAMS = Path(__file__).resolve().parents[2] / "data" / "streams"
RECORDINGS = Path(__file__).resolve().parents[2] / "data" / "recordings"
CHAT = (STREAMS / "openai-chat" / "parallel_calls.sse").read_bytes()
KEY = "sk-h8/key+0123456789abcdef="  # `/`, `+` and `=` change when URL-encoded
FORMATS = [("openai-chat", "/v1"), ("anthropic", ""), ("gemini", ""), ("ollama", "")]


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LAB_KEY", KEY)


@contextlib.contextmanager
def server(answer):
    """A server on 127.0.0.1 for one request: `answer(conn, stop)` writes what it likes until
    `stop` is set; yields its URL and the request heads it read."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)
    stop, heads = threading.Event(), []

    def serve():
        with contextlib.suppress(OSError), listener.accept()[0] as conn:
            heads.append(read_request(conn))
            answer(conn, stop)

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", heads
    finally:
        stop.set()
        thread.join()
        listener.close()


def fixed(head, body=b""):
    return lambda conn, stop: conn.sendall(head + b"\r\n\r\n" + body)


def endless(head, piece, pause=0.0):
    """A chunked body that never ends: `piece` again and again until the test is done."""
    def answer(conn, stop):
        conn.sendall(head + b"\r\nTransfer-Encoding: chunked\r\n\r\n")
        while not stop.is_set():
            conn.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            time.sleep(pause)
    return answer


def run(capsys, fmt, url, out, *more):
    code = main(["record", fmt, str(out), "--base-url", url, "--api-key-env", "LAB_KEY",
                 "--model", "m", *map(str, more)])
    shown, err = capsys.readouterr()
    return code, shown, err


def one_error_line(err):
    assert "Traceback" not in err
    [line] = [line for line in err.splitlines() if line.startswith("keel-lab: error: ")]
    return line


# `record`: what a server sends

@pytest.mark.parametrize(("fmt", "suffix"), FORMATS)
def test_a_body_its_content_encoding_does_not_describe(fmt, suffix, tmp_path, capsys):
    """Was a traceback and exit 1 (httpx's DecodingError is no TransportError)."""
    kind = b"application/x-ndjson" if fmt == "ollama" else b"text/event-stream"
    head = (b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Encoding: gzip\r\n"
            b"Content-Length: %d" % (kind, len(CHAT)))
    with server(fixed(head, CHAT)) as (url, _):
        code, _, err = run(capsys, fmt, url + suffix, tmp_path / "t")
    assert code == UNAVAILABLE
    assert "cannot be decoded: Error -3 while decompressing data" in one_error_line(err)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("fmt", "suffix"), FORMATS)
def test_an_error_body_that_never_ends_is_read_no_further_than_needed(fmt, suffix, tmp_path,
                                                                       capsys):
    """Was a hang (and memory without bound): the SDKs read a whole error body first."""
    started = time.monotonic()
    with server(endless(b"HTTP/1.1 500 Oops\r\nContent-Type: text/plain", b"y" * 65536)) as (
            url, _):
        code, _, err = run(capsys, fmt, url + suffix, tmp_path / "t", "--timeout", "2")
    assert code == UNAVAILABLE and time.monotonic() - started < 8
    assert "refused the request: HTTP 500: yyyy" in one_error_line(err)


@pytest.mark.parametrize(("fmt", "suffix"), FORMATS)
def test_a_redirect_is_not_followed_to_another_host(fmt, suffix, tmp_path, capsys):
    """The SDKs followed a 307 to wherever it said, with the prompt (and a key in any header
    but Authorization); httpx did not, and said 'not a stream'. Now none follows, one line."""
    with server(fixed(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream", CHAT)) as (
            other, heads):
        other = other.replace("127.0.0.1", "localhost")
        head = b"HTTP/1.1 307 Moved\r\nLocation: %s/v1/x\r\nContent-Length: 0" % other.encode()
        with server(fixed(head)) as (url, _):
            code, _, err = run(capsys, fmt, url + suffix, tmp_path / "t")
        with contextlib.suppress(OSError), socket.create_connection(
                ("127.0.0.1", int(other.rsplit(":", 1)[1]))):
            pass  # lets the other server's accept return
    assert code == UNAVAILABLE and heads in ([], [b""])
    assert one_error_line(err).endswith(f"answered HTTP 307, a redirect to '{other}/v1/x': "
                                        "keel-lab follows none (the key and the prompt go "
                                        "only where --base-url says; give it that URL)")


def test_a_stream_that_trickles_forever_is_stopped(tmp_path):
    """A comment line every 0.1 s never trips the timeout between pieces: was a hang."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson"
    with server(endless(head, b"\n", pause=0.1)) as (url, _):
        request = dataclasses.replace(plan("ollama", incident_tools(), PROMPT, base_url=url),
                                      max_seconds=1)
        with pytest.raises(RecordFailed, match=r"/api/chat still went on after 1 s, too long "
                                               r"for one turn; the \d+ bytes that came are kept"):
            record(request, tmp_path / "t.jsonl")
    assert [p.name for p in tmp_path.iterdir()] == ["t.jsonl.partial"]


@pytest.mark.parametrize("status", [200, 204])
def test_an_empty_answer_is_no_recording_and_an_older_one_stays(status, tmp_path, capsys):
    """Was an empty FILE in place of the older recording, then exit 2."""
    out = tmp_path / "t.sse"
    out.write_bytes(b"an older recording")
    head = b"HTTP/1.1 %d X\r\nContent-Type: text/event-stream\r\nContent-Length: 0" % status
    if status == 204:
        head = b"HTTP/1.1 204 No Content\r\nContent-Type: text/event-stream"
    with server(fixed(head)) as (url, _):
        code, _, err = run(capsys, "gemini", url, out)
    assert code == UNAVAILABLE
    assert one_error_line(err).endswith(f"answered HTTP {status} with no bytes: no stream came")
    assert out.read_bytes() == b"an older recording" and len(list(tmp_path.iterdir())) == 1


def _echo(body):
    return fixed(b"HTTP/1.1 401 No\r\nContent-Type: application/json\r\nContent-Length: %d"
                 % len(body), body)


@pytest.mark.parametrize("echoed", [
    KEY, quote(KEY, safe=""), KEY.replace("/", "\\/"), KEY[:9] + "\n  " + KEY[9:],
    base64.b64encode(KEY.encode()).decode(), base64.b64encode(f"Bearer {KEY}".encode()).decode(),
    base64.urlsafe_b64encode(f"u:{KEY}".encode()).decode()],
    ids=["plain", "url-encoded", "json-escaped", "split", "base64", "base64-bearer", "basic"])
def test_a_key_echoed_in_another_form_is_masked(echoed, tmp_path, capsys):
    """Only the key's own text was masked; a server echoing it otherwise printed it."""
    body = json.dumps({"error": {"message": f"bad key: {echoed}."}}).encode()
    if "\n" in echoed:  # not JSON: the body's text is shown, on one line
        body = f"bad key: {echoed}.".encode()
    with server(_echo(body)) as (url, _):
        code, _, err = run(capsys, "openai-chat", url + "/v1", tmp_path / "t", "--verbose")
    line = one_error_line(err)
    assert code == UNAVAILABLE and "***" in line
    assert "0123456789" not in err and "MDEyMzQ1Njc4" not in err and "TAxMjM0NTY3" not in err


@pytest.mark.parametrize("before", ["", "B", "Be", "Bearer ", "u:"])
@pytest.mark.parametrize("after", ["", "\n", "; x"])
def test_a_key_echoed_in_base64_shows_none_of_its_bits(before, after, tmp_path, capsys):
    """The characters of the base64 text that the key's first and last bytes share with their
    neighbours were shown: decoded, they gave the key's first and last characters."""
    whole = base64.b64encode(f"{before}{KEY}{after}".encode()).decode()
    body = json.dumps({"error": {"message": f"bad key: {whole}."}}).encode()
    with server(_echo(body)) as (url, _):
        code, _, err = run(capsys, "openai-chat", url + "/v1", tmp_path / "t")
    line = one_error_line(err)
    assert code == UNAVAILABLE
    shown = line.split("bad key: ", 1)[1].rstrip(".")
    head, _, tail = shown.partition("***")
    start, end = len(before) * 8, (len(before) + len(KEY)) * 8  # the key's bits
    assert head == whole[:start // 6]  # the characters no bit of the key decides
    assert tail == whole[-(-end // 6):]


@pytest.mark.parametrize("escaped", [
    "".join(f"\\u{ord(c):04x}" for c in KEY), "".join(f"\\u{ord(c):04X}" for c in KEY),
    KEY[:5] + "\\u002f" + KEY[6:].replace("+", "\\u002B")],
    ids=["every-character", "upper-case-hex", "some-characters"])
def test_a_key_echoed_with_unicode_escapes_in_a_text_body_is_masked(escaped, tmp_path, capsys):
    """A JSON body is decoded before it is shown; a text body showed `\\u0073\\u006b...` as
    sent."""
    body = f"bad key: {escaped}.".encode()
    with server(_echo(body)) as (url, _):
        code, _, err = run(capsys, "openai-chat", url + "/v1", tmp_path / "t", "--verbose")
    assert code == UNAVAILABLE and one_error_line(err).endswith("bad key: ***.")


# `record`: keys and paths, refused before anything is sent

@pytest.mark.parametrize(("key", "said"), [
    ("sk-abc\r\nX-Injected: 1", "a line break at character 7 of 21"),
    ("sk-abc\n", "a line break at character 7 of 7"),
    ("   ", "a blank at character 1 of 3"), (" sk-abc", "a blank at character 1 of 7"),
    ("sk-ключ", "a character that is not ASCII at character 4 of 7"),
    ("sk-\x7f", "a control character at character 4 of 4")])
@pytest.mark.parametrize(("fmt", "suffix"), FORMATS)
def test_a_key_no_header_can_carry_is_refused_unsent_and_unshown(key, said, fmt, suffix,
                                                                  tmp_path, capsys, monkeypatch):
    """Was a traceback (UnicodeEncodeError, exit 1) or h11's refusal with the key in it
    (`Illegal header value b'Bearer sk-abc\\r\\nX-Injected: 1'`), exit 69."""
    monkeypatch.setenv("LAB_KEY", key)
    with server(fixed(b"HTTP/1.1 500 X\r\nContent-Length: 0")) as (url, heads):
        code, shown, err = run(capsys, fmt, url + suffix, tmp_path / "t")
        with contextlib.suppress(OSError), socket.create_connection(
                ("127.0.0.1", int(url.rsplit(":", 1)[1]))):
            pass
    assert (code, shown) == (2, "")
    assert one_error_line(err) == (f"keel-lab: error: record {fmt}: the key in LAB_KEY has "
                                   f"{said}: an HTTP header cannot carry it; a key is printable "
                                   "ASCII without spaces (how was the variable set?)")
    assert heads in ([], [b""]) and list(tmp_path.iterdir()) == []


def test_a_device_or_fifo_is_never_replaced(tmp_path, capsys):
    """As root, `record FMT /dev/null` renamed the recording onto /dev/null: the device was
    gone, a plain file in its place. A FIFO here stands for it."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, _, err = run(capsys, "ollama", "http://127.0.0.1:9", fifo)
    assert code == 2
    assert one_error_line(err).endswith(f"cannot write {fifo}: not a regular file (a device, "
                                        "FIFO or socket); record writes a file of its own")
    assert fifo.is_fifo() and [p.name for p in tmp_path.iterdir()] == ["fifo"]


@pytest.mark.parametrize("path", ["", ".", "/"])
def test_a_path_without_a_name_is_one_line(path, capsys):
    """Was a traceback: `PosixPath('.') has an empty name`."""
    code, _, err = run(capsys, "ollama", "http://127.0.0.1:9", path)
    assert code == 2 and one_error_line(err).endswith(": it is a folder")


def test_a_symlink_is_replaced_never_its_target(tmp_path, capsys):
    """The recording takes the link's place; the file it pointed to is left as it was."""
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious")
    (tmp_path / "t.sse").symlink_to(target)
    with server(fixed(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: "
                      b"%d" % len(CHAT), CHAT)) as (url, _):
        code, _, err = run(capsys, "openai-chat", url + "/v1", tmp_path / "t.sse")
    assert code == 0, err
    assert target.read_text() == "precious" and (tmp_path / "t.sse").read_bytes() == CHAT


# `assemble` on the new shapes, mutated

def _gemini(*parts, finish="STOP"):
    lines = [{"candidates": [{"content": {"role": "model", "parts": [p]}}]} for p in parts]
    lines.append({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
                                  "finishReason": finish}]})
    return "\n".join(json.dumps(line) for line in lines)


def _streamed(*pieces):
    return _gemini({"functionCall": {"name": "f", "willContinue": True}},
                   *({"functionCall": {"partialArgs": [p], "willContinue": True}}
                     for p in pieces), {"functionCall": {}})


@pytest.mark.parametrize(("path", "why"), [
    ("$[999999999]", "step 999999999 into an object"),
    ("$.a[999999999]", "index 999999999 is past the end of a list of 0"),
    ("$..a", "is no path to one value"), ("$.*", "is no path to one value"),
    ("$" + ".a" * 101, "is no path to one value"), ("$", "the whole arguments"),
    ("$['a\\qb']", "a name with an invalid escape")])
def test_partial_args_paths_that_cannot_be_placed_refuse_the_call(path, why, tmp_path):
    stream = tmp_path / "t.jsonl"
    stream.write_text(_streamed({"jsonPath": path, "stringValue": "x"}))
    diagnosis = diagnose_file(stream, "gemini")
    [call] = diagnosis.calls
    assert not call.executable and why in (call.error or "") and not diagnosis.ok


def test_partial_args_proto_and_deep_paths_are_plain_keys(tmp_path):
    stream = tmp_path / "t.jsonl"
    stream.write_text(_streamed({"jsonPath": "$.__proto__", "stringValue": "x"},
                                {"jsonPath": "$.d" + "[0]" * 98, "numberValue": 1}))
    [call] = diagnose_file(stream, "gemini").calls
    assert call.executable and call.input is not None
    assert call.input["__proto__"] == "x"


def _truncations(raw, every):
    return range(len(raw)) if every else sorted(
        {i + d for i, b in enumerate(raw) if b == 10 for d in (-1, 0, 1)} - {len(raw)})


@pytest.mark.parametrize(("name", "every"), [
    ("gemini/one_call.sse", True), ("vertex/partial_args_parallel.jsonl", True),
    ("anthropic/mcp_tool_use.sse", False), ("openai/responses_web_search.sse", False)])
def test_a_recording_cut_anywhere_runs_only_what_the_whole_one_runs(name, every, tmp_path):
    """No traceback at any cut; a call that runs from a cut stream runs from the whole one,
    with the same arguments, and a cut stream with provider calls never runs them."""
    raw = (RECORDINGS / name).read_bytes()
    runs = {(c.id, c.arguments) for c in diagnose_file(RECORDINGS / name).calls if c.executable}
    cut = tmp_path / "cut"
    for n in _truncations(raw, every):
        cut.write_bytes(raw[:n])
        try:
            diagnosis = diagnose_file(cut)
        except LabError as exc:
            assert "\n" not in str(exc), n
            continue
        assert {(c.id, c.arguments) for c in diagnosis.calls if c.executable} <= runs, n


@pytest.mark.parametrize(("text", "said"), [
    ('[{"candidates": []}] garbage', "Extra data after the array's closing ]"),
    ('[{"candidates": []}][]', "Extra data after the array's closing ]"),
    ('[[{"candidates": []}]]', "expected a JSON object, got list"),
    ('[{"candidates": []},]', "Expecting value"),
    ("\ufeff\ufeff[]", "Unexpected UTF-8 BOM"),
    ("[" + '{"a":' * 5000, "nested deeper than 100 levels"),
    ('[{"a": "' + "x" * 100_000, "stops inside an element")])
def test_a_json_array_bent_out_of_shape_is_one_line_and_exit_2(text, said, tmp_path, capsys):
    stream = tmp_path / "t.json"
    stream.write_text(text, encoding="utf-8")
    code = main(["assemble", str(stream)])
    assert code == 2 and said in one_error_line(capsys.readouterr().err)


def test_a_json_array_of_a_megabyte_is_assembled_in_bounded_time(tmp_path):
    text_part = {"candidates": [{"content": {"role": "model", "parts": [{"text": "a"}]}}]}
    stream = tmp_path / "t.json"
    stream.write_text("[" + ",\n".join([json.dumps(text_part)] * 14_000) + ","
                      + _gemini().splitlines()[-1] + "]")
    assert stream.stat().st_size > 2**20
    started = time.monotonic()
    assert diagnose_file(stream).ok
    assert time.monotonic() - started < 2
