r"""Bounds on the sRF test error, eqs. (26)–(31) of [CPDKLZL24] (docs/theory/srf-theory.md §6).

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

import mpmath
import numpy as np
from scipy.optimize import minimize_scalar

from ..core.exact import binary_exact, check_dps, check_real
from ..core.errors import ConvergenceError, InvalidParameterError
from ..hermite.activation import Activation
from .mapping import resolve_rcg, srf_params
from ..core.precision import GUARD_DIGITS, precision
from ..core.results import VouchedResult, digits_of, provenance
from ..core.search import grid_minimize
from .kappa import srf_setup
from ..core.limits import MAX_SRF_DPS
from .solve import MAX_LEVEL

__all__ = ["Bounds", "bounds", "best_linear", "best_linear_checked", "eta_search_range", "bias_lower_bound"]


def eta_search_range(eta_max, r=None) -> float:
    """The checked upper end of the η̃ search of (28) (docs/theory/srf-theory.md §6); refuses an explicit ``r``."""
    if r is not None:
        raise InvalidParameterError("optimize_eta", True, "(alpha0, eta) parametrisation, not explicit r")
    em = float(check_real(eta_max, "eta_max", 0, 1e6))
    if em <= 0:
        raise InvalidParameterError("eta_max", eta_max, "a real number in (0, 1e6]")
    return em


def best_linear(teacher) -> float:
    r"""Best affine predictor error :math:`\|\sigma_\star\|^2-\mu_1^{\star2}-(\mathbb E\sigma_\star)^2`
    (docs/theory/srf-theory.md §6; [BES+22] Prop. 1).  Label noise does not enter: the test error (25) is
    measured on the noiseless target.
    """
    t = Activation.from_any(teacher, "teacher")
    return float(t.second_moment(20) - t.coeff(1, 20) ** 2 - t.coeff(0, 20) ** 2)


def best_linear_checked(teacher, dps: int | None = None) -> tuple:
    r"""``(value, abs_error)`` of :func:`best_linear` at ``dps`` digits (float64 when None): exact moments where
    the teacher has closed forms (error: rounding), otherwise the change under a second evaluation at 10 more
    digits (docs/theory/srf-theory.md §6, docs/theory/numerics.md §1).

    >>> v, e = best_linear_checked("sin", 30)          # (1 - e^-2)/2 - e^-1, exactly
    >>> with mpmath.workdps(70):
    ...     abs(v - ((1 - mpmath.exp(-2)) / 2 - mpmath.exp(-1))) <= e
    True
    """
    t = Activation.from_any(teacher, "teacher")
    d = (dps or 15) + 5

    def at(k):
        with precision(k):
            return t.second_moment(k) - t.coeff(1, k) ** 2 - t.coeff(0, k) ** 2

    lo, hi = at(d), at(d + 10)
    with precision(d + 10):
        err = float(abs(lo - hi) + abs(hi) * mpmath.mpf(10) ** -(d + GUARD_DIGITS - 2))
    return (float(lo) if dps is None else lo), (err + abs(float(lo)) * 2.0 ** -53 if dps is None else err)


class _IllConditioned(Exception):
    """(27) needs more working digits: ``args[0]`` is the amplification of the orthogonalisation."""


def _bounds_at(S, norm2, extension: bool):
    """(upper, lower) on a κ setup ``S`` (float64 or mpf): (26) and (27) of [CPDKLZL24] at γ = 1; the
    derived γ < 1 extension of docs/theory/srf-theory.md §6 (teacher smoothed to h, third direction ψμ1z) otherwise."""
    w, mu0, mu1, h, h1, k = S.w, S.mu0, S.mu1, S.h, S.h1, S.kappa
    sqrt = mpmath.sqrt if S.mp else math.sqrt
    dot = (lambda f, g: w @ (f * g))
    eps_dep = mpmath.mpf(10) ** (-(mpmath.mp.dps - 5)) if S.mp else 1e-24
    basis = (mu0, k * mu1)
    norms = [dot(v, v) for v in basis]
    scale = max(norms)
    # a direction vanishes when it is zero, or rounding noise at r = 0 (mu0 of an odd sigma); when it is small
    # but r > 0, it is real and more working digits are needed
    vanish = [not vv > 0 or (not vv > eps_dep * scale and not float(S.r) > 0) for vv in norms]
    # (26): norm2 minus the squared projection of h on mu0
    upper = norm2 if vanish[0] else norm2 - dot(h, mu0) ** 2 / norms[0]
    # (27): norm2 minus the squared projection of h on span{mu0, kappa mu1}, by modified Gram-Schmidt with
    # re-orthogonalisation in the weighted inner product (the normal equations square the condition number,
    # ~1/r^4 at small r where mu0 ~ r kappa mu1: docs/theory/srf-theory.md §6)
    lower = norm2
    qs = []
    amp = 1.0          # rounding amplification of the orthogonalisation, sqrt(|v|^2/|u|^2)
    for v, vv, gone in zip(basis, norms, vanish):
        if gone:
            continue
        if not vv > eps_dep * scale:                   # small but not zero (r > 0): beyond this precision
            if S.mp:
                raise _IllConditioned(float(sqrt(scale / vv)) ** 2)
            raise ConvergenceError(f"bound (27): mu0 is {float(sqrt(vv / scale)):.1e} of kappa mu1 "
                                   f"(r = {float(S.r):.1e}), beyond the working precision; ask for more digits (dps)")
        u = v
        for _ in range(2):
            for q in qs:
                u = u - dot(q, u) * q
        uu = dot(u, u)
        if not uu > eps_dep * vv:
            # independent in exact arithmetic (r > 0) but not at this precision: (27) jumps here
            if S.mp and uu > 0:
                raise _IllConditioned(float(sqrt(vv / uu)))
            raise ConvergenceError(f"bound (27): the directions mu0 and kappa mu1 agree to {float(uu / vv):.1e} "
                                   "(relative), beyond the working precision; ask for more digits (dps)")
        amp = max(amp, float(sqrt(vv / uu)))
        q = u / sqrt(uu)
        qs.append(q)
        lower = lower - dot(q, h) ** 2
    if extension:  # third direction psi mu1 z, orthogonal to the others, with the teacher's h1
        m11 = dot(mu1, mu1)
        if m11 > 0:
            lower = lower - dot(mu1, h1) ** 2 / m11
    if not S.mp:
        upper, lower = float(upper), float(lower)
    return upper, lower, amp


@dataclasses.dataclass
class Bounds(VouchedResult):
    """Upper (26) and lower (27) bounds, best linear baseline; η̃-optimised if requested (28).

    ``errors`` holds the estimated absolute error of ``upper`` and ``lower`` (change under a refined
    κ-rule, plus rounding, plus the optimiser's for (28)); ``digits`` the digits they vouch for.
    """

    upper: object
    lower: object
    best_linear: object
    r: object
    c: object
    gamma: object
    eta: object
    eta_upper: object
    eta_lower: object
    optimized: bool
    extension: bool
    errors: dict
    digits: dict
    dps: int | None
    provenance: dict


def _evaluate(student, teacher, r, c, gamma, dps, target):
    """Both bounds at (r, c, γ) with error estimates, refining the κ-rule until ``target`` (relative) is met.

    With ``dps`` the working precision grows by the digits the orthogonalisation of (27) loses (log10 of its
    amplification, large at small r), so that the digits asked for stay within reach."""
    t = Activation.from_any(teacher, "teacher")
    ext = float(gamma) < 1
    extra, prev, level = 0, None, 0
    while level <= MAX_LEVEL:
        wd = None if dps is None else dps + GUARD_DIGITS + extra
        norm2 = float(t.second_moment(20)) if dps is None else t.second_moment(wd + 2)
        S = srf_setup(student, teacher, r, c, gamma, digits=16 if dps is None else dps + 2, level=level, dps=wd)
        if dps is None:
            *vals, amp = _bounds_at(S, norm2, ext)
        else:
            try:
                with precision(wd - GUARD_DIGITS):
                    *vals, amp = _bounds_at(S, mpmath.mpf(norm2), ext)
            except _IllConditioned as exc:
                amp = exc.args[0]
            # |u|^2 = |v|^2 / amp^2 is formed by cancellation: it loses log10(amp^2) digits, so add as many
            need = 2 * math.ceil(math.log10(amp)) if amp > 10 else 0
            if dps + GUARD_DIGITS + need > MAX_SRF_DPS + GUARD_DIGITS + 60:
                raise ConvergenceError(f"bound (27): the orthogonalisation loses {math.log10(amp):.0f} digits at "
                                       f"these parameters (r too small); {dps} digits are out of reach")
            if need > extra:                # restart at the precision this conditioning needs
                extra, prev, level = need, None, 0
                continue
        if prev is not None:
            # rounding: the unit roundoff, amplified for (27) by the orthogonalisation (ill-conditioned at small r)
            rnd = 1e-14 if dps is None else 10.0 ** -(wd - 2)
            errs = [float(abs(v - p)) + rnd * f * max(1.0, abs(float(v)))
                    for v, p, f in zip(vals, prev, (1.0, amp))]
            if all(e <= target * max(abs(float(v)), 1e-300) for e, v in zip(errs, vals)):
                break
        prev, level = vals, level + 1
    return vals, errs


def bounds(student, teacher, *, r=None, c=None, gamma=None, alpha0="inf", eta=None, noise_var=0,
           optimize_eta: bool = False, eta_max=10, c_formula: str = "corrected", strict_odd: bool = True,
           dps: int | None = None) -> Bounds:
    r"""Bounds (26), (27) at given sRF parameters, or from (α0, η̃) through Result 3.1; with
    ``optimize_eta`` the η̃-minimised bounds (28) over :math:`[0,\tilde\eta_{\max}]`.

    ``alpha0="inf"`` (default) is the perfect-alignment setting of the bounds (γ = 1, c = 1).  Every
    value carries an error estimate (``errors``); with ``dps`` the κ-rule runs in Arb and the values are
    certified to ``dps`` digits (or :class:`~onestep_theory.errors.ConvergenceError` says how many).

    >>> b = bounds("erf(x)", "erf(x)", r="sqrt(3)", c=1, gamma=1)   # docs/theory/srf-theory.md §6: both vanish at r = sqrt 3
    >>> abs(b.upper) < 1e-12, abs(b.lower) < 1e-12
    (True, True)
    """
    dps = check_dps(dps, MAX_SRF_DPS)
    target = 1e-10 if dps is None else 10.0 ** -dps
    bl, bl_err = best_linear_checked(teacher, dps)
    refs = ["[CPDKLZL24] (26)-(28), (165)-(172)", "docs/theory/srf-theory.md §6", "docs/theory/numerics.md §5"]
    if optimize_eta:
        em = eta_search_range(eta_max, r)
        return _optimized(student, teacher, alpha0, noise_var, em, c_formula, strict_odd, dps, target, (bl, bl_err),
                          refs)
    map_errs = None
    if r is None:
        if eta is None:
            raise InvalidParameterError("eta", None, "a learning rate eta >= 0 (or r, c, gamma)")
        rr, cc, gg, mapping = resolve_rcg(student, teacher, None, None, None, alpha0, eta, noise_var, c_formula,
                                          strict_odd, dps)
        map_errs = {k: mapping.errors[k] for k in ("r", "c", "gamma")}
    else:
        rr = check_real(r, "r", 0, None)
        cc = check_real(c if c is not None else 1, "c", 0, None)
        gg = check_real(gamma if gamma is not None else 1, "gamma", 0, 1)
        if not float(cc) > 0:
            raise InvalidParameterError("c", c, "a real number > 0")
    (up, lo), errs = _evaluate(student, teacher, rr, cc, gg, dps, target)
    return _result(up, lo, errs, (bl, bl_err), rr, cc, gg, eta, None, None, False, dps, target, refs,
                   "least squares in L2(N(0,1)) on the refined kappa rule", map_errs)


def _result(up, lo, errs, bl, rr, cc, gg, eta, eu, el, opt, dps, target, refs, method, arg_errs=None):
    bl, bl_err = bl
    errors = {"upper": errs[0], "lower": errs[1], "best_linear": bl_err, **(arg_errs or {})}
    digits = {"upper": digits_of(up, errs[0]), "lower": digits_of(lo, errs[1])}
    if dps is not None and min(digits.values()) < dps:
        raise ConvergenceError(f"bounds: {dps} digits requested, only {min(digits.values())} reached", 0,
                               max(errs))
    return Bounds(upper=up, lower=lo, best_linear=bl, r=rr, c=cc, gamma=gg, eta=eta, eta_upper=eu, eta_lower=el,
                  optimized=opt, extension=float(gg) < 1, errors=errors, digits=digits, dps=dps,
                  provenance=provenance(dps=dps, method=method, references=refs))


def _optimized(student, teacher, alpha0, noise_var, eta_max, c_formula, strict_odd, dps, target, bl, refs):
    """(28): each bound minimised over η̃ in [0, eta_max] — grid, bounded Brent in float64, then (with
    ``dps``) secant steps on the central-difference derivative in mpmath; the optimiser's error is the
    change of the minimum under a last step."""

    def params(e, d):
        p = srf_params(student, teacher, alpha0, e, noise_var, c_formula=c_formula, strict_odd=strict_odd, dps=d)
        with precision(d):              # |gamma| at the precision it was computed at (outside: 53 bits)
            return p.r, p.c, abs(p.gamma)

    def at_float(e):
        rr, cc, gg = (float(v) for v in params(binary_exact(e), 17))
        t = Activation.from_any(teacher, "teacher")
        S = srf_setup(student, teacher, rr, cc, gg, digits=16, level=0)
        try:
            return _bounds_at(S, float(t.second_moment(20)), gg < 1)
        except ConvergenceError:        # r > 0 too small for float64 (η̃ -> 0): not a candidate of the scan
            return math.inf, math.inf, 1.0

    grid = np.linspace(0.0, eta_max, 41)
    vals = [at_float(e) for e in grid]
    best = []
    for j in (0, 1):
        i = int(np.argmin([v[j] for v in vals]))
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
        res = minimize_scalar(lambda e: at_float(e)[j], bounds=(lo, hi), method="bounded", options={"xatol": 1e-9})
        best.append(float(res.x) if res.fun < vals[i][j] else float(grid[i]))
    out, errs, etas, eta_errs = [], [], [], []
    for j, e0 in enumerate(best):
        if dps is None:
            def fval(e, j=j):
                rr, cc, gg = params(binary_exact(e) if isinstance(e, float) else e, 20)
                v, err = _evaluate(student, teacher, rr, cc, gg, None, target)
                return v[j], err[j]
            e_opt, e_err, v, err = _argmin(fval, float(e0), 0.0, eta_max)
        else:
            with precision(dps):
                def fval(e, j=j):
                    rr, cc, gg = params(e, dps + GUARD_DIGITS + 2)
                    v, err = _evaluate(student, teacher, rr, cc, gg, dps, target)
                    return v[j], err[j]
                e_opt, e_err, v, err = _argmin(fval, mpmath.mpf(e0), mpmath.mpf(0), mpmath.mpf(eta_max))
        out.append(v)
        errs.append(err)
        etas.append(e_opt)
        eta_errs.append(e_err)
    p = params(etas[0] if dps is not None else binary_exact(etas[0]), (dps or 15) + 5)
    # r, c at the optimum move with eta (r ~ eta, c - 1 ~ eta^2; gamma does not depend on it)
    with precision((dps or 15) + 5):
        rel = eta_errs[0] / max(float(abs(etas[0])), 1e-300)
        arg_errs = {"eta_upper": eta_errs[0], "eta_lower": eta_errs[1], "r": float(abs(p[0])) * rel,
                    "c": 2 * float(abs(p[1] - 1)) * rel, "gamma": 0.0}
    return _result(out[0], out[1], errs, bl, *p, None, etas[0], etas[1], True, dps, target, refs,
                   "1-D search over eta (grid, bounded Brent), then Newton on the central-difference derivative; "
                   "the argmin's error from that root (docs/theory/numerics.md §1)", arg_errs)


def _argmin(fval, e0, lo, hi, steps: int = 8):
    r"""Polish a minimiser of ``fval`` (``(value, error)``) on ``[lo, hi]`` as the root of its derivative
    (float64 or mpmath at the ambient precision) and return ``(eta, eta_error, value, value_error)``.

    Central differences with the step :math:`h\sim\max(1,\eta)\,\epsilon_f^{1/3}` (``ε_f`` the value's relative
    error) balance truncation and noise; the error of η* is
    :math:`(|f'_h|+|f'_h-f'_{2h}|+2\epsilon_f|f|/h)/f''` — the residual derivative, its truncation (the change
    from h to 2h) and the noise of f amplified by the difference — a bound as long as f'' is resolved.  A
    minimiser at an end of the range is kept as it is (error 0): the bound is then the end's value.
    """
    v0, err0 = fval(e0)
    if not lo < e0 < hi:
        return e0, 0.0, v0, err0
    scale = max(1.0, abs(float(e0)))
    eps = max(float(err0) / max(abs(float(v0)), 1e-300), 1e-300)
    h = type(e0)(scale * eps ** (1.0 / 3.0)) if isinstance(e0, float) else mpmath.mpf(scale) * mpmath.mpf(eps) ** (
        mpmath.mpf(1) / 3)
    h = min(h, (e0 - lo) / 4, (hi - e0) / 4)
    e = e0
    for _ in range(steps):
        fp, fm = fval(e + h)[0], fval(e - h)[0]
        f2 = (fp - 2 * v0 + fm) / h**2
        if not f2 > 0:
            raise ConvergenceError("bounds (28): the eta-minimum is not resolved (zero or negative curvature)", 0)
        step = -(fp - fm) / (2 * h) / f2
        if not lo < e + step < hi:
            break
        e = e + step
        v0, err0 = fval(e)
        if abs(step) < h * eps ** (1.0 / 3.0):
            break
    fp, fm, fp2, fm2 = (fval(e + k * h)[0] for k in (1, -1, 2, -2))
    g1, g2 = (fp - fm) / (2 * h), (fp2 - fm2) / (4 * h)
    f2 = (fp - 2 * v0 + fm) / h**2
    if not f2 > 0:
        raise ConvergenceError("bounds (28): the eta-minimum is not resolved (zero or negative curvature)", 0)
    e_err = float((abs(g1) + abs(g1 - g2) + 2 * float(err0) / h) / f2)
    # the value at a point within e_err of the minimiser exceeds the minimum by at most f'' e_err^2 / 2
    return e, e_err, v0, float(err0) + float(f2) * e_err**2


def bias_lower_bound(student, teacher, *, r, c=1, gamma=1, bias_max=3) -> dict:
    r"""The lower bound (27) with a common first-layer bias b, minimised over :math:`b\in[-b_{\max},b_{\max}]`
    (docs/theory/srf-theory.md §4.9, Optional bias (130)–(132)): the distance from :math:`\sigma_\star` to
    :math:`\mathrm{span}\{\mu_0(\cdot;b),\kappa\mu_1(\cdot;b)\}` with :math:`\mu_j(\kappa;b)` the coefficients (15) of
    :math:`\sigma(\cdot+b)` at fixed (r, c, γ).  Grid (41 points) and bounded Brent in float64; the error is the
    refined-rule error at the optimum plus the change of the minimum under the optimiser's tolerance.

    >>> out = bias_lower_bound("x**2", "relu", r=1, c=1, gamma=1)      # (x+b)^2 gains a linear part
    >>> out["lower"] < out["lower_at_zero"] / 10
    True
    """
    s = Activation.from_any(student, "student")
    t = Activation.from_any(teacher, "teacher")
    rr, cc = float(check_real(r, "r", 0, None)), float(check_real(c, "c", 0, None))
    gg = float(check_real(gamma, "gamma", 0, 1))
    bm = float(check_real(bias_max, "bias_max", 0, 20))
    if not (cc > 0 and bm > 0):
        raise InvalidParameterError("c, bias_max", (c, bias_max), "c > 0 and bias_max in (0, 20]")
    norm2 = float(t.second_moment(20))

    def low(b):
        S = srf_setup(s.shifted(binary_exact(b)), t, rr, cc, gg, digits=16, level=0)
        try:
            return _bounds_at(S, norm2, gg < 1)[1]
        except ConvergenceError:
            return math.inf
    b, _ = grid_minimize(low, -bm, bm, 41, 1e-8)
    (_, lo), errs = _evaluate(s.shifted(binary_exact(b)), t, rr, cc, gg, None, 1e-10)
    shift = abs(low(b + 1e-8) - low(b))
    (_, lo0), errs0 = _evaluate(s, t, rr, cc, gg, None, 1e-10)
    return dict(lower=lo, bias=b, lower_at_zero=lo0, errors={"lower": errs[1] + shift, "lower_at_zero": errs0[1]},
                at_boundary=bool(abs(b) > bm - 1e-6), r=rr, c=cc, gamma=gg,
                provenance=provenance(method="(27) of the shifted student, grid + bounded Brent over b",
                                      references=["[CPDKLZL24] (27), (130)-(132)", "docs/theory/srf-theory.md §4.9"]))
