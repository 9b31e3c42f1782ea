"""Code named, not imported: `"module:attribute"` loads its module when first used, so a command
that needs one experiment or one exercise's verifier loads that one, not every chapter's."""

from __future__ import annotations

import importlib
from typing import Any


def load(target: str, package: str = "keel_lab.course") -> Any:
    """The attribute `target` ("module:attribute") names, its module taken under `package`."""
    module, attribute = target.split(":")
    return getattr(importlib.import_module(f"{package}.{module}"), attribute)
