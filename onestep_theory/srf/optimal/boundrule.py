r"""The bounds (26), (27) of [CPDKLZL24] on one κ-rule, with their derivatives along a direction in (r, b, c), and
their refinement over the rule levels (docs/theory/srf-theory.md §6, docs/theory/numerics.md §5, §9).

Along a path :math:`(r(x), b(x), c(x))` (b a common first-layer bias) the coefficients (15) move as
(:math:`a=r\kappa+b`, heat equation :math:`\partial_c=\tfrac12\partial_a^2`, Stein :math:`\partial_a\mathbb
E\sigma(a+\sqrt cz)=\mu_1`)

.. math::
    \mu_0'=(r'\kappa+b')\mu_1+\tfrac{c'}2\mathbb E\sigma'',\qquad
    \mu_1'=(r'\kappa+b')\mathbb E\sigma''+\tfrac{c'}2\mathbb E\sigma''',

with :math:`\mathbb E\sigma''`, :math:`\mathbb E\sigma'''` the smoothing of σ'' on the same κ-rule (its μ0, μ1).
The bounds are distances :math:`\min_c\|h-\sum_jc_jv_j\|^2`, so (envelope theorem) their derivative is
:math:`-2\sum_jc_j^*\langle h-\sum_ic_i^*v_i,\,v_j'\rangle`: analytic, with an error measured like the values'.
"""

from __future__ import annotations

import math

import mpmath
import sympy as sp

from ...core.errors import ConvergenceError
from ...core.limits import MAX_SRF_DPS
from ...core.precision import Target, asked_digits, error_of, past_asked, precision, refine, refined, ulps
from ...hermite.activation import Activation
from ...hermite.expressions import breakpoints, x
from ..features.kappa import srf_setup

__all__ = ["IllConditioned", "bounds_on_rule", "refined_bounds", "smooth_enough", "meets"]


class IllConditioned(Exception):
    """(27) needs more working digits: ``args[0]`` is the amplification of the orthogonalisation."""


def smooth_enough(student) -> bool:
    """True when σ has no kinks, so that σ'' and σ''' smooth on the κ-rule (analytic derivatives)."""
    return not breakpoints(Activation.from_any(student, "student").expr)


