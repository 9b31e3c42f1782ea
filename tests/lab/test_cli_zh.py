"""`keel-lab`, `make lab` and the learner's copy in Chinese: with KEEL_LAB_LANG=zh (or the
Chinese edition's `--language zh`) every help and every message these commands print is Chinese,
but for argparse's own words, the example command lines, identifiers and the system's own error
texts (strerror); an error is still one line with the exit code it has in English."""
# ruff: noqa: RUF001, RUF002 - the expected Chinese lines use Chinese punctuation

from __future__ import annotations

import argparse
import errno
import os
import re
from pathlib import Path

import pytest

from keel_cli import _command as cli
from keel_course import lab, workspace
from keel_lab import _i18n as i18n
from keel_lab._core.tables import width_of, wrap

pytestmark = pytest.mark.lab_wide

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
CJK = re.compile("[\u3400-\u9fff]")
# argparse's own words (from Python's gettext): they stay English
ARGPARSE = re.compile(r"^(usage: .*|positional arguments:|options:|\s*-h, --help\s+show this help "
                      r"message and exit)$")
WORD = re.compile(r"[A-Za-z][a-z]*(?:'[a-z]+)?")  # a word of prose: `the`, `Each`, `command's`
CHINESE = "\u3000-\u303f\u3400-\u9fff\uff00-\uffef"  # characters and punctuation
# a word (between spaces and Chinese) or a run of Chinese, which ends a run of English words
TOKEN = re.compile(rf"[^\s{CHINESE}]+|[{CHINESE}]+")


@pytest.fixture(autouse=True)
def chinese(monkeypatch):
    """Chinese from the environment, as `KEEL_LAB_LANG=zh keel-lab ...` runs; no language
    chosen by an earlier test; a terminal 80 columns wide."""
    monkeypatch.setenv(i18n.ENV, "zh")
    monkeypatch.setattr(i18n, "_chosen", None)
    monkeypatch.setenv("COLUMNS", "80")


def english_runs(text: str, least: int = 4) -> list[str]:
    """The runs of `least` or more English words of prose in `text`: words that are no
    identifier (`openai-chat`, `KEEL_PROGRESS`, `--json`, `FILE.partial`, `JSON`), one after
    another with nothing Chinese between them."""
    runs: list[str] = []
    run: list[str] = []
    for token in [*TOKEN.findall(text), "。"]:
        word = token.strip(".,;:!?()'\"")
        if WORD.fullmatch(word) and not (len(word) > 1 and word.isupper()):
            run.append(word)
            continue
        if len(run) >= least:
            runs.append(" ".join(run))
        run = []
    return runs


def prose(help_text: str) -> str:
    """A help without argparse's own lines and without the example command lines (each line
    under `示例：` that starts with the command)."""
    lines = help_text.splitlines()
    kept, examples = [], False
    for line in lines:
        if line == "示例：":
            examples = True
            continue
        if ARGPARSE.match(line) or (examples and line.startswith("  .venv/bin/keel-lab ")):
            continue
        kept.append(line)
    return "\n".join(kept)


def test_the_prose_detector_finds_english_and_passes_identifiers():
    assert english_runs("an experiment (default: all); see the list below") == [
        "an experiment default all see the list below"]
    assert english_runs("流的格式：openai-chat, openai-responses, anthropic, ollama, gemini") == []
    assert english_runs("密钥来自 OPENAI_API_KEY、--api-key-env；FILE.partial 里") == []
    assert english_runs("a call without a result") == ["a call without a result"]
    assert english_runs("一个没有结果的调用 for you") == []  # three words are not a sentence
    assert prose("usage: keel-lab x\n\noptions:\n  -h, --help  show this help message and exit"
                 "\n\n示例：\n  .venv/bin/keel-lab progress the exercises\n      你已通过的练习"
                 ) == "\n\n      你已通过的练习"


def commands() -> dict[str, argparse.ArgumentParser]:
    p = cli.parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    return {"keel-lab": p, **sub.choices}


@pytest.mark.parametrize("name", ["keel-lab", "experiments", "assemble", "validate",
                                  "progress", "record"])
def test_every_help_is_chinese_but_argparses_words_and_the_examples(name):
    text = commands()[name].format_help()
    assert "\n示例：\n" in text and "\nexamples:\n" not in text
    assert CJK.search(prose(text))
    assert english_runs(prose(text)) == [], text
    wide = [line for line in text.split("positional arguments:")[0].splitlines()
            if not line.startswith("  .venv/bin/keel-lab ") and width_of(line) > 80]
    assert wide == []  # wrapped by display width: a Chinese character takes two columns


def test_the_language_is_read_when_the_parser_is_built(monkeypatch):
    chinese = cli.parser().format_help()
    monkeypatch.delenv(i18n.ENV)
    english = cli.parser().format_help()
    assert "本课程的实验" in chinese and "the lab's experiments" not in chinese
    assert english.startswith("usage: keel-lab [-h] COMMAND ...\n\n`keel-lab`: the lab's "
                              "experiments, and checks of real streams and histories.\n")
    assert not CJK.search(english)


