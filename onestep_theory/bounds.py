r"""Bounds on the sRF test error, eqs. (26)–(31) of [CPDKLZL24] (srf-theory.md §6).

At :math:`\gamma=1` (hence :math:`c=1`, :math:`r=\tilde\eta\mu_1|\mu_1^\star|`), with
:math:`\langle f,g\rangle=\mathbb E_{\kappa}[fg]` (166):

* (26) upper bound :math:`\|\sigma_\star\|^2-\langle\sigma_\star,\mu_0\rangle^2/\|\mu_0\|^2` (distance to span μ0),
* (27) lower bound :math:`\min_{m,\vartheta}\|\sigma_\star-m\mu_0-\vartheta\kappa\mu_1\|^2`,
* (28) both minimised over the learning rate η̃ (1-D searches),
* the best linear (kernel) baseline :math:`\|\sigma_\star\|^2-\mu_1^{\star2}-(\mathbb E\sigma_\star)^2`.

For :math:`\gamma<1` the derived extension of §6 is used (teacher smoothed to :math:`h(\kappa)`, and a 3×3
least-squares problem including :math:`\psi\mu_1z`); results carry ``extension=True``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy.optimize import minimize_scalar

from .equivalence import cge_coeffs, gh_nodes, smooth
from .errors import InvalidParameterError
from .expressions import breakpoints
from .hermite import Activation
from .mapping import srf_params
from .results import Result, provenance

__all__ = ["Bounds", "bounds", "best_linear", "kappa_rule"]


def kappa_rule(teacher, nodes: int = 201):
    """κ-quadrature for ⟨σ⋆, ·⟩: Gauss–Hermite for a smooth teacher; composite Gauss–Legendre split
    at the kinks (times the Gaussian density) otherwise (never Gauss–Hermite on kinks, hermite.md §5.5)."""
    t = Activation.from_any(teacher, "teacher")
    kinks = [float(b) for b in breakpoints(t.expr)]
    if not kinks:
        return gh_nodes(nodes)
    edges = [-14.0, *[k for k in kinks if -14 < k < 14], 14.0]
    xg, wg = np.polynomial.legendre.leggauss(nodes)
    ks, ws = [], []
    for a, b in zip(edges[:-1], edges[1:]):
        ks.append((xg + 1) * (b - a) / 2 + a)
        ws.append(wg * (b - a) / 2 * np.exp(-(((xg + 1) * (b - a) / 2 + a) ** 2) / 2) / math.sqrt(2 * math.pi))
    return np.concatenate(ks), np.concatenate(ws)


def best_linear(teacher, noise_var=0) -> float:
    r"""Best affine predictor error :math:`\|\sigma_\star\|^2-\mu_1^{\star2}-(\mathbb E\sigma_\star)^2` (§6; [BES+22] Prop. 1)."""
    t = Activation.from_any(teacher, "teacher")
    return float(t.second_moment(20) - t.coeff(1, 20) ** 2 - t.coeff(0, 20) ** 2)


def _bounds_at(student, teacher, r, c, gamma, rule):
    """(upper, lower): (26) and (27) of [CPDKLZL24] at gamma = 1; the derived gamma < 1 extension of
    srf-theory.md §6 (teacher smoothed to h, third direction psi mu1 z) otherwise."""
    k, w = rule
    t = Activation.from_any(teacher, "teacher")
    mu0, mu1, _ = cge_coeffs(student, r, c, k)
    norm2 = float(t.second_moment(20))
    rho = math.sqrt(max(0.0, 1 - gamma * gamma))
    if rho == 0:
        h, h1 = t.numpy()(k), np.zeros_like(k)
    else:
        h, h1, _ = smooth(t, gamma * k, rho)
    g00 = w @ (mu0 * mu0)
    upper = norm2 - (w @ (h * mu0)) ** 2 / g00 if g00 > 1e-300 else norm2
    basis = [mu0, k * mu1]
    A = np.array([[w @ (f * g) for g in basis] for f in basis])
    b = np.array([w @ (h * f) for f in basis])
    if rho > 0:  # third direction psi mu1 z (orthogonal to the others)
        A = np.pad(A, ((0, 1), (0, 1)))
        A[2, 2] = w @ (mu1 * mu1)
        b = np.append(b, w @ (mu1 * h1))
    coef = np.linalg.lstsq(A, b, rcond=None)[0]
    lower = norm2 - b @ coef
    return float(upper), float(lower)


@dataclasses.dataclass
class Bounds(Result):
    """Upper (26) and lower (27) bounds, best linear baseline; η̃-optimised if requested (28)."""

    upper: float
    lower: float
    best_linear: float
    r: float
    c: float
    gamma: float
    eta: object
    eta_upper: object
    eta_lower: object
    optimized: bool
    extension: bool
    provenance: dict


def bounds(student, teacher, *, r=None, c=None, gamma=None, alpha0="inf", eta=None, noise_var=0,
           optimize_eta: bool = False, eta_max: float = 10.0, c_formula: str = "corrected",
           strict_odd: bool = True) -> Bounds:
    r"""Bounds (26), (27) at given sRF parameters, or from (α0, η̃) through Result 3.1; with
    ``optimize_eta`` the η̃-minimised bounds (28) over :math:`[0,\tilde\eta_{\max}]`.

    ``alpha0="inf"`` (default) is the perfect-alignment setting of the bounds (γ = 1, c = 1).

    >>> b = bounds("erf(x)", "erf(x)", r=3**0.5, c=1, gamma=1)   # srf-theory.md §6: both vanish at r = sqrt 3
    >>> abs(b.upper) < 1e-10, abs(b.lower) < 1e-10
    (True, True)
    """
    rule = kappa_rule(teacher)
    bl = best_linear(teacher)
    if optimize_eta:
        if r is not None:
            raise InvalidParameterError("optimize_eta", True, "(alpha0, eta) parametrisation, not explicit r")

        def at(e):
            p = srf_params(student, teacher, alpha0, repr(float(e)), noise_var, c_formula=c_formula,
                           strict_odd=strict_odd)
            rr, cc, gg = p.floats()
            return _bounds_at(student, teacher, rr, cc, abs(gg), rule)

        grid = np.linspace(0.0, eta_max, 41)
        vals = [at(e) for e in grid]
        out = []
        for j in (0, 1):
            i = int(np.argmin([v[j] for v in vals]))
            lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
            res = minimize_scalar(lambda e: at(e)[j], bounds=(lo, hi), method="bounded",
                                  options={"xatol": 1e-8})
            best = (res.fun, res.x) if res.fun < vals[i][j] else (vals[i][j], grid[i])
            out.append(best)
        p = srf_params(student, teacher, alpha0, repr(float(out[0][1])), noise_var, c_formula=c_formula,
                       strict_odd=strict_odd)
        rr, cc, gg = p.floats()
        return Bounds(upper=float(out[0][0]), lower=float(out[1][0]), best_linear=bl, r=rr, c=cc, gamma=abs(gg),
                      eta=None, eta_upper=float(out[0][1]), eta_lower=float(out[1][1]), optimized=True,
                      extension=abs(gg) < 1, provenance=provenance(method="1-D search over eta (grid + bounded Brent)",
                                                                   references=["[CPDKLZL24] (26)-(28)",
                                                                               "srf-theory.md §6"]))
    if r is None:
        if eta is None:
            raise InvalidParameterError("eta", None, "a learning rate eta >= 0 (or r, c, gamma)")
        p = srf_params(student, teacher, alpha0, eta, noise_var, c_formula=c_formula, strict_odd=strict_odd)
        rr, cc, gg = p.floats()
    else:
        rr, cc, gg = float(r), float(c if c is not None else 1), float(gamma if gamma is not None else 1)
    if not 0 <= abs(gg) <= 1:
        raise InvalidParameterError("gamma", gamma, "a real number in [0, 1]")
    up, lo = _bounds_at(student, teacher, rr, cc, abs(gg), rule)
    return Bounds(upper=up, lower=lo, best_linear=bl, r=rr, c=cc, gamma=abs(gg), eta=eta, eta_upper=None,
                  eta_lower=None, optimized=False, extension=abs(gg) < 1,
                  provenance=provenance(method="least squares in L2(N(0,1)) on a kappa rule",
                                        references=["[CPDKLZL24] (26)-(27), (165)-(172)", "srf-theory.md §6"]))
