r"""Entry checks of a readout loss (docs/theory/srf-theory.md §13): what the general channel of §4.9 needs.

A user loss :math:`\ell(y,\hat y)` is refused, with one line naming what fails, unless on the labels it will
meet (a default set, then the teacher's values):

* it depends on :math:`\hat y` (a constant loss leaves the readout to the ridge alone: no channel);
* it and its :math:`\hat y`-derivative are finite float64 numbers for :math:`|\hat y|\le 10`, at most
  :data:`HUGE` = 1e150 in modulus (the general channel is float64 and squares them; NaN or overflow there would
  poison the averages: ``1e300*(y - yhat)**2`` ended in "no valid fixed point (residual inf)", exit 3);
* unless :math:`\hat y=0` minimises it on every label (:func:`zero_minimiser`: then a = 0, whatever its scale), its
  :math:`\hat y`-derivative reaches :data:`TINY` = 1e-300 there (the channel's :math:`f_{\rm out}=-\ell'` times
  its quadrature weights must stay normal float64 numbers; ``1e-305*(y - yhat)**2`` is refused, ``1e-300*(y -
  yhat)**2`` is solved: :math:`\ell/K` with :math:`\lambda/K` is the same estimator, so a rescaled loss is the
  remedy);
* it is convex in :math:`\hat y` — symbolically where SymPy decides the sign of :math:`\partial^2_{\hat y}\ell`,
  otherwise numerically: the second differences on uniform grids (:math:`h=10^{-2}` on :math:`[-10,10]`,
  :math:`h=10^{-5}` near 0, :math:`h=0.2` on :math:`[-200,200]` where finite) must not be negative beyond
  rounding (:math:`64\epsilon` times the sum of the magnitudes entering them);
* it is bounded below in :math:`\hat y`: an outward slope at :math:`|\hat y|\sim10^5`–:math:`10^7` that stays
  negative (does not decay by half over a decade) means :math:`\ell\to-\infty`; the mean overlap m is unpenalised
  in the limit (§4.4), so no saddle point exists.

Its proximal map is then computable for every (y, ω, V): the root of the increasing
:math:`x-\omega+V\ell'(y,x)` lies between ω and :math:`\omega-V\ell'(y,\omega)`
(:mod:`~onestep_theory.srf.loss.losses`).
A classification loss (hinge, logistic) needs a teacher whose labels are ±1 (:func:`check_teacher`).
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ...core.errors import InvalidParameterError

__all__ = ["LABELS_DEFAULT", "LABELS_CLASSIFY", "derivatives", "kink_points", "vector_fn", "precheck", "check_loss",
           "check_teacher", "teacher_labels", "zero_minimiser"]

#: labels the checks use before the teacher is known (the teacher's own values are checked by srf_solve)
LABELS_DEFAULT = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0)
LABELS_CLASSIFY = (-1.0, 1.0)
_KINKED = (sp.Abs, sp.Max, sp.Min, sp.Heaviside, sp.sign, sp.Piecewise, sp.floor, sp.ceiling, sp.frac,
           sp.DiracDelta)
_EPS = 2.0 ** -52
#: largest |value| or |yhat-derivative| on |yhat| <= 10: the channel's float64 averages hold their squares
HUGE = 1e150
#: smallest largest |yhat-derivative| on |yhat| <= 10 (unless yhat = 0 minimises the loss: a = 0 then): f_out = -l'
#: and its products with quadrature weights stay normal float64 numbers (docs/theory/srf-theory.md §13)
TINY = 1e-300
_GRIDS = (np.linspace(-10, 10, 2001), np.linspace(-1e-2, 1e-2, 2001), np.linspace(-200, 200, 2001))


def derivatives(e, y, yh):
    """``(ℓ', ℓ'', smooth)`` in ŷ; Dirac deltas of a kinked loss are dropped (the prox never uses ℓ'' across a kink)."""
    d1 = sp.diff(e, yh)
    d2 = sp.diff(d1, yh)
    smooth = not any(e.has(f) or d1.has(f) for f in _KINKED)
    if not smooth:
        d1, d2 = (d.replace(sp.DiracDelta, lambda *a: sp.S.Zero) for d in (d1, d2))
    return d1, d2, smooth


def kink_points(e, y, yh, limit=8):
    r"""The ŷ-positions :math:`b(y)` where a kinked loss may jump in slope: the zeros in ŷ of the arguments of
    Abs, sign, Heaviside, of the differences of Max/Min arguments and of Piecewise conditions, where SymPy
    solves them (polynomials of degree <= 2 in ŷ, real solutions; at most ``limit``).  Kinks it cannot solve are
    still handled by the prox's bisection, only slower."""
    import itertools
    args = [a.args[0] for a in e.atoms(sp.Abs, sp.sign, sp.Heaviside)]
    args += [p - q for a in e.atoms(sp.Max, sp.Min) for p, q in itertools.combinations(a.args, 2)]
    args += [c.lhs - c.rhs for a in e.atoms(sp.Piecewise) for _, c in a.args if isinstance(c, sp.core.relational.Relational)]
    out = []
    for a in list(args):    # Max(Abs(u), u**2): Abs(u) - u**2 on each sign branch (a superset of kinks is harmless)
        ab = list(a.atoms(sp.Abs))
        if a.has(yh) and 0 < len(ab) <= 2 and not a.has(*(f for f in _KINKED if f is not sp.Abs)):
            for sg in itertools.product((1, -1), repeat=len(ab)):
                args.append(a.xreplace({t: s * t.args[0] for t, s in zip(ab, sg)}))
    for a in args:
        if not a.has(yh) or a.has(*_KINKED) or not a.is_polynomial(yh) or sp.degree(a, yh) > 2:
            continue
        for sol in sp.solve(a, yh):
            if sol.is_real is not False and not sol.has(sp.I) and sol not in out:
                out.append(sol)
    return tuple(out[:limit])


def vector_fn(expr, y, yh):
    """A float64 callable of (y, ŷ) that broadcasts (a constant derivative becomes an array of that constant)."""
    f = sp.lambdify((y, yh), expr, "numpy")

    def fn(yv, xv):
        # broadcast first: SymPy prints Heaviside(Abs(.) - Abs(.)) as select(logical_and.reduce((a, b))), which
        # stacks its comparisons and fails on shapes (7, 1) and (1, 2001) ("inhomogeneous shape")
        yv, xv = np.broadcast_arrays(np.asarray(yv, dtype=float), np.asarray(xv, dtype=float))
        with np.errstate(all="ignore"):
            v = np.asarray(f(yv, xv), dtype=float)
        return np.broadcast_to(v, yv.shape)
    return fn


def _refuse(L, why):
    raise InvalidParameterError("loss", L.name, "a convex loss in yhat, bounded below, finite in float64", why)


def _evaluate(L, fn, yv, xv):
    try:
        return np.asarray(fn(yv, xv), dtype=float)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError, AttributeError, NameError) as exc:
        _refuse(L, f"cannot be evaluated in float64: {type(exc).__name__}: {exc}".split("\n")[0][:160])


