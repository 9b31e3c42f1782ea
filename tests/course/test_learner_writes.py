"""The learner writes before reading: each checkpoint question, and each chapter's summary, has
a cell for the learner's own answer between the question and the hidden answer, in every
edition."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from keel_cli._cells import source, tags
from keel_course import translation
from keel_course.checkout import Checkout
from keel_course.editions import CHAPTER, read_notebook

pytestmark = pytest.mark.lab_wide

CHECKOUT = Checkout.at(Path(__file__).resolve().parents[2])
FOLDERS = {"solutions": CHECKOUT.notebooks / "solutions", "en": CHECKOUT.notebooks,
           **{code: translation.edition(CHECKOUT, code) for code in translation.LOCALES}}
NOTEBOOKS = [(code, path) for code, folder in FOLDERS.items()
             for path in sorted(folder.glob("[0-9]*.ipynb"))]
QUESTION = re.compile(r"^\*\*\d+\. ", re.MULTILINE)  # "**1. Why ...?**", the last paragraph
HIDDEN = "<details>"


@pytest.mark.parametrize(("code", "path"), NOTEBOOKS, ids=lambda x: getattr(x, "name", x))
def test_the_learners_answer_comes_before_ours(code, path):
    cells = read_notebook(path)["cells"]

    def opens_hidden(n: int) -> bool:
        return (n < len(cells) and cells[n]["cell_type"] == "markdown"
                and source(cells[n]).startswith(HIDDEN))

    answers = [n for n, c in enumerate(cells) if "answer" in tags(c)]
    questions = [n for n, c in enumerate(cells)
                 if c["cell_type"] == "markdown" and QUESTION.search(source(c))]
    for n in questions:
        last = source(cells[n]).rstrip().split("\n\n")[-1]
        assert QUESTION.match(last) and n + 1 in answers and opens_hidden(n + 2), (
            f"{path.name}: cell {n} asks a question; the learner's cell and then the hidden "
            "answer must follow it")
    for n in answers:
        assert cells[n]["cell_type"] == "markdown" and opens_hidden(n + 1), (
            f"{path.name}: the answer cell {n} must be followed by the hidden answer")
    if CHAPTER.match(path.name) or path.name.startswith("09_"):
        summaries = [n for n in answers if n - 1 not in questions]
        assert questions and len(summaries) == 1, (
            f"{path.name}: a chapter asks its questions and, once, for the learner's summary")
