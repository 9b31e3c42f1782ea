"""Predictions wait: in both learner editions the cell that answers a prediction reads it, and its
saved output is only the line that asks for it - never the answer under an empty question."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from keel_checks.exercises import PREDICTIONS
from keel_cli._cells import source, tags
from keel_course import translation
from keel_course.checkout import Checkout
from keel_course.editions import read_notebook
from keel_lab._i18n import speaking
from keel_lab.course import observe, predicted

pytestmark = pytest.mark.lab_wide

CHECKOUT = Checkout.at(Path(__file__).resolve().parents[2])
EDITIONS = {"en": CHECKOUT.notebooks,
            **{code: translation.edition(CHECKOUT, code) for code in translation.LOCALES}}
LEARNER = [(code, path) for code, folder in EDITIONS.items()
           for path in sorted(folder.glob("[0-9]*.ipynb"))]


def _names(text: str, context: type[ast.expr_context]) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(text))
            if isinstance(n, ast.Name) and isinstance(n.ctx, context)}


def _text(cell: dict) -> str:
    return "".join(source({"source": o.get("text", "")}) for o in cell.get("outputs", []))


def _asks(code: str, capsys: pytest.CaptureFixture[str]) -> set[str]:
    """The lines that ask for a prediction, in the edition's language."""
    with speaking(code):
        assert predicted("") is False
        asked = capsys.readouterr().out
        return {asked, observe(1, "", None) + "\n"}


@pytest.mark.parametrize(("code", "path"), LEARNER, ids=lambda x: getattr(x, "name", x))
def test_a_prediction_waits_for_its_answer(code, path, capsys):
    cells = read_notebook(path)["cells"]
    asks = _asks(code, capsys)
    predictions = [n for n, c in enumerate(cells) if "prediction" in tags(c)]
    for n in predictions:
        guessed = _names(source(cells[n]), ast.Store)
        answer = next(m for m in range(n + 1, len(cells)) if cells[m]["cell_type"] == "code")
        read = _names(source(cells[answer]), ast.Load)
        assert guessed & read, (f"{path.name}: cell {answer} answers the prediction of cell {n} "
                                f"({', '.join(sorted(guessed))}) without reading it")
        assert _text(cells[answer]) in asks, (
            f"{path.name}: cell {answer} has the answer to cell {n}'s prediction saved below it")
    assert all(cells[n]["outputs"] == [] for n in predictions)


def test_every_edition_has_its_predictions():
    """The test above is not passing by finding nothing: every edition asks as many."""
    counted = {code: sum("prediction" in tags(c) for language, path in LEARNER
                         if language == code for c in read_notebook(path)["cells"])
               for code in EDITIONS}
    assert len(set(counted.values())) == 1 and counted["en"] >= 13, counted


def test_every_prediction_is_in_the_table_and_answered_back():
    """Each prediction is a row of the course's table (what progress counts), and the cell
    that answers it says whether it was right: `answered(...)`, or chapter 6's `observe(...)`."""
    found = {}
    for path in sorted((CHECKOUT.notebooks / "solutions").glob("[0-9]*.ipynb")):
        cells = read_notebook(path)["cells"]
        for n, cell in enumerate(cells):
            if "prediction" not in tags(cell):
                continue
            [name] = _names(source(cell), ast.Store)
            found[name] = path.stem
            answer = next(source(c) for c in cells[n + 1:] if c["cell_type"] == "code")
            assert re.search(rf"\b(answered|observe)\((\d+, )?{name}\b", answer), (
                f"{path.name}: the cell after {name} does not answer it back")
    assert found == PREDICTIONS