def bounds_on_rule(S, norm2, extension: bool, dmu=None):
    r"""``(upper, lower, amp, slopes)`` on a κ setup ``S`` (float64 or mpf): (26) and (27) of [CPDKLZL24] at
    γ = 1; the derived γ < 1 extension of docs/theory/srf-theory.md §6 (teacher smoothed to h, third direction ψμ1z)
    otherwise.  ``dmu = (μ0', μ1')`` on the nodes gives ``slopes`` = the derivatives (upper', lower') (module
    docstring) and the scale of their rounding, else None.  ``amp``: the rounding amplification of the orthogonalisation.
    """
    w, mu0, mu1, h, h1, k = S.w, S.mu0, S.mu1, S.h, S.h1, S.kappa
    sqrt = mpmath.sqrt if S.mp else math.sqrt
    dot = (lambda f, g: w @ (f * g))
    eps_dep = ulps(5, why="a direction's norm below 10^5 ulps of the largest: rounding noise") if S.mp else 1e-24
    basis = (mu0, k * mu1)
    dbasis = None if dmu is None else (dmu[0], None if dmu[1] is None else k * dmu[1])
    norms = [dot(v, v) for v in basis]
    scale = max(norms)
    # a direction vanishes when it is zero, or rounding noise at r = 0 (mu0 of an odd sigma); when it is small
    # but r > 0, it is real and more working digits are needed
    vanish = [not vv > 0 or (not vv > eps_dep * scale and not float(S.r) > 0) for vv in norms]
    # (26): norm2 minus the squared projection of h on mu0; slope -2 m <h - m mu0, mu0'>
    if vanish[0]:
        upper, s_up = norm2, (math.nan if dmu is not None else None)
    else:
        m = dot(h, mu0) / norms[0]
        upper = norm2 - m * m * norms[0]
        s_up = None if dmu is None else -2 * m * dot(h - m * mu0, dbasis[0])
    # (27): norm2 minus the squared projection of h on span{mu0, kappa mu1}, by modified Gram-Schmidt with
    # re-orthogonalisation in the weighted inner product (the normal equations square the condition number,
    # ~1/r^4 at small r where mu0 ~ r kappa mu1: docs/theory/srf-theory.md §6); each q_i = sum_j C[i][j] v_j
    lower, resid, coef = norm2, h, [0, 0]
    qs = []
    amp = 1.0          # rounding amplification of the orthogonalisation, sqrt(|v|^2/|u|^2)
    for idx, (v, vv, gone) in enumerate(zip(basis, norms, vanish)):
        if gone:
            continue
        if not vv > eps_dep * scale:                   # small but not zero (r > 0): beyond this precision
            if S.mp:
                raise IllConditioned(float(sqrt(scale / vv)) ** 2)
            raise ConvergenceError(f"bound (27): mu0 is {float(sqrt(vv / scale)):.1e} of kappa mu1 "
                                   f"(r = {float(S.r):.1e}), beyond the working precision; ask for more digits (dps)")
        u, cu = v, [1 if j == idx else 0 for j in range(2)]
        for _ in range(2):
            for q, cq in qs:
                t = dot(q, u)
                u, cu = u - t * q, [a - t * b for a, b in zip(cu, cq)]
        uu = dot(u, u)
        if not uu > eps_dep * vv:
            # independent in exact arithmetic (r > 0) but not at this precision: (27) jumps here
            if S.mp and uu > 0:
                raise IllConditioned(float(sqrt(vv / uu)))
            raise ConvergenceError(f"bound (27): the directions mu0 and kappa mu1 agree to {float(uu / vv):.1e} "
                                   "(relative), beyond the working precision; ask for more digits (dps)")
        amp = max(amp, float(sqrt(vv / uu)))
        nu = sqrt(uu)
        q, cq = u / nu, [a / nu for a in cu]
        qs.append((q, cq))
        beta = dot(q, h)
        lower = lower - beta * beta
        resid = resid - beta * q
        coef = [a + beta * b for a, b in zip(coef, cq)]
    s_lo, gsc = None, None
    if dmu is not None:
        nh = sqrt(norm2)
        if dmu[1] is None:              # the upper bound's slope only
            s_lo, gsc = math.nan, 0.0
        else:
            s_lo = -2 * sum(cj * dot(resid, dv) for cj, dv in zip(coef, dbasis) if cj != 0)
            # the scale of the slopes' rounding: sum |c_j| |v_j'| |h| (and the upper's m |mu0'| |h|)
            gsc = float(nh * sum(abs(cj) * sqrt(dot(dv, dv)) for cj, dv in zip(coef, dbasis)))
        if not vanish[0]:
            gsc = max(gsc, float(abs(m) * sqrt(dot(dbasis[0], dbasis[0])) * nh))
    if extension:  # third direction psi mu1 z, orthogonal to the others, with the teacher's h1
        m11 = dot(mu1, mu1)
        if m11 > 0:
            t1 = dot(mu1, h1) / m11
            lower = lower - t1 * t1 * m11
            if dmu is not None and dmu[1] is not None:
                s_lo = s_lo - 2 * t1 * dot(h1 - t1 * mu1, dmu[1])
                gsc += float(abs(t1) * sqrt(dot(dmu[1], dmu[1]) * dot(h1, h1)))
    if not S.mp:
        upper, lower = float(upper), float(lower)
        if dmu is not None:
            s_up, s_lo = float(s_up), float(s_lo)
    elif dmu is not None and dmu[1] is None:
        s_lo = mpmath.nan
    return upper, lower, amp, (None if dmu is None else (s_up, s_lo, gsc))


