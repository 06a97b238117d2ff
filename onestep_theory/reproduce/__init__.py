"""The main job: regenerate the papers' key curves with theory, simulation and a report (``onestep-theory reproduce``;
docs/theory/spike-theory.md §10, docs/theory/srf-theory.md §10)."""

from .report import EXPERIMENTS, SIZES, run

__all__ = ["EXPERIMENTS", "SIZES", "run"]
