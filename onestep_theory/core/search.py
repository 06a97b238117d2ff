r"""One-dimensional minimisation with a certified argmin (docs/theory/numerics.md §1, §9).

The one home of every argmin the package reports: the η̃-optimised bounds (28), the bias searches, the K-group
bounds.  The argmin is the root of the derivative :math:`g=f'`, supplied by the caller with an error that
*bounds* its error (analytic, or :func:`differences` from values with absolute errors).  The search:

1. a grid of ``points`` float64 values (``scan``) finds the basin — the only global step;
2. a bracket :math:`[a,b]` on which :math:`g` changes sign *certainly* (:math:`g(a)+\epsilon_a<0<g(b)-\epsilon_b`),
   so the true :math:`f'` has a root in it whatever the size of :math:`f` (a zero minimum value is no problem);
3. the root of :math:`g` by ``scipy.optimize.brentq`` in float64, then (with ``mp``) secant steps at the ambient
   working precision (set by the caller's boundary, :func:`~onestep_theory.core.precision.precision`) from the
   float64 root;
4. the error: the half-width :math:`\delta` of :math:`[x-\delta,x+\delta]`, on whose ends the sign change of
   :math:`g` is certified again (:math:`\delta` starts at twice :math:`(|g(x)|+\epsilon)/f''` and is widened
   ×10 until the signs hold).  The true argmin lies in it: the reported error bounds the actual one.  The
   minimum value's error adds :math:`\delta\,(\max|g|_{\rm ends}+\epsilon)`.

A minimiser at an end of the range is reported there (error 0, ``at_end``) when the derivative there points out of
the range with certainty.

Precision (issue 34, docs/theory/numerics.md §11): the search takes no precision argument.  Its callbacks are
called with ``mp`` False (float64: at :data:`FLOAT64_DIGITS`, whatever the ambient precision) or True (mpmath at the
ambient working precision, whose digits asked :func:`~onestep_theory.core.precision.asked_digits` gives); a callback
that needs more digits (the central differences of :func:`differences`) raises the precision locally with
:func:`~onestep_theory.core.precision.refined`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math

import mpmath
import numpy as np
from scipy.optimize import brentq, minimize_scalar

from .errors import ConvergenceError
from .precision import asked_digits, refined, tolerance, workdps
from .results import VouchedResult, digits_of, provenance

__all__ = ["grid_basin", "grid_minimize", "Argmin", "certified_argmin", "differences"]

#: widenings (×10) of the certified interval before the search gives up (three times as many in float64)
_WIDEN = 8
#: mpmath's digits of float64 (15 digits are 53 bits): the float64 stages (the grid, the bracket, brentq) run at this
#: precision, whatever the ambient one, so that mpf data a callback meets there (a search at D digits hands its
#: constants as mpf) is computed as float64 would, the same inside the caller's boundary as outside it
FLOAT64_DIGITS = 15


def grid_basin(f, lo: float, hi: float, points: int = 41, xatol: float = 1e-9, ends: bool = True):
    """The basin of ``f`` on ``[lo, hi]``: ``(grid, vals, i, brent)`` — ``points`` grid values, f on them, the index
    of the best, and bounded Brent's ``(x, f(x))`` between its neighbours (None when the best is an end of the grid
    and ``ends`` is False: the caller decides what an end means).  The global step of :func:`grid_minimize` and of
    the τ* search (srf.optimal.taustar).

    >>> grid, vals, i, (x, fx) = grid_basin(lambda t: (t - 0.3) ** 2, -1.0, 1.0)
    >>> round(float(x), 6), round(float(grid[i]), 2)
    (0.3, 0.3)
    """
    grid = np.linspace(float(lo), float(hi), int(points))
    vals = [f(float(t)) for t in grid]
    i = int(np.argmin(vals))
    if not ends and i in (0, len(grid) - 1):
        return grid, vals, i, None
    res = minimize_scalar(f, bounds=(grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]), method="bounded",
                          options={"xatol": xatol})
    return grid, vals, i, (res.x, res.fun)


def grid_minimize(f, lo: float, hi: float, points: int = 41, xatol: float = 1e-9):
    """``(x, f(x))`` minimising ``f`` on ``[lo, hi]``: the best of ``points`` grid values, refined by bounded Brent
    between its neighbours (the grid point is kept if Brent does not improve on it; :func:`grid_basin`).  No error:
    a fit's basin finder (the simulators' bias fit); a theory argmin uses :func:`certified_argmin`.

    >>> x, fx = grid_minimize(lambda t: (t - 0.3) ** 2, -1.0, 1.0)
    >>> round(x, 6), fx < 1e-12
    (0.3, True)
    """
    grid, vals, i, (bx, bf) = grid_basin(f, lo, hi, points, xatol)
    if bf < vals[i]:
        return float(bx), float(bf)
    return float(grid[i]), float(vals[i])


@dataclasses.dataclass
class Argmin(VouchedResult):
    r"""A certified minimiser: ``x`` with ``errors["x"]`` (the true argmin lies within it), ``value`` = f(x) with
    ``errors["value"]`` (it bounds the distance to the true minimum value).  ``at_end``: the minimiser is an end of
    the range.  ``bracket``: the certified interval.  ``order``: p of :math:`f'\sim C(x-x^*)^p` (1: f'' > 0; 3 and
    more: a flat minimum, whose argmin is determined to about 1/p of the derivative's digits; 0: f constant within
    its errors, every point a minimiser).  ``evaluations``: derivative evaluations (cheap, certified)."""

    x: object
    value: object
    at_end: bool
    bracket: tuple
    order: int
    evaluations: dict
    errors: dict
    digits: dict
    dps: int | None
    provenance: dict


def _float64(mp):
    """The context of a callback: the ambient precision with ``mp``, else float64's (:data:`FLOAT64_DIGITS`)."""
    return contextlib.nullcontext() if mp else workdps(FLOAT64_DIGITS)


