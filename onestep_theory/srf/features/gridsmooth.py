r"""Gaussian smoothing of one smooth function at many shifts on one shared grid (docs/theory/numerics.md §3).

For a function :math:`f` without kinks, analytic in a strip around the real axis, the moments
:math:`(\mathbb E f(a+sZ),\ \mathbb E[Zf(a+sZ)],\ \mathbb E f(a+sZ)^2)` at many shifts :math:`a` (the κ nodes of
the saddle point's rules, every readout group) are trapezoidal sums on one uniform grid :math:`x_m = mh`,

.. math::

    \mathbb E\,g(a+sZ) = \int g(x)\,\varphi_s(x-a)\,dx \approx h\sum_m g(x_m)\,\varphi_s(x_m-a),
    \qquad \varphi_s(x_m-a) = \frac{e^{-x_m^2/2c}\,G^m\,e^{-a^2/2c}}{\sqrt{2\pi c}},\quad G = e^{ha/c},\ c=s^2,

so that for every shift the sum over the window :math:`|x_m-a|\le Ls` is the polynomial
:math:`\sum_k c_{m_0-W+k}G^k` with coefficients :math:`c_m = g(x_m)e^{-x_m^2/2c}` computed once per grid node:
:math:`f` is evaluated once per node of the grid instead of once per (shift, inner node), and each shift costs
three Arb polynomial evaluations.

Error (Poisson summation): for :math:`g` analytic in :math:`|\operatorname{Im}x|<d`, the trapezoid's error is at
most :math:`2M_g/(e^{2\pi d/h}-1)` with :math:`M_g` the integral of :math:`|g|` on the lines
:math:`\operatorname{Im}x=\pm d`, at most :math:`\max(1,M)^2e^{d^2/2c}(1+d/s)` for the three moments when
:math:`|f|\le M` on the strip.  :math:`M` is **certified**, not assumed: Arb encloses :math:`f` on complex tiles
covering :math:`[x_0,x_1]\times[-d,d]` (:func:`strip_sup`; a pole or a steep feature in the strip gives an infinite
or a huge bound), for :math:`d\in\{1,\tfrac12,\dots,\tfrac1{16}\}` and the Gaussian optimum :math:`\sqrt{2cD}`,
and the step is the largest with the bound at :math:`10^{-(D+2)}` of the moments' scale (:func:`strip_step`;
:math:`D` = the accuracy asked + :data:`MARGIN`); a function with no finite bound on any of these strips is left to
the panel rule (``None``).  The step is then also checked: at seven shifts spread over the range the sums at
:math:`h` and :math:`h/2` must agree to :math:`10^{-(D+1)}` of their scale beyond the balls' rounding, else
:math:`h` is halved (at most :data:`MAX_HALVINGS` times).  The window :math:`L` puts the neglected Gaussian tail
below :math:`10^{-(D+4)}\max(1,\sup|f|)`.  Refinement ``level`` divides the step by
:data:`~onestep_theory.hermite.quadrature.GROWTH` per level (and widens the window), so the change between two
levels of the saddle point measures this rule's error like the panel rule's (docs/theory/numerics.md §5).

References
----------
L. N. Trefethen and J. A. C. Weideman, *The exponentially convergent trapezoidal rule*, SIAM Review 56 (2014),
Theorem 5.1; [CPDKLZL24] arXiv:2402.04980, (15).
"""

from __future__ import annotations

import math

import flint

from ...core.precision import refined
from ...hermite.quadrature import GROWTH

__all__ = ["grid_step", "strip_sup", "strip_step", "grid_smooth_arb", "GRID_MIN_POINTS", "MAX_GRID_NODES",
           "MAX_HALVINGS", "STRIP", "MARGIN"]

