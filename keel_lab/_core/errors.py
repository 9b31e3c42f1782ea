"""The one exception type for a user's mistake, and the coded message it carries (defined with
the package's messages, `keel_lab._i18n`, which renders them in the learner's language)."""

from keel_lab._i18n import LabError, Said

__all__ = ["LabError", "Said"]
