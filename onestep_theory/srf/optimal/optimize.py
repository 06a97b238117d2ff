r"""The η̃-optimised bounds (28) and the bias-optimised lower bound (27) of [CPDKLZL24] with certified argmins
(docs/theory/srf-theory.md §6, §4.9; docs/theory/numerics.md §9).

Through Result 3.1 the sRF parameters depend on η̃ explicitly: :math:`r=\tilde\eta A`,
:math:`c=1+\tilde\eta^2B`, γ fixed (A, B from :func:`~onestep_theory.srf.features.mapping.srf_params` at η̃ = 1), so the
derivative of a bound along η̃ is analytic (:mod:`~onestep_theory.srf.optimal.boundrule`, direction
:math:`(r',b',c')=(A,0,2\tilde\eta B)`); along a bias b it is :math:`(0,1,0)`.  A student with kinks has no
σ'' on the κ-rule: there the derivative is a central difference of values with absolute errors
(:func:`~onestep_theory.core.search.differences`).  The argmin is :func:`~onestep_theory.core.search.certified_argmin`.
"""

from __future__ import annotations

import contextlib
import math

import mpmath
import sympy as sp

from ...core.errors import ConvergenceError, InvalidParameterError
from ...core.exact import binary_exact
from ...core.precision import asked_digits, past_asked, precision, refined, tolerance
from ...core.search import certified_argmin, differences
from ...hermite.activation import Activation
from ..features.kappa import srf_setup
from ..features.mapping import srf_params
from .boundrule import bounds_on_rule, refined_bounds, smooth_enough

__all__ = ["eta_line", "eta_optimum", "bias_optimum", "eta_of_kappa"]


def eta_line(student, teacher, alpha0, noise_var, c_formula, strict_odd, mp: bool):
    r"""``(A, B, γ)`` with :math:`r=\tilde\eta A`, :math:`c=1+\tilde\eta^2B` (Result 3.1, eqs. (9)–(11)), asked 20
    digits beyond those asked at the enclosing boundary (rounded to float64 unless ``mp``)."""
    with refined(20, why="A, B enter r, c at every point of the search, whose differences (central differences at "
                         "1.5 dps + 5 digits) and secant steps must not see their rounding: 20 digits beyond"):
        p = srf_params(student, teacher, alpha0, 1, noise_var, c_formula=c_formula, strict_odd=strict_odd,
                       dps=asked_digits())
        A, B, g = +p.r, p.c - 1, abs(p.gamma)
    return (A, B, g) if mp else (float(A), float(B), float(g))


def _search(student, teacher, point, direction, which, lo, hi, mp, target, xscale, progress, method):
    """The certified argmin of bound ``which`` (0: upper (26), 1: lower (27)) along ``point(x, mp) -> (σ, r, c, γ)``
    by :func:`~onestep_theory.core.search.certified_argmin`: float64, or (``mp``) polished at the ambient precision
    of the caller's boundary, to the digits asked there, D; the callbacks ``point``, ``direction``, ``value``,
    ``deriv`` compute at the ambient precision (a central difference raises it: docs/theory/numerics.md §9).
    ``target``: the bounds' relative target at D digits (the values of the differences, asked more digits, are
    refined to those)."""
    t = Activation.from_any(teacher, "teacher")
    norm2 = float(t.second_moment(20))
    asked = asked_digits() if mp else None

    def at(mp):             # refined_bounds' digits asked (its boundary: those of the ambient) and target: the
        now = asked_digits() if mp else None        # search's; 1e-10 in a float64 stage of a search at D digits
        return now, target if now == asked else 1e-10 if now is None else 10.0 ** -now

    def scan(xf):
        s, r, c, g = point(xf, False)
        try:
            S = srf_setup(s, t, r, c, g, digits=16, level=0)
            return bounds_on_rule(S, norm2, g < 1)[which]
        except ConvergenceError:        # r > 0 too small for float64 (η̃ -> 0): not a candidate of the scan
            return math.inf

    def value(xv, mp):
        s, r, c, g = point(xv, mp)
        vals, errs, _, _ = refined_bounds(s, t, r, c, g, *at(mp), which=(which,))
        return vals[which], errs[which]

    def analytic(xv, mp, gtol):
        s, r, c, g = point(xv, mp)
        vals, errs, sl, serrs = refined_bounds(s, t, r, c, g, *at(mp), direction=direction(xv, mp), gtol=gtol,
                                               cheap=gtol is None, which=(which,))
        return sl[which], (None if serrs is None else serrs[which])

    deriv = analytic if smooth_enough(point(lo, False)[0]) else differences(value, xscale=xscale)
    # the minimum value's absolute error wanted: the bounds' absolute criterion (10^-D of ||sigma*||^2), with a
    # margin of two digits
    ftol = None if asked is None else norm2 * tolerance(2, float, why="the bounds' absolute criterion, 2 digits of margin")
    return certified_argmin(scan, deriv, value, lo, hi, mp=mp, xscale=xscale, ftol=ftol, progress=progress,
                            method=method)