#: fewer shifts than this: the panel rule (its one-off cost is smaller than the grid's)
GRID_MIN_POINTS = 24
#: nodes of the shared grid (f evaluations) allowed per call; beyond, the panel rule
MAX_GRID_NODES = 400_000
#: halvings of the step allowed by the verification before the rule gives up
MAX_HALVINGS = 6
#: half-width of the strip of analyticity assumed for the first step (as the panel rule's ``hmax = 1``)
STRIP = 1.0
#: digits the grid is built for beyond the accuracy asked: the composite Gauss–Legendre rule it replaces delivers
#: several digits more than asked at level 0, and the argmin's secant polish (core.search) reads level-0 slopes at
#: the digits asked + 2 without an estimate — with the grid exactly at the accuracy asked the slope of (26) for
#: erf(x) at --dps 20 was too noisy there (measured: "the derivative does not increase through its root"); four
#: more digits cost ~18 % more work (the step scales as 1/digits, the window as sqrt(digits))
MARGIN = 4


def grid_step(c: float, accuracy: float, strip: float = STRIP) -> float:
    r"""The a-priori step for :math:`|f|\le1` on the strip (the certified one: :func:`strip_step`), for the weight
    :math:`\varphi_{\sqrt c}` and ``accuracy`` digits: the largest
    :math:`h` with :math:`\min_{0<d\le\text{strip}}(d^2/2c - 2\pi d/h)\le-\ln 10\,(\text{accuracy}+2)`.

    >>> round(grid_step(1.0, 32), 6)
    0.079748
    """
    D = math.log(10) * (accuracy + 2)
    if 2 * c * D <= strip * strip:        # the optimal d = 2πc/h lies inside the strip: Gaussian aliasing
        return math.pi * math.sqrt(2 * c / D)
    return 2 * math.pi * strip / (D + strip * strip / (2 * c))


def _half_width(accuracy: float, fmax: float) -> float:
    """Window half-width L (in units of s): the Gaussian beyond it below 10^-(accuracy+4) max(1, sup|f|)."""
    return math.sqrt(2 * math.log(10) * (accuracy + 4) + 2 * math.log(max(1.0, fmax)))


class _Grid:
    """f and the coefficient lists c_m = (f, x f, f²)(x_m) exp(-x_m²/2c) on x_m = m h, m in [mlo, mhi]."""

    def __init__(self, fn, h: float, mlo: int, mhi: int, c):
        self.h, self.mlo, self.c = h, mlo, c
        ha = flint.arb(h)                 # a binary float: every x_m = m h is exact
        self.ha = ha
        self.c0, self.c1, self.c2 = [], [], []
        fmax = 0.0
        two_c = 2 * c
        for m in range(mlo, mhi + 1):
            xm = ha * m
            fv = fn(xm)
            if not fv.is_finite():
                raise ArithmeticError("f is not finite on the grid")
            fmax = max(fmax, abs(float(fv.mid())))
            e = fv * (-(xm * xm) / two_c).exp()
            self.c0.append(e)
            self.c1.append(xm * e)
            self.c2.append(fv * e)
        self.fmax = fmax
        self.norm = ha / (2 * flint.arb.pi() * c).sqrt()

    def sums(self, a, W: int):
        """(E f, E[Z f] s, E f²) at the shift a from the window of 2W + 1 nodes around it (E[Z f] s = E[(x-a) f])."""
        m0 = int(round(float(a.mid()) / self.h))
        i = m0 - W - self.mlo
        if i < 0 or i + 2 * W + 1 > len(self.c0):
            raise IndexError("window outside the grid")
        G = (self.ha * a / self.c).exp()
        pre = (((m0 - W) * self.ha - a / 2) * a / self.c).exp() * self.norm
        s0, s1, s2 = (pre * flint.arb_poly(cl[i:i + 2 * W + 1])(G) for cl in (self.c0, self.c1, self.c2))
        return s0, s1 - a * s0, s2


def _grid_for(fn, h, lo, hi, halfwidth, c, nmax):
    mlo, mhi = math.floor((lo - halfwidth) / h) - 2, math.ceil((hi + halfwidth) / h) + 2
    if mhi - mlo + 1 > nmax:
        return None
    return _Grid(fn, h, mlo, mhi, c)


