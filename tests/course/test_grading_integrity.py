"""The snapshot of the lab's code: it names each kind of change and puts the lab back."""

from __future__ import annotations

import builtins
import gc
import sys
import threading

import pytest

from keel_checks import batching
from keel_checks.check import TARGETS, VERIFIERS
from keel_checks.verdict import Verdict
from keel_course.grading.integrity import Snapshot, import_lab

pytestmark = pytest.mark.lab_wide

import_lab()
PRINT = print


def _rebind_module_function() -> None:
    batching.verify_make_batches = lambda fn: None  # type: ignore[assignment]


def _mutate_registry() -> None:
    TARGETS["status_history"] = "history:verify_answer_all"


def _patch_class() -> None:
    Verdict.passed = property(lambda self: True)  # type: ignore[method-assign,assignment]


def _swap_code() -> None:
    batching.verify_make_batches.__code__ = (lambda fn: None).__code__


def _replace_module() -> None:
    sys.modules["keel_lab._core.batching"] = type(sys)("keel_lab._core.batching")


def _patch_builtin() -> None:
    builtins.print = lambda *a, **k: None


def _delete_attribute() -> None:
    del Verdict.lines


@pytest.mark.parametrize(("change", "where"), [
    (_rebind_module_function, "keel_checks.batching.verify_make_batches"),
    (_mutate_registry, "keel_checks.check.TARGETS"),
    (_patch_class, "keel_checks.verdict.Verdict.passed"),
    (_swap_code, "keel_checks.batching.verify_make_batches.__code__"),
    (_replace_module, "sys.modules['keel_lab._core.batching']"),
    (_patch_builtin, "builtins.print"),
    (_delete_attribute, "keel_checks.verdict.Verdict.lines"),
])
def test_each_change_is_named_and_undone(change, where):
    snapshot = Snapshot()
    assert snapshot.changes() == []
    try:
        change()
        assert where in snapshot.changes()
    finally:
        assert snapshot.restore() == []
    assert Verdict("x", ("a",)).passed is False and builtins.print is PRINT
    assert VERIFIERS["make_batches"] is batching.verify_make_batches


def test_running_every_check_changes_nothing():
    snapshot = Snapshot()
    for name, verifier in VERIFIERS.items():
        verifier(lambda *args: None)
        assert snapshot.changes() == [], name


def test_a_warning_raised_in_the_labs_frames_is_no_change():
    """A coroutine a wrong answer never awaited is collected wherever the grader happens to be,
    and its warning is noted in that module's __warningregistry__: Python's bookkeeping, not
    the lab's code (it once refused a fair verdict as 'changed the lab's code')."""
    from keel_course.grading import plain
    vars(plain).setdefault("__warningregistry__", {})
    snapshot = Snapshot()
    exec(compile("import warnings\nwarnings.warn('never awaited', RuntimeWarning)",
                 plain.__file__, "exec"), vars(plain))
    assert snapshot.changes() == []


def _hook(*args: object) -> None:
    return None


@pytest.mark.parametrize(("change", "where"), [
    (lambda: sys.setprofile(_hook), "sys.getprofile()"),
    (lambda: sys.settrace(_hook), "sys.gettrace()"),
    (lambda: threading.setprofile(_hook), "threading.getprofile()"),
    (lambda: threading.settrace(_hook), "threading.gettrace()"),
    (lambda: gc.callbacks.append(_hook), "gc.callbacks"),
])
def test_a_hook_left_behind_is_named_and_removed(change, where):
    before = sys.getprofile(), sys.gettrace(), threading.getprofile(), threading.gettrace()
    snapshot = Snapshot()
    try:
        change()
        assert where in snapshot.changes()
    finally:
        assert snapshot.restore() == []
    now = sys.getprofile(), sys.gettrace(), threading.getprofile(), threading.gettrace()
    assert now == before and _hook not in gc.callbacks


def test_the_code_of_the_lab_is_compared_on_its_own():
    snapshot = Snapshot()
    assert batching.verify_make_batches.__code__ in snapshot.codes()
    try:
        _swap_code()
        assert snapshot.code_changes() == [
            "keel_checks.batching.verify_make_batches.__code__"]
    finally:
        snapshot.restore()
    assert snapshot.code_changes() == []
