"""`read_conversation` / `validate_conversation`: one LabError line for every malformed file,
problems for a readable but broken history, and never "valid" for one that was not checked."""

import json

import pytest

from keel_cli._conversation import read_conversation, validate_conversation
from keel_lab import LabError
from keel_lab._core.strict_json import MAX_DEPTH

pytestmark = pytest.mark.ch1

CALL = {"id": "call_a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
OPENAI = [{"role": "user", "content": "q"},
          {"role": "assistant", "content": None, "tool_calls": [CALL]},
          {"role": "tool", "tool_call_id": "call_a", "content": "1"}]
ANTHROPIC = [{"role": "user", "content": "q"},
             {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a",
                                                "name": "f", "input": {}}]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a",
                                           "content": "1"}]}]


def check(tmp_path, text, fmt="auto"):
    path = tmp_path / "h.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    found, messages = read_conversation(path, fmt)
    return found, validate_conversation(messages, found)


def test_valid_histories_of_both_formats(tmp_path):
    assert check(tmp_path, json.dumps({"messages": OPENAI})) == ("openai-chat", [])
    assert check(tmp_path, json.dumps(ANTHROPIC)) == ("anthropic", [])


@pytest.mark.parametrize(("text", "expected"), [
    ('[{"role": "user", "role": "assistant", "content": ""}]',
     r"h\.json: \[0\]: the key 'role' appears twice"),
    ('[{"role": "user", "content": NaN}]', r"\[0\]\.content: NaN is not a JSON number"),
    ('[{"role": "user", "content": 1e999}]', r"\[0\]\.content: the number 1e999 is too large"),
    ('[{"role": "user", "content": "\\ud800"}]', r"\[0\]\.content: a string holds a lone "
                                                 r"surrogate \(\\ud800\)"),
    ('[{"role": "user", "content": "q", "\\udfff": 1}]', r"\[0\]: a key holds a lone"),
    ("[" * 100_000 + "]" * 100_000, f"nested deeper than {MAX_DEPTH} levels"),
    ('[{"role": "user", "content": "q", "x": ' + "[" * 150 + "]" * 150 + "}]",
     rf"\[0\]\.x(\[0\])+[\[0]*\.\.\.[\[\]0]+: nested deeper than {MAX_DEPTH}"),
    ('[{"role": "user", "content": ' + "9" * 5000 + "}]", r"the number 9+\.\.\. \(5000 "
                                                           r"characters\) is too large"),
    ('{"model": "m"}',
     r"expected a list of message objects, .*\(got an object with keys 'model'\)"),
    ("[1, 2]", "expected a list of message objects"),
    ('[{"role": "user"', r"not valid JSON: .* line 1 column \d+ \(char \d+\)"),
])
def test_unreadable_files_end_in_one_line_naming_the_place(tmp_path, text, expected):
    with pytest.raises(LabError, match=expected) as err:
        check(tmp_path, text)
    assert "\n" not in str(err.value)


def test_an_anthropic_history_under_format_openai_chat_is_refused_by_name(tmp_path):
    with pytest.raises(LabError, match=r"messages\[1\]\.content\[0\]: a 'tool_use' block is "
                                       r"Anthropic's format, not OpenAI chat"):
        check(tmp_path, json.dumps(ANTHROPIC), "openai-chat")


def test_an_openai_history_under_format_anthropic_is_refused_by_name(tmp_path):
    with pytest.raises(LabError, match=r"messages\.1\.tool_calls: OpenAI chat's field"):
        check(tmp_path, json.dumps(OPENAI), "anthropic")


def test_a_history_mixing_both_formats_is_refused(tmp_path):
    mixed = [*ANTHROPIC, OPENAI[1], OPENAI[2]]
    with pytest.raises(LabError, match=r"messages\.3\.tool_calls: .*cannot mix both"):
        check(tmp_path, json.dumps(mixed))
    with pytest.raises(LabError, match=r"messages\.1: role 'tool' is OpenAI chat's"):
        check(tmp_path, json.dumps([ANTHROPIC[1], OPENAI[2]]))


def test_a_readable_broken_history_gives_problems(tmp_path):
    fmt, [p] = check(tmp_path, json.dumps(OPENAI[:2]))
    assert fmt == "openai-chat" and p.kind == "missing_results" and p.ids == ("call_a",)


def test_validate_conversation_from_python_checks_its_arguments():
    with pytest.raises(LabError, match="unknown history format 'cohere'"):
        validate_conversation(OPENAI, "cohere")
    with pytest.raises(LabError, match=r"contents\.0\.content: not Gemini's"):
        validate_conversation(OPENAI, "gemini")
    with pytest.raises(LabError, match="expected a list of message objects"):
        validate_conversation({"messages": OPENAI}, "openai-chat")  # type: ignore[arg-type]
    assert validate_conversation(ANTHROPIC, "auto") == []