def _sure(deriv, t, mp, gtol, count):
    count["certified"] += 1
    with _float64(mp):
        g, e = deriv(t, mp, gtol)
    return g, float(e)


def _cheap(deriv, t, mp, count):
    count["cheap"] += 1
    with _float64(mp):
        return deriv(t, mp, None)[0]


def _certify(deriv, x, delta, lo, hi, mp, gtol_of, count, progress):
    """Widen ``delta`` (×10) until g changes sign with certainty on ``[x - delta, x + delta]``; returns
    ``(delta, (g, err) at both ends, the left end)``."""
    for _ in range(_WIDEN if mp else 3 * _WIDEN):
        a, b = max(x - delta, lo), min(x + delta, hi)
        gtol = gtol_of(delta)
        ga, gb = _sure(deriv, a, mp, gtol, count), _sure(deriv, b, mp, gtol, count)
        if progress:
            progress(count["certified"] + count["cheap"], 0)
        if ga[0] + ga[1] < 0 < gb[0] - gb[1]:
            return max(x - a, b - x), ga, gb, a
        if a == lo and b == hi:
            break
        delta = delta * 10
    raise ConvergenceError(f"argmin: the sign change of the derivative could not be certified around "
                           f"x = {mpmath.nstr(x, 12)} (a flat or degenerate minimum, or a derivative error that does "
                           "not shrink)", count["certified"] + count["cheap"])


