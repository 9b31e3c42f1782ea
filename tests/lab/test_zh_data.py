"""The scenario in Chinese: the incident data sets of the Chinese edition hold the same facts as
the English ones, and the tools, the offline model and the questions speak the learner's
language."""
# ruff: noqa: RUF001 - the expected Chinese lines use Chinese punctuation

import json
import re

import pytest

from keel_lab import _i18n as i18n
from keel_lab._core.runner import Runner
from keel_lab._core.tools import ToolError
from keel_lab._i18n import _, set_language
from keel_lab.course import _data as data
from keel_lab.course._incident_tools import get_service_status, lookup_incident, search_logs
from keel_lab.course._offline_model import OfflineAdapter
from keel_lab.course._scenarios import COMPARE, NOTE, PARTIAL, SCENARIOS, compare_question

pytestmark = pytest.mark.lab_wide

# Prose for people, per data set; every other field is a fact that both languages share.
PROSE = {"incidents": ("title", "summary"), "services": ("owner",)}
KEY = {"incidents": "id", "services": "name"}
HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def english(monkeypatch):
    """Every test starts in English and leaves it so."""
    monkeypatch.delenv(i18n.ENV, raising=False)
    monkeypatch.setattr(i18n, "_chosen", None)


def _raw(*parts: str) -> list[dict[str, object]]:
    with data.path(*parts).open(encoding="utf-8") as f:
        result: list[dict[str, object]] = json.load(f)
    return result


@pytest.mark.parametrize("name", sorted(PROSE))
def test_the_chinese_data_sets_hold_the_same_facts(name):
    english, chinese = _raw(f"{name}.json"), _raw("zh", f"{name}.json")
    key = KEY[name]
    assert [r[key] for r in chinese] == [r[key] for r in english]  # same ids, same order
    for en, zh in zip(english, chinese, strict=True):
        assert set(zh) == set(en), en[key]
        facts = {k: v for k, v in en.items() if k not in PROSE[name]}
        assert {k: zh[k] for k in facts} == facts, en[key]
        for field in PROSE[name]:
            assert zh[field] != en[field] and HAN.search(str(zh[field])), (en[key], field)
            # the numbers a sentence states are the same numbers in both languages
            assert re.findall(r"\d+", str(zh[field])) == re.findall(r"\d+", str(en[field])), \
                (en[key], field)


def test_data_follows_the_language_and_caches_each():
    assert data.incidents()["INC-002"]["title"] == "Monthly reports render slowly"
    set_language("zh")
    assert data.incidents()["INC-002"]["title"] == "月度报表渲染缓慢"
    assert data.incidents()["INC-002"]["severity"] == "low"
    assert data.logs() == json.loads(data.path("logs.json").read_text(encoding="utf-8"))
    set_language("en")
    assert data.incidents()["INC-002"]["title"] == "Monthly reports render slowly"


def test_the_tools_speak_the_learners_language():
    assert lookup_incident("INC-003")["title"] == "Checkout times out on payment confirmation"
    with pytest.raises(ToolError, match=r"^there is no incident INC-999$"):
        lookup_incident("INC-999")
    with pytest.raises(ToolError, match=r"^there is no service nope$"):
        get_service_status("nope")
    with pytest.raises(ConnectionError, match=r"^log index for billing is unreachable$"):
        search_logs("billing")
    set_language("zh")
    found = lookup_incident("INC-003")
    assert found["title"] == "结账在支付确认时超时"
    assert (found["id"], found["severity"], found["status"]) == ("INC-003", "high",
                                                                 "investigating")
    with pytest.raises(ToolError, match=r"^没有事故 INC-999$"):
        lookup_incident("INC-999")
    with pytest.raises(ToolError, match=r"^没有服务 nope$"):
        get_service_status("nope")
    with pytest.raises(ConnectionError, match=r"^无法访问 billing 的日志索引$"):
        search_logs("billing")
    assert get_service_status("checkout") == {"service": "checkout", "status": "degraded",
                                               "version": "7.1.4"}
    assert search_logs("checkout", "timed out")["lines"] == [
        "14:22:00 ERROR payment confirmation timed out after 10000 ms"]  # machine output


def _run(question: str):
    return Runner(OfflineAdapter()).run(question)


def test_the_offline_model_answers_in_english():
    assert _run(COMPARE).answer == (
        "INC-001 is the most severe (critical). INC-001 (critical, open): Login API returns 502 "
        "for a third of requests. INC-002 (low, open): Monthly reports render slowly.")
    assert "INC-999: no information (incident_not_found)." in _run(PARTIAL).answer
    assert _run(SCENARIOS["approval"]).status == "waiting_for_approval"
    assert compare_question(3) == "Which is more severe, INC-001, INC-002 or INC-003?"


def test_the_offline_model_understands_and_answers_chinese():
    set_language("zh")
    assert _(COMPARE) == "INC-001 和 INC-002 哪个更严重？"
    assert _run(_(COMPARE)).answer == (
        "INC-001 最严重（critical）。INC-001（critical，open）：登录 API 对三分之一的请求返回 "
        "502。INC-002（low，open）：月度报表渲染缓慢。")
    assert "INC-999：没有信息（incident_not_found）。" in _run(_(PARTIAL)).answer
    assert _run(_(NOTE)).answer == "已为 INC-001 添加备注。"
    assert compare_question(3) == "INC-001、INC-002 和 INC-003 哪个更严重？"
    assert _run(compare_question(3)).answer.startswith("INC-001 最严重（critical）。")
    ties = _run("INC-001 和 INC-012 哪个更严重？").answer
    assert ties.startswith("INC-001、INC-012 同样严重（critical）。")
    status = _run("查询 INC-003 及其服务的状态").answer
    assert status.endswith("checkout 的状态是 degraded（版本 7.1.4）。")
    assert _run(_(SCENARIOS["approval"])).status == "waiting_for_approval"
    internal = _run(_(SCENARIOS["internal error"]))
    assert internal.status == "failed"


@pytest.mark.parametrize("question", [COMPARE, PARTIAL, NOTE, *SCENARIOS.values(),
                                      "Look up INC-003 and the status of its service"])
def test_a_chinese_question_makes_the_same_calls(question):
    """Same calls, same ids: the question's language changes only the words (a note's text)."""
    def calls(q: str) -> list[tuple[str, str, str]]:
        return [(c.id, c.name, c.arguments if c.name != "add_incident_note" else "")
                for m in _run(q).messages for c in getattr(m, "tool_calls", ())]

    english = calls(question)
    set_language("zh")
    chinese = {"Look up INC-003 and the status of its service": "查询 INC-003 及其服务的状态"}
    assert calls(chinese.get(question, _(question))) == english
    assert english
