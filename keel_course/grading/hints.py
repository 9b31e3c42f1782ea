"""What the grader says of a submission, in the words both its processes use: a hint or error
cut to one line, an exception named, where to move a line the grader does not run, a refusal."""

from __future__ import annotations

import re

MAX_TEXT = 500  # a hint or an error line crossing to the grader
# A verdict's hint, made in the grader: whole for the gradebook (the lesson's hints end with
# what to do), bounded only against a learner's value shown in it.
MAX_HINT = 4000


def short(text: str, most: int = MAX_TEXT) -> str:
    line = " ".join(text.split())
    return line if len(line) <= most else line[: most - 3] + "..."


def described(exc: BaseException) -> str:
    """'ValueError: text', or the type alone; an exception whose `str` fails is named by type."""
    try:
        text = str(exc)
    except BaseException:
        text = ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def moved(error: BaseException | str, elsewhere: dict[str, int] | None) -> str:
    """For a NameError of a name another cell sets with code the grader does not run: why, and
    where to move it; "" otherwise."""
    name = getattr(error, "name", None) if isinstance(error, NameError) else None
    if isinstance(error, str):
        found = re.search(r"NameError: name '(\w+)' is not defined", error)
        name = found.group(1) if found else None
    if not name or not elsewhere or name not in elsewhere:
        return ""
    return (f" - {name} is set in cell {elsewhere[name]} by code the grader does not run: it "
            "runs the exercise cell whole and, of the other cells, only imports, definitions "
            "and assignments of literals; move that line into the exercise cell (or make it a "
            "literal)")


def refusal(what: str, why: str = "grading uses the lab's own checks") -> str:
    return f"refused: {what}; {why}, so this exercise gets no points"
