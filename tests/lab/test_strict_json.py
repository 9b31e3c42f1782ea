"""Every reader of untrusted JSON refuses the same text with the same words: one table of
refusals, read by each reader, each message naming where (its `where`, then the path)."""

import pytest

from keel_checks import progress
from keel_cli._conversation import read_conversation
from keel_course.grading.submission import read_submission
from keel_lab import LabError
from keel_lab._core import strict_json
from keel_lab._core.protocol import parse_arguments
from keel_lab.providers._streams.records import parse_records

pytestmark = pytest.mark.lab_wide

DEEP_PATH = "a" + ".a" * 100  # 101 levels of {"a": ...}: the value 1 is one level too deep

REFUSALS = {
    "not JSON": ('{"a": 1', "not valid JSON: Expecting ',' delimiter: line 1 column 8 (char 7)"),
    "duplicate key": ('{"a": {"b": 1, "b": 2}}', "a: the key 'b' appears twice in one object: "
                      "JSON parsers disagree on which value wins"),
    "NaN": ('{"a": NaN}', "a: NaN is not a JSON number"),
    "Infinity": ('{"a": [-Infinity]}', "a[0]: -Infinity is not a JSON number"),
    "lone surrogate": ('{"a": "\\ud800"}', "a: a string holds a lone surrogate (\\ud800), "
                       "which is not Unicode text"),
    "lone surrogate in a key": ('{"\\udfff": 1}', "a key holds a lone surrogate (\\udfff), "
                                "which is not Unicode text"),
    "nesting": ('{"a": ' * 101 + "1" + "}" * 101,
                f"{DEEP_PATH[:100]}...{DEEP_PATH[-100:]}: nested deeper than 100 levels"),
    "nesting past Python's stack": ("[" * 100_000 + "]" * 100_000,
                                    "nested deeper than 100 levels"),
    "float too large": ('{"a": 1e400}', "a: the number 1e400 is too large to hold"),
    "integer too long": ('{"a": ' + "9" * 5000 + "}", "a: the number 99999999999999999999... "
                         "(5000 characters) is too large to hold"),
    "text too large": ('{"a": "' + "x" * 60 + '"}',
                       "a text of 69 characters is too large (at most 50)"),
}


def _file(tmp_path, text):
    path = tmp_path / "given.json"
    path.write_text(text, encoding="utf-8")
    return path


def _raised(read, *args):
    with pytest.raises(LabError) as err:
        read(*args)
    return str(err.value)


def core(tmp_path, text):
    return "text", _raised(strict_json.read_json, text, "text")


def arguments(tmp_path, text):
    value, error = parse_arguments(text)
    assert value is None
    return "arguments", str(error)


def stream(tmp_path, text):
    return "s.jsonl, line 1", _raised(parse_records, text, "s.jsonl")


def conversation(tmp_path, text):
    path = _file(tmp_path, text)
    return str(path), _raised(read_conversation, path)


def progress_file(tmp_path, text):
    path = _file(tmp_path, text)
    return str(path), _raised(progress.read, path)


def submission(tmp_path, text):
    path = _file(tmp_path, text)
    return str(path), _raised(read_submission, path)


READERS = [core, arguments, stream, conversation, progress_file, submission]


@pytest.mark.parametrize("kind", REFUSALS)
@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__)
def test_each_refusal_has_one_wording_in_every_reader(tmp_path, monkeypatch, reader, kind):
    if kind == "text too large":
        monkeypatch.setattr(strict_json, "MAX_CHARS", 50)
    text, message = REFUSALS[kind]
    where, said = reader(tmp_path, text)
    assert said == f"{where}: {message}"


def test_what_is_strict_json_reads_as_json():
    assert strict_json.read_json('{"a": ["\\ud83d\\ude00", 1.5, -2, null]}', "t") == {
        "a": ["\U0001f600", 1.5, -2, None]}
    assert strict_json.read_json('{"a": ' * 100 + "1" + "}" * 100, "t") is not None
