"""`keel-lab record` against the lab's replay server on 127.0.0.1, in every format, through the
client a user runs (each SDK with its base URL pointed at the server), and against small
misbehaving servers for the failures a real provider can give."""

import contextlib
import dataclasses
import json
import re
import socket
import threading
from pathlib import Path

import pytest
from raw_http import read_request

import keel_lab
from keel_cli import _record as record_module
from keel_cli._command import PROMPT, UNAVAILABLE, main
from keel_cli._record import RecordFailed, plan, record
from keel_lab import incident_tools
from keel_lab.providers._formats import PROVIDERS
from keel_lab.providers._replay import ReplayServer

pytestmark = pytest.mark.ch7

STREAMS = Path(__file__).resolve().parents[2] / "data" / "streams"
RECORDED = {"openai-chat": "openai-chat/parallel_calls.sse",
            "openai-responses": "openai-responses/parallel_calls.sse",
            "anthropic": "anthropic/parallel_calls.sse", "gemini": "gemini/parallel_calls.sse",
            "ollama": "ollama/parallel_calls.jsonl"}
KEY = "sk-keel-test-0123456789abcdef"  # what the user's environment holds
KEY_ENV = {"openai-chat": "OPENAI_API_KEY", "openai-responses": "OPENAI_API_KEY",
           "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}
ALL_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
            "LAB_KEY")


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    """No real key of the machine running the tests reaches a test, or a server."""
    for name in ALL_KEYS:
        monkeypatch.delenv(name, raising=False)


@contextlib.contextmanager
def replay(key=None):
    turns = [STREAMS / RECORDED["openai-chat"]]
    others = {f: STREAMS / p for f, p in RECORDED.items() if f != "openai-chat"}
    with ReplayServer(turns, streams=others, key=key) as server:
        yield server


def base(server, fmt):
    """The base URL a user gives the format's client: OpenAI's SDKs take it with /v1."""
    return server.url if fmt.startswith("openai") else server.root


