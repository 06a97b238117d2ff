"""Finite-size studies (docs/theory/numerics.md §8): simulation protocols run as independent tasks (serially or on
Dask), a results store that makes a study resumable, and the extrapolation of simulation-minus-theory gaps to d → ∞."""

from .cluster import dask_available
from .fit import StudyFit, extrapolate
from .protocols import PROTOCOLS, Protocol, protocol_of
from .run import StudyResult, plan_study, run_study, run_task, task_seed
from .store import ResultStore, task_key

__all__ = ["StudyFit", "extrapolate", "PROTOCOLS", "Protocol", "protocol_of", "StudyResult", "plan_study", "run_study", "run_task",
           "task_seed", "ResultStore", "task_key", "dask_available"]
