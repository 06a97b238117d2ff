"""The main job: regenerate the papers' key curves with theory, simulation and a report (``onestep-theory reproduce``)."""

from .report import EXPERIMENTS, SIZES, run

__all__ = ["EXPERIMENTS", "SIZES", "run"]
