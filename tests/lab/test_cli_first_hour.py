"""Issue 35, the practitioner's first hour: a table that fits the terminal, `-` for standard
input, errors that name the command that fits, `assemble --json`'s format and text, words that
say what is true, and `--refuse-cut-turns`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keel_cli._command import main
from keel_lab._core.tables import width_of
from keel_lab.providers._diagnosis import diagnose

pytestmark = pytest.mark.ch7

DATA = Path(__file__).resolve().parents[2] / "data"
STREAMS = DATA / "streams"
HISTORIES = DATA / "histories"


def chunk(delta: dict, finish: str | None = None) -> str:
    return "data: " + json.dumps({"object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"


def call(index: int, arguments: str, id: str | None = None) -> str:
    head = {"id": id, "type": "function", "function": {"name": "search", "arguments": ""}}
    return (chunk({"tool_calls": [{"index": index, **head}]}) +
            chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}))


@pytest.fixture
def huge(tmp_path: Path) -> Path:
    path = tmp_path / "huge.sse"
    arguments = json.dumps({"q": "a" * 490_000})
    path.write_text(chunk({"content": "Looking."}) + call(0, arguments, "call_big")
                    + call(1, '{"q": "b"}', "call_small") + chunk({}, "tool_calls")
                    + "data: [DONE]\n\n")
    return path


@pytest.mark.parametrize("columns", [None, "100", "80"])
def test_the_table_fits_the_terminal_and_cuts_arguments_saying_their_length(
        huge, columns, capsys, monkeypatch):
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)  # a pipe: 100 columns
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert main(["assemble", str(huge)]) == 0
    lines = capsys.readouterr().out.splitlines()
    table = lines[1:5]
    assert max(width_of(line) for line in table) <= int(columns or 100), table
    assert "(490,009 chars)" in "\n".join(table)
    assert "executable" in table[0] and "error" in table[0]
    assert any('{"q": "b"}' in line for line in table)


def test_a_narrow_terminal_wraps_the_cut_table_within_it(huge, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "50")
    assert main(["assemble", str(huge)]) == 0
    lines = capsys.readouterr().out.split("\n- ")[0].splitlines()[1:]
    assert 4 < len(lines) < 20 and max(width_of(line) for line in lines) <= 50, lines


def test_a_turn_without_calls_fits_too(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["assemble", str(STREAMS / "openai-chat/answer.sse")]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "(no tool calls)"


def test_json_keeps_the_whole_arguments(huge, capsys):
    assert main(["assemble", str(huge), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["calls"][0]["arguments"]) == 490_009


def test_assemble_json_says_the_format_and_the_text(huge, capsys):
    assert main(["assemble", str(huge), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["format"] == "openai-chat" and out["text"] == "Looking."


# --- `-` is standard input ---------------------------------------------------------------------


@pytest.mark.parametrize(("command", "path", "code"), [
    ("assemble", STREAMS / "openai-chat/parallel_calls.sse", 0),
    ("validate", HISTORIES / "anthropic/missing_result.json", 1),
])
def test_a_dash_reads_standard_input(command, path, code, capsys, monkeypatch):
    with path.open(encoding="utf-8") as stdin:
        monkeypatch.setattr("sys.stdin", stdin)
        assert main([command, "-"]) == code
    out = capsys.readouterr().out
    assert out.startswith("format: openai-chat, finish reason: tool_calls" if code == 0 else
                          "<stdin>: anthropic conversation, 1 problem")


# --- each error names the command that fits ----------------------------------------------------


def test_assemble_on_a_history_says_it_is_one_and_that_validate_reads_it(tmp_path, capsys):
    pretty = HISTORIES / "openai-chat/valid.json"
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(json.loads(pretty.read_text(encoding="utf-8"))))
    for path, given in ((pretty, []), (compact, []), (compact, ["--format", "openai-chat"])):
        assert main(["assemble", str(path), *given]) == 2
        err = capsys.readouterr().err
        assert err == (f"keel-lab: error: {path}: this is an openai-chat conversation, not a "
                       "stream: `keel-lab validate` reads conversations\n")


@pytest.mark.parametrize("name", ["openai-chat/one_call.sse", "ollama/one_call.jsonl",
                                  "anthropic/three_calls.jsonl"])
def test_validate_on_a_stream_says_it_is_one_and_that_assemble_reads_it(name, capsys):
    path = STREAMS / name
    fmt = name.split("/")[0]
    assert main(["validate", str(path)]) == 2
    article = "an" if fmt[0] in "aeiou" else "a"
    assert capsys.readouterr().err == (
        f"keel-lab: error: {path}: this is {article} {fmt} stream, not a conversation: "
        "`keel-lab assemble` reads streams\n")


def test_validate_with_a_wrong_format_names_the_file_the_format_and_the_fix(capsys):
    path = HISTORIES / "openai-chat/valid.json"
    assert main(["validate", str(path), "--format", "anthropic"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"keel-lab: error: {path}: this is not anthropic: it is an "
                          "openai-chat conversation (messages.")
    assert err.endswith("; `keel-lab validate --format openai-chat` reads it\n")


def test_assemble_with_a_wrong_format_names_the_fix_as_validate_does(capsys):
    path = STREAMS / "openai-chat/one_call.sse"
    assert main(["assemble", str(path), "--format", "anthropic"]) == 2
    assert capsys.readouterr().err == (
        f"keel-lab: error: {path}, line 1: this is not anthropic: it is an openai-chat event; "
        "`keel-lab assemble --format openai-chat` reads it\n")


# --- words that say what is true ---------------------------------------------------------------


def responses(status: str, arguments: str) -> list[dict]:
    item = {"id": "fc_1", "type": "function_call", "status": "in_progress", "arguments": "",
            "call_id": "call_1", "name": "lookup_incident"}
    return [{"type": "response.created", "response": {"status": "in_progress", "output": []}},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.function_call_arguments.delta", "item_id": "fc_1",
             "output_index": 0, "delta": arguments},
            {"type": f"response.{status}", "response": {"status": status, "output": []}}]


def test_an_incomplete_response_is_not_said_to_be_complete():
    d = diagnose(responses("incomplete", '{"incident_id": "INC'), "openai-responses")
    message = d.calls[0].error or ""
    assert "says the call is complete" not in message
    assert "as the finish reason 'incomplete' says" in message


def test_a_stream_cut_after_a_closed_block_does_not_say_no_call_was_closed(tmp_path, capsys):
    text = (STREAMS / "anthropic/one_call.sse").read_text(encoding="utf-8")
    path = tmp_path / "cut.sse"
    path.write_text(text.split("event: message_delta")[0])
    assert main(["assemble", str(path)]) == 1
    out = capsys.readouterr().out
    assert "no call was closed" not in out
    assert ("the stream ended before message_stop: the turn never finished, so none of its "
            "calls may run") in out, out


def test_no_finish_reason_and_a_servers_error_are_said_without_python(tmp_path, capsys):
    path = tmp_path / "error.sse"
    path.write_text(call(0, '{"a": "x', "c1") + 'data: {"error": {"message": "boom", '
                    '"code": 500}}\n\n')
    assert main(["assemble", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("format: openai-chat, finish reason: none\n")
    assert 'the server sent an error: {"message": "boom", "code": 500}' in out


def test_a_finish_inferred_from_done_is_said_to_be_inferred(tmp_path, capsys):
    path = tmp_path / "done.sse"
    path.write_text(call(0, '{"a": "x', "c1") + "data: [DONE]\n\n")
    assert main(["assemble", str(path), "--json"]) == 1
    error = json.loads(capsys.readouterr().out)["calls"][0]["error"]
    assert "although the finish reason" not in error
    assert "no finish reason came" in error and "data: [DONE]" in error


# --- --refuse-cut-turns ------------------------------------------------------------------------


def test_refuse_cut_turns_refuses_the_complete_siblings_of_a_cut_call(capsys):
    path = str(STREAMS / "token_limit/finish_length.sse")
    assert main(["assemble", path, "--json"]) == 1
    assert [c["executable"] for c in json.loads(capsys.readouterr().out)["calls"]] == [
        True, False]
    assert main(["assemble", path, "--json", "--refuse-cut-turns"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [(c["executable"], c["code"]) for c in out["calls"]] == [
        (False, "cut_turn"), (False, "arguments_cut")]
    assert [(d["quirk"], d["action"], d["index"]) for d in out["diagnostics"]][-1] == (
        "cut_turn", "refused", None)


def test_refuse_cut_turns_leaves_a_finished_turn_alone(capsys):
    path = str(STREAMS / "openai-chat/parallel_calls.sse")
    assert main(["assemble", path, "--refuse-cut-turns"]) == 0
    out = capsys.readouterr().out
    assert "cut_turn" not in out


def test_a_cut_turn_whose_calls_are_all_complete_says_calls_may_be_missing(tmp_path, capsys):
    """A practitioner's `length` finish after one whole call printed no note and exited 0: the
    model may have meant more calls. The note says so, and names the switch."""
    path = tmp_path / "length.sse"
    path.write_text(call(0, '{"a": "x"}', "c1") + chunk({}, "length") + "data: [DONE]\n\n")
    assert main(["assemble", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["executable"] for c in out["calls"]] == [True]
    assert [(d["quirk"], d["action"]) for d in out["diagnostics"]] == [
        ("cut_turn_kept", "reported")]
    assert main(["assemble", str(path)]) == 0
    assert "--refuse-cut-turns" in capsys.readouterr().out


# --- the practitioner's second hour: calls that must not run, a tail that must be said ---------


def test_a_call_with_a_name_and_no_arguments_in_a_cut_turn_never_runs(tmp_path, capsys):
    """`delete_records` with no argument text, then finish 'length', ran as `{}`."""
    path = tmp_path / "cut.sse"
    path.write_text(call(0, '{"q": "a"}', "c1") +
                    chunk({"tool_calls": [{"index": 1, "id": "c2", "type": "function",
                                           "function": {"name": "delete_records",
                                                        "arguments": ""}}]}) +
                    chunk({}, "length") + "data: [DONE]\n\n")
    assert main(["assemble", str(path), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [(c["executable"], c["code"]) for c in out["calls"]] == [
        (True, None), (False, "arguments_cut")]
    assert "no_arguments" not in [d["quirk"] for d in out["diagnostics"]]  # no contradiction


def test_a_responses_item_never_closed_never_runs():
    added = {"type": "response.output_item.added", "output_index": 0,
             "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1",
                      "name": "get_time", "arguments": ""}}
    for status in ("completed", "incomplete"):
        d = diagnose([added, {"type": f"response.{status}", "response": {"status": status}}],
                     "openai-responses")
        assert not d.calls[0].executable
        assert d.calls[0].error.startswith("the stream never closed this call "
                                           "(response.output_item.done never came for it)")


def test_an_event_left_open_at_the_end_of_the_file_is_said(tmp_path, capsys):
    """A call after [DONE], its event without the blank line SSE needs, vanished unsaid."""
    path = tmp_path / "tail.sse"
    path.write_text(call(0, '{"q": "a"}', "c1") + chunk({}, "tool_calls") + "data: [DONE]\n\n"
                    + call(1, '{"q": "b"}', "c2").rstrip("\n"))
    assert main(["assemble", str(path), "--json"]) == 1  # its first event came after [DONE]
    *_, said = json.loads(capsys.readouterr().out)["diagnostics"]
    assert (said["quirk"], said["action"]) == ("event_cut", "reported")
    assert "the file ends inside an event" in said["message"]
    # a closing data: [DONE] without its blank line holds nothing to say
    path.write_text(call(0, '{"q": "a"}', "c1") + chunk({}, "tool_calls") + "data: [DONE]")
    assert main(["assemble", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["diagnostics"] == []


def test_an_empty_tool_calls_list_is_refused_in_openais_words(tmp_path, capsys):
    """OpenAI answers 400 `empty_array` (home-assistant/core#118577); `validate` said valid."""
    path = tmp_path / "empty.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"},
                                {"role": "assistant", "content": "hello", "tool_calls": []}]))
    assert main(["validate", str(path), "--json"]) == 1
    [problem] = json.loads(capsys.readouterr().out)["problems"]
    assert problem["code"] == "empty_tool_calls"
    assert problem["message"].startswith("Invalid 'messages[1].tool_calls': empty array.")
