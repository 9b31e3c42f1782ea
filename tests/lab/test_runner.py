import re
from dataclasses import replace

import pytest

from keel_lab import (
    AssistantMessage,
    Executor,
    LabError,
    OfflineAdapter,
    Runner,
    ScriptedAdapter,
    Tool,
    ToolCall,
    ToolError,
    Toolset,
    cancel_after,
    incident_tools,
    validate_history,
)
from keel_lab.course._experiments.streaming import corrupt

pytestmark = pytest.mark.ch5

COMPARE = "Which is more severe, INC-001 or INC-002?"


def test_one_assistant_message_n_tool_messages_then_the_model_again():
    r = Runner(OfflineAdapter()).run(COMPARE)
    assert r.status == "completed" and not r.partial
    assert [m.role for m in r.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert validate_history(r.messages) == []
    kinds = [e.kind for e in r.events]
    assert kinds.index("model.called", 1) > max(i for i, k in enumerate(kinds)
                                                if k.startswith("tool."))
    assert r.answer.startswith("INC-001 is the most severe (critical).")


def test_same_tool_name_twice_is_told_apart_by_call_id():
    r = Runner(OfflineAdapter(), seed=7).run(COMPARE)
    calls = r.messages[1].tool_calls
    assert [c.name for c in calls] == ["lookup_incident", "lookup_incident"]
    assert all(re.fullmatch(r"run-[0-9a-f]{12}:step-0:call-\d", c.id) for c in calls)
    assert [m.tool_call_id for m in r.messages[2:4]] == [c.id for c in calls]
    assert r.run_id == Runner(OfflineAdapter(), seed=7).run(COMPARE).run_id


def test_streamed_run_matches_the_unstreamed_one():
    plain = Runner(OfflineAdapter(seed=3)).run(COMPARE)
    streamed = Runner(OfflineAdapter(seed=3, chunk_size=2), stream=True).run(COMPARE)
    assert streamed.messages == plain.messages and streamed.status == "completed"


def test_concurrent_executor_gives_the_same_history():
    plain = Runner(OfflineAdapter()).run(COMPARE)
    conc = Runner(OfflineAdapter(), executor=Executor(4, lambda r: 0.5 - len(r.call_id) / 1e3)
                  ).run(COMPARE)
    assert conc.messages == plain.messages


def test_business_error_completes_as_partial():
    r = Runner(OfflineAdapter()).run("Which is more severe, INC-001 or INC-999?")
    assert (r.status, r.partial) == ("completed", True)
    assert "INC-999: no information (incident_not_found)." in r.answer
    assert [(e.kind, e.code) for e in r.events if e.code] == [("tool.failed",
                                                               "incident_not_found")]


def test_approval_pauses_then_resumes():
    runner = Runner(OfflineAdapter())
    paused = runner.run("Restart checkout")
    assert paused.status == "waiting_for_approval" and paused.answer == ""
    [pending] = paused.pending
    assert pending.name == "restart_service"
    assert validate_history(paused.messages)[0].ids == (pending.call_id,)  # not sendable yet
    done = runner.approve(paused, {pending.call_id: True})
    assert done.status == "completed" and done.answer == "checkout was restarted."
    assert validate_history(done.messages) == []
    denied = runner.approve(runner.run("Restart checkout"), {pending.call_id: False})
    assert denied.status == "completed" and denied.partial
    assert "approval_denied" in denied.answer
    # a person's decision, not a failure: the user reads whose it was, not "0 of 1 answered"
    assert denied.for_user().startswith("Answer without the call you denied: ")


@pytest.mark.parametrize("second", [True, False])
def test_a_pause_is_decided_once_so_the_side_effect_runs_once(second):
    model = OfflineAdapter()
    restarts = []
    restart = model.tools.tools["restart_service"]
    model.tools.tools["restart_service"] = replace(
        restart, function=lambda service: restarts.append(service) or restart.function(service))
    runner = Runner(model)
    paused = runner.run("Restart checkout")
    call_id = paused.pending[0].call_id
    assert runner.approve(paused, {call_id: True}).status == "completed"
    for again in (paused, replace(paused)):  # the same pause, or a copy of it
        with pytest.raises(LabError, match="already resumed from this pause"):
            runner.approve(again, {call_id: second})
    assert restarts == ["checkout"]
    fresh = runner.run("Restart checkout")  # a new pause may be decided
    assert runner.approve(fresh, {call_id: True}).status == "completed"
    assert restarts == ["checkout", "checkout"]


def test_a_refused_approve_does_not_use_up_the_pause():
    runner = Runner(OfflineAdapter())
    paused = runner.run("Restart checkout")
    with pytest.raises(LabError, match="no decision"):
        runner.approve(paused, {})
    assert runner.approve(paused, {paused.pending[0].call_id: True}).status == "completed"


def test_a_pause_without_pending_calls_says_why_it_cannot_resume():
    paused = Runner(OfflineAdapter(), status_rule=lambda codes: "waiting_for_approval").run(
        COMPARE)
    assert paused.status == "waiting_for_approval" and paused.pending == ()
    with pytest.raises(LabError, match="has no pending call"):
        Runner(OfflineAdapter()).approve(paused, {})


def test_a_tool_that_is_not_gated_cannot_pause_the_run():
    def restart(service):
        raise ToolError("approval_required", "ask someone first")
    tools = Toolset.of([Tool("restart", "", {"type": "object"}, restart)])
    r = Runner(scripted(("a", "restart", '{"service": "x"}')), tools).run("q")
    assert r.status == "failed" and r.pending == ()
    assert r.error.startswith("a: tool_internal_error: restart raised approval_required")
    assert validate_history(r.messages) == []
    with pytest.raises(LabError, match="is failed, not waiting for approval"):
        Runner(scripted(), tools).approve(r, {"a": True})


def test_resume_needs_a_paused_run_and_a_decision():
    runner = Runner(OfflineAdapter())
    with pytest.raises(LabError, match="is completed, not waiting for approval"):
        runner.approve(runner.run(COMPARE), {})
    paused = runner.run("Restart checkout")
    with pytest.raises(LabError, match=f"no decision for {re.escape(paused.pending[0].call_id)}"):
        runner.approve(paused, {})


def test_internal_error_fails_the_run_but_every_call_is_answered():
    runner = Runner(OfflineAdapter(), executor=Executor(4))
    r = runner.run("Search the logs of billing and auth-api")
    assert r.status == "failed"
    assert re.fullmatch(r"run-\w+:step-0:call-0: tool_internal_error: ConnectionError: .*",
                        r.error)
    assert [m.role for m in r.messages] == ["user", "assistant", "tool", "tool"]
    assert validate_history(r.messages) == []


class Scripted(ScriptedAdapter):
    tools = incident_tools()  # what the offline model brings, so Runner needs no tools=


def scripted(*calls):
    return Scripted([AssistantMessage("", tuple(ToolCall(*c) for c in calls)),
                     AssistantMessage("done")])


def test_unknown_tool_fails_the_run():
    r = Runner(scripted(("a", "lookup_incident", '{"incident_id": "INC-001"}'),
                        ("b", "format_disk", "{}"))).run("q")
    assert (r.status, r.error) == ("failed", "b: unknown_tool: no tool named 'format_disk'")
    assert validate_history(r.messages) == []


def test_invalid_tool_output_fails_the_run():
    tools = Toolset.of([Tool("t", "", {"type": "object"}, lambda: ["not", "an", "object"])])
    r = Runner(scripted(("a", "t", "{}")), tools).run("q")
    assert r.status == "failed" and r.error.startswith("a: invalid_tool_output")


class NotATurn(ScriptedAdapter):
    tools = incident_tools()

    def complete(self, messages, tools, turn):
        return AssistantMessage("", (ToolCall(["a list"], "lookup_incident", "{}"),
                                     ToolCall(["a list"], "lookup_incident", "{}")))


def test_a_model_reply_that_breaks_the_protocol_fails_the_run_without_raising():
    r = Runner(NotATurn([])).run("q")
    assert r.status == "failed" and "TypeError" in r.error and "nothing was run" in r.error


def test_bad_arguments_go_back_to_the_model():
    r = Runner(scripted(("a", "lookup_incident", '{"incident_id": 1}'),
                        ("b", "lookup_incident", '{"incident_id": "INC-002"}'))).run("q")
    assert r.status == "completed" and r.partial
    assert [o.code for o in r.outcomes] == ["invalid_arguments", None]


@pytest.mark.parametrize(("calls", "problem"), [
    ((("a", "lookup_incident", "{}"), ("a", "lookup_incident", "{}")),
     "tool_calls[1] (id a) reuses the id of tool_calls[0]"),
    ((("", "lookup_incident", "{}"),), "tool_calls[0] has no id"),
    ((("a", "", "{}"),), "tool_calls[0] (id a) has no name"),
])
def test_a_malformed_turn_runs_nothing(calls, problem):
    r = Runner(scripted(*calls)).run("q")
    assert r.status == "failed" and problem in r.error and "nothing was run" in r.error
    assert not [e for e in r.events if e.kind.startswith("tool.")]


class CutModel(OfflineAdapter):
    def __init__(self, keep, **kw):
        super().__init__(**kw)
        self.keep = keep

    def stream(self, messages, tools, turn):
        return cancel_after(super().stream(messages, tools, turn), self.keep)


def test_cancelled_stream_runs_nothing():
    r = Runner(CutModel(10), stream=True).run(COMPARE)
    assert r.status == "cancelled" and "nothing was run" in r.error
    assert [e.kind for e in r.events] == ["model.called"]


class BrokenJsonModel(OfflineAdapter):
    def stream(self, messages, tools, turn):
        events = list(super().stream(messages, tools, turn))
        return corrupt(events, 0) if turn.step == 0 else iter(events)


def test_one_calls_bad_json_leaves_its_sibling_alone():
    r = Runner(BrokenJsonModel(), stream=True).run(COMPARE)
    assert r.status == "completed" and r.partial
    assert [o.code for o in r.outcomes] == ["invalid_arguments", None]
    assert "INC-002 (low, open)" in r.answer
    assert validate_history(r.messages) == []


def test_dependent_calls_take_two_turns():
    r = Runner(OfflineAdapter()).run("Look up INC-003 and the status of its service")
    assert [m.role for m in r.messages] == ["user", "assistant", "tool", "assistant", "tool",
                                            "assistant"]
    assert r.messages[3].tool_calls[0].arguments == '{"service": "checkout"}'


def test_max_turns():
    looping = ScriptedAdapter([AssistantMessage("", (ToolCall(f"c{i}", "lookup_incident",
                                                              '{"incident_id": "INC-001"}'),))
                               for i in range(5)])
    r = Runner(looping, incident_tools(), max_turns=3).run("q")
    assert (r.status, r.error) == ("failed", "no answer after 3 model turns")


def test_trace_is_readable():
    text = Runner(OfflineAdapter()).run("Which is more severe, INC-001 or INC-999?").trace()
    assert text.splitlines()[0] == "status = completed  (partial)"
    assert "code=incident_not_found" in text


def test_default_toolset_is_fresh_per_runner():
    assert Runner(OfflineAdapter()).tools is not Runner(OfflineAdapter()).tools
    assert set(incident_tools().tools) == set(Runner(OfflineAdapter()).tools.tools)


def test_for_user_marks_partial_answers_and_pauses():
    runner = Runner(OfflineAdapter())
    assert runner.run(COMPARE).for_user().startswith("INC-001 is the most severe")
    partial = runner.run("Which is more severe, INC-001 or INC-999?").for_user()
    assert partial.startswith("Partial answer (1 of 2 calls answered): INC-001 (critical")
    assert runner.run("Restart checkout").for_user() == (
        'Waiting for your approval: restart_service({"service": "checkout"})')
    failed = runner.run("Search the logs of billing").for_user()
    assert failed.startswith("The run failed: run-") and "tool_internal_error" in failed


def test_a_model_without_tools_needs_them_passed():
    with pytest.raises(LabError, match="ScriptedAdapter brings no tools: pass tools="):
        Runner(ScriptedAdapter([AssistantMessage("done")]))
    assert Runner(ScriptedAdapter([AssistantMessage("done")]), Toolset()).run("q").answer == "done"


def test_the_status_rule_is_an_argument():
    from keel_lab.course._experiments.faults import fail_fast

    r = Runner(OfflineAdapter(), status_rule=fail_fast).run(
        "Which is more severe, INC-001 or INC-999?")
    assert (r.status, r.error) == ("failed", f"{r.outcomes[1].call_id}: incident_not_found: "
                                             f"{r.outcomes[1].detail}")
    odd = Runner(OfflineAdapter(), status_rule=lambda codes: "failed").run(COMPARE)
    assert (odd.status, odd.error) == ("failed", "the status rule answered 'failed'")


def _parsed(call):
    return bool(call.id and call.name and call.parses)


def test_may_start_runs_a_call_before_its_cancelled_turn_ends():
    from keel_lab.course._experiments.faults import CancelledBeforeFinish
    note = "Add a note to INC-001, note: customer impact confirmed"
    lab = Runner(CancelledBeforeFinish(), stream=True).run(note)
    eager = Runner(CancelledBeforeFinish(), stream=True, may_start=_parsed).run(note)
    assert lab.status == eager.status == "cancelled"
    assert lab.outcomes == () and "nothing was run" in lab.error
    assert [o.name for o in eager.outcomes] == ["add_incident_note"]
    assert "already started" in eager.error
    assert [e.kind for e in eager.events] == ["model.called", "tool.requested", "tool.finished"]


def test_may_start_on_a_complete_turn_runs_each_call_once_with_the_same_history():
    lab = Runner(OfflineAdapter(), stream=True).run(COMPARE)
    eager = Runner(OfflineAdapter(), stream=True, may_start=_parsed).run(COMPARE)
    assert eager.messages == lab.messages and eager.answer == lab.answer
    assert [e.kind for e in eager.events].count("tool.requested") == 2


def test_may_start_that_never_says_yes_is_the_lab_policy():
    lab = Runner(OfflineAdapter(), stream=True).run(COMPARE)
    never = Runner(OfflineAdapter(), stream=True, may_start=lambda call: False).run(COMPARE)
    assert never.messages == lab.messages and never.events == lab.events

