import asyncio
import json
import threading
import time

import pytest

from keel_lab import Tool, ToolCall, ToolError, ToolRequest, Toolset, invoke, run_coroutine

pytestmark = pytest.mark.ch3


def request(name, arguments, call_id="call_1"):
    return ToolRequest.from_call(ToolCall(call_id, name, arguments))


def outcome(tools, name, arguments, latency=0.0):
    return run_coroutine(invoke(tools.get(name), request(name, arguments), latency))


def test_lookup_returns_the_incident(tools):
    o = outcome(tools, "lookup_incident", '{"incident_id": "INC-001"}')
    assert o.ok and o.call_id == "call_1"
    assert json.loads(o.content)["title"].startswith("Login API returns 502")


def test_unknown_incident_is_a_business_error(tools):
    o = outcome(tools, "lookup_incident", '{"incident_id": "INC-999"}')
    assert o.code == "incident_not_found"
    assert json.loads(o.content) == {"error": {"code": "incident_not_found",
                                               "message": "there is no incident INC-999"}}


def test_unknown_tool(tools):
    o = outcome(tools, "drop_database", "{}")
    assert (o.code, o.detail) == ("unknown_tool", "no tool named 'drop_database'")


@pytest.mark.parametrize(("arguments", "detail"), [
    ('{"incident_id": "INC-0', "not valid JSON"),
    ('["INC-001"]', "must be a JSON object, got list"),
    ("{}", "'incident_id' is a required property"),
    ('{"incident_id": 1}', "incident_id: 1 is not of type 'string'"),
    ('{"incident_id": "INC-001", "x": 1}', "Additional properties are not allowed"),
    ('{"incident_id": "inc-1"}', "does not match"),
])
def test_bad_arguments_never_reach_the_tool(arguments, detail):
    ran = []
    tool = Tool("lookup_incident", "", {
        "type": "object", "properties": {"incident_id": {"type": "string",
                                                          "pattern": "^INC-[0-9]{3}$"}},
        "required": ["incident_id"], "additionalProperties": False}, lambda **kw: ran.append(kw))
    o = run_coroutine(invoke(tool, request("lookup_incident", arguments)))
    assert o.code == "invalid_arguments" and detail in o.detail
    assert ran == []


def _tool(fn, **kw):
    return Tool("t", "", {"type": "object"}, fn, **kw)


def test_tool_raising_is_an_internal_error():
    def boom():
        raise KeyError("shard 7")
    o = run_coroutine(invoke(_tool(boom), request("t", "{}")))
    assert (o.code, o.detail) == ("tool_internal_error", "KeyError: 'shard 7'")


def test_slow_tool_times_out_on_the_virtual_clock():
    async def slow():
        await asyncio.sleep(60)
        return {}
    o = run_coroutine(invoke(_tool(slow, timeout=2.0), request("t", "{}")))
    assert (o.code, o.detail) == ("tool_timeout", "no result within 2 s")


def test_latency_counts_against_the_timeout():
    o = run_coroutine(invoke(_tool(lambda: {}, timeout=1.0), request("t", "{}"), latency=1.5))
    assert o.code == "tool_timeout"


@pytest.mark.parametrize(("value", "detail"), [
    ("just text", "must return a JSON object, t returned str"),
    ({"when": object()}, "is not JSON"),
    ({"x": float("nan")}, "is not JSON"),
])
def test_invalid_output(value, detail):
    o = run_coroutine(invoke(_tool(lambda: value), request("t", "{}")))
    assert o.code == "invalid_tool_output" and detail in o.detail


def test_output_schema_is_enforced():
    tool = _tool(lambda: {"n": "three"}, output_schema={
        "type": "object", "properties": {"n": {"type": "integer"}}})
    o = run_coroutine(invoke(tool, request("t", "{}")))
    assert o.code == "invalid_tool_output" and "n: 'three' is not of type 'integer'" in o.detail


