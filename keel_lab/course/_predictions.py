"""Predictions that wait: a cell that answers a prediction shows its answer only once the
prediction is written, so a learner never predicts with the answer in view."""

from __future__ import annotations

from keel_lab._i18n import N_, _

ASK = N_("Predict first: write your guess in the cell above, then run this cell again.")


def predicted(*guesses: object) -> bool:
    """Whether every guess is written (not empty, not blank); when one is not, print the line
    that asks for it, so the cell's answer stays hidden: `if predicted(guess): show(...)`."""
    if all(guess is not None and str(guess).strip() for guess in guesses):
        return True
    print(_(ASK))
    return False
