r"""Conditional Gaussian equivalence (cGE): :math:`\mu_0(\kappa),\mu_1(\kappa),\mu_\star(\kappa)`.

Result 3.2 of [CPDKLZL24], eq. (15) (docs/theory/srf-theory.md §3):

.. math::
    \mu_0(\kappa)=\mathbb E_z\sigma(r\kappa+\sqrt cz),\quad
    \mu_1(\kappa)=\tfrac1{\sqrt c}\mathbb E_z[z\sigma(r\kappa+\sqrt cz)],\quad
    \mu_\star(\kappa)^2=\max\{0,\mathbb E_z\sigma(r\kappa+\sqrt cz)^2-\mu_0^2-c\mu_1^2\}.

Every expectation is a Gaussian smoothing (:mod:`onestep_theory.srf.features.smoothing`).

References
----------
[CPDKLZL24] arXiv:2402.04980, Result 3.2, (13)–(16); [DKLPS23] arXiv:2305.18270.
"""

from __future__ import annotations

import dataclasses
import math

import flint
import numpy as np
import sympy as sp

from ...core.caches import cached
from ...core.errors import InvalidParameterError
from ...core.exact import to_float
from ...core.precision import arb_to_mpf, past_asked, precision, tolerance
from ...core.results import VouchedResult, provenance
from ...hermite.activation import Activation
from ...hermite.evaluate import as_arb
from ...hermite.expressions import breakpoints, pieces, x
from ...hermite.gauss import trunc_moments
from .smoothing import is_piecewise_polynomial, smooth, smooth_arb

__all__ = ["cge_coeffs", "cge_arb", "cge_values", "CGEValues", "cge_symbolic", "second_derivative", "cge_curvature"]


def cge_coeffs(student, r, c, kappa, *, backend: str | None = None, nodes: int = 61, dps: int | None = None,
               digits: float | None = None, level: int = 0):
    r""":math:`\mu_0(\kappa),\mu_1(\kappa),\mu_\star^2(\kappa)` of eq. (15) [CPDKLZL24] (docs/theory/srf-theory.md §3).

    ``kappa`` is an array (float64), or with ``dps`` exact values (strings, mpf, SymPy numbers); the
    result is then a triple of numpy object arrays of ``mpf`` correct to ``dps`` digits (rules with
    ``dps`` + guard digits).  :math:`\mu_\star^2` is clipped at 0.  For an error estimate use
    :func:`cge_values`.

    >>> m0, m1, ms2 = cge_coeffs("sign", 1.0, 1.0, np.array([0.0, 1.0, 2.0]))    # docs/theory/srf-theory.md §11.3
    >>> np.round(m0, 8).tolist(), np.round(m1, 8).tolist(), np.round(ms2, 8).tolist()
    ([0.0, 0.68268949, 0.95449974], [0.79788456, 0.48394145, 0.10798193], [0.36338023, 0.29973573, 0.07727016])
    """
    if dps is not None:
        with precision(dps):
            if not as_arb(c) > 0:
                raise InvalidParameterError("c", c, "a real number > 0")
            k = np.atleast_1d(np.asarray(kappa, dtype=object))
            # the inner rules' accuracy (a target, not a precision), as smooth's (docs/theory/numerics.md §3)
            # k: 3 digits past those wanted, so that their discretisation error stays below the last digit
            want = digits + 3 if digits else past_asked(3, why="the rules' discretisation below the last digit")
            arrs = cge_arb(student, as_arb(r), as_arb(c), [as_arb(v) for v in k.ravel()],
                           backend=backend, nodes=nodes, digits=want, level=level)
            out = tuple(np.array([arb_to_mpf(v) for v in arr], dtype=object).reshape(k.shape) for arr in arrs)
        return out
    c_f = float(c)
    if not c_f > 0:
        raise InvalidParameterError("c", c, "a real number > 0")
    kap = np.asarray(kappa, dtype=float)
    sc = math.sqrt(c_f)
    e0, e1, e2 = smooth(student, float(r) * kap, sc, backend=backend, nodes=nodes, digits=digits, level=level)
    mu1 = e1 / sc
    return e0, mu1, np.maximum(0.0, e2 - e0 * e0 - c_f * mu1 * mu1)


@cached(maxsize=32)
def second_derivative(student) -> Activation:
    """σ'' as an activation (built once per student), for a twice-differentiable student; a clear error if σ has
    kinks (docs/theory/srf-theory.md §3, "Corrected conditional mean")."""
    s = Activation.from_any(student, "student")
    if breakpoints(s.expr):
        raise InvalidParameterError("row_norms", s.name, "a twice-differentiable student (no kinks): the "
                                    "row-norm correction needs sigma''")
    return Activation.from_any(sp.diff(s.expr, x, 2), "student")


def cge_curvature(student, r, c, kappa, *, digits: float | None = None, level: int = 0):
    r""":math:`\partial_c\mu_0(\kappa)=\tfrac12\mathbb E_z\sigma''(r\kappa+\sqrt cz)` (heat equation applied to
    (15); docs/theory/srf-theory.md §3, "Corrected conditional mean") in float64 over an array ``kappa``."""
    return 0.5 * smooth(second_derivative(student), float(r) * np.asarray(kappa, dtype=float), math.sqrt(float(c)),
                        digits=digits, level=level)[0]