def certified_argmin(scan, deriv, value, lo, hi, *, mp: bool = False, xscale=1.0, points: int = 41,
                     max_secant: int = 12, ftol=None, progress=None, method: str = "") -> Argmin:
    r"""The minimiser of f on ``[lo, hi]`` with an error that bounds its actual error (module docstring).

    ``scan(x: float) -> float``: float64 f for the grid (``inf`` where it cannot be evaluated);
    ``deriv(x, mp, gtol) -> (g, err)``: f' at x (a float when ``mp`` is False, else an mpf at the ambient working
    precision); with ``gtol`` None a cheap estimate (``err`` unused), else ``err`` must bound the error of ``g`` and
    should be below ``gtol`` where possible; ``value(x, mp) -> (f, err)``.  ``lo``, ``hi``: exact ends (float or
    mpf).  With ``mp`` (called inside the caller's boundary, :func:`~onestep_theory.core.precision.precision`) the
    argmin is polished at the ambient precision to :math:`10^{-(D+1)}\max(|x|,\mathrm{xscale})` (absolute below
    ``xscale``), D the digits asked there (:func:`~onestep_theory.core.precision.asked_digits`).
    ``ftol``: the absolute error wanted of the minimum value; at a flat minimum (``order`` p > 1) the argmin is
    certified no tighter than that needs (its interval costs derivatives of ~p times the digits).
    ``progress(i, 0)`` is called after every evaluation.

    >>> d = lambda t, mp, gtol: (2 * (t - 0.3), 1e-15)
    >>> m = certified_argmin(lambda t: (t - 0.3) ** 2, d, lambda t, mp: ((t - 0.3) ** 2, 1e-16), -1.0, 1.0)
    >>> abs(m.x - 0.3) <= m.errors["x"] < 1e-13
    True
    """
    count = {"cheap": 0, "certified": 0}
    asked = asked_digits() if mp else None      # the digits asked at the caller's boundary (None: float64)
    grid = np.linspace(float(lo), float(hi), int(points))
    n = len(grid)
    with _float64(False):
        vals = np.array([scan(float(t)) for t in grid], dtype=float)
    vals[~np.isfinite(vals)] = np.inf
    if not np.isfinite(vals).any():
        raise ConvergenceError("argmin: the function could not be evaluated anywhere on the grid", 0)
    i = int(np.argmin(vals))
    cache, pts = {}, [float(t) for t in grid]
    step = float(grid[1] - grid[0])

    def g_at(j):                         # certified float64 derivative at grid point j (None: not computable)
        if j not in cache:
            cache[j] = None
            # an end where f' cannot be evaluated (e.g. r = 0 of the bounds) moves inwards by step/2^k
            tries = [pts[j]] + ([pts[j] + (1 if j == 0 else -1) * step / 2 ** k for k in range(1, 13)]
                                if j in (0, n - 1) else [])
            for t in tries:
                try:
                    g = _sure(deriv, t, False, math.inf, count)
                except ConvergenceError:
                    continue
                if math.isfinite(float(g[0])) and math.isfinite(g[1]):
                    if cache[j] is None:
                        pts[j], cache[j] = t, g
                    if abs(float(g[0])) > g[1]:         # the first point inwards with a certain sign
                        pts[j], cache[j] = t, g
                        break
        return cache[j]

    def end_scan(j):                     # f at an end's certified point (moved inwards past a jump at the end)
        if pts[j] == float(grid[j]):
            return vals[j]
        with _float64(False):
            return scan(pts[j])

    # bracket: walk outwards from the grid minimum until the derivative's sign change is certain
    a, b, end = max(i - 1, 0), min(i + 1, n - 1), None
    while True:
        ga, gb = g_at(a), g_at(b)
        left_ok = ga is not None and ga[0] + ga[1] < 0
        right_ok = gb is not None and gb[0] - gb[1] > 0
        if left_ok and right_ok:
            break
        if not left_ok and a > 0:
            a -= 1
        elif not right_ok and b < n - 1:
            b += 1
        elif not left_ok and (ga is None or ga[0] - ga[1] > 0) and min(vals[0], end_scan(0)) <= vals[i]:
            end = "lo"
            break
        elif not right_ok and (gb is None or gb[0] + gb[1] < 0) and min(vals[-1], end_scan(n - 1)) <= vals[i]:
            end = "hi"
            break
        else:
            end = "flat"
            break
    if end is not None and end != "flat" and g_at(0 if end == "lo" else n - 1) is None:
        # no derivative could be evaluated at or near that end (review: tanh/He2, where r = 0 for every eta): the
        # end is certified by nothing.  A scan constant to rounding is a constant function (below); else refuse.
        fin = vals[np.isfinite(vals)]
        if not (len(fin) == n and float(np.ptp(fin)) <= 1e-12 * max(1.0, float(np.max(np.abs(fin))))):
            raise ConvergenceError("argmin: the derivative cannot be evaluated at or near the end of the range where "
                                   "the grid minimum lies; the minimiser is not certified", count["certified"])
        with _float64(mp):
            v, ve = value(mpmath.mpf(grid[i]) if mp else grid[i], mp)
        half = float(hi - lo) / 2
        return Argmin(x=(lo + hi) / 2, value=v, at_end=False, bracket=(lo, hi), evaluations=count, order=0,
                      errors={"x": half, "value": float(ve) + float(np.ptp(fin))}, digits={"x": 0, "value": 0},
                      dps=asked, provenance=provenance(dps=asked, method="constant on the grid to rounding (no "
                                                       "derivative evaluable): every point minimises",
                                                       references=["docs/theory/numerics.md §9"]))
    if end == "flat":
        # no certain sign change anywhere: f is constant within its errors when the derivative is 0 within its
        # error at every grid point; then every x is a minimiser (reported: the midpoint, error half the range)
        gs = [g for g in (g_at(j) for j in range(n)) if g is not None]
        if 2 * len(gs) < n or any(abs(float(g[0])) > g[1] for g in gs):
            raise ConvergenceError("argmin: no certain sign change of the derivative around the grid minimum "
                                   f"(x ~ {grid[i]:.6g}): a degenerate minimum, or an infimum approached at an end "
                                   "where the function jumps", count["certified"])
        gmax = max(abs(float(g[0])) + g[1] for g in gs)
        x = (lo + hi) / 2
        with _float64(mp):
            v, ve = value(mpmath.mpf(grid[i]) if mp else grid[i], mp)
        half = float(hi - lo) / 2
        return Argmin(x=x, value=v, at_end=False, bracket=(lo, hi), evaluations=count, order=0,
                      errors={"x": half, "value": float(ve) + 2 * half * gmax}, digits={"x": 0, "value": 0},
                      dps=asked, provenance=provenance(dps=asked, method="constant within its errors: every "
                                                       "point minimises", references=["docs/theory/numerics.md §9"]))
    prov = provenance(dps=asked, method=method or "grid, certified bracket of f', brentq (float64), secant (dps), "
                      "certified interval", references=["docs/theory/numerics.md §9"])
    if end is not None:
        # the minimiser is the end, or (f' not evaluable there, e.g. a jump of f at r = 0) the infimum is approached
        # between the end and the point moved inwards where f' > 0 was certified: reported there, its distance to
        # the end as its error, and the value's error grown by that distance times f' there (f' in [0, g] between)
        j = 0 if end == "lo" else n - 1
        moved = pts[j] != float(grid[j])
        x = (lo if end == "lo" else hi) if not moved else (mpmath.mpf(pts[j]) if mp else pts[j])
        ex = abs(pts[j] - float(grid[j]))
        with _float64(mp):
            v, ve = value(x, mp)
        g = cache.get(j)
        ve = float(ve) + (ex * (abs(float(g[0])) + g[1]) if moved and g is not None else 0.0)
        return Argmin(x=x, value=v, at_end=True, bracket=(x, x), evaluations=count, order=0,
                      errors={"x": ex, "value": ve}, dps=asked, provenance=prov,
                      digits={"x": (asked or 17) if ex == 0 else digits_of(x, ex), "value": digits_of(v, ve)})
    ga, gb = float(ga[0]), float(gb[0])
    a, b = pts[a], pts[b]
    x = brentq(lambda t: float(_cheap(deriv, t, False, count)), a, b, xtol=1e-300, rtol=9e-16, maxiter=200)
    slope = (gb - ga) / (b - a)
    # the float64 root, certified (the derivative as accurate as float64 allows)
    g0, e0 = _sure(deriv, x, False, abs(slope) * 1e-15 * max(abs(x), float(xscale)), count)
    delta0 = max(2 * (abs(float(g0)) + e0) / slope, 4e-16 * max(abs(x), float(xscale)))
    delta, gla, glb, left = _certify(deriv, x, delta0, a, b, False, lambda d: abs(slope) * d / 4, count, progress)
    # the order of the minimum: f' ~ C (x - x*)^p between the grid scale and the certified one (p = 1: f'' > 0;
    # p = 3 at a flat minimum such as (27) of Cor. 8), measured
    g_grid, g_loc, half = (abs(ga) + abs(gb)) / 2, (abs(float(gla[0])) + abs(float(glb[0]))) / 2, (b - a) / 2
    p = 1
    if g_loc > 0 and float(delta) < half / 10:
        p_est = math.log(g_grid / g_loc) / math.log(half / float(delta))
        p = max(1, 2 * round((p_est - 1) / 2) + 1)
    C = g_loc / float(delta) ** p if g_loc > 0 else abs(slope)
    if mp:                              # the secant polish at the ambient precision (the caller's boundary)
        tol = tolerance(1, why="the argmin to one digit past those asked: an error below 10^-(D+1) relative leaves "
                               "D digits") * max(abs(mpmath.mpf(x)), mpmath.mpf(xscale))

        def u(t):       # a simple root: the p-th root of the derivative
            g = _cheap(deriv, t, True, count)
            return g if p == 1 else mpmath.sign(g) * abs(g) ** (mpmath.mpf(1) / p)

        x0, x1 = mpmath.mpf(x), mpmath.mpf(x) + min(float(delta), float(b - x) / 2)
        g0, g1 = u(x0), u(x1)
        last = None
        for it in range(max_secant):
            if progress:
                progress(count["certified"] + count["cheap"], 0)
            if g1 == g0:
                break
            sl = (g1 - g0) / (x1 - x0)
            if not sl > 0:
                raise ConvergenceError("argmin: the derivative does not increase through its root at "
                                       f"{asked} digits (not a minimum)", it + 1)
            x0, g0 = x1, g1
            x1 = x1 - g1 / sl
            if not (a < x1 < b):
                raise ConvergenceError("argmin: the secant polish left the certified float64 bracket", it + 1)
            step = abs(x1 - x0)
            if step < tol / 1000 or (last is not None and step > last / 10 and p > 1):
                break           # converged, or (flat minimum) at the noise of the derivative
            if p == 1 and last is not None and step * step / last < tol / 1000:
                break           # superlinear: the next correction, about step^2/last, is below the target
            last = step
            g1 = u(x1)
        x = x1
        start = tol / 2
        if p > 1:       # a flat minimum: the interval where the derivative's error hides its sign
            g_x, e_x = _sure(deriv, x, True, math.inf, count)
            start = max(start, 2 * ((abs(float(g_x)) + e_x) / C) ** (1.0 / p))
            if ftol is not None:    # no tighter than the minimum value needs: 2 delta C delta^p <= ftol / 2
                start = max(start, (float(ftol) / (4 * C)) ** (1.0 / (p + 1)))
        delta, gla, glb, left = _certify(deriv, x, start, mpmath.mpf(a), mpmath.mpf(b), True,
                                         lambda d: C * float(d) ** p / 4, count, progress)
    # the minimum value: f at the left end of the certified interval (its rules are those of the derivative
    # there, already computed), which exceeds the minimum by at most 2 delta max|f'| on the interval
    with _float64(mp):
        v, ve = value(left, mp)
    gmax = max(abs(float(gla[0])) + gla[1], abs(float(glb[0])) + glb[1])
    err_x = float(delta)
    err_v = float(ve) + 2 * err_x * gmax
    return Argmin(x=x, value=v, at_end=False, bracket=(x - delta, x + delta), evaluations=count, order=p,
                  errors={"x": err_x, "value": err_v},
                  digits={"x": digits_of(x, err_x) if float(x) != 0 else 0, "value": digits_of(v, err_v)},
                  dps=asked, provenance=prov)


