"""Moved to `keel_lab.i18n`. Kept for a learner's copy of the Chinese edition made before the
move: its first cell imports `set_language` from here, and a copy is never overwritten."""

from keel_lab.i18n import set_language

__all__ = ["set_language"]
