"""One-dimensional minimisation on an interval: a grid to find the basin, then bounded Brent
(``scipy.optimize.minimize_scalar``) between the grid neighbours of the best point (docs/theory/numerics.md §1).

The one home of this search: the η̃-optimised bounds (28), the bias searches and the simulators' bias fit use it.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar

__all__ = ["grid_minimize"]


def grid_minimize(f, lo: float, hi: float, points: int = 41, xatol: float = 1e-9):
    """``(x, f(x))`` minimising ``f`` on ``[lo, hi]``: the best of ``points`` grid values, refined by bounded Brent
    between its neighbours (the grid point is kept if Brent does not improve on it).

    >>> x, fx = grid_minimize(lambda t: (t - 0.3) ** 2, -1.0, 1.0)
    >>> round(x, 6), fx < 1e-12
    (0.3, True)
    """
    grid = np.linspace(float(lo), float(hi), int(points))
    vals = [f(float(t)) for t in grid]
    i = int(np.argmin(vals))
    res = minimize_scalar(f, bounds=(grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]), method="bounded",
                          options={"xatol": xatol})
    if res.fun < vals[i]:
        return float(res.x), float(res.fun)
    return float(grid[i]), float(vals[i])