def differences(value, *, xscale=1.0, extra=None):
    r"""``deriv(x, mp, gtol)`` for :func:`certified_argmin` from ``value(x, mp) -> (f, err)`` by central
    differences, where no analytic derivative is at hand (docs/theory/numerics.md §9).

    The step is set from the **absolute** error ε of the values and the measured curvature ``f2`` (second
    difference at the scale ``ℓ = max(|x|, xscale)``, measured once): :math:`h=(3\epsilon\ell/|f_2|)^{1/3}`, which
    balances the truncation :math:`f'''h^2/6\approx f_2h^2/(6\ell)` and the noise ε/h.  The error is the
    truncation measured by the step 2h, :math:`|g_h-g_{2h}|`, plus the noise :math:`2\max\epsilon/h`.  With ``mp``
    the values are computed with the digits asked raised locally (:func:`~onestep_theory.core.precision.refined`)
    from D, those of the ambient precision, to ``extra(D)`` (default ``1.5 D + 5``): the difference keeps two
    thirds of them.

    >>> from onestep_theory.core.precision import asked_digits, precision
    >>> val = lambda x, mp: ((x - 1) ** 2, 10.0 ** -asked_digits() if mp else 1e-15)
    >>> with precision(20):
    ...     g, err = differences(val)(mpmath.mpf(2), True, 1.0)
    >>> abs(g - 2) <= err < 1e-8
    True
    """
    state = {}

    def f2_at(x):
        if "f2" not in state:
            ell = max(abs(float(x)), float(xscale))
            H = 1e-2 * ell
            fp, fm, f0 = (float(value(float(x) + k * H, False)[0]) for k in (1, -1, 0))
            state["f2"] = max(abs(fp - 2 * f0 + fm) / (H * H), 1e-300)
        return state["f2"]

    def at(x, mp, gtol):
        f0, eps = value(x, mp)
        ell = max(abs(float(x)), float(xscale))
        h = (3 * max(float(eps), 1e-300) * ell / f2_at(x)) ** (1.0 / 3.0)
        h = max(h, (tolerance(0, float, why="the values' last digit asked") if mp else 1e-15) * ell * 100)
        if mp:
            h = mpmath.mpf(h)
        fp, ep = value(x + h, mp)
        fm, em = value(x - h, mp)
        g = (fp - fm) / (2 * h)
        if gtol is None:
            return g, None
        fp2, ep2 = value(x + 2 * h, mp)
        fm2, em2 = value(x - 2 * h, mp)
        g2 = (fp2 - fm2) / (4 * h)
        noise = 2 * max(float(ep), float(em), float(ep2), float(em2), float(eps)) / float(h)
        return g, float(abs(g - g2)) + noise

    def deriv(x, mp, gtol):
        if not mp:
            return at(x, False, gtol)
        asked = asked_digits()
        with refined((extra(asked) if extra else int(1.5 * asked) + 5) - asked,
                     why="a central difference keeps two thirds of its values' digits: they are asked to 1.5 D + 5"):
            return at(x, True, gtol)

    return deriv
