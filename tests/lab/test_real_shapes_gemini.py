"""Gemini and Vertex AI shapes from real recordings: streamed arguments (`partialArgs`), the
JSON-array stream (no `alt=sse`), provider ids, and parts that are neither text nor a call.

The payloads below are typed out in the shapes of public recordings, cut to what the reader
reads (long thought signatures shortened, usage metadata dropped where it says nothing):
- Vertex AI, `streamFunctionCallArguments`: vercel/ai, packages/google/src/__fixtures__/ at
  commit ed857f50f112e23930b0c2dd8d532cc8bebbc911 (Apache-2.0): google-stream-tool-call-
  arguments.chunks.txt, google-stream-no-args-tool-call.chunks.txt, google-stream-tool-call-
  array-arguments-missing-terminal-function-call.chunks.txt, google-vertex-stream-tool-call-
  arguments-nested.1.chunks.txt (gemini-3-flash-preview, gemini-3.1-pro-preview);
- Gemini API, parts of server tools: pydantic/pydantic-ai, tests/models/cassettes/test_google/
  at commit 4fda38988f2939fa6ea9cdefcf120693e10ef491 (MIT): test_google_model_file_search_tool_
  stream.yaml (`executableCode`), test_google_model_file_search_grounding_gemini_3[True].yaml
  (`toolCall` / `toolResponse` with a signature);
- the field names and types: googleapis/python-genai, google/genai/types.py (`FunctionCall`,
  `PartialArg`) at commit 66807187f2123c6676175ac991f4e34eb09200d1.
"""

from __future__ import annotations

import json
import re
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keel_cli._command import main
from keel_lab import LabError
from keel_lab.providers._diagnosis import Diagnosis, diagnose, diagnose_file
from keel_lab.providers._streams.records import iter_records, parse_records

pytestmark = pytest.mark.ch7

REAL = Path(__file__).resolve().parents[2] / "data" / "recordings"


class PartialArg(TypedDict, total=False):
    jsonPath: str
    stringValue: str
    numberValue: float
    boolValue: bool
    nullValue: Literal["NULL_VALUE"] | None
    willContinue: bool


class FunctionCall(TypedDict, total=False):
    id: str
    name: str
    args: dict[str, Any]
    partialArgs: list[PartialArg]
    willContinue: bool


class Part(TypedDict, total=False):
    text: str
    thought: bool
    thoughtSignature: str
    functionCall: FunctionCall
    executableCode: dict[str, str]
    toolCall: dict[str, str]
    toolResponse: dict[str, str]


class Content(TypedDict):
    role: str
    parts: list[Part]


class Candidate(TypedDict):
    content: Content
    finishReason: NotRequired[str]


class Response(TypedDict):
    candidates: list[Candidate]
    modelVersion: NotRequired[str]


def event(*parts: Part, finish: str | None = None) -> Response:
    cand: Candidate = {"content": {"role": "model", "parts": list(parts)}}
    if finish:
        cand["finishReason"] = finish
    return {"candidates": [cand], "modelVersion": "gemini-3.1-pro-preview"}


def piece(path: str, **value: Any) -> PartialArg:
    return {"jsonPath": path, **value}  # type: ignore[typeddict-item]


def start(name: str, signature: str | None = None) -> Part:
    part: Part = {"functionCall": {"name": name, "willContinue": True}}
    if signature:
        part["thoughtSignature"] = signature
    return part


def values(*pieces: PartialArg, more: bool = True) -> Part:
    fn: FunctionCall = {"partialArgs": list(pieces)}
    if more:
        fn["willContinue"] = True
    return {"functionCall": fn}


END: Part = {"functionCall": {}}  # the empty part that ends a streamed call
GOING_ON: Part = {"functionCall": {"willContinue": True}}  # a part with nothing but "more"


def string(path: str, text: str) -> list[Part]:
    """A string as Vertex sends it: the text with willContinue, then an empty closing piece."""
    return [values(piece(path, stringValue=text, willContinue=True)),
            values(piece(path, stringValue=""))]


