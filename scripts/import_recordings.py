"""Copy real provider streams, recorded from the live APIs by public test suites, into
data/recordings/, with where each comes from in data/recordings/SOURCES.json.

The generated streams in data/streams/ (scripts/make_streams.py) follow the documented formats;
these are what the providers actually sent. Each body is written byte for byte as its source
holds it: a VCR cassette's SSE text (pydantic-ai), or a fixture's payloads one a line (vercel/ai
records the parsed chunks, so the SSE framing is gone, the payloads are as sent). Nothing is
re-serialized.

Expected calls never come from the lab: for the formats an official SDK accumulates
(openai-chat, openai-responses, anthropic) tests/lab/test_real_recordings.py computes them with
the SDK at test time; for the others they are typed in below from the source test's own
assertion, whose file and line `expected.from` names.

Needs the source repositories as bare clones, `<owner>+<name>/repo` under /work/.mirror or the
folder KEEL_RECORDING_SOURCES names (each read at the commit listed below); the test does not.
`.venv/bin/python scripts/import_recordings.py` rewrites the same files, byte for byte.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "recordings"
# a folder of bare clones named <owner>+<name>/repo (how this machine keeps them); another with
# KEEL_RECORDING_SOURCES=DIR
MIRRORS = Path(os.environ.get("KEEL_RECORDING_SOURCES", "/work/.mirror"))
# an API key's shape (OpenAI, Anthropic, Google, a bearer token) or an auth header's name: a
# stream body never holds one (the request side, where they live, is not copied)
SECRETS = re.compile(r"(?<![\w-])(sk-(ant-|proj-)?[A-Za-z0-9_-]{20,}|AIza[\w-]{30,})"
                     r"|(?i:bearer [\w.~+/-]{16,}|x-api-key|x-goog-api-key|authorization)")


@dataclass(frozen=True)
class Repo:
    name: str
    commit: str
    license: str  # as its LICENSE file at that commit says (checked by hand, and below)
    license_line: str  # a line of that LICENSE file which names the license


PYDANTIC_AI = Repo("pydantic/pydantic-ai", "4fda38988f2939fa6ea9cdefcf120693e10ef491", "MIT",
                   "The MIT License (MIT)")
VERCEL_AI = Repo("vercel/ai", "ed857f50f112e23930b0c2dd8d532cc8bebbc911", "Apache-2.0",
                 'Licensed under the Apache License, Version 2.0 (the "License");')


@dataclass(frozen=True)
class Recording:
    """One stream: where it is in its repository (`interaction`: which of a cassette's
    request/response pairs; `part`: which turn of a fixture that recorded an agent's several
    turns in one file), where it goes, and what it holds. `calls` only for formats
    without an SDK accumulator, typed from the test at `from_line`."""

    file: str  # <vendor>/<short_name>.<ext>, under data/recordings
    repo: Repo
    path: str
    format: str
    turn: str  # what the turn holds, in one line
    interaction: int | None = None
    part: int | None = None
    from_line: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def vendor(self) -> str:
        return self.file.split("/")[0]


def call(name: str, arguments: dict[str, Any], id: str | None = None) -> dict[str, Any]:
    return {"id": id, "name": name, "arguments": arguments}


CASSETTES = "tests/models/cassettes"
VERCEL = "packages"
TOOL_SEARCH = f"{VERCEL}/anthropic/src/__fixtures__/anthropic-tool-search-deferred-bm25.chunks.txt"
WEATHER_SF = {"location": "San Francisco"}

RECORDINGS = [
    # --- OpenAI Chat Completions and compatible APIs ---------------------------------------
    Recording("openai/chat_one_call.sse", PYDANTIC_AI,
              f"{CASSETTES}/test_openai/test_run_stream_sync_streams_real_model.yaml",
              "openai-chat", "one call (get_capital), arguments in several fragments, then "
              "[DONE]", interaction=0),
    Recording("groq/chat_reasoning_then_call.sse", PYDANTIC_AI,
              f"{CASSETTES}/test_groq/test_tool_use_failed_error_streaming.yaml",
              "openai-chat", "gpt-oss reasoning deltas, then one call with its arguments whole "
              "in one chunk; Groq's x_groq usage chunk", interaction=1),
    Recording("groq/chat_one_call.jsonl", VERCEL_AI,
              f"{VERCEL}/groq/src/__fixtures__/groq-tool-call.chunks.txt",
              "openai-chat", "one call whose id, name and arguments `{}` come in a single "
              "chunk"),
    Recording("mistral/chat_call_without_index.jsonl", VERCEL_AI,
              f"{VERCEL}/mistral/src/__fixtures__/mistral-tool-call.chunks.txt",
              "openai-chat", "one whole call in the finishing chunk, with no `index` and no "
              "`type` (Mistral's shape)",
              from_line=f"{VERCEL}/mistral/src/__snapshots__/"
                        "mistral-chat-language-model.test.ts.snap:548",
              calls=[call("weather", WEATHER_SF, "gSIMJiOkT")]),
    Recording("mistral/chat_name_empty_on_continuation.jsonl", VERCEL_AI,
              f"{VERCEL}/mistral/src/__fixtures__/mistral-incremental-tool-call.chunks.txt",
              "openai-chat", "one call whose second chunk repeats `type` and sends `name: \"\"` "
              "beside the whole arguments (a zai-glm model on Mistral's API)",
              from_line=f"{VERCEL}/mistral/src/mistral-chat-language-model.test.ts:947",
              calls=[call("webSearchTool", {"query": "current Berlin weather"},
                          "chatcmpl-tool-9f149c74c42f265b")]),
    Recording("deepseek/chat_reasoning_then_call.jsonl", VERCEL_AI,
              f"{VERCEL}/deepseek/src/chat/__fixtures__/deepseek-tool-call.chunks.txt",
              "openai-chat", "deepseek-reasoner's reasoning_content, then one call streamed in "
              "fragments"),
    Recording("qwen/chat_one_call.jsonl", VERCEL_AI,
              f"{VERCEL}/alibaba/src/__fixtures__/alibaba-tool-call.chunks.txt",
              "openai-chat", "one call (Alibaba Cloud's Qwen API); its continuation chunks "
              "repeat `type` with `id: \"\"`, the last with empty arguments"),
    Recording("xai/chat_one_call.jsonl", VERCEL_AI,
              f"{VERCEL}/xai/src/__fixtures__/xai-tool-call.chunks.txt",
              "openai-chat", "grok's reasoning_content, then one whole call in one chunk"),
    # --- OpenAI Responses and compatible APIs --------------------------------------------
    Recording("openai/responses_one_call.sse", PYDANTIC_AI,
              f"{CASSETTES}/test_openai_responses/test_openai_responses_stream.yaml",
              "openai-responses", "one function_call, arguments in deltas", interaction=0),
    Recording("openai/responses_reasoning_then_call.sse", PYDANTIC_AI,
              f"{CASSETTES}/test_openai_responses/test_openai_responses_streaming_usage.yaml",
              "openai-responses", "a reasoning item, then one function_call (final_result)",
              interaction=0),
    Recording("openai/responses_tool_search_then_call.jsonl", VERCEL_AI,
              f"{VERCEL}/openai/src/responses/__fixtures__/openai-tool-search.1.chunks.txt",
              "openai-responses", "a server tool_search_call and its output, then one "
              "function_call to the tool it found"),
    Recording("openai/responses_web_search.sse", PYDANTIC_AI,
              f"{CASSETTES}/test_openai_responses/"
              "test_openai_responses_model_web_search_tool_stream.yaml",
              "openai-responses", "a server web_search_call (the provider runs it), then text; "
              "no function call", interaction=0),
    Recording("openai/responses_mcp_call.sse", PYDANTIC_AI,
              f"{CASSETTES}/test_openai_responses/"
              "test_openai_responses_model_mcp_server_tool_stream.yaml",
              "openai-responses", "mcp_list_tools, then a server mcp_call with streamed "
              "arguments (the provider runs it); no function call", interaction=0),
    Recording("azure/responses_one_call.jsonl", VERCEL_AI,
              f"{VERCEL}/azure/src/__fixtures__/azure-tool-call.1.chunks.txt",
              "openai-responses", "one function_call from Azure OpenAI (gpt-5.1)"),
    Recording("aws-bedrock/responses_positional_call_id.sse", PYDANTIC_AI,
              f"{CASSETTES}/test_bedrock_mantle/test_reused_tool_call_ids[stream].yaml",
              "openai-responses", "one function_call whose call_id is positional (`call_0`, "
              "reused by later turns); payloads without `event:` lines", interaction=0),
    Recording("deepseek/responses_one_call.sse", PYDANTIC_AI,
              f"{CASSETTES}/test_deepseek_responses/"
              "test_deepseek_responses[function_tool_stream].yaml",
              "openai-responses", "reasoning, then one function_call, from DeepSeek's "
              "Responses API", interaction=0),
    Recording("lmstudio/responses_one_call.jsonl", VERCEL_AI,
              f"{VERCEL}/open-responses/src/responses/__fixtures__/"
              "lmstudio-tool-call.1.chunks.txt",
              "openai-responses", "reasoning deltas, then one function_call, from LM Studio's "
              "Responses endpoint (a local glm-4.7-flash)"),
    # --- Anthropic Messages --------------------------------------------------------------
    Recording("anthropic/tool_no_arguments.jsonl", VERCEL_AI,
              f"{VERCEL}/anthropic/src/__fixtures__/anthropic-tool-no-args.chunks.txt",
              "anthropic", "text, then one tool_use whose only input_json_delta is empty (no "
              "arguments); pings between blocks"),
    Recording("anthropic/call_beside_tool_search.jsonl", VERCEL_AI, TOOL_SEARCH, "anthropic",
              "text, a tool_use, then a server tool_search (server_tool_use) in the same turn; "
              "its result comes in the next turn", part=0),
    Recording("anthropic/tool_search_result_then_call.jsonl", VERCEL_AI, TOOL_SEARCH,
              "anthropic", "the previous turn's tool_search_tool_result first, then text and a "
              "tool_use whose arguments hold newlines", part=1),
    Recording("anthropic/programmatic_tool_call.jsonl", VERCEL_AI,
              f"{VERCEL}/anthropic/src/__fixtures__/"
              "anthropic-programmatic-tool-calling.1.chunks.txt",
              "anthropic", "a server code_execution whose code calls a client tool: a tool_use "
              "with `caller` naming it, input whole in its start; the turn waits for the result",
              part=0),
    Recording("anthropic/web_search_twice.sse", PYDANTIC_AI,
              f"{CASSETTES}/test_anthropic/test_anthropic_model_web_search_tool_stream.yaml",
              "anthropic", "two server web_search calls with their results and cited text; "
              "payloads padded with spaces; no client call", interaction=0),
    Recording("anthropic/code_execution_server_calls.sse", PYDANTIC_AI,
              f"{CASSETTES}/test_anthropic/"
              "test_anthropic_text_editor_code_execution_tool_stream.yaml",
              "anthropic", "three server text_editor_code_execution calls, two of them back "
              "to back before their results; no client call", interaction=0),
    Recording("anthropic/mcp_tool_use.sse", PYDANTIC_AI,
              f"{CASSETTES}/test_anthropic/test_anthropic_mcp_servers_stream.yaml",
              "anthropic", "thinking, then an mcp_tool_use the provider runs and its "
              "mcp_tool_result; no client call", interaction=0),
    # --- Gemini (Google AI) and Vertex AI ------------------------------------------------
    Recording("gemini/one_call.sse", PYDANTIC_AI,
              f"{CASSETTES}/test_google/test_google_model_iter_stream.yaml",
              "gemini", "one whole functionCall in the only event", interaction=0,
              from_line="tests/models/test_google.py:635",
              calls=[call("get_capital", {"country": "France"})]),
    Recording("gemini/call_with_thought_signature.sse", PYDANTIC_AI,
              f"{CASSETTES}/test_google/test_google_streaming_tool_call_thought_signature.yaml",
              "gemini", "one functionCall without args, with a thoughtSignature beside it",
              interaction=0, from_line="tests/models/test_google.py:6060",
              calls=[call("get_country", {})]),
    Recording("vertex/partial_args_parallel.jsonl", VERCEL_AI,
              f"{VERCEL}/google/src/__fixtures__/google-stream-tool-call-arguments.chunks.txt",
              "gemini", "two parallel calls whose arguments stream as partialArgs "
              "(willContinue), each closed by an empty functionCall",
              from_line=f"{VERCEL}/google/src/__snapshots__/"
                        "google-language-model.test.ts.snap:894",
              calls=[call("getWeather", {"location": "Boston"}),
                     call("getWeather", WEATHER_SF)]),
    Recording("vertex/partial_args_nested.jsonl", VERCEL_AI,
              f"{VERCEL}/google/src/__fixtures__/"
              "google-vertex-stream-tool-call-arguments-nested.1.chunks.txt",
              "gemini", "one call whose nested object and arrays stream as partialArgs by JSON "
              "path",
              from_line=f"{VERCEL}/google/src/__snapshots__/"
                        "google-language-model.test.ts.snap:1282",
              calls=[call("cookRecipe", {"recipe": {
                  "ingredients": [
                      {"amount": "16 oz", "name": "Lasagna noodles"},
                      {"amount": "1 lb", "name": "Ground beef"},
                      {"amount": "15 oz", "name": "Ricotta cheese"},
                      {"amount": "3 cups", "name": "Mozzarella cheese"},
                      {"amount": "1/2 cup", "name": "Parmesan cheese"},
                      {"amount": "24 oz", "name": "Tomato sauce"},
                      {"amount": "1", "name": "Egg"},
                      {"amount": "2 cloves", "name": "Garlic"},
                      {"amount": "1 tsp", "name": "Salt"},
                      {"amount": "1/2 tsp", "name": "Pepper"}],
                  "name": "Lasagna",
                  "steps": [
                      "Preheat oven to 375°F (190°C).",
                      "Cook lasagna noodles according to package directions, drain and set "
                      "aside.",
                      "Brown ground beef with minced garlic in a skillet. Drain fat and stir in "
                      "tomato sauce. Simmer for 10 minutes.",
                      "In a bowl, mix ricotta cheese, egg, salt, pepper, and Parmesan cheese.",
                      "In a 9x13 baking dish, spread a thin layer of meat sauce.",
                      "Layer noodles, ricotta mixture, mozzarella, and meat sauce. Repeat.",
                      "Top with remaining mozzarella cheese.",
                      "Cover with foil and bake for 25 minutes.",
                      "Remove foil and bake for another 25 minutes until golden.",
                      "Let stand for 15 minutes before serving."]}})]),
    Recording("vertex/no_arguments_then_partial_args.jsonl", VERCEL_AI,
              f"{VERCEL}/google/src/__fixtures__/google-stream-no-args-tool-call.chunks.txt",
              "gemini", "a call without arguments (whole, with the thoughtSignature), then three "
              "parallel calls whose arguments stream as partialArgs",
              from_line=f"{VERCEL}/google/src/google-language-model.test.ts:5147",
              calls=[call("read_theme", {}), call("read_screen", {"id": "A"}),
                     call("read_screen", {"id": "B"}), call("read_screen", {"id": "C"})]),
    Recording("vertex/partial_args_last_without_will_continue.jsonl", VERCEL_AI,
              f"{VERCEL}/google/src/__fixtures__/"
              "google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt",
              "gemini", "one call whose array arguments stream as partialArgs; the last "
              "partialArgs chunk omits willContinue and no empty functionCall closes it",
              from_line=f"{VERCEL}/google/src/google-language-model.test.ts:5081",
              calls=[call("writeItems", {"operations": [
                  {"action": "add", "description": "Fresh red apple", "itemid": "apple_001",
                   "price": 0.5},
                  {"action": "add", "description": "Ripe yellow banana",
                   "itemid": "banana_001", "price": 0.3}]})]),
]

SDK_ACCUMULATORS = {
    "openai-chat": "openai SDK: openai.lib.streaming.chat.ChatCompletionStreamState",
    "openai-responses": "openai SDK: openai.lib.streaming.responses.ResponseStreamState",
    "anthropic": "anthropic SDK: anthropic.lib.streaming._messages.accumulate_event",
}


def git_show(repo: Repo, path: str) -> bytes:
    git = MIRRORS / f"{repo.name.replace('/', '+')}" / "repo"
    try:
        return subprocess.run(["git", "-C", str(git), "show", f"{repo.commit}:{path}"],
                              check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        sys.exit(f"import_recordings: cannot read {repo.name}@{repo.commit[:12]}:{path} from "
                 f"{git} (fetch the repository first): {exc}")


def body(rec: Recording) -> bytes:
    """The stream as the source holds it: a cassette's response body, or the fixture file."""
    raw = git_show(rec.repo, rec.path)
    if rec.interaction is None:
        return raw if rec.part is None else one_turn(raw, rec.part)
    import yaml  # only the maintainer's refresh reads cassettes

    response = yaml.safe_load(raw)["interactions"][rec.interaction]["response"]
    content = response["body"]["string"]
    if not isinstance(content, str):
        sys.exit(f"import_recordings: {rec.path}: body is {type(content).__name__}, not text")
    return content.encode("utf-8")


