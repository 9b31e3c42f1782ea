"""Every real shape of Anthropic's and the Responses API's streams that the reader met: the
recordings in data/recordings/ when they are there, and payloads cut down from the real ones
(each test names its source: pydantic/pydantic-ai's cassettes, MIT, at commit
4fda38988f2939fa6ea9cdefcf120693e10ef491, or the public report)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keel_cli._command import main
from keel_lab.providers._diagnosis import Diagnosis, diagnose, diagnose_file

pytestmark = pytest.mark.ch7

REAL = Path(__file__).resolve().parents[2] / "data" / "recordings"


def quirks(d: Diagnosis) -> list[tuple[Any, ...]]:
    return [(x.index, x.quirk, x.action) for x in d.diagnostics]


def calls(d: Diagnosis) -> list[tuple[Any, ...]]:
    return [(c.index, c.id, c.name, c.arguments, c.executable) for c in d.calls]


def provided(d: Diagnosis) -> list[tuple[Any, ...]]:
    return [(p.index, p.name, p.kind, p.result) for p in d.provider_calls]


def real(name: str) -> Path:
    path = REAL / name
    assert path.is_file(), f"{name} is not among the real recordings"
    return path


# --- The recordings themselves ------------------------------------------------------------

@pytest.mark.parametrize(("name", "expected"), [
    ("anthropic/web_search_twice.sse",
     [(1, "web_search", "server_tool_use", "web_search_tool_result"),
      (4, "web_search", "server_tool_use", "web_search_tool_result")]),
    ("anthropic/code_execution_server_calls.sse",
     [(i, "text_editor_code_execution", "server_tool_use",
       "text_editor_code_execution_tool_result") for i in (1, 2, 6)]),
    ("anthropic/mcp_tool_use.sse",
     [(1, "deepwiki.ask_question", "mcp_tool_use", "mcp_tool_result")]),
    ("openai/responses_web_search.sse", [(1, "web_search", "web_search_call", "completed")]),
    ("openai/responses_mcp_call.sse",
     [(0, "deepwiki.mcp_list_tools", "mcp_list_tools", None),
      (2, "deepwiki.ask_question", "mcp_call", "completed")]),
])
def test_real_turns_of_server_tools_only(name, expected):
    d = diagnose_file(real(name))
    assert d.calls == [] and provided(d) == expected and d.ok and quirks(d) == []


def test_a_real_client_call_made_from_server_code_runs():
    # a tool_use with `caller` (Anthropic's programmatic tool calling) inside a code_execution
    d = diagnose_file(real("anthropic/programmatic_tool_call.jsonl"))
    assert calls(d) == [(2, "toolu_019jKkXz4jAdwHweHBw92CVY", "rollDie",
                         '{"player": "player1"}', True)]
    assert provided(d) == [(1, "code_execution", "server_tool_use", None)] and d.ok  # paused


def test_a_real_server_tool_search_then_a_function_call():
    d = diagnose_file(real("openai/responses_tool_search_then_call.jsonl"))
    assert calls(d) == [(2, "call_pddfxhfOx4gY56zn4vIIEbFp", "get_weather",
                         '{"location":"San Francisco, CA","unit":"fahrenheit"}', True)]
    assert [(p.name, p.input) for p in d.provider_calls] == [
        ("tool_search", '{"paths": ["get_weather"]}')] and quirks(d) == []


# --- Anthropic ------------------------------------------------------------------------------

def test_lines_padded_with_blanks_inside_the_json_read(tmp_path):
    # Anthropic pads `data:` lines with blanks before the closing brace:
    # tests/models/cassettes/test_anthropic/test_anthropic_model_web_search_tool_stream.yaml
    path = tmp_path / "padded.sse"
    path.write_text(
        'event: content_block_start\ndata: {"type":"content_block_start","index":1,'
        '"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}'
        '              }\n\n'
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":'
        '{"type":"input_json_delta","partial_json":"{\\"a\\": 1}"}            }\n\n'
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":1      }\n\n'
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":'
        '"tool_use"}}\n\nevent: message_stop\ndata: {"type":"message_stop"    }\n\n')
    d = diagnose_file(path)
    assert calls(d) == [(1, "toolu_1", "f", '{"a": 1}', True)] and quirks(d) == []


def server_tool(index: int, id: str, query: str) -> list[dict[str, Any]]:
    return [{"type": "content_block_start", "index": index, "content_block": {
                "type": "server_tool_use", "id": id, "name": "web_search", "input": {}}},
            {"type": "content_block_delta", "index": index, "delta": {
                "type": "input_json_delta", "partial_json": f'{{"query": "{query}"}}'}}]


def result(index: int, id: str) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": {
        "type": "web_search_tool_result", "tool_use_id": id, "content": [],
        "caller": {"type": "direct"}}}


def ending(reason: str) -> list[dict[str, Any]]:
    return [{"type": "message_delta", "delta": {"stop_reason": reason}}, {"type": "message_stop"}]


def test_a_paused_turn_shows_its_provider_calls_and_runs_nothing():
    # tests/models/cassettes/test_anthropic/test_pause_turn_web_search_streaming_vcr.yaml,
    # first interaction: the last server_tool_use has no result yet, stop_reason pause_turn
    d = diagnose([*server_tool(2, "srvtoolu_01FG", "San Francisco weather today"),
                  result(3, "srvtoolu_01FG"),
                  *server_tool(24, "srvtoolu_01NK", "air quality in San Francisco today"),
                  *ending("pause_turn")], "anthropic")
    assert provided(d) == [(2, "web_search", "server_tool_use", "web_search_tool_result"),
                           (24, "web_search", "server_tool_use", None)]
    assert quirks(d) == [(None, "pause_turn", "reported"),
                         (None, "unusual_finish", "reported")] and d.ok


def test_a_paused_turn_still_runs_no_client_call():
    events = [*server_tool(0, "srvtoolu_01", "q"), result(1, "srvtoolu_01"),
              {"type": "content_block_start", "index": 2, "content_block": {
                  "type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": 1}}},
              *ending("pause_turn")]
    d = diagnose(events, "anthropic")
    assert calls(d) == [(2, "toolu_1", "f", '{"a": 1}', False)] and not d.ok
    assert ("unusual_finish", "refused") in [(q, a) for _, q, a in quirks(d)]
    assert len(d.provider_calls) == 1


def test_the_resumed_half_of_a_paused_turn_starts_with_a_result_without_its_call():
    # the same cassette, second interaction: block 0 answers the first turn's last search
    d = diagnose([result(0, "srvtoolu_01NK"), *server_tool(2, "srvtoolu_01H8", "events"),
                  result(3, "srvtoolu_01H8"), *ending("end_turn")], "anthropic")
    assert quirks(d) == [(None, "provider_result_without_call", "reported")] and d.ok
    assert d.diagnostics[0].id == "srvtoolu_01NK"
    assert provided(d) == [(2, "web_search", "server_tool_use", "web_search_tool_result")]


# --- Responses API --------------------------------------------------------------------------

def item(**fields: Any) -> dict[str, Any]:
    return {"id": "fc_1", "type": "function_call", "status": "in_progress", "arguments": "",
            "call_id": "call_1", "name": "read_file", **fields}


def added(it: dict[str, Any], index: int = 0) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": it}


def done(it: dict[str, Any], index: int = 0) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": it}


def args(text: str) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.delta", "item_id": "fc_1",
            "output_index": 0, "delta": text}


def completed(output: list[Any] | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {"status": "completed"}
    if output is not None:
        response["output"] = output
    return {"type": "response.completed", "response": response}


ARGS = '{"path":"a.py"}'


def test_an_empty_output_at_the_end_takes_the_calls_from_the_streamed_items():
    # ChatGPT's Codex backend: `response.completed` with `output: []` although the items were
    # streamed (sipeed/picoclaw#2674, NousResearch/hermes-agent#5689)
    d = diagnose([added(item()), args(ARGS), done(item(status="completed", arguments=ARGS)),
                  completed([])], "openai-responses")
    assert calls(d) == [(0, "call_1", "read_file", ARGS, True)] and d.ok
    assert quirks(d) == [(None, "completed_without_output", "tolerated")]


def test_a_call_only_in_its_done_item_is_read_from_it():
    d = diagnose([done(item(status="completed", arguments=ARGS)), completed([])],
                 "openai-responses")
    assert calls(d) == [(0, "call_1", "read_file", ARGS, True)]
    assert quirks(d) == [(0, "item_done_only", "tolerated"),
                         (None, "completed_without_output", "tolerated")]


def test_arguments_only_in_the_done_item_are_taken_not_read_as_none():
    d = diagnose([added(item()), done(item(status="completed", arguments=ARGS)), completed()],
                 "openai-responses")
    assert calls(d) == [(0, "call_1", "read_file", ARGS, True)] and quirks(d) == []


def test_a_done_item_that_contradicts_the_stream_is_refused():
    other = diagnose([added(item()), args(ARGS),
                      done(item(status="completed", arguments='{"path":"b.py"}')), completed()],
                     "openai-responses")
    assert quirks(other) == [(0, "arguments_mismatch", "refused")] and not other.ok
    renamed = diagnose([added(item()), args(ARGS),
                        done(item(status="completed", arguments=ARGS, call_id="call_2")),
                        completed()], "openai-responses")
    assert ("id_changed", "refused") in [(q, a) for _, q, a in quirks(renamed)]


def test_a_programmatic_call_is_the_clients_and_a_done_in_progress_closes_it():
    # OpenAI's programmatic tool calling: `caller: {"type": "program", "caller_id": ...}`; an
    # output_item.done whose item still says in_progress (openai/openai-agents-python#3765)
    caller = {"type": "program", "caller_id": "call_prog_1"}
    d = diagnose([added(item(caller=caller)), args(ARGS),
                  done(item(caller=caller, arguments=ARGS)), completed()], "openai-responses")
    assert calls(d) == [(0, "call_1", "read_file", ARGS, True)] and d.ok
    assert quirks(d) == [(0, "program_caller", "tolerated"),
                         (0, "done_in_progress", "tolerated")]
    assert "call_prog_1" in d.diagnostics[0].message


def test_an_incomplete_done_item_is_refused():
    d = diagnose([added(item()), args(ARGS), done(item(status="incomplete", arguments=ARGS)),
                  completed()], "openai-responses")
    assert quirks(d) == [(0, "item_incomplete", "refused")] and not d.ok


@pytest.mark.parametrize(("it", "expected"), [
    # tests/models/cassettes/test_openai_responses/test_openai_responses_code_execution_...
    ({"id": "ci_1", "type": "code_interpreter_call", "status": "completed", "code": "1 + 1",
      "container_id": "cntr_1", "outputs": []},
     ("code_interpreter", "1 + 1", "code_interpreter_call", "completed")),
    # ..._model_file_search_tool_stream.yaml
    ({"id": "fs_1", "type": "file_search_call", "status": "completed",
      "queries": ["What is the capital of France?"], "results": None},
     ("file_search", '["What is the capital of France?"]', "file_search_call", "completed")),
    # ..._image_generation_stream.yaml (the documented item; the cassette is stored in LFS)
    ({"id": "ig_1", "type": "image_generation_call", "status": "completed", "result": "iVBO"},
     ("image_generation", "", "image_generation_call", "completed")),
    # the program of programmatic tool calling (OpenAI's `program` item)
    ({"id": "prg_1", "type": "program", "call_id": "call_prog_1", "code": "await f()",
      "fingerprint": "x"}, ("program", "await f()", "program", None)),
])
def test_built_in_tool_items_are_the_providers(it, expected):
    d = diagnose([added({**it, "status": "in_progress"}), done(it), completed()],
                 "openai-responses")
    assert [(p.name, p.input, p.kind, p.result) for p in d.provider_calls] == [expected]
    assert d.calls == [] and d.ok and quirks(d) == []


def test_a_programs_output_is_its_result():
    program = {"id": "prg_1", "type": "program", "call_id": "call_prog_1", "code": "f()",
               "fingerprint": "x"}
    output = {"id": "po_1", "type": "program_output", "call_id": "call_prog_1", "result": "4",
              "status": "completed"}
    d = diagnose([done(program), done(output, 1), completed()], "openai-responses")
    assert provided(d) == [(0, "program", "program", "completed")]


@pytest.mark.parametrize("it", [
    {"id": "cu_1", "type": "computer_call", "call_id": "call_c", "status": "completed",
     "action": {"type": "screenshot"}, "pending_safety_checks": []},
    {"id": "lsh_1", "type": "local_shell_call", "call_id": "call_s", "status": "completed",
     "action": {"type": "exec", "command": ["ls"]}},
    {"id": "tsc_1", "type": "tool_search_call", "call_id": "call_q", "execution": "client",
     "arguments": {"query": "weather"}, "status": "completed"},
])
def test_client_run_items_that_are_no_function_call_are_reported_not_the_providers(it):
    d = diagnose([done(it), completed()], "openai-responses")
    assert d.provider_calls == [] and d.calls == []
    assert quirks(d) == [(0, "client_item", "reported")] and it["type"] in d.diagnostics[0].message


# Custom tools (free-form input): the item and its events as OpenAI's API reference types them
# ("Responses streaming events": `response.custom_tool_call_input.delta` with `item_id`,
# `output_index`, `delta`; `.done` with `input`; the item `custom_tool_call` with `id`, `call_id`,
# `name`, `input`; openai-python `ResponseCustomToolCallInputDeltaEvent`). Before, the item was
# reported (`client_item`) and never read.

PATCH = "*** Begin Patch\n*** Add File: notes.txt\n+say \"hi\"\n*** End Patch"
CUSTOM = {"id": "ctc_1", "type": "custom_tool_call", "call_id": "call_t", "name": "apply_patch"}


def custom_input(text: str, done: bool = False) -> dict[str, Any]:
    kind = "done" if done else "delta"
    return {"type": f"response.custom_tool_call_input.{kind}", "item_id": "ctc_1",
            "output_index": 0, "input" if done else "delta": text}


def test_a_custom_tool_call_runs_with_its_free_form_text_as_input():
    records = [added({**CUSTOM, "input": "", "status": "in_progress"}),
               *(custom_input(PATCH[i:i + 9]) for i in range(0, len(PATCH), 9)),
               custom_input(PATCH, done=True), done({**CUSTOM, "input": PATCH,
                                                     "status": "completed"}), completed()]
    d = diagnose(records, "openai-responses")
    assert d.ok and [(c.index, c.id, c.name, c.input) for c in d.calls] == [
        (0, "call_t", "apply_patch", {"input": PATCH})]
    assert quirks(d) == [(0, "custom_tool_call", "tolerated")]
    assert "custom_tool_call_output" in d.diagnostics[0].message


def test_a_custom_tool_call_whole_in_its_done_item_runs_too():
    d = diagnose([done({**CUSTOM, "input": "ls -la"}), completed()], "openai-responses")
    assert [(c.name, c.input, c.executable) for c in d.calls] == [
        ("apply_patch", {"input": "ls -la"}, True)]


def test_a_custom_tool_calls_done_text_that_is_not_its_deltas_is_refused():
    records = [added({**CUSTOM, "input": ""}), custom_input("ls"), custom_input("rm", done=True),
               completed()]
    d = diagnose(records, "openai-responses")
    assert [(c.name, c.executable) for c in d.calls] == [("apply_patch", False)]
    assert "arguments_mismatch" in [q for _, q, _ in quirks(d)]


def test_assemble_prints_the_provider_calls(tmp_path, capsys):
    path = tmp_path / "turn.jsonl"
    path.write_text('{"type":"response.output_item.done","output_index":0,"item":{"id":"ws_1",'
                    '"type":"web_search_call","status":"completed","action":{"type":"search",'
                    '"query":"weather"}}}\n{"type":"response.completed","response":'
                    '{"status":"completed"}}\n')
    assert main(["assemble", str(path)]) == 0
    assert ('run by the provider: web_search ws_1 {"type": "search", "query": "weather"} '
            "(completed)") in capsys.readouterr().out
