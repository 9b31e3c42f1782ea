"""Every experiment of the lab by name, and the parameters each one takes from the CLI."""

from keel_lab.course.experiments.registry import EXPERIMENTS, Experiment, Params
from keel_lab.course.experiments.report import Progress, Report

__all__ = ["EXPERIMENTS", "Experiment", "Params", "Progress", "Report"]