def strip_sup(fn, x0: float, x1: float, d: float, tile: float = 0.25) -> float:
    r"""A rigorous upper bound of :math:`|f|` on the rectangle :math:`[x_0,x_1]\times[-d,d]`: Arb enclosures of ``fn``
    on complex tiles of side at most ``tile`` (f real on the real axis: the lower half mirrors the upper); ``inf``
    where an enclosure is not finite (a singularity in the strip, or an overflow) or ``fn`` takes no complex ball.

    >>> from onestep_theory.core.precision import workdps
    >>> with workdps(20):
    ...     1.557 < strip_sup(lambda t: t.tanh(), -3, 3, 1) < 4, strip_sup(lambda t: 1 / (1 + t * t), -3, 3, 1)
    (True, inf)
    """
    nx, ny = max(1, math.ceil((x1 - x0) / tile)), max(1, math.ceil(d / tile))
    wx, wy = (x1 - x0) / nx / 2, d / ny / 2
    top = 0.0
    for i in range(nx):
        re = flint.arb(x0 + (2 * i + 1) * wx, wx)
        for j in range(ny):
            try:
                v = fn(flint.acb(re, flint.arb((2 * j + 1) * wy, wy)))
            except (TypeError, AttributeError, ValueError, ZeroDivisionError):
                return math.inf
            if not v.is_finite():
                return math.inf
            top = max(top, float(abs(v).upper()))
    return top


def strip_step(fn, x0: float, x1: float, sf: float, accuracy: float,
               strips: tuple = (1, 1 / 2, 1 / 4, 1 / 8, 1 / 16)):
    r"""The trapezoid's step certified by the strip (module docstring): over the half-widths ``d`` (and the Gaussian
    optimum :math:`\sqrt{2cD}`), with :math:`M` = :func:`strip_sup` on :math:`[x_0,x_1]\times[-d,d]`,
    :math:`M_g = \max(1,M)^2 e^{d^2/2c}(1+d/s)` bounds :math:`\int|g|` on the lines :math:`\operatorname{Im}x=\pm d`
    for the three moments, and :math:`h(d) = 2\pi d/\ln(1 + 2M_g10^{D+2}/F)`, F = max(1, sup|f| on the real range)
    (the moments' scale); the largest h(d), or None when every enclosure is infinite.  Returns ``(h, F)``."""
    c = sf * sf
    D = math.log(10) * (accuracy + 2)
    cands = sorted(set(strips) | {min(1.0, math.sqrt(2 * c * D))}, reverse=True)
    sups = {d: strip_sup(fn, x0, x1, d) for d in cands}
    F = max(1.0, sups[cands[-1]])             # the thinnest strip's bound: at least sup|f| on the real range
    best = None
    for d, M in sups.items():
        if not math.isfinite(M):
            continue
        log_mg = 2 * math.log(max(1.0, M)) + d * d / (2 * c) + math.log(1 + d / sf)
        h = 2 * math.pi * d / (math.log(2) + log_mg + D - math.log(F))
        best = h if best is None else max(best, h)
    return (None, F) if best is None or not math.isfinite(F) else (best, F)