def test_the_english_description_is_the_modules_docstring(monkeypatch):
    monkeypatch.delenv(i18n.ENV)
    doc = "\n\n".join(" ".join(part.split()) for part in (cli.__doc__ or "").split("\n\n"))
    assert cli.parser().description == cli._text(doc)


@pytest.mark.parametrize("parser", [
    lambda: lab.parser(),
    lambda: workspace.parser(),
    *[lambda name=name: next(a for a in workspace.parser()._actions
                             if isinstance(a, argparse._SubParsersAction)).choices[name]
      for name in ("prepare", "restore")]])
def test_make_labs_helps_are_chinese(parser):
    text = parser().format_help()
    assert CJK.search(prose(text)) and english_runs(prose(text)) == [], text


# --- a user's error: one Chinese line, the exit code it has in English ----------------------


def system_texts() -> list[str]:
    """What the system says of a missing file or folder: its words, not the lab's."""
    return [os.strerror(code) for code in (errno.ENOENT, errno.ENOTDIR, errno.EEXIST)]


def one_chinese_line(err: str) -> str:
    assert err.count("\n") == 1, err
    line = err.strip()
    for said in system_texts():
        line = line.replace(said, "")
    assert CJK.search(line) and english_runs(line) == [], err
    return line


def errors(tmp_path: Path) -> dict[str, list[str]]:
    in_the_way = tmp_path / "a_file"
    in_the_way.write_text("")
    return {
        "assemble": ["assemble", str(tmp_path / "missing.sse")],
        "validate": ["validate", str(tmp_path / "missing.json")],
        "experiments": ["experiments", "spread", "--trials", "5", "--out",
                        str(in_the_way / "plots")],
    }


@pytest.mark.parametrize("case", ["assemble", "validate", "experiments"])
def test_a_users_error_is_one_chinese_line_with_the_english_exit_code(case, tmp_path, capsys,
                                                                      monkeypatch):
    argv = errors(tmp_path)[case]
    code = cli.main(argv)
    line = one_chinese_line(capsys.readouterr().err)
    assert line.startswith("keel-lab：错误：")
    monkeypatch.delenv(i18n.ENV)
    assert cli.main(argv) == code == 2
    assert capsys.readouterr().err.startswith("keel-lab: error: ")


def test_a_bad_number_is_said_in_chinese_after_argparses_words(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["experiments", "--trials", "0"])
    assert done.value.code == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last == "keel-lab experiments: error: argument --trials: 0 不在 1..1000000 范围内"


def test_validates_verdict_is_chinese(capsys):
    history = ROOT / "data" / "histories" / "gemini" / "result_before_call.json"
    assert cli.main(["validate", str(history)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{history}：gemini 对话，4 个问题"
    assert lines[1].endswith("（2 次）")  # the provider's own words before it stay English


def test_make_lab_says_a_missing_folder_in_chinese(tmp_path, capsys, monkeypatch):
    assert lab.main([str(tmp_path / "none"), "--port=8890"]) == 2
    assert one_chinese_line(capsys.readouterr().err).startswith("make lab：")
    monkeypatch.delenv(i18n.ENV)  # `make lab LANGUAGE=zh`: the Chinese edition's language
    assert lab.main([str(tmp_path / "none"), "--language", "zh"]) == 2
    assert one_chinese_line(capsys.readouterr().err).startswith("make lab：")
    assert i18n.language() == "en"  # and the process's language is as it was


def test_the_chinese_editions_copy_speaks_chinese_and_english_is_as_before(tmp_path, capsys,
                                                                          monkeypatch):
    monkeypatch.delenv(i18n.ENV)
    ws = tmp_path / "workspace"
    assert workspace.main(["prepare", str(NOTEBOOKS), str(ws), "--language", "zh"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("你的课程副本（答案写在这里）：")
    assert out.endswith("：make restore CHAPTER=04 LANGUAGE=zh\n")
    assert english_runs(out) == []
    assert workspace.main(["restore", str(NOTEBOOKS), str(ws), "nothing-such",
                           "--language", "zh"]) == 2
    assert one_chinese_line(capsys.readouterr().err).startswith("make restore：没有章节与")
    assert workspace.main(["restore", str(NOTEBOOKS), str(ws), "nothing-such"]) == 2
    assert capsys.readouterr().err.startswith("make restore: no chapter matches 'nothing-such'")
    assert workspace.main(["prepare", str(NOTEBOOKS), str(ws)]) == 0
    assert capsys.readouterr().out.startswith(
        "Your copy of the course, where your answers go: ")
    assert i18n.language() == "en"


def test_chinese_help_lines_break_between_characters_not_inside_words():
    lines = wrap("连接时、以及流的两段数据之间最多等待的秒数，1 到 3600（默认 60）", 54)
    assert all(width_of(line) <= 54 for line in lines)
    assert not any(line.startswith(("，", "）")) or line.endswith("（") for line in lines)
    assert wrap("流的格式：openai-chat, openai-responses", 24) == [
        "流的格式：openai-chat,", "openai-responses"]
    assert wrap("", 10) == [""]
