"""keel_cli: the practitioner's tools over the lab, beside the package a learner reads: the
`keel-lab` command (experiments, assemble, validate, progress, record) and the recorder, the
only code of the lab that reaches the network. A learner's notebook calls `main` as the command
would run."""

from keel_cli._command import main

__all__ = ["main"]
