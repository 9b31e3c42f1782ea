"""No decision reads a message: under the pseudo-locale, where every message is nonsense with its
placeholders kept (`set_language("qps")`), every exercise's check gives the verdict it gives in
English - passed or not, and as many hints - for the right answers and for every known-wrong one
(the tables of tests/lab/test_checks_*.py, named by the exercise table); the lab's mistakes
(`LabError`) carry their code whatever the language; and no `LabError` anywhere in the packages
is built from a message already rendered."""

from __future__ import annotations

import argparse
import ast
import importlib
import json
from pathlib import Path

import pytest
from test_checks_hints import reference

from keel_checks import VERIFIERS
from keel_checks.exercises import EXERCISES
from keel_course.checkout import Checkout
from keel_course.guide import wrong_answers
from keel_lab._core.errors import LabError
from keel_lab._i18n import N_, set_language, speaking

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("keel_lab", "keel_checks", "keel_cli", "keel_course")
PSEUDO = "\u27e6"  # how every message of the pseudo-locale begins
TABLES = wrong_answers(Checkout.at(ROOT))  # exercise -> (test module, table of wrong answers)


def _table(exercise, kind):
    """An exercise's known answers from its test module: its wrong ones (`kind` "WRONG"), or
    its right ones ("RIGHT", where the module keeps a list of them; the hints' reference answer
    is one in any case)."""
    module, name = TABLES[exercise.name]
    found = getattr(importlib.import_module(module), name.replace("WRONG", kind), [])
    return [entry[0] if isinstance(entry, tuple) else entry for entry in found]


def _answers():
    for x in EXERCISES:
        right = [reference(x.name), *_table(x, "RIGHT")]
        for kind, answers in (("right", right), ("wrong", _table(x, "WRONG"))):
            for answer in answers:
                yield pytest.param(x.name, answer, id=f"{x.name}-{kind}-{answer.__name__}")


def _fresh(answer):
    """The answer with its mutable defaults emptied, as a new kernel would define it: a second
    verdict starts where the first did."""
    for default in answer.__defaults__ or ():
        if isinstance(default, list | dict | set):
            default.clear()
    return answer


def _verdict(name, answer):
    v = VERIFIERS[name](_fresh(answer))
    return v.passed, len(v.hints), v.total


@pytest.mark.parametrize(("name", "answer"), _answers())
def test_a_check_gives_the_same_verdict_in_the_pseudo_locale(name, answer):
    english = _verdict(name, answer)
    with speaking("qps"):
        pseudo = _verdict(name, answer)
    assert pseudo == english


def test_the_tables_are_found():
    for x in EXERCISES:
        assert _table(x, "WRONG"), x.name


# --- every LabError of the core, the course and the CLI carries its code ---


def _turn():
    from keel_lab._core.ids import RunIds
    from keel_lab._core.model import Turn

    return Turn(RunIds.seeded(0), 0)


def script_exhausted(tmp, mp):
    from keel_lab._core.model import ScriptedAdapter
    from keel_lab._core.tools import Toolset

    ScriptedAdapter([]).complete([], Toolset.of([]), _turn())


def dict_message(tmp, mp):
    from keel_lab._core.history import validate_history

    validate_history([{"role": "user", "content": "x"}])


def not_a_message(tmp, mp):
    from keel_lab._core.history import validate_history

    validate_history([3])


def no_tools(tmp, mp):
    from keel_lab._core.model import ScriptedAdapter
    from keel_lab._core.runner import Runner

    Runner(ScriptedAdapter([]))


def _approve(status, pending=(), resumed=None):
    from keel_lab._core.protocol import ToolRequest
    from keel_lab._core.runner import Pause, Runner, RunResult
    from keel_lab.course._offline_model import OfflineAdapter

    requests = tuple(ToolRequest(i, "restart_service", "{}", {}) for i in pending)
    pause = None if resumed is None else Pause(resumed)
    Runner(OfflineAdapter()).approve(
        RunResult("run-1", status, "", (), (), pending=requests, pause=pause), {})


def not_waiting(tmp, mp):
    _approve("completed")


def nothing_pending(tmp, mp):
    _approve("waiting_for_approval")


def already_resumed(tmp, mp):
    _approve("waiting_for_approval", ["c1"], resumed=True)


def no_decision(tmp, mp):
    _approve("waiting_for_approval", ["c1"])


def _read_progress(tmp, content):
    from keel_checks import progress

    path = tmp / "progress.json"
    path.write_bytes(content if isinstance(content, bytes) else
                     json.dumps({"exercises": {"a": content}}).encode())
    progress.read(path)


def no_such_path(tmp, mp):
    from keel_checks import progress

    progress.find(tmp / "nothing-here")


def not_a_file(tmp, mp):
    from keel_checks import progress

    progress.read(Path("/dev/null"))


def too_large(tmp, mp):
    _read_progress(tmp, b" " * (1024 * 1024 + 1))


def not_utf8(tmp, mp):
    _read_progress(tmp, b"\xff")


