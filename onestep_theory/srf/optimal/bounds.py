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

import mpmath

from ...core.errors import ConvergenceError, InvalidParameterError
from ...core.exact import check_dps, check_real
from ...core.limits import MAX_SRF_DPS
from ...core.precision import asked_digits, precision, refined, ulps
from ...core.results import VouchedResult, digits_of, provenance
from ...core.vouching import with_error
from ...hermite.activation import Activation
from ..features.mapping import resolve_rcg
from .boundrule import meets, refined_bounds
from .optimize import bias_optimum, eta_optimum

__all__ = ["Bounds", "BiasBound", "bounds", "best_linear", "best_linear_checked", "eta_search_range",
           "bias_lower_bound"]


def eta_search_range(eta_max, r=None, c=None, gamma=None) -> float:
    """The checked upper end of the η̃ search of (28) (docs/theory/srf-theory.md §6); refuses explicit ``r``,
    ``c`` or ``gamma`` (the search runs over η̃ through Result 3.1: it never replaces given values)."""
    for name, v in (("r", r), ("c", c), ("gamma", gamma)):
        if v is not None:
            raise InvalidParameterError(name, v, "no value with optimize_eta: the search sets r, c, gamma from "
                                        "(alpha0, eta) by Result 3.1 and would replace it (give alpha0, or drop "
                                        "optimize_eta)")
    em = float(check_real(eta_max, "eta_max", 0, 1e6))
    if em <= 0:
        raise InvalidParameterError("eta_max", eta_max, "a real number in (0, 1e6]")
    return em


def best_linear(teacher):
    r"""Best affine predictor error :math:`\|\sigma_\star\|^2-\mu_1^{\star2}-(\mathbb E\sigma_\star)^2`
    (docs/theory/srf-theory.md §6; [BES+22] Prop. 1).  Label noise does not enter: the test error (25) is
    measured on the noiseless target.  The float64 value of :func:`best_linear_checked` with its error: an mpf
    (``float()`` gives the float) whose repr shows its vouched digits ± error.

    >>> v = best_linear("sin")
    >>> float(v) == best_linear_checked("sin")[0], v.error < 1e-15
    (True, True)
    """
    v, err = best_linear_checked(teacher)
    return with_error(mpmath.mpf(v), err)


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

    def value():                # at the ambient boundary: the moments are public entries taking the digits asked
        k = asked_digits()
        return t.second_moment(k) - t.coeff(1, k) ** 2 - t.coeff(0, k) ** 2

    with precision(dps or 15), refined(5, why="5 digits beyond those asked: the value enters the differences of "
                                               "(26)-(28) with the bounds at dps digits"):
        lo, rounding = value(), ulps(2, why="the rounding of the value: 100 ulps")
        with refined(why="the error estimate's second evaluation"):
            hi = value()
            err = float(abs(lo - hi) + abs(hi) * rounding)
    return (float(lo) if dps is None else lo), (err + abs(float(lo)) * 2.0 ** -53 if dps is None else err)