def test_async_and_sync_tools_both_run():
    async def a(x):
        return {"x": x}
    assert run_coroutine(invoke(_tool(a), request("t", '{"x": 1}'))).content == '{"x": 1}'
    o = run_coroutine(invoke(_tool(lambda x: {"x": x}), request("t", '{"x": 2}')))
    assert o.content == '{"x": 2}'


def test_every_failure_still_makes_one_tool_message(tools):
    o = outcome(tools, "search_logs", '{"service": "billing"}')
    m = o.to_message()
    assert (m.tool_call_id, m.name, o.code) == ("call_1", "search_logs", "tool_internal_error")


def test_toolset_schemas_are_openai_tools(tools):
    schemas = tools.schemas()
    assert {s["function"]["name"] for s in schemas} == {
        "lookup_incident", "get_service_status", "search_logs", "add_incident_note",
        "restart_service"}
    assert all(s["type"] == "function" for s in schemas)
    assert isinstance(Toolset.of([]).tools, dict)


def test_declarations(tools):
    safe = {n for n, t in tools.tools.items() if t.concurrency_safe}
    assert safe == {"lookup_incident", "get_service_status", "search_logs"}
    assert [n for n, t in tools.tools.items() if t.requires_approval] == ["restart_service"]


def test_only_safe_tools_without_approval_may_run_together(tools):
    assert {n for n, t in tools.tools.items() if t.may_run_together} == {
        "lookup_incident", "get_service_status", "search_logs"}
    both = Tool("peek_and_page", "", {"type": "object"}, dict, concurrency_safe=True,
                requires_approval=True)
    assert both.concurrency_safe and not both.may_run_together


def test_write_tools_keep_state_per_toolset(tools):
    args = '{"incident_id": "INC-001", "note": "n"}'
    assert json.loads(outcome(tools, "add_incident_note", args).content)["notes"] == 1
    assert json.loads(outcome(tools, "add_incident_note", args).content)["notes"] == 2
    from keel_lab import incident_tools
    assert json.loads(outcome(incident_tools(), "add_incident_note", args).content)["notes"] == 1


def _deep(depth):
    value = {}
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize("arguments", [
    '{"n": %s}' % ("1" * 5000), '{"a": ' * 100_000 + "1" + "}" * 100_000, '{"n": NaN}',
    '{"n": Infinity}'])
def test_hostile_arguments_are_invalid_and_never_reach_the_tool(arguments):
    ran = []
    o = run_coroutine(invoke(_tool(lambda **kw: ran.append(kw) or {}), request("t", arguments)))
    assert o.code == "invalid_arguments" and o.detail and ran == []


def test_arguments_too_deep_for_the_schema_are_invalid_arguments():
    recursive = {"type": "object", "additionalProperties": {"$ref": "#"}}
    tool = Tool("t", "", recursive, lambda **kw: {})
    text = json.dumps(_deep(500))
    o = run_coroutine(invoke(tool, request("t", text)))  # refused as it is read
    assert o.code == "invalid_arguments" and o.detail.endswith(": nested deeper than 100 levels")
    parsed = ToolRequest("call_1", "t", text, _deep(500))  # validating it recurses past the limit
    o = run_coroutine(invoke(tool, parsed))
    assert (o.code, o.detail) == ("invalid_arguments",
                                  "arguments are nested too deeply to validate")


def test_output_nested_100000_deep_is_invalid_output():
    deep = _deep(100_000)
    o = run_coroutine(invoke(_tool(lambda: deep), request("t", "{}")))
    assert (o.code, o.detail) == ("invalid_tool_output", "output of t is nested too deeply to send")


@pytest.mark.parametrize("code", [None, "", 7])
def test_a_tool_error_without_a_string_code_is_an_internal_error(code):
    def broken():
        raise ToolError(code, "no such thing")
    o = run_coroutine(invoke(_tool(broken), request("t", "{}")))
    assert not o.ok and o.code == "tool_internal_error"
    assert o.detail == f"t raised a ToolError without a code ({code!r}): no such thing"


def test_a_running_tool_cannot_ask_for_approval():
    def sneaky():
        raise ToolError("approval_required", "please ask first")
    o = run_coroutine(invoke(_tool(sneaky), request("t", "{}")))
    assert o.code == "tool_internal_error" and "declare the tool requires_approval=True" in o.detail


