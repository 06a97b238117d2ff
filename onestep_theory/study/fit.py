r"""Extrapolation of a finite-size gap to :math:`d\to\infty`, and its verdict with power (docs/theory/numerics.md §8).

A theory is an asymptotic statement; a simulation is at finite d.  Given per-size mean gaps
:math:`\bar g(d_i)` (simulation minus theory) with standard errors :math:`s_i` over :math:`n_i` seeds, fit

.. math:: g(d)=g_\infty+\sum_k a_k\,d^{-e_k}\qquad(\text{default }e=(\tfrac12,1))

by weighted least squares (weights :math:`1/s_i^2`).  :math:`g_\infty=\sum_ic_i\bar g_i` (``c`` the first row of
:math:`(X^\top WX)^{-1}X^\top W`) carries the standard error :math:`s_\infty^2=\sum_ic_i^2s_i^2`; when
:math:`\chi^2/\nu>1` it is inflated by :math:`\sqrt{\chi^2/\nu}` (the Birge ratio).

**Degrees of freedom of** :math:`s_\infty`.  Each :math:`s_i^2` is estimated from :math:`n_i-1` degrees of freedom, so
:math:`s_\infty^2` has the Welch–Satterthwaite :math:`\nu_S=(\sum_iu_i)^2/\sum_iu_i^2/(n_i-1)`, :math:`u_i=c_i^2s_i^2`
(:math:`\infty` when the :math:`n_i` are not given).  The Birge factor is estimated from the fit's :math:`\nu` residual
degrees of freedom; the relative variances of the two independent factors add, so an inflated :math:`s_\infty` has
:math:`\nu_{\rm eff}=(1/\nu_S+1/\nu)^{-1}`.  Then :math:`T=(g_\infty-g)/s_\infty\sim t_{\nu_{\rm eff}}`.

**Verdict.** The theory is inside the 95 % interval when :math:`|g_\infty|\le t_{0.975,\nu}s_\infty`.  **Power**: the
smallest true gap :math:`\delta` that this two-sided 5 % test detects with probability 80 % (the minimal detectable
effect, :func:`detectable_gap`) solves :math:`P(|T'|>t_{0.975,\nu})=0.8`, :math:`T'` noncentral :math:`t_\nu` with
noncentrality :math:`\delta/s_\infty`.  For :math:`\nu=\infty`, :math:`P=\Phi(\delta/s-z_{0.975})+\Phi(-\delta/s-
z_{0.975})`, so :math:`\delta\approx(z_{0.975}+z_{0.80})s_\infty=2.8016\,s_\infty` (the second term is
:math:`<10^{-5}`); for small :math:`\nu` it is larger (:math:`3.11\,s` at :math:`\nu=10`, :math:`3.51\,s` at :math:`\nu=5`,
:math:`5.65\,s` at :math:`\nu=2`, :math:`16.3\,s` at :math:`\nu=1`).  "Theory inside" is never said without this gap: when it exceeds the tolerance (default 1 % of the
theory) the verdict is **underpowered** — no evidence of agreement; with no degree of freedom left, **no verdict**.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import integrate, optimize, special, stats

from ..core.caches import cached
from ..core.errors import InvalidParameterError
from ..core.results import Result, provenance

__all__ = ["StudyFit", "extrapolate", "detectable_gap", "power_verdict", "DEFAULT_TOLERANCE"]

#: The default tolerance of a study's power: a detectable gap above 1 % of the theory is "underpowered".
DEFAULT_TOLERANCE = 0.01


@dataclasses.dataclass
class StudyFit(Result):
    """The fitted :math:`g_\\infty` with its standard error, the other coefficients, χ², the verdict and its power.
    ``g_inf``, ``se``, ``half_width``, ``detectable_gap`` are absolute (units of the quantity); the ``*_pct`` fields
    are the same in percent of the theory value ``scale`` (None without one).  ``status``: ``outside``,
    ``inside`` (powered: the detectable gap is within ``tolerance``), ``underpowered`` or ``no verdict``."""

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
    nu: float | None                # degrees of freedom of se (None: infinite)
    half_width: float               # of the 95 % interval, t_{0.975, nu} se
    detectable_gap: float           # 95 % confidence (two-sided), 80 % power
    scale: float | None
    g_inf_pct: float | None
    se_pct: float | None
    detectable_gap_pct: float | None
    tolerance_pct: float | None
    status: str
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


def detectable_gap(se: float, nu: float = math.inf, level: float = 0.95, power: float = 0.8) -> float:
    r"""The smallest true gap that a two-sided test at ``level`` detects with probability ``power``, for an estimate
    with standard error ``se`` on ``nu`` degrees of freedom (docs/theory/numerics.md §8; the noncentral t as one
    integral over the chi distribution of the scale, or the normal limit for ``nu = inf``).

    >>> round(detectable_gap(1.0), 4), round(detectable_gap(1.0, 10), 3)
    (2.8016, 3.11)
    """
    if not (se >= 0 and math.isfinite(se)) or not nu > 0 or not 0 < level < 1 or not 0 < power < 1:
        raise InvalidParameterError("se, nu", (se, nu), "se >= 0 finite, nu > 0, level and power in (0, 1)")
    return _unit_gap(float(nu), float(level), float(power)) * se


@cached(256)
def _t_crit(nu):
    """The two-sided 95 % critical value on ``nu`` degrees of freedom (the normal one beyond 1e5, as in
    :func:`detectable_gap`)."""
    return float(stats.norm.ppf(0.975) if math.isinf(nu) or nu > 1e5 else stats.t.ppf(0.975, nu))


@cached(256)
def _unit_gap(nu, level, power):
    """:func:`detectable_gap` for se = 1."""
    if math.isinf(nu) or nu > 1e5:      # the normal limit (the t-based gap differs by < 1e-5 of it there)
        zc = stats.norm.ppf((1 + level) / 2)
        f = lambda x: special.ndtr(x - zc) + special.ndtr(-zc - x) - power      # noqa: E731
        hi = zc + stats.norm.ppf(power) + 1
    else:
        tc, rn = stats.t.ppf((1 + level) / 2, nu), math.sqrt(nu)
        lo, top = stats.chi.ppf(1e-16, nu) / rn, stats.chi.isf(1e-16, nu) / rn     # W's range, to 1e-16
        const = math.log(rn) - (nu / 2 - 1) * math.log(2) - special.gammaln(nu / 2)

        def f(x):       # P(|Z + x| > tc W), W = sqrt(V / nu), V ~ chi2_nu: one smooth integral over W
            def integrand(w):     # the density of W (chi_nu of w sqrt(nu), times sqrt(nu)) times the two tails
                u = w * rn
                return math.exp(const + (nu - 1) * math.log(u) - u * u / 2) * (special.ndtr(x - tc * w)
                                                                              + special.ndtr(-tc * w - x))
            return integrate.quad(integrand, lo, top, points=[1.0], epsabs=1e-13, epsrel=1e-11, limit=200)[0] - power

        hi = 2 * (tc + stats.t.ppf(power, nu)) + 2
        for _ in range(60):
            if f(hi) >= 0:
                break
            hi *= 2
    return float(optimize.brentq(f, 0.0, hi, xtol=1e-12, rtol=1e-12))


def power_verdict(g_inf: float, se: float, nu: float = math.inf, *, dof: int = 1, scale: float | None = None,
                  tolerance: float = DEFAULT_TOLERANCE, name: str = "theory") -> dict:
    r"""The verdict on an extrapolated gap ``g_inf`` ± ``se`` (``nu`` degrees of freedom), with the smallest gap the
    study could detect; ``scale`` (the theory value) puts the gaps in percent of it and ``tolerance`` is relative to
    it (docs/theory/numerics.md §8).  ``dof = 0``: the fit cannot test itself (no verdict).  ``name``: what the gap
    is measured against (the text says "``name`` inside the 95 % interval").

    >>> v = power_verdict(-0.0009, 0.0005, scale=0.0325)       # 2.8 % below, +- 1.5 %: detectable 4.3 %
    >>> v["status"], round(v["g_inf_pct"], 2), round(v["detectable_gap_pct"], 2)
    ('underpowered', -2.77, 4.31)
    """
    tol = float(tolerance)
    if not 0 < tol < math.inf:
        raise InvalidParameterError("tolerance", tolerance, "a relative tolerance > 0 (e.g. 0.01 for 1 %)")
    half, mde = _t_crit(float(nu)) * se, detectable_gap(se, nu)
    rel = scale is not None and scale != 0 and math.isfinite(scale)
    pct = (lambda x: 100 * x / scale) if rel else (lambda x: None)                          # noqa: E731
    unit = "% of the theory" if rel else "(absolute; the theory is 0)"
    show = (lambda x: f"{100 * x / scale:+.2f} %") if rel else (lambda x: f"{x:+.3g}")      # noqa: E731
    size = (lambda x: f"{100 * abs(x / scale):.2g} %") if rel else (lambda x: f"{abs(x):.2g}")  # noqa: E731
    gap = f"g_inf - {name} = {show(g_inf)} +- {size(se).rstrip(' %')}{' %' if rel else ''}"
    dofs = "" if math.isinf(nu) else f", {nu:.3g} dof"
    power = f"smallest detectable gap {size(mde)} (95 % confidence, 80 % power{dofs})"
    interval = f"95 % interval +- {size(half)}{dofs}"       # t_{0.975, nu} se: what "inside" is measured against
    inside = abs(g_inf) <= half
    powered = rel and mde <= tol * abs(scale)
    if dof == 0:
        status = "no verdict"
        text = (f"no verdict: the fit has 0 degrees of freedom; {gap}; with these errors this study could not detect "
                f"a gap smaller than {size(mde)}")
    elif not inside:
        status = "outside"
        text = f"{name} outside the 95 % interval: {gap} ({abs(g_inf) / se:.1f} standard errors); {power}"
    elif powered:
        status = "inside"
        text = f"{name} inside the 95 % interval: {gap} ({interval}); {power}, within the tolerance {100 * tol:g} %"
    else:
        status = "underpowered"
        text = (f"underpowered: {name} inside the 95 % interval ({gap}; {interval}), but this study could not "
                f"detect a gap smaller than {size(mde)} (95 % confidence, 80 % power; tolerance {100 * tol:g} %): no "
                "evidence of agreement")
    return {"status": status, "verdict": text, "theory_inside": None if dof == 0 else bool(inside),
            "nu": None if math.isinf(nu) else float(nu), "half_width": half, "detectable_gap": mde,
            "scale": float(scale) if rel else None, "g_inf_pct": pct(g_inf), "se_pct": pct(se) and abs(pct(se)),
            "detectable_gap_pct": pct(mde) and abs(pct(mde)), "tolerance_pct": 100 * tol if rel else None}


def extrapolate(d, gaps, se, exponents=(0.5, 1.0), *, reps=None, scale=None, tolerance=DEFAULT_TOLERANCE,
                name="theory") -> StudyFit:
    r"""Weighted least-squares fit of :math:`g(d)=g_\infty+\sum_ka_kd^{-e_k}` to per-size mean gaps ``gaps`` with
    standard errors ``se`` at sizes ``d`` (docs/theory/numerics.md §8).  Needs more sizes than exponents.  ``reps``:
    the seeds behind each standard error (None: the errors are taken as exact); ``scale``: the theory value, to state
    the gaps in percent of it; ``tolerance``: relative, the largest detectable gap that still counts as powered;
    ``name``: what the gaps are measured against (:func:`power_verdict`).

    >>> ds = [250, 500, 1000, 2000]
    >>> fit = extrapolate(ds, [0.01 + 0.3 / math.sqrt(x) for x in ds], [1e-3] * 4, exponents=(0.5,))
    >>> round(fit.g_inf, 12), fit.theory_inside, fit.status
    (0.01, False, 'outside')
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
    n = None if reps is None else np.asarray(reps, dtype=float)
    if n is not None and (n.shape != d.shape or not np.all(n >= 2)):
        raise InvalidParameterError("reps", reps, "one count >= 2 per size")
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
    u = ((cov @ X.T)[0] * w * w * s) ** 2                 # c_i^2 s_i^2: the share of each size in se^2
    nu = math.inf if n is None else float(u.sum() ** 2 / np.sum(u * u / (n - 1)))
    if inflate:
        cov = cov * (c2 / dof)
        nu = 1 / (1 / nu + 1 / dof)
    g_inf, se_inf = float(coef[0]), float(math.sqrt(cov[0, 0]))
    v = power_verdict(g_inf, se_inf, nu, dof=dof, scale=scale, tolerance=tolerance, name=name)
    if dof == 0:       # fewer terms only where there is one to drop (the constant g_inf stays)
        v["verdict"] += "; add a size (--d)" + (f" or fit fewer terms (e.g. --exponents {ex[-1]:g})" if len(ex) > 1
                                                else "")
    return StudyFit(g_inf=g_inf, se=se_inf, coefficients={f"d^-{e:g}": float(c) for e, c in zip(ex, coef[1:])},
                    chi2=c2, dof=dof, p_value=float(stats.chi2.sf(c2, dof)) if dof > 0 else math.nan,
                    inflated=bool(inflate), exponents=ex, sizes=d.astype(int).tolist(), **v,
                    provenance=provenance(method="weighted least squares, Birge-inflated when chi2/dof > 1; t interval "
                                                 "on Satterthwaite degrees of freedom; detectable gap at 95 % "
                                                 "confidence, 80 % power (noncentral t)",
                                          references=["docs/theory/numerics.md §8"]))
