r"""Extrapolation of a finite-size gap to :math:`d\to\infty` (docs/theory/numerics.md §8).

A theory is an asymptotic statement; a simulation is at finite d.  Given per-size mean gaps
:math:`\bar g(d_i)` (simulation minus theory) with standard errors :math:`s_i`, fit

.. math:: g(d)=g_\infty+\sum_k a_k\,d^{-e_k}\qquad(\text{default }e=(\tfrac12,1))

by weighted least squares (weights :math:`1/s_i^2`).  :math:`g_\infty` carries the standard error of the fit;
when :math:`\chi^2/\nu>1` the errors are inflated by :math:`\sqrt{\chi^2/\nu}` (the Birge ratio: the scatter says
the standard errors or the model are too optimistic).  The verdict is whether 0 (theory exact in the limit) lies
in the 95 % interval :math:`g_\infty\pm1.96\,s_\infty`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy.stats import chi2

from ..core.errors import InvalidParameterError
from ..core.results import Result, provenance

__all__ = ["StudyFit", "extrapolate"]


@dataclasses.dataclass
class StudyFit(Result):
    """The fitted :math:`g_\\infty` with its standard error, the other coefficients, χ² and the verdict."""

    g_inf: float
    se: float
    coefficients: dict
    chi2: float
    dof: int
    p_value: float
    inflated: bool
    exponents: tuple
    verdict: str
    theory_inside: bool | None      # None: no verdict (0 degrees of freedom)
    sizes: list
    provenance: dict


def check_exponents(exponents) -> tuple:
    """The exponents of the fit as floats: distinct, in (0, 4] (a clear error otherwise)."""
    try:
        ex = tuple(float(e) for e in exponents)
    except (TypeError, ValueError):
        ex = ()
    if not ex or not all(0 < e <= 4 for e in ex) or len(set(ex)) != len(ex):
        raise InvalidParameterError("exponents", exponents, "distinct exponents in (0, 4]")
    return ex


def extrapolate(d, gaps, se, exponents=(0.5, 1.0)) -> StudyFit:
    r"""Weighted least-squares fit of :math:`g(d)=g_\infty+\sum_ka_kd^{-e_k}` to per-size mean gaps ``gaps`` with
    standard errors ``se`` at sizes ``d`` (docs/theory/numerics.md §8).  Needs more sizes than exponents.

    >>> ds = [250, 500, 1000, 2000]
    >>> fit = extrapolate(ds, [0.01 + 0.3 / math.sqrt(x) for x in ds], [1e-3] * 4, exponents=(0.5,))
    >>> round(fit.g_inf, 12), fit.theory_inside
    (0.01, False)
    """
    d = np.asarray(d, dtype=float)
    g = np.asarray(gaps, dtype=float)
    s = np.asarray(se, dtype=float)
    ex = tuple(float(e) for e in exponents)
    if not (d.ndim == g.ndim == s.ndim == 1 and len(d) == len(g) == len(s)):
        raise InvalidParameterError("gaps", len(g), "one gap and one standard error per size")
    if not np.all(np.isfinite(d) & (d > 0)) or len(set(d.tolist())) != len(d):
        raise InvalidParameterError("d", d.tolist(), "distinct sizes > 0")
    if not np.all(np.isfinite(g)) or not np.all(np.isfinite(s) & (s > 0)):
        raise InvalidParameterError("se", s.tolist(), "finite gaps and standard errors > 0")
    check_exponents(ex)
    if len(d) <= len(ex):
        raise InvalidParameterError("d", len(d), f"at least {len(ex) + 1} sizes for {len(ex)} exponent(s)")
    X = np.column_stack([np.ones_like(d)] + [d ** -e for e in ex])
    w = 1 / s
    coef, *_ = np.linalg.lstsq(X * w[:, None], g * w, rcond=None)
    cov = np.linalg.inv((X * (w * w)[:, None]).T @ X)
    res = (g - X @ coef) * w
    dof = len(d) - len(ex) - 1
    c2 = float(res @ res)
    inflate = dof > 0 and c2 > dof
    if inflate:
        cov = cov * (c2 / dof)
    g_inf, se_inf = float(coef[0]), float(math.sqrt(cov[0, 0]))
    inside = abs(g_inf) <= 1.96 * se_inf
    verdict = (f"theory inside the 95% interval of the extrapolation (g_inf = {g_inf:.3g} +- {se_inf:.2g})" if inside
               else f"theory outside the 95% interval: g_inf = {g_inf:.3g} +- {se_inf:.2g} "
                    f"({abs(g_inf) / se_inf:.1f} standard errors)")
    if dof == 0:
        # as many sizes as parameters: the fit passes through every point and cannot test itself
        inside = None
        verdict = (f"no verdict: {len(d)} sizes fit {len(ex) + 1} parameters exactly (0 degrees of freedom); add a "
                   f"size (--d) or fit fewer terms (e.g. --exponents {ex[-1]:g})")
    return StudyFit(g_inf=g_inf, se=se_inf, coefficients={f"d^-{e:g}": float(c) for e, c in zip(ex, coef[1:])},
                    chi2=c2, dof=dof, p_value=float(chi2.sf(c2, dof)) if dof > 0 else math.nan, inflated=bool(inflate),
                    exponents=ex, verdict=verdict, theory_inside=None if inside is None else bool(inside), sizes=d.astype(int).tolist(),
                    provenance=provenance(method="weighted least squares, Birge-inflated when chi2/dof > 1",
                                          references=["docs/theory/numerics.md §8"]))
