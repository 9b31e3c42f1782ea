"""The Chinese edition's pictures speak Chinese: every text of every experiment's plot, of the
diagrams and of the explorers' figures, and the explorers' widget labels. Identifiers, ids, tool
and format names, units and single letters may stay as they are; English words may not."""
# ruff: noqa: RUF001 - the Chinese texts use Chinese punctuation

import re

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.text import Text

from keel_lab import _i18n as i18n
from keel_lab._core.messages import (
    AssistantMessage,
    ToolMessage,
    UserMessage,
)
from keel_lab._core.protocol import ToolCall
from keel_lab._i18n import _, set_language
from keel_lab.course import diagrams, explorers, plots
from keel_lab.course._experiments.registry import EXPERIMENTS, Params
from keel_lab.course._scenarios import COMPARE, offline_stream

pytestmark = pytest.mark.lab_wide

# Words that are names, not English prose: Python's and asyncio's, formats, roles, units.
NAMES = {
    "gather", "as_completed", "TaskGroup", "asyncio", "await", "None", "True", "False", "id",
    "ID", "IDs", "JSON", "SSE", "API", "SDK", "UI", "TLS", "ms", "s", "x", "n", "index", "chunk",
    "openai", "anthropic", "gemini", "ollama", "OpenAI", "Anthropic", "Gemini", "Ollama",
    "LangChain", "langchain", "Vercel", "AI", "LiteLLM", "litellm", "tool_call_id",
    "user", "assistant", "tool", "system", "limit", "return_exceptions", "arguments", "name",
    "symlog", "finish",
    # the parameter `trials` in a formula ("0.833 x trials")
    "trials",
}
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.'/\-]*(?:\(\))?")


def is_name(word: str) -> bool:
    """An identifier, a name or a unit: snake_case, dotted, with digits, CamelCase, a letter."""
    return (len(word) == 1 or word in NAMES or any(c in word for c in "_.-/0123456789()")
            or word.isupper() or (word[0].islower() and any(c.isupper() for c in word))
            or (word[0].isupper() and any(c.isupper() for c in word[1:])))


def english(text: str) -> list[str]:
    """The English words of a text: words of letters that are no identifier or name. A text
    without any Chinese character is a name or a value (a call id, `INC-001`, a number) when
    it has no two English words in a row."""
    words = [w for w in WORD.findall(text) if not is_name(w.rstrip("'"))]
    if not re.search(r"[\u4e00-\u9fff]", text) and len(words) < 2:
        return []
    return words


def texts(fig: Figure) -> list[str]:
    found = [t.get_text() for t in fig.findobj(Text)]
    for ax in fig.axes:
        found += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
        found += [ax.get_title(loc) for loc in ("left", "center", "right")]
        legend = ax.get_legend()
        if legend is not None:
            found += [t.get_text() for t in legend.get_texts()]
    if fig._suptitle is not None:
        found.append(fig._suptitle.get_text())
    return [t for t in found if t.strip()]


def assert_chinese(fig: Figure, what: str) -> None:
    bad = {t: english(t) for t in texts(fig) if english(t)}
    assert not bad, f"{what}: English in a Chinese figure: {bad}"


@pytest.fixture(autouse=True)
def chinese(monkeypatch):
    """Every test draws in Chinese and leaves the default, English, behind."""
    monkeypatch.delenv(i18n.ENV, raising=False)
    monkeypatch.setattr(i18n, "_chosen", None)
    set_language("zh")


def test_the_detector():
    assert english("Mismatch rate vs delay spread（3 个调用）") == ["Mismatch", "rate", "vs",
                                                                 "delay", "spread"]
    assert english("（颜色 = batch / depth）") == ["batch", "depth"]
    assert not english("position_over_completion（实测）")
    assert not english("run-629fd82c07cd:step-0:call-0")
    assert not english("INC-001")
    assert english("（在第 never 个事件后取消）") == ["never"]


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_experiment_plot_is_chinese(name):
    report = EXPERIMENTS[name].run(Params(trials=20))
    fig = plots.plot(report)
    if fig is None:
        return
    try:
        assert_chinese(fig, name)
    finally:
        plt.close(fig)


def test_the_screen_title_says_never_in_chinese():
    report = EXPERIMENTS["screen"].run(Params(trials=20))
    fig = plots.plot(report)
    assert fig is not None
    title = fig.axes[0].get_title()
    assert "never" not in title and "不取消" in title


def test_the_diagrams_are_chinese():
    calls = (ToolCall("call_1", "lookup_incident", '{"incident_id": "INC-001"}'),
             ToolCall("call_2", "lookup_incident", '{"incident_id": "INC-002"}'))
    messages = [UserMessage(_(COMPARE)), AssistantMessage("", calls),
                ToolMessage("call_1", "lookup_incident", '{"id": "INC-001"}'), AssistantMessage("")]
    assert_chinese(diagrams.message_format(messages), "message_format")
    assert_chinese(diagrams.turn_pipeline(offline_stream(_(COMPARE))), "turn_pipeline")


@pytest.mark.parametrize("name", sorted(explorers.EXPLORERS))
def test_every_explorer_speaks_chinese(name):
    explorer = explorers.EXPLORERS[name]()
    for key, widget in explorer.controls.items():
        label = widget.description
        assert re.search(r"[\u4e00-\u9fff]", label) or is_name(label), (name, key, label)
        assert not english(label), (name, key, label)
    if explorer.figure is not None:
        assert_chinese(explorer.figure, name)


def test_a_chinese_run_draws_without_a_missing_glyph():
    """The history diagram of a real Chinese run shows the incidents' Chinese titles."""
    import io
    import warnings

    from keel_lab._core.runner import Runner
    from keel_lab.course._offline_model import OfflineAdapter

    messages = Runner(OfflineAdapter()).run(_(COMPARE)).messages
    fig = diagrams.message_format(messages)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "Glyph ... missing from font(s)"
        fig.savefig(io.BytesIO(), format="png")