def eta_optimum(student, teacher, which, *, alpha0="inf", noise_var=0, eta_max=10, c_formula="corrected",
                strict_odd=True, dps=None, target=1e-10, progress=None):
    r"""The η̃ minimising bound ``which`` (0: (26), 1: (27)) over :math:`[0,\tilde\eta_{\max}]` ((28)), as an
    :class:`~onestep_theory.core.search.Argmin` (η̃ with a certified error, the bound there), and ``(A, B, γ)``.

    >>> m, _ = eta_optimum("erf(x)", "erf(x)", 0)          # [BES+22] Cor. 8: 3 sqrt(3) pi / 4
    >>> abs(m.x - 3 * math.sqrt(3) * math.pi / 4) <= m.errors["x"] < 1e-12
    True
    """
    with precision(dps or 15):
        A, B, g = eta_line(student, teacher, alpha0, noise_var, c_formula, strict_odd, dps is not None)
    s = Activation.from_any(student, "student")

    def point(e, mp):
        if not mp:          # a float64 stage (of a search at dps: A, B are mpf, at float64's 53 bits there)
            e = float(e)
            return s, e * A, 1 + e * e * B, g
        with refined(10, why="r, c are inputs of the bounds computed at the ambient precision: 10 digits more keep "
                             "their rounding out of the values"):
            e = mpmath.mpf(e)
            return s, e * A, 1 + e * e * B, g

    def direction(e, mp):
        return (A, 0, 2 * e * B) if mp else (A, 0, 2 * float(e) * B)

    lo, hi = (0.0, float(eta_max)) if dps is None else (mpmath.mpf(0), mpmath.mpf(binary_exact(eta_max)))
    method = ("(28): grid over eta, certified bracket of the bound's eta-derivative (analytic through Result 3.1, "
              "or central differences for a kinked student), brentq, secant at dps, certified interval")
    try:
        # the search's boundary: the digits asked (float64 without dps: the float64 search runs at the caller's)
        with precision(dps) if dps is not None else contextlib.nullcontext():
            found = _search(s, teacher, point, direction, which, lo, hi, dps is not None, target, 1.0, progress,
                            method)
    except InvalidParameterError as exc:
        if exc.param != "quadrature":
            raise
        # the κ-rule at the top of the range (scale r = eta mu1 |mu1*| there) is beyond the node budget: the range
        # the user gave is what is too large (review finding: the refusal named 'quadrature=40001')
        raise InvalidParameterError("eta_max", eta_max, "a search range whose kappa rules stay within the node "
                                    f"budget; reduce --eta-max ({exc.allowed})") from None
    return found, (A, B, g)


def bias_optimum(student, teacher, *, r, c, gamma, bias_max, progress=None):
    r"""The common bias b minimising the lower bound (27) of σ(· + b) over :math:`[-b_{\max},b_{\max}]` at fixed
    (r, c, γ) (docs/theory/srf-theory.md §4.9), float64, as an :class:`~onestep_theory.core.search.Argmin`."""
    s = Activation.from_any(student, "student")

    def point(b, mp):
        return s.shifted(binary_exact(float(b))), r, c, gamma

    method = "(27) of sigma(. + b): grid over b, certified bracket of d(27)/db, brentq, certified interval"
    return _search(s, teacher, point, lambda b, mp: (0, 1, 0), 1, -float(bias_max), float(bias_max), False, 1e-10,
                   1.0, progress, method)


def eta_of_kappa(student, teacher, kappa, kappa_err, kappa_exact=None, dps=None):
    r"""[BES+22]'s κ* as a learning rate: :math:`\tilde\eta^*=\kappa^*/(\mu_1\mu_1^\star)`, at which Result 3.1
    at α0 = ∞ gives r = κ* (c = γ = 1; docs/theory/srf-theory.md §9, §2).  Returns ``(eta, error, exact or None)``,
    or ``(None, None, None)`` when no learning rate reaches κ* (μ1μ1⋆ = 0, κ* infinite or of the other sign).

    >>> eta, err, ex = eta_of_kappa("erf(x)", "erf(x)", math.sqrt(3), 0.0, sp.sqrt(3))      # Cor. 8
    >>> ex
    3*sqrt(3)*pi/4
    """
    s, t = Activation.from_any(student, "student"), Activation.from_any(teacher, "teacher")
    # μ1, μ1* asked 10 digits beyond those asked: the rounding of η* stays far below the error of κ*; rounding
    # counted as 100 units of the last digit asked of them
    with precision(dps or 15), refined(10, why="eta* = kappa*/(mu1 mu1*): its factors 10 digits beyond"):
        d = asked_digits()
        den = s.coeff(1, d) * t.coeff(1, d)
        if not (den != 0 and mpmath.isfinite(kappa) and kappa / den >= 0):
            return None, None, None
        eta = mpmath.mpf(kappa) / den
        rnd = tolerance(-2, float, why="the rounding of mu1, mu1*: 100 units of the last digit asked of them")
        err = float(kappa_err) / float(abs(den)) + float(abs(eta)) * rnd
        exact = None
        m1, m1s = s.coeff_exact(1), t.coeff_exact(1)
        if kappa_exact is not None and m1 is not None and m1s is not None and m1 * m1s != 0:
            exact = sp.simplify(kappa_exact / (m1 * m1s))
            eta = mpmath.mpf(sp.N(exact, past_asked(5, why="SymPy's digits: 5 beyond, then rounded once")))
            err = float(abs(eta)) * rnd
    if dps is None:                     # rounded to float64: half an ulp, counted
        return float(eta), err + abs(float(eta)) * 2.0 ** -52, exact
    return eta, err, exact