def calls(d: Diagnosis) -> list[tuple[str | None, str, Any, bool]]:
    return [(c.id, c.name, c.input, c.executable) for c in d.calls]


def quirks(d: Diagnosis) -> list[tuple[int | None, str, str]]:
    return [(x.index, x.quirk, x.action) for x in d.diagnostics]


def run(*responses: Response) -> Diagnosis:
    return diagnose(list(responses), "gemini")  # type: ignore[arg-type]


# google-stream-tool-call-arguments.chunks.txt: two parallel getWeather calls, each streamed
TWO_STREAMED = [
    event(start("getWeather", "CiMBjz1rX25K")), *map(event, string("$.location", "Boston")),
    event(END),
    event(start("getWeather")), *map(event, string("$.location", "San Francisco")),
    event(END, finish="STOP")]


def test_streamed_arguments_make_every_call_the_provider_meant():
    d = run(*TWO_STREAMED)
    assert d.ok and d.finish_reason == "stop"
    assert calls(d) == [("gemini-call-0", "getWeather", {"location": "Boston"}, True),
                        ("gemini-call-1", "getWeather", {"location": "San Francisco"}, True)]
    assert [(i, a) for i, q, a in quirks(d) if q == "partial_args"] == [(0, "tolerated"),
                                                                         (1, "tolerated")]
    assert (0, "thought_signature", "tolerated") in quirks(d)


def test_a_call_without_arguments_in_one_part_then_streamed_calls():
    """google-stream-no-args-tool-call.chunks.txt: `{"name": "read_theme"}` alone (no args,
    no willContinue) is a whole call without arguments; three streamed read_screen follow."""
    d = run(event({"text": "**Processing User Requests**", "thought": True}),
            event({"functionCall": {"name": "read_theme"}, "thoughtSignature": "AY89a18a"}),
            *[e for screen in "ABC" for e in
              (event(start("read_screen")), *map(event, string("$.id", screen)), event(END))],
            event({"text": ""}, finish="STOP"))
    assert d.ok and d.text == ""
    assert [(c.name, c.input) for c in d.calls] == [
        ("read_theme", {}), ("read_screen", {"id": "A"}), ("read_screen", {"id": "B"}),
        ("read_screen", {"id": "C"})]


def test_list_paths_and_a_call_ended_by_its_last_values():
    """google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt: the
    last part has values and no willContinue, and no empty part follows: the call ends there."""
    parts = [start("writeItems", "AY89a19Z")]
    for i, (what, item, price) in enumerate([("Fresh red apple", "apple_001", 0.5),
                                              ("Ripe yellow banana", "banana_001", 0.3)]):
        parts += [*string(f"$.operations[{i}].action", "add"),
                  *string(f"$.operations[{i}].description", what),
                  *string(f"$.operations[{i}].itemid", item),
                  values(piece(f"$.operations[{i}].price", numberValue=price), more=i == 0)]
    d = run(*map(event, parts), event({"text": ""}, finish="STOP"))
    assert d.ok
    assert calls(d) == [("gemini-call-0", "writeItems", {"operations": [
        {"action": "add", "description": "Fresh red apple", "itemid": "apple_001",
         "price": 0.5},
        {"action": "add", "description": "Ripe yellow banana", "itemid": "banana_001",
         "price": 0.3}]}, True)]
    assert "8 values" in next(x.message for x in d.diagnostics if x.quirk == "partial_args")


def test_nested_paths_strings_in_pieces_and_parts_with_nothing_but_more():
    """google-vertex-stream-tool-call-arguments-nested.1.chunks.txt: objects in a list in an
    object, `{"willContinue": true}` parts between list items, a step's text in two pieces."""
    d = run(event(start("cookRecipe")),
            *map(event, string("$.recipe.ingredients[0].amount", "16 oz")),
            *map(event, string("$.recipe.ingredients[0].name", "Lasagna noodles")),
            event(GOING_ON),
            *map(event, string("$.recipe.ingredients[1].amount", "1 lb")),
            *map(event, string("$.recipe.name", "Lasagna")),
            event(values(piece("$.recipe.steps[0]", stringValue="In a 9x13 baking dish, "
                               "spread a", willContinue=True))),
            event(values(piece("$.recipe.steps[0]", stringValue=" thin layer of meat sauce.",
                               willContinue=True))),
            event(values(piece("$.recipe.steps[0]", stringValue=""))),
            event(END, finish="STOP"))
    assert d.ok
    assert d.calls[0].input == {"recipe": {
        "ingredients": [{"amount": "16 oz", "name": "Lasagna noodles"}, {"amount": "1 lb"}],
        "name": "Lasagna", "steps": ["In a 9x13 baking dish, spread a thin layer of meat sauce."]}}