TURN_START = re.compile(rb'"type": ?"(message_start|response\\.created)"')


def one_turn(raw: bytes, part: int) -> bytes:
    """The lines of the `part`-th turn (from 0) of payloads recorded one turn after another:
    from its opening payload up to the next one's, byte for byte."""
    lines = raw.splitlines(keepends=True)
    starts = [n for n, line in enumerate(lines) if TURN_START.search(line)] + [len(lines)]
    return b"".join(lines[starts[part]:starts[part + 1]])


def payloads(data: bytes) -> list[dict[str, Any]]:
    """The JSON payloads of an SSE text or JSON lines (for the model name, never written)."""
    text = data.decode("utf-8")
    lines = [line.removeprefix("data:").strip() for line in text.splitlines()]
    return [json.loads(line) for line in lines if line.startswith("{")]


def model_of(records: list[dict[str, Any]]) -> str:
    """The model the provider says answered: the first payload that names one."""
    for r in records:
        for holder in (r, r.get("message") or {}, r.get("response") or {}):
            for key in ("model", "modelVersion"):
                if isinstance(holder.get(key), str) and holder[key]:
                    return str(holder[key])
    raise SystemExit("import_recordings: no model named in the stream")


PROVIDER_BLOCKS = ("server_tool_use", "mcp_tool_use")  # Anthropic runs these itself


