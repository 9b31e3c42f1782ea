"""Predictions: the cell that answers one waits for it, then says whether it was right.

A learner who predicts with the answer in view learns nothing from the prediction, so
`predicted(guess)` keeps the answering cell's output to one line asking for the guess until it
is written. Once the experiment has run, `answered(guess, observed)` compares the two - a
number within a stated margin, a letter, yes or no, batches of ids, a set of ids - and says
"as you predicted" or "not what you predicted", so every prediction gets an answer back, as
chapter 6's `observe` gives. Both note what they saw in the learner's progress file
(`keel_checks.progress`): a prediction made, and whether it was right.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Collection, Sequence
from typing import Any

from keel_checks.exercises import PREDICTIONS
from keel_lab._i18n import N_, _

ASK = N_("Predict first: write your guess in the cell above, then run this cell again.")

YES, NO = frozenset({"yes", "y", "true"}), frozenset({"no", "n", "false"})
YES_ZH, NO_ZH = frozenset("是会对"), frozenset("否不没")  # a Chinese "no" holds 不 beside 会
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_TOKEN = re.compile(r"[\w-]+")


def predicted(*guesses: object) -> bool:
    """Whether every guess is written (not empty, not blank); when one is not, print the line
    that asks for it, so the cell's answer stays hidden: `if predicted(guess): show(...)`."""
    if all(guess is not None and str(guess).strip() for guess in guesses):
        for guess in guesses:
            _note(guess, None)
        return True
    print(_(ASK))
    return False


def answered(guess: object, observed: object, *, near: float = 0.0,
             among: Collection[str] = ()) -> bool:
    """Print whether `guess` matches what the experiment `observed`, and return it.
    A number matches within `near` (a share of the observed value: 0.1 is 10%); several numbers
    each in turn; a letter or a word regardless of case; True or False as yes or no; batches
    (lists of ids) as the lists of ids written in brackets; a set of ids as the ids of `among`
    the guess names."""
    right = _matches("" if guess is None else str(guess), observed, near, among)
    _note(guess, right)
    verdict = (_("as you predicted") if right
               else _("not what you predicted: the next paragraph says why"))
    print(_("you predicted: {guess}").format(guess=str(guess).strip()))
    print(_("observed:      {observed} - {verdict}").format(observed=_shown(observed),
                                                             verdict=verdict))
    return right


def _matches(guess: str, observed: object, near: float, among: Collection[str]) -> bool:
    text = guess.replace(",", "") if isinstance(observed, int | float) else guess
    if isinstance(observed, bool):
        words = {w.lower() for w in _TOKEN.findall(guess)}
        says_no = bool(words & NO or NO_ZH.intersection(guess))
        says_yes = bool(words & YES) or (not says_no and bool(YES_ZH.intersection(guess)))
        return says_yes != says_no and says_yes == observed
    if isinstance(observed, int | float):
        return _close(_numbers(text), [observed], near)
    if isinstance(observed, str):
        return guess.strip().strip(".)").upper() == observed.upper()
    if isinstance(observed, tuple) and all(isinstance(x, int | float) for x in observed):
        return _close(_numbers(guess), list(observed), near)
    if isinstance(observed, Sequence):
        groups = [_TOKEN.findall(g) for g in re.findall(r"\[([^\]]*)\]", guess)]
        return groups == [list(batch) for batch in observed]
    if isinstance(observed, Collection):
        return {t for t in _TOKEN.findall(guess) if t in among} == set(observed)
    raise TypeError(f"cannot compare a prediction with {type(observed).__name__}")


def _numbers(text: str) -> list[float]:
    return [float(n) for n in _NUMBER.findall(text)]


def _close(guessed: list[float], observed: Sequence[float], near: float) -> bool:
    return len(guessed) == len(observed) and all(
        abs(g - o) <= near * abs(o) + 1e-9 for g, o in zip(guessed, observed, strict=True))


def _shown(observed: object) -> str:
    if isinstance(observed, bool):
        return _("yes") if observed else _("no")
    if isinstance(observed, tuple):
        return ", ".join(map(str, observed))
    if isinstance(observed, set | frozenset):
        return ", ".join(sorted(observed)) or _("none")
    return str(observed)


def named(guess: object, depth: int = 3) -> str | None:
    """The course prediction whose variable holds `guess` where the notebook's cell runs."""
    frame = inspect.currentframe()
    for _level in range(depth):
        frame = frame.f_back if frame is not None else None
    scope: dict[str, Any] = frame.f_globals if frame is not None else {}
    return next((name for name in PREDICTIONS if name in scope and scope[name] is guess), None)


def _note(guess: object, right: bool | None) -> None:
    name = named(guess)
    if name is not None:
        note(name, right)


def note(name: str, right: bool | None) -> None:
    """Keep the prediction `name` in the progress file: made (`right` None), or answered back
    (never raises, never prints on stdout)."""
    from keel_checks.progress import note_prediction

    note_prediction(name, PREDICTIONS[name], right)