@dataclasses.dataclass
class Bounds(VouchedResult):
    """Upper (26) and lower (27) bounds, best linear baseline; η̃-optimised if requested (28).

    ``errors`` holds the estimated absolute error of ``upper`` and ``lower`` (change under a refined
    κ-rule, plus rounding, plus the optimiser's for (28)) and of the argmins ``eta_upper``, ``eta_lower`` (certified:
    the true argmin lies within it); ``digits`` the digits they vouch for; ``criteria`` how ``dps`` was met for
    each bound — ``relative`` digits, or ``absolute`` for a bound that is 0 within its error (digits of the
    scale ``||sigma*||^2``, docs/theory/numerics.md §9).  A bound is a squared distance: a value consistent with
    0 is printed as 0 with the error ``|value| + error``.
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
    criteria: dict
    scale: object
    search: dict
    dps: int | None
    provenance: dict


def bounds(student, teacher, *, r=None, c=None, gamma=None, alpha0="inf", eta=None, noise_var=0,
           optimize_eta: bool = False, eta_max=10, c_formula: str = "corrected", strict_odd: bool = True,
           dps: int | None = None, progress=None) -> Bounds:
    r"""Bounds (26), (27) at given sRF parameters, or from (α0, η̃) through Result 3.1; with
    ``optimize_eta`` the η̃-minimised bounds (28) over :math:`[0,\tilde\eta_{\max}]` (explicit r, c, γ are
    refused there).

    ``alpha0="inf"`` (default) is the perfect-alignment setting of the bounds (γ = 1, c = 1).  Every
    value carries an error estimate (``errors``); with ``dps`` the κ-rule runs in Arb and the values are
    certified to ``dps`` digits — relative, or absolute of :math:`\|\sigma_\star\|^2` for a bound that is 0
    (``criteria``) — or :class:`~onestep_theory.errors.ConvergenceError` says how many.  The argmins of (28) are
    :func:`~onestep_theory.core.search.certified_argmin` (docs/theory/numerics.md §9).

    >>> b = bounds("erf(x)", "erf(x)", r="sqrt(3)", c=1, gamma=1)   # both vanish at r = sqrt 3 (Cor. 8)
    >>> float(b.upper), float(b.lower), b.criteria["upper"]
    (0.0, 0.0, 'absolute')
    """
    dps = check_dps(dps, MAX_SRF_DPS)
    em = eta_search_range(eta_max, r, c, gamma) if optimize_eta else None     # refuses r, c, gamma first
    target = 1e-10 if dps is None else 10.0 ** -dps
    bl, bl_err = best_linear_checked(teacher, dps)
    refs = ["[CPDKLZL24] (26)-(28), (165)-(172)", "docs/theory/srf-theory.md §6", "docs/theory/numerics.md §5",
            "docs/theory/numerics.md §9"]
    t = Activation.from_any(teacher, "teacher")
    scale = float(t.second_moment(20))
    if optimize_eta:
        ms = [eta_optimum(student, teacher, j, alpha0=alpha0, noise_var=noise_var, eta_max=em, c_formula=c_formula,
                          strict_odd=strict_odd, dps=dps, target=target, progress=progress) for j in (0, 1)]
        (mu, (A, B, g)), (ml, _) = ms
        with precision(dps or 15):
            e = mu.x
            rr, cc = e * A, 1 + e * e * B
            eu = float(mu.errors["x"])
            # r, c at the optimum move with eta: r' = A, c' = 2 eta B (gamma does not depend on it)
            arg_errs = {"eta_upper": eu, "eta_lower": float(ml.errors["x"]), "r": float(abs(A)) * eu,
                        "c": 2 * float(abs(e * B)) * eu, "gamma": 0.0}
            if dps is None:
                rr, cc = float(rr), float(cc)
        search = {n: {"order": m.order, "at_end": m.at_end, "evaluations": m.evaluations}
                  for n, m in (("upper", mu), ("lower", ml))}
        errs = [float(mu.errors["value"]), float(ml.errors["value"])]
        return _result(mu.value, ml.value, errs, (bl, bl_err), rr, cc, g, None, mu.x, ml.x, True, dps, refs,
                       mu.provenance["method"], scale, arg_errs, search)
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
    (up, lo), errs, _, _ = refined_bounds(student, teacher, rr, cc, gg, dps, target)
    return _result(up, lo, errs, (bl, bl_err), rr, cc, gg, eta, None, None, False, dps, refs,
                   "least squares in L2(N(0,1)) on the refined kappa rule", scale, map_errs)


def _clamp(v, e):
    """A squared distance consistent with 0 is printed as 0: ``(0, |v| + e)`` (the interval still holds v ± e);
    a negative value beyond its error cannot occur unless the error estimate failed, so it is kept as it is."""
    if abs(float(v)) <= float(e):
        return (mpmath.mpf(0) if isinstance(v, mpmath.mpf) else 0.0), float(e) + abs(float(v))
    return v, float(e)


def _result(up, lo, errs, bl, rr, cc, gg, eta, eu, el, opt, dps, refs, method, scale, arg_errs=None, search=None):
    bl, bl_err = bl
    (up, e_up), (lo, e_lo) = _clamp(up, errs[0]), _clamp(lo, errs[1])
    errors = {"upper": e_up, "lower": e_lo, "best_linear": bl_err, **(arg_errs or {}),
              "scale": abs(scale) * 2.0 ** -52}          # ||sigma*||^2 at 20 digits, rounded to float64
    got = {"upper": meets(up, e_up, scale), "lower": meets(lo, e_lo, scale)}
    digits = {k: v[0] for k, v in got.items()}
    if opt:
        for k, x in (("eta_upper", eu), ("eta_lower", el)):
            digits[k] = (dps or 17) if errors[k] == 0 else digits_of(x, errors[k]) if x != 0 else 0
    if dps is not None:
        short = [k for k in ("upper", "lower") if digits[k] < dps]
        # an argmin must meet dps too, unless its minimum is flat (f' ~ (x - x*)^p, p >= 3: the argmin is
        # determined to ~1/p of the digits, and the bound's value, the quantity of (28), is what dps certifies)
        short += [k for k in ("eta_upper", "eta_lower") if opt and digits[k] < dps
                  and search[k[4:]]["order"] <= 1]
        if short:
            k = min(short, key=lambda n: digits[n])
            val = {"upper": up, "lower": lo, "eta_upper": eu, "eta_lower": el}[k]
            raise ConvergenceError(f"bounds: {dps} digits requested, only {digits[k]} reached for {k} "
                                   f"({k} = {mpmath.nstr(val, 6)} +- {errors[k]:.1e})", 0, errors[k])
    return Bounds(upper=up, lower=lo, best_linear=bl, r=rr, c=cc, gamma=gg, eta=eta, eta_upper=eu, eta_lower=el,
                  optimized=opt, extension=float(gg) < 1, errors=errors, digits=digits,
                  criteria={k: v[1] for k, v in got.items()}, scale=scale, search=search or {}, dps=dps,
                  provenance=provenance(dps=dps, method=method, references=refs))


@dataclasses.dataclass
class BiasBound(VouchedResult):
    """The lower bound (27) minimised over a common first-layer bias b (``lower`` at ``bias``), and without bias
    (``lower_at_zero``); ``errors`` for the three (the bias's certified: the true minimiser lies within it);
    ``at_boundary``: the minimiser is an end of [-bias_max, bias_max] (docs/theory/srf-theory.md §4.9)."""

    lower: object
    bias: object
    lower_at_zero: object
    at_boundary: bool
    r: object
    c: object
    gamma: object
    errors: dict
    digits: dict
    provenance: dict


def bias_lower_bound(student, teacher, *, r, c=1, gamma=1, bias_max=3) -> BiasBound:
    r"""The lower bound (27) with a common first-layer bias b, minimised over :math:`b\in[-b_{\max},b_{\max}]`
    (docs/theory/srf-theory.md §4.9, Optional bias (130)–(132)): the distance from :math:`\sigma_\star` to
    :math:`\mathrm{span}\{\mu_0(\cdot;b),\kappa\mu_1(\cdot;b)\}` with :math:`\mu_j(\kappa;b)` the coefficients (15) of
    :math:`\sigma(\cdot+b)` at fixed (r, c, γ).  Float64; the minimiser is
    :func:`~onestep_theory.core.search.certified_argmin` (analytic derivative in b for a smooth σ, differences
    otherwise), its error certified, the value's error the refined-rule error plus the argmin's contribution.

    >>> out = bias_lower_bound("x**2", "relu", r=1, c=1, gamma=1)      # (x+b)^2 gains a linear part
    >>> out.lower < out.lower_at_zero / 10
    True
    """
    s = Activation.from_any(student, "student")
    t = Activation.from_any(teacher, "teacher")
    rr, cc = float(check_real(r, "r", 0, None)), float(check_real(c, "c", 0, None))
    gg = float(check_real(gamma, "gamma", 0, 1))
    bm = float(check_real(bias_max, "bias_max", 0, 20))
    if not (cc > 0 and bm > 0):
        raise InvalidParameterError("c, bias_max", (c, bias_max), "c > 0 and bias_max in (0, 20]")
    m = bias_optimum(s, t, r=rr, c=cc, gamma=gg, bias_max=bm)
    (_, lo0), errs0, _, _ = refined_bounds(s, t, rr, cc, gg, None, 1e-10)
    errors = {"lower": float(m.errors["value"]), "bias": float(m.errors["x"]), "lower_at_zero": float(errs0[1])}
    return BiasBound(lower=m.value, bias=m.x, lower_at_zero=lo0, at_boundary=bool(m.at_end), r=rr, c=cc, gamma=gg,
                     errors=errors, digits={k: digits_of(v, errors[k]) for k, v in
                                            (("lower", m.value), ("bias", m.x), ("lower_at_zero", lo0))},
                     provenance=provenance(method=m.provenance["method"],
                                           references=["[CPDKLZL24] (27), (130)-(132)", "docs/theory/srf-theory.md §4.9",
                                                       "docs/theory/numerics.md §9"]))