def provider_calls(data: bytes, fmt: str) -> list[dict[str, Any]]:
    """The calls the provider runs itself, as each one's opening payload names it: Anthropic's
    server and MCP tool blocks, the Responses API's built-in tool items (every `*_call` item
    but `function_call`). A client must never run them; no SDK lists them apart."""
    found = []
    for r in payloads(data):
        block, item = r.get("content_block") or {}, r.get("item") or {}
        if (fmt == "anthropic" and r.get("type") == "content_block_start"
                and block.get("type") in PROVIDER_BLOCKS):
            found.append({"id": block["id"], "name": block["name"], "type": block["type"]})
        if (fmt == "openai-responses" and r.get("type") == "response.output_item.added"
                and str(item.get("type")).endswith("_call") and item["type"] != "function_call"):
            found.append({"id": item["id"], "name": item.get("name"), "type": item["type"]})
    return found


def license_checked(repo: Repo) -> str:
    text = git_show(repo, "LICENSE").decode("utf-8")
    if repo.license_line not in text:
        sys.exit(f"import_recordings: {repo.name}'s LICENSE no longer says {repo.license_line!r}")
    return repo.license


def entry(rec: Recording, data: bytes) -> dict[str, Any]:
    expected: dict[str, Any]
    if rec.from_line is None:
        expected = {"from": SDK_ACCUMULATORS[rec.format] + " (computed at test time)"}
    else:
        expected = {"from": f"{rec.repo.name}@{rec.repo.commit[:12]}:{rec.from_line}",
                    "calls": rec.calls}
    expected["provider_calls"] = provider_calls(data, rec.format)
    return {"file": rec.file, "repository": rec.repo.name, "path": rec.path,
            **({"interaction": rec.interaction} if rec.interaction is not None else {}),
            **({"turn_of_several": rec.part} if rec.part is not None else {}),
            "commit": rec.repo.commit, "license": license_checked(rec.repo),
            "vendor": rec.vendor, "model": model_of(payloads(data)), "format": rec.format,
            "bytes": len(data), "turn": rec.turn, "expected": expected}


