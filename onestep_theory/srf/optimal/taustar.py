r"""[BES+22]'s large-learning-rate constant :math:`\tau^*` and its minimiser :math:`\kappa^*` (arXiv:2205.01445,
eq. (5.1), Lemma 6, Thm. 7, Cor. 8; docs/theory/srf-theory.md §9):
:math:`\tau^*=\inf_\kappa\tau(\kappa)`, :math:`\tau(\kappa)=\mathbb E_\xi(\sigma^*(\xi)-g_\kappa(\xi))^2`,
:math:`g_\kappa(\xi)=\mathbb E_z\sigma(\kappa\xi+z)`, with :math:`\xi,z` i.i.d. :math:`\mathcal N(0,1)`.

:math:`g_\kappa` is the cGE coefficient μ0 of docs/theory/srf-theory.md §3 at r = κ, c = 1, so τ(κ) and
:math:`\tau'(\kappa)=-2\,\mathbb E[(\sigma^*-g_\kappa)\,\xi\mu_1]` (:math:`\partial_r\mu_0=\xi\mu_1`) are sums on the
κ-rule of :func:`~onestep_theory.srf.features.kappa.srf_setup` (γ = 1); for κ < 0, :math:`g_\kappa(\xi)=g_{|\kappa|}(-\xi)`
(the teacher is reflected).  Search, as the η̃ search of docs/theory/srf-theory.md §6: a grid in θ = arctan κ over
:math:`|\kappa|\le` ``kappa_max``, bounded Brent, then the root of τ' (``brentq``; mpmath secant steps with
``dps``), so κ* is as precise as τ, not its square root.  The boundary κ → ±∞ is compared through
:math:`g_{\pm\infty}=\sigma(\pm\infty)1[\xi>0]+\sigma(\mp\infty)1[\xi<0]` (SymPy limits of the student; an unbounded
student gives +∞).  Errors: the change under the refined κ-rule level (for κ, a Newton step with the refined τ'),
plus the last optimiser step, plus rounding; for κ widened until τ'(κ ± err) has the signs of a minimum.

Exactness: when τ* is zero within its error, κ* is identified (``nsimplify``) and :math:`g_{\kappa^*}=\sigma^*`
proved with μ0 of :func:`~onestep_theory.srf.features.cge.cge_symbolic` (erf by Owen's identity) or
:func:`~onestep_theory.srf.features.smoothing.smoothing_closed_form`: Cor. 8, erf/erf, κ* = √3, τ* = 0.  A zero limit at
κ → ±∞ is exact (τ ≥ 0).  κ* = 0 with :math:`\mu_1\mu_1^\star=0` exactly is a proved stationary point, with τ(0)
exact when the Hermite moments are (that it is the global minimiser is the search's finding).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math

import mpmath
import sympy as sp
from scipy.optimize import brentq

from ...core.caches import cached
from ...core.errors import ConvergenceError, InvalidParameterError
from ...core.exact import check_dps, check_real, to_mpf
from ...core.limits import MAX_SRF_DPS
from ...core.precision import MAX_LEVEL, Target, asked_digits, past_asked, precision, refine, tolerance, ulps
from ...core.results import VouchedResult, digits_of, provenance
from ...core.search import grid_basin
from ...hermite.activation import Activation
from ...hermite.expressions import x
from ..features.cge import cge_symbolic
from ..features.kappa import rule_digits, srf_setup
from ..features.smoothing import smoothing_closed_form
from .bounds import best_linear_checked
from .optimize import eta_of_kappa

__all__ = ["TauStar", "tau_star", "tau_of_kappa", "MAX_KAPPA"]

#: Largest ``kappa_max``: the κ-rule resolves :math:`g_\kappa` on the scale 1/κ (node count ∝ κ).
MAX_KAPPA = 100
_GRID = 32                      # grid points per sign (65 in all, κ = 0 included)
_REFS = ["[BES+22] eq. (5.1), Lemma 6, Thm 7, Cor 8", "docs/theory/srf-theory.md §9", "docs/theory/srf-theory.md §3"]


@dataclasses.dataclass
class TauStar(VouchedResult):
    r""":math:`\tau^*` and :math:`\kappa^*` of [BES+22] eq. (5.1) (docs/theory/srf-theory.md §9).

    ``kappa``: ±inf when the infimum is only approached as κ → ±∞.  ``tau_exact``/``kappa_exact``: SymPy values
    when proved, else None.  ``errors``: absolute errors of ``tau``, ``kappa``.  ``kernel_bound``:
    :math:`\|P_{>1}\sigma^*\|^2` ([BES+22] Prop. 1, Fact 4: kernels do no better); ``beats_kernel``: Thm. 7's
    ``kernel_bound > 10 τ*`` (the constant may differ between versions of the paper).  ``r_equivalent`` = κ*: an
    sRF neuron with spike r_eff = κ* at c = 1 has μ0 = g_κ*; a group of docs/theory/srf-theory.md §8 with spike r
    realises it at readout value u* = κ*/r.  ``limits``: τ as κ → ±∞ (None if the student has no limit there:
    then only :math:`|\kappa|\le` ``kappa_max`` is searched).  ``eta_star``/``eta_exact``: κ* as the learning rate
    of Result 3.1 at α0 = ∞, :math:`\kappa^*/(\mu_1\mu_1^\star)` (None if none reaches it).
    """

    ERROR_KEYS = {"r_equivalent": "kappa"}

    tau: object
    kappa: object
    tau_exact: object
    kappa_exact: object
    kernel_bound: object
    beats_kernel: bool
    r_equivalent: object
    eta_star: object
    eta_exact: object
    limits: dict
    kappa_max: float
    errors: dict
    digits: dict
    dps: int | None
    provenance: dict

    def to_dict(self) -> dict:
        """As :meth:`VouchedResult.to_dict`, with the exact values as SymPy strings (``"sqrt(3)"``, ``"oo"``)."""
        return {**super().to_dict(), **{n: (None if getattr(self, n) is None else str(getattr(self, n)))
                                        for n in ("tau_exact", "kappa_exact", "eta_exact")}}


# --------------------------------------------------------------------------- symbolic pieces
def _fn(act: Activation):
    """The function of an activation as a SymPy expression (centring included), or None if c0 is not exact."""
    if not act.center:
        return act.expr
    c0 = Activation(act.expr, False).coeff_exact(0)
    return None if c0 is None else act.expr - c0


def _g_exact(s: Activation, kappa):
    r""":math:`g_\kappa(x)=\mathbb E_z\sigma(\kappa x+z)` in closed form, or None: (15)'s μ0 of
    :func:`~onestep_theory.srf.features.cge.cge_symbolic` (piecewise polynomials, erf by Owen's identity) at r = κ, c = 1,
    else :func:`~onestep_theory.srf.features.smoothing.smoothing_closed_form` at a = κx, s = 1."""
    fs = _fn(s)
    if fs is None:
        return None
    try:
        mu0 = cge_symbolic(s.expr).get("mu0")
        if mu0 is not None:
            g = mu0.subs({v: {"kappa": x, "r": kappa, "c": 1}[v.name] for v in mu0.free_symbols})
        else:
            cf = smoothing_closed_form(s.expr)
            if cf is None:
                return None
            g = cf[0].subs({v: {"a": kappa * x, "s": 1}[v.name] for v in cf[0].free_symbols})
    except Exception:  # noqa: BLE001  (no closed form: no proof)
        return None
    return g - (s.expr - fs)


def _prove_zero(s: Activation, t: Activation, kappa) -> bool:
    r"""True if :math:`g_\kappa=\sigma^*` is proved symbolically (so τ(κ) = 0 exactly)."""
    g, ft = _g_exact(s, kappa), _fn(t)
    if g is None or ft is None:
        return False
    try:
        return sp.simplify(g - ft) == 0
    except Exception:  # noqa: BLE001  (SymPy could not decide: no proof)
        return False


@cached(maxsize=64)
def _student_limits(s: Activation):
    """(σ(+∞), σ(−∞)) as SymPy values (±oo allowed), or None when a limit does not exist or is unknown; refuses
    a student growing exponentially or faster (g_κ would not be resolved by the κ-rule)."""
    fs, out = _fn(s), []
    for side in (sp.oo, -sp.oo):
        grow = v = None
        try:
            grow = sp.limit(sp.log(1 + s.expr**2) / sp.Abs(x), x, side)
            v = sp.limit(fs, x, side)
        except Exception:  # noqa: BLE001  (also fs None: a centred student with an inexact mean)
            pass
        if grow != 0:
            raise InvalidParameterError("student", s.name, "a student of sub-exponential growth",
                                        "E sigma(kappa xi + z)^2 must stay finite and resolvable for every kappa")
        out.append(v if v is not None and (v in (sp.oo, -sp.oo) or (v.is_number and v.is_real)) else None)
    return None if None in out else tuple(out)


def _limit_tau(s: Activation, t: Activation, sign: int, mp: bool):
    r"""τ as κ → sign·∞: :math:`\mathbb E(\sigma^*-g_{\pm\infty})^2` as (value, error, exact or None), or None."""
    lims, ft = _student_limits(s), _fn(t)
    if lims is None or ft is None:
        return None
    hi, lo = lims if sign > 0 else lims[::-1]          # g -> hi on xi > 0, lo on xi < 0
    if sp.oo in (hi, lo) or -sp.oo in (hi, lo):
        return (mpmath.inf if mp else math.inf), 0.0, sp.oo
    f = sp.simplify(ft - (hi + lo) / 2 - (hi - lo) / 2 * sp.sign(x))
    act = Activation.from_any(f, "teacher") if f.has(x) else None
    ex = sp.simplify(f**2) if act is None else act.second_moment(None)
    if isinstance(ex, sp.Basic):
        return (to_mpf(ex) if mp else float(ex)), 0.0, ex
    # the digits asked of ||.||^2: 2 beyond those asked (its rounding 10^-(D+2)), the error's reference 5 finer still
    d2, d7 = (past_asked(k, why="2 digits beyond those asked, the reference 5 finer") for k in (2, 7))
    v1, v2 = act.second_moment(d2), act.second_moment(d7)
    return (+v2 if mp else float(v2)), float(abs(v1 - v2)) + 10.0 ** -d2 * float(abs(v2)), None


# --------------------------------------------------------------------------- τ(κ) on the κ-rule
def _ev(s, branches, kappa, level, mp):
    """(τ, τ', ε_τ, ε_τ') at signed κ: values on the κ-rule of ``level`` (rule accuracy: 2 digits below the last
    asked) and their rounding floors (100 ulps); float64 (a fixed 53-bit context), or (``mp``) the ambient precision."""
    t = branches[0] if kappa >= 0 else branches[1]
    with (contextlib.nullcontext() if mp else precision(5)):
        S = srf_setup(s, t, abs(kappa), 1, 1, digits=rule_digits(mp), level=level, mp=mp)
        sqrt = mpmath.sqrt if S.mp else math.sqrt
        eps = ulps(2, why="the rounding of the rule's sums: 100 ulps") if mp else 1e-15
        d = S.h - S.mu0
        tau = S.w @ (d * d)
        km = S.kappa * S.mu1
        dtau = -2 * (S.w @ (d * km)) * (1 if kappa >= 0 else -1)
        m = sqrt(S.w @ (S.h * S.h + S.mu0 * S.mu0))
        nk = sqrt(S.w @ (km * km))
        rt = sqrt(abs(tau))
        rnd = eps * (tau + 2 * m * rt + eps * m * m)
        rnd_d = 2 * eps * nk * (m + rt)
    if not S.mp:
        tau, dtau = float(tau), float(dtau)
    return tau, dtau, float(rnd), float(rnd_d)


def _check_inputs(student, teacher):
    s = Activation.from_any(student, "student")
    t = Activation.from_any(teacher, "teacher")
    if not s.expr.has(x):
        raise InvalidParameterError("student", student, "a function of x (a constant gives a kappa-independent g)")
    return s, t, (t, Activation(t.expr.subs(x, -x), t.center, f"{t.name}(-x)"))


def tau_of_kappa(student, teacher, kappa, *, dps: int | None = None):
    r""":math:`\tau(\kappa)` of [BES+22] eq. (5.1) at one κ, with its absolute error (refined κ-rule plus rounding;
    docs/theory/srf-theory.md §9).  Returns ``(value, error)``; float64, or mpf at ``dps`` digits.

    >>> v, e = tau_of_kappa("erf(x)", "erf(x)", "sqrt(3)")
    >>> abs(v) <= e + 1e-25
    True
    """
    dps = check_dps(dps, MAX_SRF_DPS)
    s, _, br = _check_inputs(student, teacher)
    k = check_real(kappa, "kappa", -MAX_KAPPA, MAX_KAPPA)
    with precision(dps or 5):
        k = float(k) if dps is None else mpmath.mpf(k) if isinstance(k, (float, mpmath.mpf)) else to_mpf(k)
        return _tau_at(s, br, k, dps is not None)


def _tau_at(s, br, k, mp):
    """τ(κ) on the finest of the levels 0, 1, … compared (:func:`~onestep_theory.core.precision.refine`), with the
    change from the previous level plus rounding; the change must meet the target up to the rounding."""
    target = 10.0 ** -asked_digits() if mp else 1e-10

    def estimate(coarse, fine):
        err = float(abs(fine[0] - coarse[0])) + fine[1]
        return err, [(fine[0], err, Target(target, 2 * fine[1]))]

    out = refine(lambda level, _: _ev(s, br, k, level, mp)[::2], estimate, what="tau(kappa)")
    return out.last[0], out.estimate


# --------------------------------------------------------------------------- search
def _grid_search(s, br, kmax):
    """Grid in θ (κ = tan θ), bounded Brent in θ, then a sign-changing bracket of τ' around the minimum.
    Returns (grid values, bracket or None) — bracket None when the grid minimum is at |κ| = kmax."""
    thetas, vals, i, brent = grid_basin(lambda th: float(_ev(s, br, math.tan(th), 0, False)[0]), -math.atan(kmax),
                                        math.atan(kmax), 2 * _GRID + 1, 1e-12, ends=False)
    if brent is None:
        return vals, None
    kb = math.tan(brent[0]) if brent[1] <= vals[i] else math.tan(thetas[i])
    lo_k, hi_k = math.tan(thetas[i - 1]), math.tan(thetas[i + 1])
    delta = 1e-6 * max(1.0, abs(kb))
    while True:
        a, b = max(kb - delta, lo_k), min(kb + delta, hi_k)
        if _ev(s, br, a, 0, False)[1] < 0 < _ev(s, br, b, 0, False)[1]:
            return vals, (a, b)
        if a == lo_k and b == hi_k:
            raise ConvergenceError("tau*: the derivative of tau does not change sign around the grid minimum "
                                   f"(kappa ~ {kb:.6g}); the minimum is degenerate or not bracketed", 0)
        delta *= 10


def _polish_float(s, br, bracket, level):
    """κ* as the root of τ'_level in ``bracket`` (brentq); returns (κ, τ, τ', τ'', rnd_τ, rnd_τ', solver step)."""
    a, b = bracket
    f = (lambda k: float(_ev(s, br, k, level, False)[1]))
    if not f(a) < 0 < f(b):
        raise ConvergenceError(f"tau*: tau' lost its sign change at level {level}", 0)
    k = brentq(f, a, b, xtol=1e-15, rtol=1e-15, maxiter=200)
    tau, dt, rnd, rnd_d = _ev(s, br, k, level, False)
    h = 1e-5 * max(1.0, abs(k))
    d2 = (f(k + h) - f(k - h)) / (2 * h)
    return k, float(tau), float(dt), d2, rnd, rnd_d, 2e-15 * max(1.0, abs(k))


def _polish_mp(s, br, k0, level):
    """Secant steps on τ' in mpmath from the float64 κ* (as the η̃ polish of docs/theory/srf-theory.md §6)."""
    k = mpmath.mpf(k0)
    kp = k + mpmath.mpf(10) ** -8 * max(1, abs(k))
    gp = _ev(s, br, kp, level, True)[1]
    tol = ulps(5, why="half the guard digits beyond those asked") * max(1, abs(k))
    step, slope = mpmath.mpf(0), None
    for it in range(25):
        tau, g, rnd, rnd_d = _ev(s, br, k, level, True)
        if g == gp:
            break
        slope = (g - gp) / (k - kp)
        step = -g / slope
        kp, gp, k = k, g, k + step
        if abs(k - mpmath.mpf(k0)) > 1e-4 * max(1, abs(k0)):
            raise ConvergenceError("tau*: the secant polish left the float64 basin", it + 1, float(abs(step)))
        if abs(step) < tol:
            break
    else:
        raise ConvergenceError("tau*: the secant polish did not converge", 25, float(abs(step)))
    tau, g, rnd, rnd_d = _ev(s, br, k, level, True)
    return k, tau, g, slope if slope is not None else mpmath.mpf(0), rnd, rnd_d, abs(step)


def _minimise(s, br, bracket, mp, start=None):
    """Polish at level L = 0, 1, … (:func:`~onestep_theory.core.precision.refine`; float64, or ``mp`` from the float64
    ``start``): the values reported are the level-L + 1 ones (τ there, κ after one Newton step with the refined τ'),
    their errors the change from level L, plus the optimiser's and rounding."""
    target = 10.0 ** -asked_digits() if mp else 1e-10

    def step(level, prev):
        k, tau, dt, d2, rnd, rnd_d, opt_k = (_polish_mp(s, br, start if prev is None else prev[0], level) if mp
                                             else _polish_float(s, br, bracket, level))
        tau2, dt2, _, _ = _ev(s, br, k, level + 1, mp)
        curv = abs(float(d2))
        dtau_ref, dderiv_ref, opt_k = float(abs(tau2 - tau)), float(abs(dt2 - dt)), float(opt_k)
        k_out = k - dt2 / d2 if curv > 0 else k
        # κ: the refined Newton correction, the last solver step, the residual step and rounding, over τ''
        err_k = (dderiv_ref + rnd_d + abs(float(dt))) / curv + opt_k if curv > 0 else math.inf
        # τ: the change under level + 1, the change over the last solver step, rounding
        err_t = dtau_ref + abs(float(dt)) * opt_k + curv * opt_k ** 2 + rnd
        checks = [(tau, dtau_ref, Target(target, rnd)), (max(1.0, abs(float(k))), err_k, Target(target))]
        return k, level, k_out, tau2, err_k, err_t, checks

    k, level, k_out, tau2, err_k, err_t, _ = refine(step, lambda _, fine: (None, fine[-1]), max_level=MAX_LEVEL - 1,
                                                    first=1, what="tau*").last
    return k_out, tau2, _noise_interval(s, br, k, level, mp, err_k), err_t


def _noise_interval(s, br, k, level, mp, err_k):
    """``err_k``, widened (×10 at a time) until τ' at κ ± err is beyond its rounding floor with the signs of a
    minimum: the linear estimate fails at a degenerate minimum (τ'' = 0, e.g. τ = 2 + 15κ⁶ for He3/He2).  A zero
    ``err_k`` starts 5 digits below the last one asked (15 in float64)."""
    e = e0 = 4 * err_k or (tolerance(5, float, why="5 digits below the last one asked") if mp else 10.0 ** -20)
    while e <= 1 + abs(float(k)):
        lo, hi = _ev(s, br, k - e, level, mp), _ev(s, br, k + e, level, mp)
        if lo[1] < -lo[3] and hi[1] > hi[3]:
            return err_k if e == e0 else e          # the linear estimate holds, or the bracket is the error
        e *= 10
    return math.inf


# --------------------------------------------------------------------------- the public function
def tau_star(student, teacher, *, dps: int | None = None, kappa_max=50) -> TauStar:
    r""":math:`\tau^*=\inf_\kappa\mathbb E(\sigma^*(\xi)-\mathbb E_z\sigma(\kappa\xi+z))^2` and its minimiser κ*
    ([BES+22] eq. (5.1), Lemma 6, Thm. 7, Cor. 8; docs/theory/srf-theory.md §9).

    float64 by default (relative target 1e-10, with error estimates); with ``dps`` the minimum is polished in
    Arb/mpmath and must reach ``dps`` digits (else :class:`~onestep_theory.core.errors.ConvergenceError`).  The
    search covers :math:`|\kappa|\le` ``kappa_max`` (≤ 100) and the limits κ → ±∞; it assumes τ does not dip
    below its limit beyond ``kappa_max``.  A 65-point grid in θ = arctan κ finds the basin, so a basin narrower
    than the grid spacing can be missed.

    >>> r = tau_star("erf(x)", "erf(x)")        # Cor. 8
    >>> r.tau_exact, r.kappa_exact
    (0, sqrt(3))
    """
    dps = check_dps(dps, MAX_SRF_DPS)
    km = float(check_real(kappa_max, "kappa_max", 0, MAX_KAPPA))
    if not km > 0:
        raise InvalidParameterError("kappa_max", kappa_max, f"a real number in (0, {MAX_KAPPA}]")
    s, t, br = _check_inputs(student, teacher)
    _student_limits(s)                     # refuses fast-growing students before any quadrature
    kb, kb_err = best_linear_checked(t, dps)
    vals, bracket = _grid_search(s, br, km)
    with precision(dps or 15):
        limits = {"+inf": _limit_tau(s, t, 1, dps is not None), "-inf": _limit_tau(s, t, -1, dps is not None)}
        ulp = 2.0 ** -(mpmath.mp.prec if dps else 53)     # an exact limit rounded to the working precision
    side = min((k for k in limits if limits[k] is not None), key=lambda k: float(limits[k][0]), default=None)
    if side is not None and float(limits[side][0]) <= min(vals):      # the infimum is the limit κ -> ±∞
        (tau, err_t, ex), sg = limits[side], (1 if side == "+inf" else -1)
        kap, err_k = sg * (mpmath.inf if dps else math.inf), 0.0
        tau_ex = sp.Integer(0) if ex is not None and ex == 0 else None
        kap_ex = sg * sp.oo if tau_ex is not None else None
        method = f"limit kappa -> {side}: E(sigma* - g_inf)^2 with g_inf = sigma(+-inf) on xi >< 0"
    elif bracket is None:
        raise ConvergenceError(f"tau*: the minimum lies at |kappa| >= kappa_max = {km:g} and the limit kappa -> "
                               "+-inf is larger or unknown; increase kappa_max", 0)
    else:
        kap, tau, err_k, err_t = _minimise(s, br, bracket, False)
        method = "grid in arctan(kappa), bounded Brent, root of tau' (brentq / mpmath secant), refined kappa-rule"
        tau_ex, kap_ex = _exact_candidates(s, t, kap, tau, err_k, err_t, kb)
        if kap_ex is not None:
            with precision(dps or 15):
                kap = to_mpf(kap_ex) if dps else float(kap_ex)
                err_k = 0.0 if dps else abs(kap) * 2.0 ** -53        # float64 rounding of the exact value
                tau, err_t = ((to_mpf(tau_ex) if dps else float(tau_ex)), 0.0) if tau_ex is not None else \
                    _tau_at(s, br, kap, dps is not None)
        elif dps is not None:
            with precision(dps):
                kap, tau, err_k, err_t = _minimise(s, br, bracket, True, start=kap)
    exact = {"tau": tau_ex, "kappa": kap_ex}
    errors = {"tau": float(err_t), "kappa": float(err_k), "kernel_bound": kb_err, "limits": {k: None if v is None else
              float(v[1]) + (abs(float(v[0])) * ulp if math.isfinite(v[0]) else 0.0) for k, v in limits.items()}}
    # a proved value, or one with no error at all (an exact limit, κ = ±∞), carries every digit asked for
    digits = {n: (dps or 17) if exact[n] is not None or errors[n] == 0 else digits_of(v, errors[n])
              for n, v in (("tau", tau), ("kappa", kap))}
    if dps is not None and min(digits.values()) < dps:
        n = min(digits, key=digits.get)
        raise ConvergenceError(f"tau*: {dps} digits requested, only {digits[n]} reached for {n} "
                               f"({n} = {mpmath.nstr(tau if n == 'tau' else kap, 5)} +- {errors[n]:.1e})", 0,
                               errors[n])
    lim_vals = {k: (None if v is None else v[0]) for k, v in limits.items()}
    eta, errors["eta_star"], eta_ex = eta_of_kappa(s, t, kap, err_k, kap_ex, dps)
    return TauStar(tau=tau, kappa=kap, tau_exact=tau_ex, kappa_exact=kap_ex, kernel_bound=kb, eta_star=eta,
                   eta_exact=eta_ex, beats_kernel=bool(float(kb) > 10 * float(tau)), r_equivalent=kap,
                   limits=lim_vals, kappa_max=km, errors=errors, digits=digits, dps=dps,
                   provenance=provenance(dps=dps, method=method, references=_REFS,
                                         exact=("proved" if tau_ex is not None else "none")))


def _exact_candidates(s, t, kap, tau, err_k, err_t, kb):
    r"""(τ_exact, κ_exact) when proved, else (None, None): τ* = 0 by :func:`_prove_zero` at an ``nsimplify``-ed
    κ*, or κ* = 0 with :math:`\mu_1\mu_1^\star=0` (τ'(0) = 0 exactly) and τ(0) from exact Hermite moments."""
    kf, tf = float(kap), float(tau)
    if abs(kf) <= err_k + 1e-14:
        c1s, c1t = s.coeff_exact(1), t.coeff_exact(1)
        if (c1s is not None and c1s == 0) or (c1t is not None and c1t == 0):
            m2, c0s, c0t = t.second_moment(None), s.coeff_exact(0), t.coeff_exact(0)
            if isinstance(m2, sp.Basic) and c0s is not None and c0t is not None:
                return sp.simplify(m2 - 2 * c0s * c0t + c0s**2), sp.Integer(0)
            return None, sp.Integer(0)
        return None, None
    if not (tf <= err_t or tf <= 1e-20 * (1 + float(kb))):
        return None, None
    try:
        cand = sp.nsimplify(sp.Float(kf, 17), [sp.sqrt(2), sp.sqrt(3), sp.pi],
                            tolerance=max(1e-12, 10 * err_k) * max(1.0, abs(kf)))
    except Exception:  # noqa: BLE001
        return None, None
    if abs(float(cand) - kf) > 10 * err_k + 1e-12 * max(1.0, abs(kf)) or not _prove_zero(s, t, cand):
        return None, None
    return sp.Integer(0), cand