def run(capsys, *argv):
    code = main(["record", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("fmt", list(RECORDED))
def test_a_turn_is_saved_byte_for_byte_and_assembled(fmt, tmp_path, capsys, monkeypatch):
    """The provider's own URL and key variable (the URL pointed at the replay server)."""
    monkeypatch.setenv("COLUMNS", "200")  # rows whole: the arguments are compared below
    out = tmp_path / "turn.rec"
    with replay(key=KEY if fmt in KEY_ENV else None) as server:
        monkeypatch.setitem(PROVIDERS, fmt, dataclasses.replace(PROVIDERS[fmt],
                                                                url=base(server, fmt)))
        if fmt in KEY_ENV:
            monkeypatch.setenv(KEY_ENV[fmt], KEY)
        code, shown, err = run(capsys, fmt, out, "--verbose")
        sent = server.requests[-1]
    assert code == 0, err
    assert out.read_bytes() == (STREAMS / RECORDED[fmt]).read_bytes()
    assert main(["assemble", str(out), "--format", fmt]) == 0
    assert shown == capsys.readouterr().out  # the same table as `assemble`
    assert "lookup_incident" in shown and '{"incident_id": "INC-002"}' in shown
    assert f"model {PROVIDERS[fmt].model} (the default; --model to change)" in err
    assert f"recorded {out.stat().st_size} bytes to {out}" in err
    assert KEY not in shown + err and KEY.encode() not in out.read_bytes()
    assert f"POST {base(server, fmt)}" in err and '"name": "lookup_incident"' in err
    assert PROMPT in json.dumps(sent)
    assert [p.name for p in tmp_path.iterdir()] == ["turn.rec"]  # no temporary file left


def test_a_compatible_server_with_its_own_key_variable(tmp_path, capsys):
    out = tmp_path / "turn.sse"
    with replay(key=KEY) as server, pytest.MonkeyPatch.context() as m:
        m.setenv("LAB_KEY", KEY)
        code, shown, err = run(capsys, "openai", out, "--base-url", server.url,
                               "--api-key-env", "LAB_KEY", "--model", "Qwen/Qwen2.5-7B-Instruct",
                               "--prompt", "Look up INC-001 and INC-002.", "--json")
        sent = server.requests[-1]
    assert code == 0, err
    assert "--format openai is read as openai-chat" in err
    assert out.read_bytes() == (STREAMS / RECORDED["openai-chat"]).read_bytes()
    assert [c["input"] for c in json.loads(shown)["calls"]] == [
        {"incident_id": "INC-001"}, {"incident_id": "INC-002"}]
    assert sent["model"] == "Qwen/Qwen2.5-7B-Instruct" and sent["stream"] is True
    assert sent["messages"] == [{"role": "user", "content": "Look up INC-001 and INC-002."}]
    assert {t["function"]["name"] for t in sent["tools"]} >= {"lookup_incident"}


def test_a_provider_key_never_goes_to_another_host(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with replay(key=KEY) as server:
        code, _, err = run(capsys, "openai-chat", tmp_path / "t.sse", "--base-url", server.url,
                           "--model", "m")
    assert code == UNAVAILABLE
    assert err.endswith("HTTP 401: incorrect API key provided: none (keel-lab sent no key: "
                        "--api-key-env NAME sends one)\n")  # the SDK's stand-in for no key


@pytest.mark.parametrize(("fmt", "names"), [
    ("openai-chat", "OPENAI_API_KEY"), ("openai-responses", "OPENAI_API_KEY"),
    ("anthropic", "ANTHROPIC_API_KEY"), ("gemini", "GOOGLE_API_KEY or GEMINI_API_KEY")])
def test_a_missing_key_stops_before_anything_is_sent(fmt, names, tmp_path, capsys):
    code, out, err = run(capsys, fmt, tmp_path / "t.sse")
    assert (code, out) == (2, "")
    assert err == (f"keel-lab: error: record {fmt}: no key: set {names} (or name another "
                   "variable: --api-key-env NAME)\n")
    assert list(tmp_path.iterdir()) == []


def test_a_named_key_variable_must_be_set(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LAB_KEY", "")
    code, _, err = run(capsys, "ollama", tmp_path / "t.jsonl", "--api-key-env", "LAB_KEY")
    assert (code, err) == (2, "keel-lab: error: record ollama: no key: set LAB_KEY\n")


def test_gemini_reads_google_api_key_first():
    request = plan("gemini", incident_tools(), PROMPT,
                   environ={"GEMINI_API_KEY": "g", "GOOGLE_API_KEY": KEY})
    assert request.key == KEY and KEY not in repr(request)


@pytest.mark.parametrize(("fmt", "said"), [
    ("openai-chat", "incorrect API key provided: ***"),
    ("openai-responses", "incorrect API key provided: ***"),
    ("anthropic", "incorrect API key provided: ***"),
    ("gemini", "incorrect API key provided: ***"),
    ("ollama", "incorrect API key provided: ***")])
def test_a_refused_key_is_one_line_with_the_providers_message(fmt, said, tmp_path, capsys,
                                                              monkeypatch):
    """The server repeats the wrong key in its error, as some do: it is not printed on."""
    monkeypatch.setenv("LAB_KEY", KEY)
    out = tmp_path / "t.sse"
    with replay(key="the-right-key") as server:
        code, shown, err = run(capsys, fmt, out, "--base-url", base(server, fmt),
                               "--api-key-env", "LAB_KEY", "--model", "m", "--verbose")
    assert (code, shown) == (UNAVAILABLE, "")
    [line] = [line for line in err.splitlines() if "error" in line]
    assert line.endswith(f"refused the request: HTTP 401: {said}")
    assert KEY not in err and not out.exists() and list(tmp_path.iterdir()) == []


def test_an_unreachable_port(tmp_path, capsys):
    with replay() as server:
        url = server.root  # closed now
    code, _, err = run(capsys, "ollama", tmp_path / "t.jsonl", "--base-url", url)
    assert code == UNAVAILABLE
    assert err.splitlines()[-1].startswith(f"keel-lab: error: cannot reach {url}/api/chat: ")
    assert list(tmp_path.iterdir()) == []


# Servers that misbehave, each answering one request with fixed bytes.

@contextlib.contextmanager
def canned(answer):
    """An HTTP server on 127.0.0.1 that reads one request and sends `answer`, then hangs up;
    `None`: it sends nothing and holds the connection until the test is done."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)
    done = threading.Event()

    def serve():
        with contextlib.suppress(OSError), listener.accept()[0] as conn:
            read_request(conn)
            if answer is None:
                done.wait(10)
            else:
                conn.sendall(answer)

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        done.set()
        thread.join()
        listener.close()


STREAM_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"


def test_a_server_that_never_answers_times_out(tmp_path, capsys):
    with canned(None) as url:
        code, _, err = run(capsys, "gemini", tmp_path / "t.sse", "--base-url", url,
                           "--timeout", "1")
    assert code == UNAVAILABLE
    assert err.splitlines()[-1].startswith(
        f"keel-lab: error: {url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse: "
        "nothing came for 1 s (")
    assert err.endswith("); --timeout SECONDS waits longer\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", ["openai-chat", "ollama"])
def test_an_answer_that_is_not_a_stream(fmt, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LAB_KEY", KEY)
    body = b'{"id": "chatcmpl-1", "choices": []}'
    answer = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
              + str(len(body)).encode() + b"\r\n\r\n" + body)
    with canned(answer) as url:
        code, _, err = run(capsys, fmt, tmp_path / "t", "--base-url",
                           f"{url}/v1" if fmt == "openai-chat" else url,
                           "--api-key-env", "LAB_KEY", "--model", "m")
    assert code == UNAVAILABLE
    expected = PROVIDERS[fmt].stream_type
    assert err.splitlines()[-1].endswith(
        f"answered application/json, not a stream ({expected}): "
        "'{\"id\": \"chatcmpl-1\", \"choices\": []}'")
    assert list(tmp_path.iterdir()) == []


def test_a_stream_cut_off_is_kept_as_partial_and_an_older_recording_stays(tmp_path, capsys):
    whole = (STREAMS / RECORDED["anthropic"]).read_bytes()
    part = whole[:700]
    answer = STREAM_HEAD + f"Content-Length: {len(whole)}\r\n\r\n".encode() + part
    out = tmp_path / "turn.sse"
    out.write_bytes(b"an older recording")
    with canned(answer) as url, pytest.MonkeyPatch.context() as m:
        m.setenv("ANTHROPIC_API_KEY", KEY)
        m.setitem(PROVIDERS, "anthropic", dataclasses.replace(PROVIDERS["anthropic"], url=url))
        code, _, err = run(capsys, "anthropic", out)
    partial = tmp_path / "turn.sse.partial"
    assert code == UNAVAILABLE
    assert f"error: the stream from {url}/v1/messages, after 700 bytes, broke off: " in err
    assert err.endswith(f"; the 700 bytes that came are kept in {partial} (keel-lab assemble "
                        "reads it)\n")
    assert partial.read_bytes() == part
    assert out.read_bytes() == b"an older recording"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["turn.sse", "turn.sse.partial"]
    assert main(["assemble", str(partial)]) == 1  # never finished: nothing may run


def test_more_than_a_turn_is_cut_at_the_cap(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(record_module, "MAX_BYTES", 100)  # the recorded turn has 476
    with replay() as server:
        code, _, err = run(capsys, "ollama", tmp_path / "t.jsonl", "--base-url", server.root)
    assert code == UNAVAILABLE and "too much for one turn; the 100 bytes that came" in err
    assert (tmp_path / "t.jsonl.partial").read_bytes() == \
        (STREAMS / RECORDED["ollama"]).read_bytes()[:100]


def test_an_unwritable_file_stops_before_anything_is_sent(tmp_path, capsys):
    with replay() as server:
        code, _, err = run(capsys, "ollama", tmp_path / "no" / "t.jsonl",
                           "--base-url", server.root)
        code_dir, _, err_dir = run(capsys, "ollama", tmp_path, "--base-url", server.root)
        assert list(server.requests) == []
    assert code == code_dir == 2
    assert err.endswith(f"\nkeel-lab: error: cannot write {tmp_path / 'no' / 't.jsonl'}: No "
                        "such file or directory\n")
    assert err_dir.endswith(f"\nkeel-lab: error: cannot write {tmp_path}: it is a folder\n")


def test_a_recording_that_cannot_be_read_is_kept_and_says_why(tmp_path, capsys):
    """An SSE stream of another format: recorded as it came, then assembled as `assemble`
    would (exit 2, the line named)."""
    answer = STREAM_HEAD + b"\r\n" + (STREAMS / RECORDED["gemini"]).read_bytes()
    out = tmp_path / "t.sse"
    with canned(answer) as url:
        code, _, err = run(capsys, "openai-responses", out, "--base-url", url, "--model", "m")
    assert code == 2 and out.read_bytes() == (STREAMS / RECORDED["gemini"]).read_bytes()
    assert f"recorded {out.stat().st_size} bytes to {out}\n" in err
    assert "this is not openai-responses: it is a gemini event" in err


def test_a_bad_base_url_is_refused(tmp_path, capsys):
    code, _, err = run(capsys, "ollama", tmp_path / "t", "--base-url", "localhost:11434")
    assert code == 2
    assert "--base-url 'localhost:11434': expected an http:// or https:// URL" in err


def test_help_lists_record(capsys):
    with pytest.raises(SystemExit):
        main(["record", "--help"])
    assert "--api-key-env NAME" in capsys.readouterr().out


def test_ctrl_c_is_one_line_too(tmp_path):
    def say(line):
        if line.startswith("answer: HTTP 200"):
            raise KeyboardInterrupt

    with replay() as server:
        request = plan("ollama", incident_tools(), PROMPT, base_url=server.root)
        with pytest.raises(RecordFailed, match=r"/api/chat: interrupted$"):
            record(request, tmp_path / "t.jsonl", say)
    assert list(tmp_path.iterdir()) == []


def test_no_other_module_of_the_lab_has_a_client_of_its_own():
    """The lab is offline; this command is the one whose point is the network. (The
    OpenAI adapter goes where its caller's base URL says: the replay server, in the course.)"""
    root = Path(keel_lab.__file__).parent.parent
    clients = sorted(p.relative_to(root).as_posix()
                     for package in ("keel_lab", "keel_checks", "keel_cli")
                     for p in (root / package).rglob("*.py")
                     if re.search(r"\bimport httpx\b|\bhttpx\.\w|with_streaming_response"
                                  r"|urllib\.request",
                                  p.read_text(encoding="utf-8")))
    assert clients == ["keel_cli/_record.py"]