def precheck(e, name):
    """The symbolic conditions, before anything is compiled: no complex or infinite constant, depends on ŷ."""
    why = ("it contains a complex or infinite constant" if e.has(sp.I, sp.nan, sp.zoo, sp.oo, -sp.oo) else
           "it does not depend on yhat" if not any(s.name == "yhat" for s in e.free_symbols) else None)
    if why:
        raise InvalidParameterError("loss", name, "a convex loss in yhat, bounded below, finite in float64", why)


def check_loss(L, labels):
    """Refuse the loss ``L`` (``value``, ``d1``, ``expr``) unless it meets the module's conditions on ``labels``.

    >>> from onestep_theory.srf.loss.losses import loss
    >>> for spec in ("-yhat**2", "yhat", "y**2", "sqrt(yhat)"):
    ...     try:
    ...         loss(spec)
    ...     except InvalidParameterError as exc:
    ...         print(exc.detail[:60])
    not convex in yhat: its second derivative -2 is negative
    unbounded below in yhat: at y=-2 it keeps decreasing as yhat
    it does not depend on yhat
    its value is nan at y=-2, yhat=-10 (the general channel work
    >>> loss("Abs(y - yhat)").smooth        # kinked, accepted: its prox is computed without a second derivative
    False
    """
    if L.expr is not None:
        precheck(L.expr, L.name)
    ys = np.asarray(labels, float)[:, None]
    x = _GRIDS[0][None, :]
    f, g = _evaluate(L, L.value, ys, x), _evaluate(L, L.d1, ys, x)
    bad = ~(np.isfinite(f) & np.isfinite(g))
    if bad.any():
        i, j = np.argwhere(bad)[0]
        what = "value" if not np.isfinite(f[i, j]) else "yhat-derivative"
        _refuse(L, f"its {what} is {f[i, j] if what == 'value' else g[i, j]} at y={ys[i, 0]:g}, yhat={x[0, j]:g} "
                   "(the general channel works in float64 for |yhat| <= 10)")
    big = np.maximum(np.abs(f), np.abs(g))
    if big.max() > HUGE:                 # finite, but its square overflows in the channel's averages (1e300 * ...)
        i, j = np.unravel_index(int(np.argmax(big)), big.shape)
        _refuse(L, f"its magnitude reaches {big[i, j]:.3g} at y={ys[i, 0]:g}, yhat={x[0, j]:g}: the general channel "
                   f"squares value and yhat-derivative in float64 (at most {HUGE:.0e} for |yhat| <= 10); rescale "
                   "the loss (and lam with it)")
    gmax = float(np.max(np.abs(g)))
    if 0 < gmax < TINY and not (L.expr is not None and zero_minimiser(L.expr)[0]):
        _refuse(L, f"its yhat-derivative is at most {gmax:.3g} for |yhat| <= 10: below {TINY:.0e} the general "
                   "channel's f_out = -(yhat-derivative), times its quadrature weights, nears float64's smallest "
                   "normal number (2.2e-308) and loses its digits; rescale the loss (and lam with it)")
    if np.all(np.ptp(f, axis=1) <= 1e-14 * (1 + np.max(np.abs(f), axis=1))) and np.all(g == 0):
        _refuse(L, "it is constant in yhat (does not depend on yhat)")
    _check_convex(L, ys)
    _check_bounded(L, ys)


