"""Finite-size studies (docs/theory/numerics.md §8): the extrapolation of simulation-minus-theory gaps to d → ∞ and the
results store that makes a study resumable."""

from .fit import StudyFit, extrapolate
from .run import PROTOCOLS, run_study, run_task, task_seed
from .store import ResultStore, task_key

__all__ = ["StudyFit", "extrapolate", "PROTOCOLS", "run_study", "run_task", "task_seed", "ResultStore", "task_key"]
