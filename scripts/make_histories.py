"""Write the sample conversations under data/histories/ for `keel-lab validate`, and their README.

One turn of the lab's offline runner (two lookups answered, then the model's answer) is written in
each provider's history format by the lab's own converters, whole and broken in the three ways
chapter 1 and chapter 7 teach: a call without its result, a result in the wrong place (before
its call), a call answered twice. Generated, not hand-typed, so each file is what
the lab itself would send and can be rebuilt: `.venv/bin/python scripts/make_histories.py`
(tests/lab/test_histories.py checks the files are this script's output and their verdicts).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from keel_cli._conversation import BODY_KEYS, validate_conversation
from keel_lab import OfflineAdapter, Runner
from keel_lab._core.messages import Message
from keel_lab.course._scenarios import COMPARE
from keel_lab.providers._anthropic_messages import to_anthropic
from keel_lab.providers._gemini_messages import to_gemini
from keel_lab.providers._openai_messages import to_openai
from keel_lab.providers._responses_messages import to_responses

OUT = Path(__file__).resolve().parent.parent / "data" / "histories"

# format -> the request body (or list) the lab's converter writes
FORMATS: dict[str, Callable[[Sequence[Message]], Any]] = {
    "openai-chat": lambda m: {"messages": to_openai(m)},
    "anthropic": to_anthropic,
    "gemini": to_gemini,
    "openai-responses": lambda m: {"input": to_responses(m)},
}


def _turn() -> list[Message]:
    """user, assistant with two calls, their two results, the assistant's answer."""
    return list(Runner(OfflineAdapter(seed=0)).run(COMPARE).messages)


# name -> (what is wrong, the history changed so)
CASES: dict[str, tuple[str, Callable[[list[Message]], list[Message]]]] = {
    "valid": ("nothing: every call answered once, right after it", lambda m: m),
    "missing_result": ("the second call has no result", lambda m: [*m[:3], *m[4:]]),
    "result_before_call": ("the second result comes before the calls it answers",
                           lambda m: [m[0], m[3], m[1], m[2], m[4]]),
    "duplicate_result": ("the first call is answered twice", lambda m: [*m[:3], m[2], *m[3:]]),
}


def files() -> dict[str, str]:
    """Every file's path below data/histories/ and its text, the README last."""
    turn = _turn()
    bodies = {f"{fmt}/{case}.json": write(change(turn))
              for fmt, write in FORMATS.items() for case, (_why, change) in CASES.items()}
    out = {name: json.dumps(body, indent=1, ensure_ascii=False) + "\n"
           for name, body in bodies.items()}
    out["README.md"] = readme(bodies)
    return out


def readme(bodies: dict[str, Any]) -> str:
    """The table of the files, each with the verdict `keel-lab validate` gives it."""
    rows = []
    for name, body in bodies.items():
        messages = next(body[k] for k in BODY_KEYS if k in body)
        problems = validate_conversation(messages, "auto")
        said = problems[0].message.replace("|", "\\|") if problems else "-"
        rows.append(f"| `{name}` | {CASES[Path(name).stem][0]} | {1 if problems else 0} | "
                    f"{said} |")
    return "\n".join([
        "# Sample conversations for `keel-lab validate`", "",
        "Written by `scripts/make_histories.py` (which also writes this table): one turn of the",
        "lab's offline runner - two lookups answered, then the model's answer - in each",
        "provider's history format, by the lab's own converters, whole and broken in the ways",
        "the course teaches. Generated, not recorded: no provider sent these; the errors are",
        "the texts the lab's checks give, the providers' own where the lab knows them.", "",
        "| file | what is wrong | exit code | the first problem `keel-lab validate` reports |",
        "|---|---|---|---|", *rows, ""])


def main() -> int:
    for name, text in files().items():
        path = OUT / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(OUT.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