def _check_convex(L, ys):
    if L.expr is not None and L.smooth:
        d2 = sp.diff(L.expr, sp.Symbol("yhat", real=True), 2)
        if d2.is_nonnegative:
            return
        if d2.is_nonnegative is False:
            _refuse(L, f"not convex in yhat: its second derivative {d2} is negative")
    for x in _GRIDS:
        f = _evaluate(L, L.value, ys, x[None, :])
        a, b, c = f[:, :-2], f[:, 1:-1], f[:, 2:]
        with np.errstate(invalid="ignore"):
            dd = a - 2 * b + c
            # rounding of the values and of the grid points (an error eps|x| in x moves f by eps|x||f'|)
            tol = 64 * _EPS * (np.abs(a) + 2 * np.abs(b) + np.abs(c)
                               + 4 * (1 + np.abs(x[1:-1])) * np.abs(c - a) / (2 * (x[1] - x[0])))
            tol = tol + 16 * _EPS * np.nanmax(np.where(np.isfinite(f), np.abs(f), 0), axis=1, keepdims=True) + 1e-300
            neg = np.isfinite(dd) & (dd < -tol)
        if neg.any():
            i, j = np.argwhere(neg)[0]
            _refuse(L, f"not convex in yhat: second difference {dd[i, j]:.3g} < 0 at y={ys[i, 0]:g}, "
                       f"yhat={x[j + 1]:.6g} (step {x[1] - x[0]:.1e})")