def cge_arb(student, r, c, kappa, *, backend=None, nodes=61, digits=None, level=0):
    r"""(15) in Arb at the current working precision: lists of balls :math:`\mu_0,\mu_1,\mu_\star^2` over ``kappa``
    (a list of Arb balls).  Must run inside :func:`~onestep_theory.precision.workdps`."""
    act = Activation.from_any(student, "student")
    sc = c.sqrt()
    e0, e1, e2 = smooth_arb(act, np.array([r * k for k in kappa], dtype=object), sc, backend=backend,
                            digits=digits, level=level, nodes=nodes)
    e0, e1, e2 = (np.atleast_1d(v).ravel() for v in (e0, e1, e2))
    mu1 = [v / sc for v in e1]
    ms2 = [_clip0(a2 - a0 * a0 - c * m1 * m1) for a0, m1, a2 in zip(e0, mu1, e2)]
    return list(e0), mu1, ms2


def _clip0(v):
    """max(0, v) on the midpoint (clipping of mu_star^2, eq. (15))."""
    return v if v.mid() > 0 else flint.arb(0)


@dataclasses.dataclass
class CGEValues(VouchedResult):
    r"""μ0, μ1, μ⋆² of (15) at given κ with error estimates (change under a refined inner rule)."""

    kappa: list
    mu0: list
    mu1: list
    mustar2: list
    errors: dict
    r: object
    c: object
    dps: int | None
    provenance: dict


def cge_values(student, r, c, kappa, *, dps: int | None = None) -> CGEValues:
    r"""(15) at the points ``kappa`` with an error estimate: two inner-rule levels compared (float64, or Arb
    at ``dps`` digits), plus rounding.  Exact values (closed forms) have only the rounding error."""
    if dps is None:
        kappa = np.array([to_float(k, "kappa") for k in np.atleast_1d(np.asarray(kappa, dtype=object))])
        r, c = to_float(r, "r"), to_float(c, "c")
    vals = [cge_coeffs(student, r, c, kappa, dps=dps, level=lev) for lev in (0, 1)]
    rnd = 1e-15
    if dps is not None:
        with precision(dps):
            rnd = tolerance(5, float, why="the rounding of values computed with guard digits: a term 5 digits below "
                            "those asked (the guard digits, less 5 for the arithmetic of (15) and the conversions)")
    errors = {}
    for name, a, b in zip(("mu0", "mu1", "mustar2"), vals[0], vals[1]):
        errors[name] = [float(abs(x1 - x0)) + rnd * max(1.0, abs(float(x1))) for x0, x1 in
                        zip(np.atleast_1d(a), np.atleast_1d(b))]
    return CGEValues(kappa=list(np.atleast_1d(kappa)), mu0=list(np.atleast_1d(vals[1][0])),
                     mu1=list(np.atleast_1d(vals[1][1])), mustar2=list(np.atleast_1d(vals[1][2])), errors=errors,
                     r=r, c=c, dps=dps, provenance=provenance(dps=dps, method="closed form or split Gauss-Legendre "
                                                              "panels, error from a refined rule",
                                                              references=["[CPDKLZL24] eq. (15)",
                                                                          "docs/theory/srf-theory.md §3"]))


KAPPA, R, C = sp.symbols("kappa r c", real=True)


def cge_symbolic(student) -> dict:
    r"""Exact :math:`\mu_0,\mu_1,\mu_\star^2` in the symbols ``kappa, r, c`` where found (piecewise polynomials, erf).

    Uses the truncated-moment formulas of module ``gauss`` with symbolic limits, and
    :math:`\mathbb E\,\mathrm{erf}(\alpha(a+sZ))=\mathrm{erf}(\alpha a/\sqrt{1+2\alpha^2s^2})` (Owen 1980).
    Missing entries mean no closed form was found.

    >>> cge_symbolic("sign")["mu0"]
    erf(sqrt(2)*kappa*r/(2*sqrt(c)))
    """
    act = Activation.from_any(student, "student")
    cpos = sp.Symbol("c", positive=True)
    a, s = R * KAPPA, sp.sqrt(cpos)
    out = {}
    z = sp.Symbol("z", real=True)
    if is_piecewise_polynomial(act.expr):
        def ex(weight, square):
            tot = sp.Integer(0)
            for lo, hi, g in pieces(act.expr):
                gg = sp.expand((g**2 if square else g).subs(x, a + s * z) * (z if weight else 1))
                if gg == 0:
                    continue
                poly = sp.Poly(gg, z)
                zlo = -sp.oo if lo == -sp.oo else (lo - a) / s
                zhi = sp.oo if hi == sp.oo else (hi - a) / s
                T = trunc_moments(poly.degree() + 1, zlo, zhi)
                tot += sum(cf * T[j] for (j,), cf in poly.terms())
            return sp.simplify(tot)

        e0, e1, e2 = ex(False, False), ex(True, False), ex(False, True)
        out = {"mu0": e0, "mu1": sp.simplify(e1 / s), "mustar2": sp.simplify(e2 - e0**2 - e1**2)}
    else:
        e = act.expr
        coeff, rest = e.as_independent(x, as_Add=False)
        if isinstance(rest, sp.erf) and sp.Poly(rest.args[0], x).degree() == 1 and rest.args[0].subs(x, 0) == 0:
            al = rest.args[0].coeff(x)
            out["mu0"] = coeff * sp.erf(al * a / sp.sqrt(1 + 2 * al**2 * s**2))
            # mu1 = E sigma'(a + sZ) (Stein): sigma' = coeff * 2 al/sqrt(pi) exp(-al^2 x^2)
            out["mu1"] = sp.simplify(coeff * 2 * al / sp.sqrt(sp.pi) / sp.sqrt(1 + 2 * al**2 * s**2)
                                     * sp.exp(-al**2 * a**2 / (1 + 2 * al**2 * s**2)))
    return {k: v.subs(cpos, C) for k, v in out.items()}