def readme(entries: list[dict[str, Any]]) -> str:
    rows = [f"| `{e['file']}` | {e['vendor']} | {e['model']} | {e['format']} | "
            f"[{e['repository']}](https://github.com/{e['repository']}/blob/{e['commit']}/"
            f"{e['path']}) | {e['license']} |" for e in entries]
    return "\n".join([
        "# Real recordings",
        "",
        "Streams the providers sent to public test suites, copied byte for byte by",
        "`scripts/import_recordings.py` (which also writes this table); `SOURCES.json` holds each",
        "one's source commit, what the turn holds, and where its expected calls come from. The",
        "streams in `data/streams/` are generated; these are not. A `.sse` file is a VCR",
        "cassette's response body (pydantic-ai); a `.jsonl` file is a vercel/ai fixture, the",
        "payloads one a line as its recorder kept them (the SSE framing gone), or one turn of",
        "such a fixture that recorded several (`turn_of_several`).",
        "",
        "| file | vendor | model | format | source | license |",
        "|---|---|---|---|---|---|",
        *rows, ""])


def main() -> None:
    entries = []
    for rec in RECORDINGS:
        data = body(rec)
        if SECRETS.search(data.decode("utf-8")):
            sys.exit(f"import_recordings: {rec.path}: something like a credential in the body")
        target = OUT / rec.file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        entries.append(entry(rec, data))
    (OUT / "SOURCES.json").write_text(json.dumps(entries, indent=1, ensure_ascii=False) + "\n",
                                      encoding="utf-8")
    (OUT / "README.md").write_text(readme(entries), encoding="utf-8")
    print(f"wrote {len(entries)} recordings under {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
