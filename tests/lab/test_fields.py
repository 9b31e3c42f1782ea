import pytest

from keel_lab.providers._fields import shown

pytestmark = pytest.mark.lab_wide


def test_scalars_are_shown_short_and_everything_else_by_type():
    assert shown("x" * 50) == repr("x" * 40) + "..."
    assert shown("\x1b[31m") == "'\\x1b[31m'"  # no terminal escape reaches the screen
    assert [shown(v) for v in (None, True, 1.5, 7)] == ["None", "True", "1.5", "7"]
    assert shown(10**5000) == "a huge integer"  # repr alone would raise
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert shown(deep) == "a list" and shown({}) == "a dict"