def test_every_value_kind_and_quoted_names():
    d = run(event(start("f")),
            event(values(piece("$.n", numberValue=3), piece("$.b", boolValue=False),
                         piece("$.z", nullValue="NULL_VALUE"), piece("$['a b']", stringValue="x"),
                         piece('$["q\\"t"][0]', nullValue=None), more=False)),
            event(finish="STOP"))
    assert d.ok and d.calls[0].input == {"n": 3, "b": False, "z": None, "a b": "x", 'q"t': [None]}


@pytest.mark.parametrize(("parts", "quirk", "said"), [
    ([start("f"), values(piece("$.a", numberValue=1))], "partial_args_unfinished",
     "the stream ended"),
    ([start("f"), start("g"), END], "partial_args_unfinished", "another call started"),
    ([start("f"), {"functionCall": {"name": "g", "args": {}}}], "partial_args_unfinished",
     "a whole call came"),
    ([start("f"), values(piece("$.s", stringValue="cut", willContinue=True), more=False)],
     "partial_args_unfinished", "said to go on"),
    ([start("f"), values(piece("$.a", numberValue=1), piece("$.a", numberValue=2)), END],
     "partial_args_conflict", "set twice"),
    ([start("f"), values(piece("$.a[1]", numberValue=1)), END], "partial_args_conflict",
     "past the end"),
    ([start("f"), values(piece("$.a", numberValue=1), piece("$.a.b", numberValue=1)), END],
     "partial_args_conflict", "not an object"),
    ([start("f"), values(piece("$.a[0]", numberValue=1), piece("$.a.b", numberValue=1)), END],
     "partial_args_conflict", "not an object"),
    ([start("f"), values(piece("$[0]", numberValue=1)), END], "partial_args_conflict",
     "step 0 into an object"),
    ([start("f"), values(piece("$..a", numberValue=1)), END], "partial_args_conflict",
     "no path to one value"),
    ([start("f"), values(piece("$.a", numberValue=1, boolValue=True)), END],
     "partial_args_conflict", "numberValue and boolValue"),
    ([start("f"), values(piece("$.a")), END], "partial_args_conflict", "no value"),
    ([start("f"), values(piece("$.s", stringValue="x", willContinue=True),
                         piece("$.t", stringValue="y")), END], "partial_args_conflict",
     "said to go on"),
    ([start("f"), {"functionCall": {"args": {"a": 1}, "willContinue": True}}, END],
     "partial_args_conflict", "both args and partialArgs"),
])
def test_a_streamed_call_that_cannot_be_known_is_refused_alone(parts, quirk, said):
    d = run(event({"functionCall": {"name": "ok", "args": {"x": 1}}}), *map(event, parts),
            event(finish="STOP"))
    assert calls(d)[0] == ("gemini-call-0", "ok", {"x": 1}, True)  # its sibling still runs
    refused = [x for x in d.diagnostics if x.quirk == quirk]
    assert refused and refused[0].action == "refused" and said in refused[0].message
    assert not d.calls[refused[0].index].executable
    assert "stray_call_end" not in [q for _, q, _ in quirks(d)]


@pytest.mark.parametrize(("second", "runs"), [
    (start("g"), False),  # its values might be f's, the name repeated
    ({"functionCall": {"name": "g"}}, False),  # might be f's last part, the name repeated
    ({"functionCall": {"name": "g", "args": {"b": 2}}}, True),  # whole: nothing of f's
])
def test_a_call_that_begins_while_another_streams_runs_only_when_whole(second, runs):
    d = run(event(start("f")), event(values(piece("$.a", numberValue=1))), event(second),
            event(finish="STOP"))
    assert [c.executable for c in d.calls][:2] == [False, runs]
    assert (0, "partial_args_unfinished", "refused") in quirks(d)
    assert ((1, "partial_args_conflict", "refused") in quirks(d)) is not runs


