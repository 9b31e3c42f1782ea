"""keel_cli: the practitioner's tools over the lab, beside the package a learner reads: the
`keel-lab` command (experiments, assemble, validate, progress, record) and the recorder, the
only code of the lab that reaches the network. A learner's notebook calls `main` as the command
would run, and the capstone's optional live cell runs its loop on `provider_model`."""

from keel_cli._command import main
from keel_lab._lazy import lazy

# the recorder loads only when its name is first used: a command that reads files never does
__getattr__, __dir__ = lazy(__name__, {"keel_cli._record": ("provider_model",)})

__all__ = ["main", "provider_model"]