def _verified_step(fn, shifts, sf, c, accuracy):
    """The step certified by the strip (:func:`strip_step`), then checked: the sums at h and h/2 must agree at up to
    seven shifts spread over the range (else h halves); ``(h, L)``, or None."""
    order = sorted(range(len(shifts)), key=lambda i: float(shifts[i].mid()))
    picks = sorted({order[round(j * (len(order) - 1) / 6)] for j in range(7)})
    sample = [shifts[i] for i in picks]
    lo, hi = (float(v.mid()) for v in (sample[0], sample[-1]))
    L = _half_width(accuracy, 1.0)
    for _ in range(3):                    # the range checked (2 L s beyond the shifts) covers the windows (L' s)
        h, F = strip_step(fn, lo - 2 * L * sf, hi + 2 * L * sf, sf, accuracy)
        if h is None:
            return None
        need = _half_width(accuracy, F)
        if need <= 1.5 * L:
            L = max(L, need)
            break
        L = need
    else:
        return None
    tol = 10.0 ** -(accuracy + 1)
    for _ in range(MAX_HALVINGS + 1):
        for _ in range(3):                # the window widened until it covers sup|f| on the grid
            fine = _grid_for(fn, h / 2, lo, hi, 1.5 * L * sf, c, MAX_GRID_NODES)
            if fine is None:
                return None
            L_need = _half_width(accuracy, fine.fmax)
            if L_need <= L:
                break
            L = L_need
        else:
            return None
        coarse = _grid_for(fn, h, lo, hi, 1.5 * L * sf, c, MAX_GRID_NODES)
        Wc, Wf = math.ceil(L * sf / h), math.ceil(L * sf / (h / 2))
        ok = True
        for a in sample:
            for u, v in zip(coarse.sums(a, Wc), fine.sums(a, Wf)):
                # the change, beyond what the rounding (the balls' radii) can account for
                if abs(float((u - v).mid())) > tol * max(1.0, abs(float(v.mid()))) + float(u.rad() + v.rad()):
                    ok = False
        if ok:
            return h, L
        h /= 2
    return None


def grid_smooth_arb(fn, shifts, s, accuracy: float, level: int = 0):
    r"""The three Gaussian moments :math:`(\mathbb E f,\ \mathbb E Zf,\ \mathbb E f^2)(a+sZ)` of the Arb callable
    ``fn`` (no kink) at every Arb shift in ``shifts``, on one shared trapezoidal grid (module docstring), at the
    ambient precision raised by the digits the Gaussian factors' exponents cost; ``accuracy``: the digits the rule
    is built for, ``level``: refinement (the step divided by ``GROWTH**level``).

    Returns a list of Arb triples, or None where the rule does not apply (fewer than :data:`GRID_MIN_POINTS`
    shifts, a grid over :data:`MAX_GRID_NODES` nodes, f not finite on it or growing past the window, or the step
    not verified within :data:`MAX_HALVINGS` halvings): the caller then uses the panel rule.

    >>> import flint
    >>> from onestep_theory.core.precision import workdps
    >>> with workdps(40):
    ...     m = grid_smooth_arb(lambda t: t.sin(), [flint.arb(k) / 8 for k in range(30)], flint.arb(1), 28)
    ...     abs(m[9][0] - flint.arb(9 / 8).sin() * flint.arb(-0.5).exp()) < 1e-28
    True
    """
    if len(shifts) < GRID_MIN_POINTS:
        return None
    accuracy = accuracy + MARGIN
    sf = float(s.mid())
    if not (math.isfinite(sf) and sf > 0):
        return None
    af = [float(a.mid()) for a in shifts]
    if not all(math.isfinite(v) for v in af):
        return None
    lo, hi = min(af), max(af)
    L0 = _half_width(accuracy, 1.0)
    X = max(abs(lo), abs(hi)) + 2 * L0 * sf
    # k: the exponents -x²/2c and m h a/c reach X²/c; their rounding costs log10(X²/c) digits, put back here
    k = math.ceil(math.log10(1 + X * X / (sf * sf))) + 1
    with refined(k, why="the Gaussian factors' exponents up to X²/c (module docstring)"):
        c = s * s
        try:
            found = _verified_step(fn, shifts, sf, c, accuracy)
            if found is None:
                return None
            h0, L = found
            h = h0 / GROWTH ** level
            L *= 1 + level / 8            # the window grows with the level, so its cut is measured too
            grid = _grid_for(fn, h, lo, hi, 1.05 * L * sf, c, MAX_GRID_NODES)
            if grid is None or _half_width(accuracy, grid.fmax) > L:
                return None
            W = math.ceil(L * sf / h)
            out = []
            for a in shifts:
                s0, s1, s2 = grid.sums(a, W)
                out.append((s0, s1 / s, s2))
            return out
        except (ArithmeticError, IndexError, ValueError, OverflowError):
            return None
