"""A verdict on a learner's function: lines that are the same for every right answer."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from keel_lab.core.protocol import ToolCall


@dataclass
class Verdict:
    exercise: str
    results: list[tuple[bool, str]] = field(default_factory=list)

    def add(self, ok: bool, passed: str, hint: str) -> None:
        self.results.append((ok, passed if ok else hint))

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(ok for ok, _ in self.results)

    def lines(self) -> list[str]:
        done = sum(ok for ok, _ in self.results)
        word = "PASSED" if self.passed else "NOT YET"
        return ([f"[{'pass' if ok else 'FAIL'}] {text}" for ok, text in self.results]
                + [f"{self.exercise}: {word} ({done}/{len(self.results)} checks)"])

    def __str__(self) -> str:
        return "\n".join(self.lines())


def guard(verdict: Verdict, what: str, fn: Callable[..., Any], *args: Any) -> Any:
    """Call the learner's code; turn an exception into a failed check with a hint."""
    try:
        return fn(*args)
    except NotImplementedError:
        verdict.add(False, "", f"{what}: not implemented yet - replace the "
                               "`raise NotImplementedError` with your code")
    except Exception as exc:
        verdict.add(False, "", f"{what}: your function raised {type(exc).__name__}: {exc}")
    return None


def calls_of(*specs: tuple[str, str, dict[str, Any]]) -> list[ToolCall]:
    """Tool calls from (id, name, arguments) triples."""
    return [ToolCall(i, n, json.dumps(a)) for i, n, a in specs]
