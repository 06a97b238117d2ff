"""Learning curves and parameter sweeps of the sRF saddle point, warm-started (docs/theory/numerics.md §4)."""

from __future__ import annotations

from ...core.errors import InvalidParameterError
from .batch import srf_batch
from .solve import srf_solve

__all__ = ["srf_curve", "srf_sweep", "SWEEPABLE"]

def srf_curve(student, teacher, alphas, **kw) -> list:
    r"""Learning curve over α with warm starts (docs/theory/numerics.md §4 'Continuation'; batched: ``batch``
    of :func:`srf_sweep`); returns a list of :class:`SRFSolution`.  The κ-node setups are cached, so the whole curve shares them."""
    return srf_sweep(student, teacher, "alpha", alphas, **kw)


SWEEPABLE = ("alpha", "beta", "lam", "eta", "alpha0", "noise_var")


def srf_sweep(student, teacher, param: str, values, *, batch: bool = True, **fixed) -> list:
    r"""Sweep one parameter (``alpha``, ``beta``, ``lam``, ``eta``, ``alpha0`` or ``noise_var``) with warm starts.

    (r, c, γ) are resolved once while they stay fixed (α, β, λ sweeps); sweeping η̃, α0 or the
    label noise changes them through Result 3.1 at every point.  For a decreasing λ sweep the warm
    start acts as the continuation of docs/theory/numerics.md §4.  Returns a list of :class:`SRFSolution`.

    ``batch`` (default): float64 points are solved together by :func:`~onestep_theory.srf.single.batch.srf_batch`
    (vectorised over the points, each with its own refined error; what it does not cover runs srf_solve point by
    point); ``batch=False``: srf_solve at every point, warm-started from the previous one (the reference path).
    """
    if param not in SWEEPABLE:
        raise InvalidParameterError("param", param, f"one of {', '.join(SWEEPABLE)}")
    fixed = dict(fixed)
    fixed.pop(param, None)
    # (r, c, gamma) from (alpha0, eta) are resolved inside srf_solve at every point: resolve_rcg caches the
    # mapping, so an alpha, beta or lam sweep computes it once, and every solution reports it with its errors
    if batch:
        return srf_batch(student, teacher, [{param: repr(float(v)) if isinstance(v, float) else v} for v in values],
                         **fixed)
    out = []
    init = None
    for v in values:
        kw = dict(fixed)
        kw[param] = repr(float(v)) if isinstance(v, float) else v
        sol = srf_solve(student, teacher, init=init, **kw)
        out.append(sol)
        init = tuple(float(x) for x in sol.state())
    return out