def test_values_with_no_call_open_refuse_the_turn():
    d = run(event({"functionCall": {"name": "f", "args": {}}}),
            event(values(piece("$.a", numberValue=1), more=False)), event(finish="STOP"))
    assert not any(c.executable for c in d.calls)
    assert (1, "partial_args_without_call", "refused") in quirks(d)


def test_an_empty_function_call_with_nothing_open_is_reported_and_skipped():
    d = run(event(start("f")), event(values(piece("$.a", numberValue=1), more=False)),
            event(END, finish="STOP"))
    assert d.ok and len(d.calls) == 1
    assert (None, "stray_call_end", "reported") in quirks(d)


def test_the_end_of_a_streamed_call_after_the_finish_is_too_late():
    d = run(event(start("f")), event(values(piece("$.a", numberValue=1)), finish="STOP"),
            event(END))
    assert not d.calls[0].executable
    assert (0, "after_finish", "refused") in quirks(d)


@pytest.mark.parametrize(("value", "field", "expected"), [
    (piece("$.a", numberValue="1"), "partialArgs[0].numberValue", "a number"),
    (piece("$.a", nullValue=0), "partialArgs[0].nullValue", "null or 'NULL_VALUE'"),
    (piece("$.a", stringValue=1), "partialArgs[0].stringValue", "a string"),
    ({"jsonPath": 1, "numberValue": 1}, "partialArgs[0].jsonPath", "a string"),
])
def test_a_value_of_the_wrong_type_names_its_field(value, field, expected):
    name = f"candidates[0].content.parts[0].functionCall.{field}"
    with pytest.raises(LabError, match=re.escape(f"field {name!r} must be {expected}")):
        run(event(values(value)), event(finish="STOP"))


def test_the_provider_id_is_the_call_id_and_one_is_made_only_when_absent():
    """Gemini documents `FunctionCall.id` as optional: used when sent, whole or streamed."""
    streamed: Part = {"functionCall": {"name": "g", "id": "fc-2", "willContinue": True}}
    d = run(event({"functionCall": {"name": "f", "id": "fc-1", "args": {}}}), event(streamed),
            event(values(piece("$.a", numberValue=1), more=False)),
            event({"functionCall": {"name": "h", "args": {}}}, finish="STOP"))
    assert [c.id for c in d.calls] == ["fc-1", "fc-2", "gemini-call-2"]
    assert [i for i, q, _ in quirks(d) if q == "id_assigned"] == [2]


def test_a_continuation_naming_another_id_refuses_its_call():
    d = run(event({"functionCall": {"name": "g", "id": "fc-2", "willContinue": True}}),
            event({"functionCall": {"id": "fc-9", "partialArgs": [piece("$.a", numberValue=1)]}}),
            event(finish="STOP"))
    assert (0, "partial_args_conflict", "refused") in quirks(d)


# test_google_model_file_search_tool_stream.yaml and ..._gemini_3[True].yaml (pydantic-ai)
OTHER_PARTS: list[Part] = [
    {"executableCode": {"language": "PYTHON",
                        "code": 'print(file_search.query(query="Capital of France"))\n'}},
    {"thoughtSignature": "EpYSCpMSCAIS", "toolCall": {"toolType": "FILE_SEARCH",
                                                       "id": "tju3qkc9"}},
    {"thoughtSignature": "EtoGCtcGCAIS", "toolResponse": {"toolType": "FILE_SEARCH",
                                                           "id": "tju3qkc9"}},
]


def test_parts_of_server_tools_are_reported_once_and_skipped():
    d = run(*map(event, OTHER_PARTS), event({"text": "The capital of France is **Paris**."}),
            event({"text": "", "thoughtSignature": "EsUBCsIB"}, finish="STOP"))
    assert d.ok and d.calls == [] and d.text == "The capital of France is **Paris**."
    assert quirks(d) == [(None, "other_part", "reported")]
    assert "'executableCode'" in d.diagnostics[0].message