def _slopes_on(S, student, teacher, r, c, gamma, direction, accuracy, level, lower=True):
    """``(μ0', μ1')`` on the nodes of ``S`` along ``direction = (r', b', c')``: σ'' smoothed on the same rule (built
    for ``accuracy`` digits, at the ambient precision with ``S.mp``; not needed, and μ1' None, for the upper bound
    alone along a path with c' = 0)."""
    dr, db, dc = direction
    if not lower and dc == 0:
        return (dr * S.kappa + db) * S.mu1, None
    s = Activation.from_any(student, "student")
    d2 = Activation(sp.diff(s.expr, x, 2), False, f"({s.name})''")
    S2 = srf_setup(d2, teacher, r, c, gamma, digits=accuracy, level=level, mp=S.mp)
    if len(S2.kappa) != len(S.kappa) or S2.kappa[0] != S.kappa[0] or S2.kappa[-1] != S.kappa[-1]:
        raise ConvergenceError("bounds: the kappa-rule of sigma'' differs from sigma's (analytic slope unavailable)")
    a = dr * S.kappa + db
    e2, e3 = S2.mu0, S2.mu1
    return a * S.mu1 + (dc / 2) * e2, a * e2 + (dc / 2) * e3


def meets(value, err, scale) -> tuple:
    r"""``(digits, criterion)`` of a bound: relative digits :math:`\lfloor-\log_{10}(\epsilon/|v|)\rfloor`, or — for
    a value that is 0 to that many digits (within its error, or below it) — absolute digits
    :math:`\lfloor-\log_{10}((|v|+\epsilon)/s)\rfloor` of the bound's scale ``s`` = :math:`\|\sigma_\star\|^2` (the
    bounds lie in [0, s]), whichever is larger.

    >>> meets(0.0, 1e-25, 0.5)
    (24, 'absolute')
    >>> meets(0.25, 1e-12, 0.5)
    (11, 'relative')
    """
    v, e, sc = abs(float(value)), float(err), float(scale)
    rel = 0 if v == 0 or not math.isfinite(e) else (17 if e == 0 else max(0, math.floor(-math.log10(e / v))))
    if sc > 0 and math.isfinite(e) and v + e > 0:
        ab = max(0, math.floor(-math.log10((v + e) / sc)))
        if ab > rel:
            return ab, "absolute"
    return rel, "relative"


def refined_bounds(student, teacher, r, c, gamma, dps, target, *, direction=None, gtol=None, cheap=False,
                   which=(0, 1)):
    r"""Both bounds at (r, c, γ) with error estimates, refining the κ-rule
    (:func:`~onestep_theory.core.precision.refine`) until ``target`` is met (relative, or absolute of
    :math:`\|\sigma_\star\|^2` for a zero value, as :func:`meets` counts digits); with ``direction`` also their
    slopes, refined until their errors are below ``gtol`` (absolute), for the bounds in ``which`` (0: upper,
    1: lower).  ``cheap``: the level-0 values only (errors None).

    With ``dps`` the working precision grows by the digits the orthogonalisation of (27) loses (log10 of its
    amplification, large at small r), so that the digits asked for stay within reach.  Returns
    ``(values, errors, slopes, slope_errors)``."""
    extra = 0
    while True:
        try:
            if dps is None:
                return _refined(student, teacher, r, c, gamma, False, target, direction, gtol, cheap, which, 0)
            with precision(dps), refined(extra, why="the orthogonalisation of (27) loses log10(amp^2) digits"):
                return _refined(student, teacher, r, c, gamma, True, target, direction, gtol, cheap, which, extra)
        except _MoreDigits as exc:          # restart at the precision this conditioning needs
            extra = exc.args[0]


class _MoreDigits(Exception):
    """The orthogonalisation of (27) needs ``args[0]`` more working digits than it had."""


