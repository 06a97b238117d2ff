"""Finite-size studies (docs/theory/numerics.md §8): the extrapolation of simulation-minus-theory gaps to d → ∞ and the
results store that makes a study resumable."""

from .fit import StudyFit, extrapolate

__all__ = ["StudyFit", "extrapolate"]
