"""Predictions answered back: `answered` judges each kind of prediction the chapters ask for, in
the spellings a learner writes, and the progress file counts the predictions made and right."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keel_checks import progress
from keel_checks.predictions import answered, predicted
from keel_checks.progress import FILE, SWITCH, read
from keel_lab import LabError

pytestmark = pytest.mark.lab_wide

BATCHES = [["call-0", "call-1", "call-2"], ["call-3"], ["call-4", "call-5"]]


@pytest.mark.parametrize(("guess", "observed", "options", "right"), [
    ("830", 850, {"near": 0.1}, True),
    ("about 1,000 turns", 850, {"near": 0.1}, False),
    ("5 of 6: about 830", 850, {"near": 0.1}, False),  # two numbers for one
    ("0", 0, {}, True),
    (0, 0, {}, True),  # a number typed as a number
    (0.14, 0.14, {"near": 0.1}, True),
    (" 0 ", 0, {}, True),
    ("none, 0", 0, {}, True),
    ("1", 0, {}, False),
    ("0.14 and 0.49", (0.14, 0.49), {"near": 0.25}, True),
    ("0.49 and 0.14", (0.14, 0.49), {"near": 0.25}, False),  # in the order asked
    ("0.14", (0.14, 0.49), {"near": 0.25}, False),
    ("c", "C", {}, True),
    ("C)", "C", {}, True),
    ("B", "C", {}, False),
    ("yes", True, {}, True),
    ("Yes, it runs", True, {}, True),
    ("是", True, {}, True),
    ("会执行", True, {}, True),
    ("不会", True, {}, False),
    ("不会", False, {}, True),
    ("no", True, {}, False),
    ("yes or no", True, {}, False),  # both is neither
    ("[call-0, call-1, call-2], [call-3], [call-4, call-5]", BATCHES, {}, True),
    ("[call-0 call-1 call-2] [call-3] [call-4 call-5]", BATCHES, {}, True),
    ("[call-0, call-1, call-2], [call-3, call-4, call-5]", BATCHES, {}, False),
    ("call-0, call-1, call-2, call-3", BATCHES, {}, False),
    ("c0 only", {"c0"}, {"among": ("c0", "c1", "c2")}, True),
    ("c0 and c2", {"c0"}, {"among": ("c0", "c1", "c2")}, False),
    ("none", set(), {"among": ("c0", "c1", "c2")}, True),
])
def test_answered_judges_each_kind(guess, observed, options, right, capsys):
    assert answered(guess, observed, **options) is right
    said = capsys.readouterr().out.splitlines()
    assert said[0] == f"you predicted: {str(guess).strip()}"
    assert said[1].endswith("as you predicted" if right
                            else "not what you predicted: the next paragraph says why")


def test_an_observation_of_no_known_kind_is_a_type_error():
    with pytest.raises(TypeError):
        answered("3", object())


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(SWITCH, raising=False)
    progress._said.clear()
    return tmp_path


def test_progress_counts_predictions_made_and_right(here, capsys):
    predicted_batches = "[call-0, call-1, call-2], [call-3], [call-4, call-5]"
    exec("predicted(predicted_batches)\n", {"predicted": predicted,  # a cell's globals
                                             "predicted_batches": predicted_batches})
    cell = {"answered": answered, "predicted_ran": "c0 and c1"}
    exec("answered(predicted_ran, {'c0'}, among=('c0', 'c1', 'c2'))\n", cell)
    capsys.readouterr()
    kept = read(here / FILE)
    assert {n: m.right for n, m in kept.predictions.items()} == {
        "predicted_batches": None, "predicted_ran": False}
    assert "2 of 14 predictions made, 0 right" in kept.table()
    exec("predicted(predicted_ran)\n", {"predicted": predicted, "predicted_ran": "c0"})
    assert read(here / FILE).predictions["predicted_ran"].right is False  # made again: kept
    exec("answered(predicted_ran, {'c0'}, among=('c0', 'c1', 'c2'))\n",
         {"answered": answered, "predicted_ran": "c0"})
    assert read(here / FILE).predictions["predicted_ran"].right is False  # the first answer


def test_a_guess_under_no_course_name_is_not_kept(here, capsys):
    exec("answered(mine, 'A')\n", {"answered": answered, "mine": "A"})
    assert not (here / FILE).exists()


def test_nothing_is_kept_when_recording_is_off(here, monkeypatch, capsys):
    monkeypatch.setenv(SWITCH, "off")
    exec("answered(notes_after_restart, 'C')\n", {"answered": answered,
                                                  "notes_after_restart": "C"})
    assert not (here / FILE).exists()


@pytest.mark.parametrize("predictions", [[], {"client_runs": {"chapter": "07_providers"}},
                                         {"client_runs": {"chapter": 7, "right": None,
                                                          "when": "x"}}])
def test_a_bad_predictions_field_is_one_line(here, predictions):
    (here / FILE).write_text(json.dumps({"exercises": {}, "predictions": predictions}))
    with pytest.raises(LabError) as caught:
        read(here / FILE)
    assert str(caught.value).startswith(str(here / FILE))