async def _raises_cancelled():
    raise asyncio.CancelledError


async def _cancels_its_task():
    asyncio.current_task().cancel()
    await asyncio.sleep(1)
    return {}


def _sync_raises_cancelled():
    raise asyncio.CancelledError


@pytest.mark.parametrize("fn", [_raises_cancelled, _cancels_its_task, _sync_raises_cancelled])
@pytest.mark.parametrize("virtual", [True, False])
def test_a_tool_that_cancels_itself_is_an_internal_error(fn, virtual):
    o = run_coroutine(invoke(_tool(fn), request("t", "{}")), virtual=virtual)
    assert o.code == "tool_internal_error" and "cancelled from inside" in o.detail


def test_cancelling_the_caller_still_cancels_the_call():
    async def slow():
        await asyncio.sleep(60)
        return {}

    async def main():
        task = asyncio.ensure_future(invoke(_tool(slow, timeout=100), request("t", "{}")))
        await asyncio.sleep(1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return task.cancelled()
    assert run_coroutine(main())


@pytest.mark.parametrize("virtual", [True, False])
def test_a_blocking_sync_tool_times_out_and_its_thread_runs_to_the_end(virtual):
    release, finished = threading.Event(), threading.Event()

    def blocking():
        release.wait(5)
        finished.set()
        return {}

    async def main():
        o = await invoke(_tool(blocking, timeout=0.2), request("t", "{}"))
        return o, asyncio.get_running_loop().time()
    started = time.monotonic()
    (o, _), elapsed = run_coroutine(main(), virtual=virtual), time.monotonic() - started
    assert (o.code, o.detail) == ("tool_timeout", "no result within 0.2 s")
    assert elapsed < 2 and not finished.is_set()  # answered on time, the thread still runs
    release.set()
    assert finished.wait(5)  # ... to its end; its result was dropped


def test_on_the_virtual_clock_a_timed_out_thread_is_charged_its_whole_timeout():
    async def main():
        o = await invoke(_tool(lambda: time.sleep(1) or {}, timeout=0.2), request("t", "{}"),
                         latency=0.05)
        return o.code, asyncio.get_running_loop().time()
    code, clock = run_coroutine(main())
    assert code == "tool_timeout" and clock == pytest.approx(0.2)


def test_a_quick_sync_tool_takes_no_time_on_the_virtual_clock():
    async def main():
        o = await invoke(_tool(lambda: time.sleep(0.02) or {"ok": True}), request("t", "{}"),
                         latency=0.5)
        return o.content, asyncio.get_running_loop().time()
    assert run_coroutine(main()) == ('{"ok": true}', 0.5)


def test_a_non_blocking_tool_is_called_on_the_loop_and_a_blocking_one_in_a_thread():
    import threading

    seen, loop_thread = [], []

    def where():
        seen.append(threading.current_thread() is loop_thread[-1])
        return {}

    async def call(tool):
        loop_thread.append(threading.current_thread())  # run_coroutine may use its own thread
        return await invoke(tool, request("where", "{}"))

    for blocking in (False, True):
        tool = Tool("where", "", {"type": "object"}, where, blocking=blocking)
        assert run_coroutine(call(tool)).ok
    assert seen == [True, False]


def test_the_incident_tools_never_block(tools):
    assert not any(t.blocking for t in tools.tools.values())


def test_validating_arguments_does_not_build_jsonschemas_iri_grammar():
    """jsonschema imports `rfc3987_syntax` (when installed) for a format checker the lab never
    uses, and that import builds a grammar for seconds: the lab's first validation leaves it out,
    and the module still imports for anyone who asks later."""
    import subprocess
    import sys

    code = ("import sys\nfrom keel_lab._core.tools import schema_errors\n"
            "assert schema_errors({'type': 'object', 'required': ['a']}, {})\n"
            "assert 'rfc3987_syntax' not in sys.modules\n"
            "try:\n    import rfc3987_syntax\nexcept ModuleNotFoundError:\n    pass\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