def array(responses: list[Any], indent: int | None = None, comma: str = "\n,\r\n") -> str:
    """The stream as Gemini sends it without `alt=sse`: one JSON array of the responses."""
    return "[" + comma.join(json.dumps(r, indent=indent) for r in responses) + "]"


def sse(responses: list[Any]) -> str:
    return "".join(f"data: {json.dumps(r)}\r\n\r\n" for r in responses)


def test_a_json_array_stream_is_read_as_its_sse_twin(tmp_path):
    for name, text in [("stream.sse", sse(TWO_STREAMED)),
                       ("stream.json", array(TWO_STREAMED)),
                       ("pretty.json", array(TWO_STREAMED, indent=2, comma=",\n"))]:
        (tmp_path / name).write_text(text)
    sse_calls = calls(diagnose_file(tmp_path / "stream.sse"))
    assert calls(diagnose_file(tmp_path / "stream.json")) == sse_calls
    assert calls(diagnose_file(tmp_path / "pretty.json")) == sse_calls
    assert main(["assemble", str(tmp_path / "pretty.json")]) == 0


@pytest.mark.parametrize(("cut", "where"), [(-1, "before its closing ]"),
                                            (-40, "inside an element")])
def test_a_cut_off_array_runs_nothing_and_says_so_in_one_line(tmp_path, capsys, cut, where):
    path = tmp_path / "cut.json"
    path.write_text(array(TWO_STREAMED, indent=2)[:cut])
    assert main(["assemble", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"stops {where}" in err and "truncated stream" in err


def test_array_payloads_are_named_by_the_line_each_starts_on():
    first = json.dumps(event({"text": "a"}), indent=2)
    text = array([event({"text": "a"}), event({"text": "b"}, finish="STOP")], indent=2)
    second = first.count("\n") + 3  # below the first element's last line and the ",\r\n"
    assert [where for where, _ in iter_records(text, "s")] == ["s, line 1", f"s, line {second}"]


RESPONSES = st.lists(st.sampled_from([
    event({"text": "hello"}), event({"text": "thinking", "thought": True}),
    event({"functionCall": {"name": "f", "args": {"a": 1}}}),
    event({"functionCall": {"name": "g", "id": "x1", "args": {"s": "é\u2028"}}}),
    event(start("s")), event(values(piece("$.k", stringValue="v", willContinue=True))),
    event(values(piece("$.k", stringValue=""))), event(values(piece("$.n", numberValue=2),
                                                              more=False)),
    event(GOING_ON), event(END), event(finish="STOP"), event(finish="SAFETY"),
    {"usageMetadata": {"promptTokenCount": 3}}]), max_size=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(RESPONSES, st.sampled_from([None, 1, 2]), st.sampled_from(["\n,\r\n", ",", ",\n  "]))
def test_the_array_reader_and_the_sse_reader_give_the_same_calls(responses, indent, comma):
    if not responses:
        return
    by_sse = diagnose(parse_records(sse(responses)), "gemini")
    by_array = diagnose(parse_records(array(responses, indent, comma)), "gemini")
    assert calls(by_array) == calls(by_sse) and quirks(by_array) == quirks(by_sse)


JSON = st.recursive(st.none() | st.booleans() | st.integers(-9, 9) | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)
UNKNOWN = st.from_regex(r"x[A-Za-z]{0,10}", fullmatch=True)  # no field any reader reads


@settings(max_examples=150, deadline=None)
@given(RESPONSES, st.integers(0, 12), UNKNOWN, JSON, UNKNOWN, JSON)
def test_an_unknown_part_or_field_never_changes_the_calls(responses, at, kind, data, key, extra):
    responses = [*responses, event(finish="STOP")]
    before = calls(run(*responses))
    strange = event({kind: data})  # type: ignore[misc]
    with_part = [*responses[:at], strange, *responses[at:]]
    with_field = [{**r, key: extra} for r in responses]
    assert calls(run(*with_part)) == before
    assert calls(run(*with_field)) == before


# no lone surrogate, no U+FFFD: in a call's arguments the lab refuses both (its policy)
TEXT = st.characters(blacklist_categories=("Cs",), blacklist_characters="\ufffd")
LEAF = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(
    allow_nan=False, allow_infinity=False, width=32) | st.text(TEXT, max_size=8)
NESTED = st.recursive(LEAF, lambda inner: st.lists(inner, min_size=1, max_size=3)
                      | st.dictionaries(st.text(TEXT, max_size=4), inner, min_size=1,
                                        max_size=3), max_leaves=10)


def step(key: str | int, quote: str) -> str:
    """A path step as Vertex might write it: `.name`, `[n]`, `['name']` or `["name"]`."""
    if isinstance(key, int):
        return f"[{key}]"
    if key.isascii() and key.isidentifier():
        return f".{key}"
    body = json.dumps(key)[1:-1]
    return f"['{body.replace(chr(92) + chr(34), chr(34)).replace(chr(39), chr(92) + chr(39))}']" \
        if quote == "'" else f'["{body}"]'


def leaves(value: Any, path: str, quote: str) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in leaves(v, path + step(k, quote), quote)]
    if isinstance(value, list):
        return [x for i, v in enumerate(value) for x in leaves(v, path + step(i, quote), quote)]
    return [(path, value)]


def pieces_of(path: str, value: Any, cuts: list[int]) -> list[PartialArg]:
    """One leaf as pieces: a string cut where `cuts` say, then the empty closing piece."""
    if isinstance(value, str):
        bounds = sorted({0, len(value), *(c % (len(value) + 1) for c in cuts)})
        return [*(piece(path, stringValue=value[a:b], willContinue=True)
                  for a, b in pairwise(bounds)),
                piece(path, stringValue="")]
    kind = ("nullValue" if value is None else "boolValue" if isinstance(value, bool)
            else "numberValue")
    return [piece(path, **{kind: "NULL_VALUE" if value is None else value})]


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(TEXT, max_size=6), NESTED, min_size=1, max_size=4),
       st.sampled_from(["'", '"']), st.lists(st.integers(0, 8), max_size=3),
       st.integers(1, 4))