def _check_bounded(L, ys):
    far = None
    if L.expr is not None:               # far out in mpmath: log(1 + exp(yhat)) - 2*yhat overflows in float64
        import mpmath
        fm = sp.lambdify((sp.Symbol("y", real=True), sp.Symbol("yhat", real=True)), L.expr, "mpmath")

        def far(yv, xv):
            out = np.empty(np.broadcast(yv, xv).shape)
            for idx, (a, b) in enumerate(np.broadcast(yv, xv)):
                try:
                    v = mpmath.mpf(fm(mpmath.mpf(float(a)), mpmath.mpf(float(b))))
                    out.flat[idx] = float(v) if abs(v) < 1e300 else math.copysign(math.inf, v)
                except (TypeError, ValueError, ZeroDivisionError, OverflowError):
                    out.flat[idx] = math.nan
            return out
    for sgn in (1.0, -1.0):
        xs = sgn * np.array([1e5, 1e6, 1e7])
        f = _evaluate(L, far or L.value, ys, xs[None, :])
        with np.errstate(invalid="ignore", over="ignore"):
            s1 = (f[:, 1] - f[:, 0]) / 9e5
            s2 = (f[:, 2] - f[:, 1]) / 9e6
            down = (f[:, 2] == -np.inf) | (np.isfinite(s1) & np.isfinite(s2) & (s2 < 0) & (s2 <= 0.5 * s1)
                                          & (s2 < -64 * _EPS * np.abs(f[:, 2]) / 9e6))
        if down.any():
            i = int(np.argmax(down))
            _refuse(L, f"unbounded below in yhat: at y={ys[i, 0]:g} it keeps decreasing as yhat -> "
                       f"{'+' if sgn > 0 else '-'}inf (slope {s2[i]:.3g}); the mean overlap m is unpenalised in the "
                       "limit, so there is no saddle point")


def zero_minimiser(e, labels=None):
    r"""Whether :math:`\hat y=0` minimises :math:`\ell(y,\cdot)` for every label, and the curvature there.

    For a convex loss, :math:`\ell'(y,-h)\le0\le\ell'(y,h)` puts a minimiser of :math:`\ell(y,\cdot)` in
    :math:`[-h,h]`; the derivative is evaluated there in mpmath (100 digits, :math:`h=10^{-60}`, any subgradient
    selection: Heaviside(0) plays no part) on every label (``labels``; None: the default set, or none at all for a
    loss without y).  When 0 is a minimiser the readout :math:`a=0` minimises :math:`\sum_\mu\ell(y_\mu,\hat
    y_\mu)+\frac\lambda2\|a\|^2` exactly, whatever the scale of the loss (docs/theory/srf-theory.md §13); the one
    case the test cannot tell from it, minimisers displaced by at most h, fits labels of that size (ŷ of order
    1e-60).  No symbolic limit is taken (SymPy's ran without end on a sum of Heaviside pieces).

    Returns ``(zero, k)``: ``k`` is :math:`\ell''(y,0)` when ℓ' does not jump across 0 (by more than 1e-40) and ℓ''
    has one finite value (to 1e-20 relative) at :math:`\pm h` and :math:`\pm10^{-10}h` on every label, as a SymPy
    number (an integer when it is one; 0 when ℓ'' vanishes like a power of h); ``None`` otherwise (kinked at 0,
    infinite, or label-dependent).

    >>> import sympy as sp
    >>> y, yh = sp.symbols("y yhat", real=True)
    >>> [zero_minimiser(sp.sympify(s, {"y": y, "yhat": yh})) for s in
    ...  ("exp(yhat**2)", "Min(0, yhat)**2", "Abs(yhat)", "(y - yhat)**2", "y**2*yhat**4")]
    [(True, 2), (True, None), (True, None), (False, None), (True, 0)]
    """
    import mpmath
    y, yh = sp.Symbol("y", real=True), sp.Symbol("yhat", real=True)
    e = e.xreplace({s: {"y": y, "yhat": yh}.get(s.name, s) for s in e.free_symbols})
    d1, d2, _ = derivatives(e, y, yh)
    ys = ([0.0] if not e.has(y) else list(LABELS_DEFAULT) if labels is None else [float(v) for v in labels])
    mods = [{"Heaviside": lambda x, h0=0.5: mpmath.mpf(1) if x > 0 else mpmath.mpf(0) if x < 0 else mpmath.mpf(h0),
             "sign": mpmath.sign, "Max": max, "Min": min, "Abs": abs}, "mpmath"]
    with mpmath.workdps(100):
        h = mpmath.mpf(10) ** -60
        try:
            f1, f2 = (sp.lambdify((y, yh), d, mods) for d in (d1, d2))
            g = [(mpmath.mpf(f1(mpmath.mpf(v), -h)), mpmath.mpf(f1(mpmath.mpf(v), h))) for v in ys]
        except (TypeError, ValueError, ZeroDivisionError, OverflowError, NameError, AttributeError, KeyError):
            return False, None
        if not all(mpmath.isfinite(a) and mpmath.isfinite(b) and a <= 0 <= b for a, b in g):
            return False, None
        if any(abs(b - a) > mpmath.mpf(10) ** -40 for a, b in g):      # smooth: 2 h l'' (l'' < 1e20)
            return True, None           # l' jumps at 0: kinked there, no curvature
        try:
            ks = [[mpmath.mpf(f2(mpmath.mpf(v), t)) for v in ys for t in (-hh, hh)] for hh in (h, h * 10**-10)]
        except (TypeError, ValueError, ZeroDivisionError, OverflowError, NameError, AttributeError, KeyError):
            return True, None
        big = max(abs(v) for row in ks for v in row)
        if not (mpmath.isfinite(big) and all(v >= 0 for row in ks for v in row)):
            return True, None
        if max(abs(v) for v in ks[1]) <= mpmath.mpf(10) ** -15 * max(abs(v) for v in ks[0]) or big == 0:
            return True, sp.Integer(0)  # l'' -> 0 as h -> 0 (yhat**4: 12 h^2)
        k0 = ks[1][0]
        if any(abs(v - k0) > mpmath.mpf(10) ** -20 * k0 for row in ks for v in row):
            return True, None           # one-sided, label-dependent or infinite (Abs(yhat)**1.5) curvature
        near = mpmath.nint(k0)
        return True, (sp.Integer(int(near)) if abs(k0 - near) <= mpmath.mpf(10) ** -25 * k0 else
                      sp.Float(mpmath.nstr(k0, 30), 30))


