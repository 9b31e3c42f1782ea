import json
import os
import sys
from pathlib import Path

import pytest

from keel_cli._command import main

pytestmark = pytest.mark.ch7

STREAMS = Path(__file__).resolve().parents[2] / "data" / "streams"


def test_assemble_json_shape_and_exit_zero(capsys):
    assert main(["assemble", str(STREAMS / "openai-chat/parallel_calls.sse"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["finish_reason"] == "tool_calls" and out["diagnostics"] == []
    assert [set(c) for c in out["calls"]] == [{"index", "id", "name", "arguments", "input",
                                              "executable", "error", "code"}] * 2
    assert [(c["error"], c["code"]) for c in out["calls"]] == [(None, None)] * 2
    assert [c["input"] for c in out["calls"]] == [{"incident_id": "INC-001"},
                                                 {"incident_id": "INC-002"}]


def test_assemble_exit_one_with_diagnostics(capsys):
    assert main(["assemble", str(STREAMS / "quirks/split_utf8.sse"), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["diagnostics"] == [{"index": 0, "id": out["calls"][0]["id"],
                                   "quirk": "split_utf8", "message": out["calls"][0]["error"],
                                   "action": "refused", "code": "split_utf8"}]
    assert out["calls"][0]["code"] == "split_utf8"


def test_assemble_readable_table(capsys):
    assert main(["assemble", str(STREAMS / "quirks/all_index_zero.sse")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("format: openai-chat, finish reason: tool_calls")
    assert "- tolerated index_reused (call 1, id call_" in out


def test_assemble_with_a_wrong_format(capsys):
    path = str(STREAMS / "anthropic/one_call.sse")
    assert main(["assemble", path, "--format", "ollama"]) == 2
    assert capsys.readouterr().err == (f"keel-lab: error: {path}, line 2: this is not ollama: "
                                       "it is an anthropic event; `keel-lab assemble --format "
                                       "anthropic` reads it\n")


@pytest.mark.parametrize(("content", "says"), [
    ('data: {"choices": "x"}\n\n', "line 1: field 'choices' must be a list of objects"),
    ('{"a": 1, "a": 2}\n', "line 1: the key 'a' appears twice"),
    ("[" * 100_000 + "]" * 100_000 + "\n", "line 1: nested deeper than 100 levels"),
    ('{"message": {"content": "\\ud800"}, "done": true}\n', "lone surrogate"),
    ('{"message": {"content": "\\u001b[2J"}, "done": 3}\n', "'done' must be true or false"),
])
@pytest.mark.parametrize("json_mode", [[], ["--json"]])
def test_malformed_streams_get_one_line_and_exit_two(tmp_path, capsys, content, says,
                                                     json_mode):
    path = tmp_path / "s.txt"
    path.write_text(content)
    assert main(["assemble", str(path), *json_mode]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and says in err


def test_error_messages_escape_what_came_from_the_file(tmp_path, capsys):
    path = tmp_path / "s.txt"
    path.write_text('{"message": {"tool_calls": [{"id": "\\u001b[31m", "function": 1}]}, '
                    '"done": true}\n')
    assert main(["assemble", str(path)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "function' must be an object, got a number" in err


def test_assemble_reads_stdin(capsys, monkeypatch):
    read, write = os.pipe()
    os.write(write, (STREAMS / "ollama/one_call.jsonl").read_bytes())
    os.close(write)
    monkeypatch.setattr(sys, "stdin", os.fdopen(read))
    assert main(["assemble", f"/dev/fd/{read}", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["calls"][0]["executable"] is True


def test_assemble_unreadable_exits_two(tmp_path, capsys):
    path = tmp_path / "x.sse"
    path.write_bytes(b"\x00\x01")
    assert main(["assemble", str(path)]) == 2
    assert capsys.readouterr().err.startswith(f"keel-lab: error: {path}: binary data")


CONVERSATION = [
    {"role": "user", "content": "q"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": "call_b", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "call_a", "content": "1"},
]


def test_validate_openai(tmp_path, capsys):
    path = tmp_path / "history.json"
    path.write_text(json.dumps({"model": "gpt-4o", "messages": CONVERSATION}))
    assert main(["validate", str(path), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out == {"valid": False, "problems": [{"message": (
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        "call_b"), "ids": ["call_b"], "code": "missing_results"}], "previous_response_id": None}
    path.write_text(json.dumps([*CONVERSATION, {"role": "tool", "tool_call_id": "call_b",
                                                "content": "2"}]))
    assert main(["validate", str(path)]) == 0
    assert "openai-chat conversation, valid" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["assemble", "validate"])
def test_format_openai_is_read_as_openai_chat_with_a_note(tmp_path, capsys, command):
    path = tmp_path / "history.json"
    path.write_text(json.dumps([{"role": "user", "content": "q"}]))
    given = {"assemble": str(STREAMS / "openai-chat/parallel_calls.sse"), "validate": str(path)}
    assert main([command, given[command], "--format", "openai"]) == 0
    out, err = capsys.readouterr()
    assert "openai-chat" in out and "openai " not in out
    assert err == "keel-lab: note: --format openai is read as openai-chat\n"


def test_validate_anthropic_auto_detected(tmp_path, capsys):
    path = tmp_path / "history.json"
    path.write_text(json.dumps([
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f",
                                           "input": {}}]},
        {"role": "user", "content": "what now?"}]))
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "anthropic conversation, 1 problem" in out
    assert "messages.1: `tool_use` ids were found without `tool_result` blocks" in out


@pytest.mark.parametrize(("content", "message"), [
    ("{", "not valid JSON"), ('{"messages": 3}', "expected a list of message objects"),
    ('[{"role": "robot"}]', "messages[0]: unknown role 'robot'"),
])
def test_validate_unreadable(tmp_path, capsys, content, message):
    path = tmp_path / "h.json"
    path.write_text(content)
    assert main(["validate", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_validate_escapes_terminal_sequences_from_the_file(tmp_path, capsys):
    from keel_cli._command import main

    bad_id = "call_\x1b[31mred\x1b[0m"
    history = [{"role": "user", "content": "q"},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": bad_id, "type": "function",
                    "function": {"name": "lookup_incident", "arguments": "{}"}}]},
               {"role": "user", "content": "well?"}]
    path = tmp_path / "history.json"
    path.write_text(json.dumps(history))
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b[31mred" in out
