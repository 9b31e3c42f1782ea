"""Whose code it is: the lab's and its checks' modules are never a learner's answer. The checks
stand beside the lab, so both packages count as the lab's."""

from __future__ import annotations

LAB_PACKAGES = frozenset({"keel_lab", "keel_checks"})


def lab_module(name: object) -> bool:
    """Whether the module called `name` is the lab's or its checks'."""
    return isinstance(name, str) and name.split(".")[0] in LAB_PACKAGES