def teacher_labels(act, limit=41):
    """The teacher's values on a grid of [-8, 8] and beside its kinks: the labels the loss will meet (at most
    ``limit`` of them, evenly spread over the sorted distinct values, the extremes kept)."""
    from ...hermite.expressions import breakpoints
    f = act.numpy()
    kinks = [float(b) for b in breakpoints(act.expr) if abs(float(b)) < 8]
    grid = np.linspace(-8, 8, 1601)
    grid = grid[np.all(np.abs(grid[:, None] - np.array(kinks + [np.inf])[None, :]) > 1e-9, axis=1)]
    xs = np.concatenate([grid] + [np.array([b - 1e-9, b + 1e-9]) for b in kinks])   # a kink itself has measure 0
    with np.errstate(all="ignore"):
        v = np.asarray(f(xs), dtype=float)
    v = np.broadcast_to(v, xs.shape)
    if not np.all(np.isfinite(v)):
        raise InvalidParameterError("teacher", act.name, "finite labels", "it is not finite on [-8, 8]")
    u = np.unique(np.round(v, 12))
    return u if u.size <= limit else u[np.unique(np.linspace(0, u.size - 1, limit).round().astype(int))]


def check_teacher(L, act):
    """Refuse at once a classification loss whose teacher's labels are not ±1 (checked on
    :func:`teacher_labels`), and check a user loss on the teacher's own labels."""
    ys = teacher_labels(act)
    if L.classification:
        off = ys[np.abs(np.abs(ys) - 1) > 1e-12]
        if off.size:
            raise InvalidParameterError("teacher", act.name, f"labels +-1 for the {L.name} loss (e.g. sign)",
                                        f"it takes the value {off[np.argmax(np.abs(np.abs(off) - 1))]:.12g}")
    if L.expr is not None:
        check_loss(L, ys)