def not_progress(tmp, mp):
    _read_progress(tmp, b"[]")


def entry_not_object(tmp, mp):
    _read_progress(tmp, 1)


def field_missing(tmp, mp):
    _read_progress(tmp, {"passed": True})


def field_type(tmp, mp):
    _read_progress(tmp, {"passed": 1})


def bad_range(tmp, mp):
    from keel_lab.course._sampling import binomial_range

    binomial_range(2.0, 10)


def data_missing(tmp, mp):
    from keel_lab.course import _data as data

    data.path("no-such-data-set.json")


def bad_chunk_size(tmp, mp):
    from keel_lab.course._offline_model import OfflineAdapter

    OfflineAdapter(chunk_size=0)


def no_question(tmp, mp):
    from keel_lab.course._offline_model import OfflineAdapter

    model = OfflineAdapter()
    model.complete([], model.tools, _turn())


def not_responses(tmp, mp):
    from keel_lab.course._experiments.providers import response_items

    response_items("anthropic/parallel_calls.sse")


def no_trials(tmp, mp):
    from keel_lab.course._experiments.block_close import block_close

    block_close(trials=0)


def not_json_output(tmp, mp):
    from keel_cli._command import json_text

    json_text(float("nan"))


def unknown_language(tmp, mp):
    set_language("xx")


def no_stream(tmp, mp):
    """`record`'s failure is the CLI's `Unavailable` (exit 69), with the failure's code."""
    from keel_cli import _command as cli
    from keel_cli import _record as record

    class Request:
        format, url, model = "openai-chat", "http://localhost:1", "m"

        def scrub(self, text):
            return text

    def fails(*_args, **_kwargs):
        raise record.RecordFailed("no_stream", N_("{url} sent no stream"), url=Request.url)

    mp.setattr(record, "plan", lambda *_args, **_kwargs: Request())
    mp.setattr(record, "record", fails)
    with pytest.raises(cli.Unavailable) as err:
        cli._record(argparse.Namespace(format="openai-chat", prompt="p", model="m",
                                       base_url=None, api_key_env=None, timeout=1.0,
                                       file=tmp / "x", verbose=False, json=False))
    raise err.value


RAISED = [script_exhausted, dict_message, not_a_message, no_tools, not_waiting, nothing_pending,
          already_resumed, no_decision, no_such_path, not_a_file, too_large, not_utf8,
          not_progress, entry_not_object, field_missing, field_type, bad_range, data_missing,
          bad_chunk_size, no_question, not_responses, no_trials, not_json_output,
          unknown_language, no_stream]


@pytest.mark.parametrize("raises", RAISED, ids=[f.__name__ for f in RAISED])
def test_a_mistake_carries_its_code_in_any_language(raises, tmp_path, monkeypatch):
    """Each raiser is named by the code its LabError carries, in English and in the
    pseudo-locale alike; its words are rendered in the language shown, not where raised."""
    with pytest.raises(LabError) as english:
        raises(tmp_path, monkeypatch)
    with speaking("qps"), pytest.raises(LabError) as pseudo:
        raises(tmp_path, monkeypatch)
    assert english.value.code == pseudo.value.code == raises.__name__
    assert not str(english.value).startswith(PSEUDO)
    with speaking("qps"):
        assert str(pseudo.value).startswith(PSEUDO), str(pseudo.value)


def test_both_experiments_refuse_no_trials_alike():
    from keel_lab.course._experiments.trials import TrialSpec, run_trials

    with pytest.raises(LabError) as err:
        run_trials({}, 0, TrialSpec(), 0)
    assert err.value.code == "no_trials"


# --- no LabError anywhere is built from a rendered message ---


def _name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)


def _rendered(node: ast.expr) -> bool:
    """Text made before the error: an f-string, a concatenation, `_()` or `.format()`."""
    if isinstance(node, ast.JoinedStr | ast.BinOp):
        return True
    if isinstance(node, ast.IfExp):
        return _rendered(node.body) or _rendered(node.orelse)
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id == "_")
        or (isinstance(node.func, ast.Attribute) and node.func.attr == "format"))


def test_every_lab_error_has_a_code_and_a_template():
    """A `LabError` (or a subclass: the CLI's `Unavailable`, `RecordFailed`...) is built as
    `LabError("code", N_("template"), **params)`: a code first, then a template, never one
    rendered message. Until every package is converted, this lists the calls left."""
    trees = {path: ast.parse(path.read_text(encoding="utf-8"))
             for folder in PACKAGES for path in (ROOT / folder).rglob("*.py")}
    classes = [(node.name, {_name(b) for b in node.bases}) for tree in trees.values()
               for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    known = {"LabError"}
    while grown := {name for name, bases in classes if bases & known} - known:
        known |= grown
    left = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and _name(node.func) in known):
                continue
            code, template = [*node.args, None, None][:2]
            if (code is None or template is None or _rendered(code) or _rendered(template)
                    or (isinstance(code, ast.Constant) and not isinstance(code.value, str))):
                left.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert left == []