def _refined(student, teacher, r, c, gamma, mp, target, direction, gtol, cheap, which, extra):
    """:func:`refined_bounds` in float64, or (``mp``) at the ambient working precision (the boundary's and ``extra``
    more; raises _MoreDigits when they are too few); the levels are those of
    :func:`~onestep_theory.core.precision.refine`."""
    t = Activation.from_any(teacher, "teacher")
    ext = float(gamma) < 1
    gtol = math.inf if gtol is None else float(gtol)
    # the digits asked at the boundary: the ambient ones less the ``extra`` the caller raised them by
    dps = past_asked(-extra, why="the boundary's digits, below the refinement for (27)") if mp else None
    # the rules' accuracy: 16 digits in float64, else two digits below the last one asked (the change between two
    # levels, the error estimate, is not swamped by their own discretisation error: docs/theory/numerics.md §3)
    digits = 16 if dps is None else past_asked(2 - extra, why="the rules' accuracy: 2 digits past the boundary's")
    if dps is None:
        norm2 = float(t.second_moment(20))
    else:
        with refined(12, why="||sigma*||^2 two digits beyond the working ones (its rounding below the bounds')"):
            norm2 = t.second_moment(asked_digits())

    def step(level, prev):
        S = srf_setup(student, teacher, r, c, gamma, digits=digits, level=level, mp=mp)
        if dps is None:
            dmu = None if direction is None else _slopes_on(S, student, teacher, r, c, gamma, direction, digits,
                                                            level, 1 in which)
            *vals, amp, sl = bounds_on_rule(S, norm2, ext, dmu)
            return vals, amp, sl, len(S.w)
        try:
            dmu = None if direction is None else _slopes_on(S, student, teacher, r, c, gamma, direction, digits,
                                                            level, 1 in which)
            *vals, amp, sl = bounds_on_rule(S, mpmath.mpf(norm2), ext, dmu)
        except IllConditioned as exc:
            vals, amp, sl = None, exc.args[0], None
        # |u|^2 = |v|^2 / amp^2 is formed by cancellation: it loses log10(amp^2) digits, so add as many
        need = 2 * math.ceil(math.log10(amp)) if amp > 10 else 0
        if vals is None:                    # ill-conditioned beyond these digits: at least one more
            need = max(need, extra + 1)
        if past_asked(need - extra, why="the digits asked at the retry: need more than the boundary's") > \
                MAX_SRF_DPS + 60:
            raise ConvergenceError(f"bound (27): the orthogonalisation loses {math.log10(amp):.0f} digits at "
                                   f"these parameters (r too small); {dps} digits are out of reach")
        if need > extra:
            raise _MoreDigits(need)
        return vals, amp, sl, len(S.w)

    if cheap:
        vals, _, sl, _ = step(0, None)
        return vals, None, (None if sl is None else sl[:2]), None
    # rounding: the unit roundoff, amplified for (27) by the orthogonalisation (ill-conditioned at small r); of the
    # slopes, a weighted sum over N nodes: 4 u log2(N) (float64), or the working precision
    rnd = 1e-14 if dps is None else ulps(2, float, why="the rounding of the rule's weighted sums: 100 ulps")

    def estimate(coarse, fine):
        (vals, amp, sl, n), (prev, _, psl, _) = fine, coarse
        errs = [error_of(abs(v - p), 0.0, rnd * f, v) for v, p, f in zip(vals, prev, (1.0, amp))]
        checks = [(vals[j], errs[j], Target(target, scale=float(norm2))) for j in which]
        serrs = None
        if sl is not None:
            srnd = 4 * 2.0 ** -53 * math.log2(n) if dps is None else rnd
            serrs = [float(abs(a - b)) + srnd * amp * amp * sl[2] if j in which and not mpmath.isnan(a)
                     else math.inf for j, (a, b) in enumerate(zip(sl[:2], psl[:2]))]
            checks += [(0.0, serrs[j], Target(abs=gtol)) for j in which]
        return (errs, serrs), checks

    out = refine(step, estimate, what="bounds (26)-(27)")
    vals, _, sl, _ = out.last
    return vals, out.estimate[0], (None if sl is None else sl[:2]), out.estimate[1]
