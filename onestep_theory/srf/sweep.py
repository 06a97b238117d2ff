"""Learning curves and parameter sweeps of the sRF saddle point, warm-started (docs/theory/numerics.md §4)."""

from __future__ import annotations

import dataclasses

from ..core.errors import InvalidParameterError
from .mapping import resolve_rcg
from .solve import SRFOptions, srf_solve

__all__ = ["srf_curve", "srf_sweep", "SWEEPABLE"]

_OPTION_NAMES = {f.name for f in dataclasses.fields(SRFOptions)}


def srf_curve(student, teacher, alphas, **kw) -> list:
    r"""Learning curve over α with warm starts (docs/theory/numerics.md §4 'Continuation'); returns a list of
    :class:`SRFSolution`.  The κ-node setups are cached, so the whole curve shares them."""
    return srf_sweep(student, teacher, "alpha", alphas, **kw)


SWEEPABLE = ("alpha", "beta", "lam", "eta", "alpha0", "noise_var")


def srf_sweep(student, teacher, param: str, values, **fixed) -> list:
    r"""Sweep one parameter (``alpha``, ``beta``, ``lam``, ``eta``, ``alpha0`` or ``noise_var``) with warm starts.

    (r, c, γ) are resolved once while they stay fixed (α, β, λ sweeps); sweeping η̃, α0 or the
    label noise changes them through Result 3.1 at every point.  For a decreasing λ sweep the warm
    start acts as the continuation of docs/theory/numerics.md §4.  Returns a list of :class:`SRFSolution`.
    """
    if param not in SWEEPABLE:
        raise InvalidParameterError("param", param, f"one of {', '.join(SWEEPABLE)}")
    fixed = dict(fixed)
    fixed.pop(param, None)
    if param in ("alpha", "beta", "lam"):
        opt = SRFOptions.build(fixed.get("options"), {k: v for k, v in fixed.items() if k in _OPTION_NAMES})
        rr, cc, gg, _ = resolve_rcg(student, teacher, fixed.pop("r", None), fixed.pop("c", None),
                                    fixed.pop("gamma", None), fixed.pop("alpha0", None), fixed.pop("eta", None),
                                    fixed.get("noise_var", 0), opt.c_formula, opt.strict_odd, fixed.get("dps"))
        fixed.update(r=rr, c=cc, gamma=gg)
    out = []
    init = None
    for v in values:
        kw = dict(fixed)
        kw[param] = repr(float(v)) if isinstance(v, float) else v
        sol = srf_solve(student, teacher, init=init, **kw)
        out.append(sol)
        init = tuple(float(x) for x in sol.state())
    return out