def test_any_object_streamed_as_values_at_paths_is_read_back_whole(args, quote, cuts, per):
    sent = [p for path, v in leaves(args, "$", quote) for p in pieces_of(path, v, cuts)]
    parts = [values(*sent[i:i + per]) for i in range(0, len(sent), per)]
    d = run(event(start("f")), *map(event, parts), event(END, finish="STOP"))
    assert d.ok and d.calls[0].input == json.loads(json.dumps(args))


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([2, None]))
def test_an_array_cut_anywhere_is_read_whole_or_refused_in_one_line(at, indent):
    text = array(TWO_STREAMED, indent=indent)
    cut = text[: 1 + at % len(text)]  # from "[" alone to the whole array
    try:
        d = diagnose(parse_records(cut), "gemini")
    except LabError as exc:
        assert "\n" not in str(exc)
        return
    assert cut == text and d.ok  # only the whole array is read


def _real_gemini_files() -> list[Path]:
    """The Gemini-format recordings listed in data/recordings/SOURCES.json (none before the
    import has run)."""
    sources = REAL / "SOURCES.json"
    listed = json.loads(sources.read_text()) if sources.exists() else []
    return sorted(REAL / s["file"] for s in listed if s["format"] == "gemini")


@pytest.mark.parametrize("path", _real_gemini_files(), ids=lambda p: p.name)
def test_real_gemini_recordings_read_alike_as_sse_and_as_an_array(path):
    """Every real Gemini or Vertex recording (scripts/import_recordings.py; its expected calls
    are test_real_recordings.py's) runs whole, and the same payloads sent as one JSON array give
    the same calls."""
    d = diagnose_file(path)
    assert d.ok
    records = parse_records(path.read_text(encoding="utf-8"), str(path))
    assert calls(diagnose(parse_records(array(records)), "gemini")) == calls(d)
