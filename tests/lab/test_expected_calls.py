"""Every recorded stream has an intended meaning in bench/expected_calls.py, and the lab's
diagnosis gives exactly that: the calls that must run (id, name, arguments), nothing else
runnable, and every call that must not run reported as not executable."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from expected_calls import EXPECTED, STREAMS, Call, NotRun, recordings

from keel_lab.providers._diagnosis import diagnose_file

pytestmark = pytest.mark.ch7


def test_every_recording_has_an_expectation_and_every_expectation_a_recording():
    assert sorted(EXPECTED) == recordings()


def test_an_expectation_never_lists_the_same_call_as_running_and_not_running():
    for name, e in EXPECTED.items():
        ran = {(c.id, c.name) for c in e.runs}
        assert not ran & {(n.id, n.name) for n in e.not_run}, name


@pytest.mark.parametrize("name", recordings())
def test_the_lab_runs_exactly_the_intended_calls(name):
    expected = EXPECTED.get(name)
    assert expected is not None, f"{name}: add its entry to bench/expected_calls.py"
    d = diagnose_file(STREAMS / name)
    runs = [Call(c.id or "", c.name, c.input or {}) for c in d.calls if c.executable]
    not_run = [NotRun(c.id, c.name) for c in d.calls if not c.executable]
    assert runs == list(expected.runs)
    assert not_run == list(expected.not_run)
    assert all(c.input is not None for c in d.calls if c.executable)
