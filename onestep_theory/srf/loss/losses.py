r"""Convex losses of the readout and their proximal operators (docs/theory/srf-theory.md §4.9).

For a loss :math:`\ell(y,\hat y)` the Moreau envelope and output function of (97), (118)–(121) of [CPDKLZL24]
are
:math:`\mathcal M_V(y,\omega)=\min_x[(x-\omega)^2/(2V)+\ell(y,x)]`,
:math:`f_{\rm out}=(\mathrm{prox}_{V\ell(y,\cdot)}(\omega)-\omega)/V`, and
:math:`\partial_\omega f_{\rm out}=(\partial_\omega\mathrm{prox}-1)/V` with
:math:`\partial_\omega\mathrm{prox}=1/(1+V\ell''(y,\mathrm{prox}))` for a smooth loss.

Built in: ``square`` :math:`\tfrac12(y-\hat y)^2` (prox :math:`(\omega+Vy)/(1+V)`, (121)), ``logistic``
:math:`\log(1+e^{-y\hat y})` (prox by safeguarded Newton, vectorised) and ``hinge`` :math:`\max(0,1-y\hat y)`
(prox in closed form, piecewise).  A user loss is a :class:`Loss` built from callables
(:meth:`Loss.from_callables`) or from a SymPy expression in ``y, yhat`` (:meth:`Loss.from_expression`: the
derivatives are taken symbolically, the prox is found by Newton's method).

References
----------
[CPDKLZL24] arXiv:2402.04980, App. (97), (118)–(121); docs/theory/srf-theory.md §4.9.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import sympy as sp

from ...core.caches import register
from ...core.errors import ConvergenceError, InvalidParameterError
from ...core.syntax import parse_text
from .losscheck import LABELS_CLASSIFY, LABELS_DEFAULT, check_loss, derivatives, kink_points, precheck
from .losscheck import vector_fn as _vector_fn

__all__ = ["Loss", "loss", "LOSSES"]

_NEWTON_STEPS = 200


def _sigmoid(t):
    return 0.5 * (1 + np.tanh(0.5 * t))


@dataclasses.dataclass(frozen=True)
class Loss:
    """A convex loss with vectorised ``value(y, x)``, ``d1``/``d2`` (derivatives in x) and ``prox(y, w, V)``
    returning ``(prox, dprox/dw)``; ``kinks`` marks a non-smooth loss (its averages are then taken in closed form
    or on split rules, never by Gauss–Hermite across a kink)."""

    name: str
    value: object
    d1: object = None
    d2: object = None
    prox_fn: object = None
    classification: bool = False
    smooth: bool = True
    #: "hinge": the channel takes the ξ-average in closed form (docs/theory/srf-theory.md §4.9)
    closed_average: str | None = None
    #: the loss as a SymPy expression in ``y, yhat`` (user losses), for the checks on the teacher's labels
    expr: object = None
    #: vectorised ŷ-positions b(y) of the kinks of a non-smooth loss (found symbolically), tried first by the prox
    kinks: tuple = ()

    def prox(self, y, w, V):
        """:math:`(\\mathrm{prox}_{V\\ell(y,\\cdot)}(\\omega),\\ \\partial_\\omega\\mathrm{prox})`, broadcast over arrays."""
        if self.prox_fn is not None:
            return self.prox_fn(y, w, V)
        return _newton_prox(self, y, w, V)

    def fout(self, y, w, V):
        """``(f_out, d f_out / d omega)`` of docs/theory/srf-theory.md §4.9."""
        p, dp = self.prox(y, w, V)
        return (p - w) / V, (dp - 1) / V

    @classmethod
    def from_callables(cls, name, value, d1, d2=None, prox=None, classification=False) -> "Loss":
        """A smooth convex loss from vectorised callables ``value(y, x)``, ``d1(y, x)`` and either ``d2(y, x) >= 0``
        (the prox is then found by safeguarded Newton) or ``prox(y, w, V) -> (prox, d prox / d w)`` given directly.
        ``d1`` is also the gradient the simulators' L-BFGS readout uses."""
        need = (("value", value), ("d1", d1)) + ((("d2", d2),) if prox is None else (("prox", prox),))
        for n, f in need:
            if not callable(f):
                raise InvalidParameterError(f"loss {n}", f, "a vectorised callable (d2, or prox, is required)")
        L = cls(str(name), value, d1, d2, prox, bool(classification), True)
        check_loss(L, LABELS_CLASSIFY if classification else LABELS_DEFAULT)     # numerically (no expression)
        return L

    @classmethod
    def from_expression(cls, expr, classification=False) -> "Loss":
        """A convex loss from a SymPy expression (or string) in ``y, yhat``, checked on entry
        (:func:`~onestep_theory.srf.loss.losscheck.check_loss`: depends on ŷ, finite, convex in ŷ, bounded below;
        docs/theory/srf-theory.md §13).  Derivatives are symbolic; a kinked loss (Abs, Max, Heaviside,
        Piecewise, ...) is marked non-smooth, its prox found without a second derivative across the kink."""
        y, yh = sp.symbols("y yhat", real=True)
        e = parse_text(expr, "loss", {"y": y, "yhat": yh}) if isinstance(expr, str) else expr
        if not isinstance(e, sp.Expr) or not e.free_symbols <= {y, yh} or sp.count_ops(e) > 200:
            raise InvalidParameterError("loss", expr, "an expression in y and yhat (at most 200 operations)")
        name = str(e) if len(str(e)) <= 60 else str(e.evalf(6))      # 1e300 parses to a 301-digit integer
        name = name if len(name) <= 60 else name[:57] + "..."
        precheck(e, name)
        try:
            d1, d2, smooth = derivatives(e, y, yh)
            L = cls(name, _vector_fn(e, y, yh), _vector_fn(d1, y, yh), _vector_fn(d2, y, yh), None,
                    bool(classification), smooth, None, e,
                    () if smooth else tuple(_vector_fn(b, y, yh) for b in kink_points(e, y, yh)))
        except (KeyError, TypeError, NameError, AttributeError, NotImplementedError) as exc:
            raise InvalidParameterError("loss", e, "an expression SymPy can differentiate and compile to float64",
                                        f"{type(exc).__name__}") from None
        check_loss(L, LABELS_CLASSIFY if classification else LABELS_DEFAULT)
        return L


_WARM: dict = {}     # last root per (loss, shape): a start inside the bracket (the root is unique; only speed changes)
register(_WARM.clear)


def _bracketed_newton(fn, x, lo, hi, name):
    """Root of an increasing g (``fn(x, idx) -> (g, g')`` on the points ``idx``) inside [lo, hi]: Newton steps
    kept inside the shrinking bracket, with bisection where a step leaves it or where the last step did not
    quarter |g| while still large (Newton bouncing between the ends: the safeguard of rtsafe).  Only points not
    yet converged are iterated.  Starts from the previous root of the same shape (successive saddle-point
    iterates are close), clipped into the bracket."""
    shape = np.shape(x)
    x, lo, hi = (np.array(v, dtype=float, ndmin=1).ravel() for v in (x, lo, hi))
    prev = _WARM.get((name, x.shape))
    if prev is not None:
        x = np.clip(prev, lo, hi)
    idx = np.arange(x.size)
    gprev = np.full(x.size, np.inf)
    for _ in range(_NEWTON_STEPS):
        xi = x[idx]
        with np.errstate(over="ignore"):       # an overflow far from the root is bisected (below), not reported
            g, gp = fn(xi, idx)
        big = np.isinf(g) | np.isinf(gp)          # overflow far from the root (a loss like exp(yhat**2)): bisect
        if np.isnan(g).any() or np.isnan(gp[~big]).any():
            raise FloatingPointError(f"prox of the {name} loss: not finite at a trial point")
        step = np.where(big, np.inf, g / np.where(big, 1.0, gp))
        conv = (np.abs(step) <= 1e-14 * np.maximum(1, np.abs(xi))) | (hi[idx] - lo[idx] <= 4e-16 * np.maximum(
            1, np.abs(xi)))                     # the bracket has collapsed: a root on a kink (g jumps sign there)
        x[idx[conv]] = xi[conv] - np.where(np.abs(step) <= 1e-14 * np.maximum(1, np.abs(xi)), step, 0.0)[conv]
        keep = ~conv
        idx, xi, g, step = idx[keep], xi[keep], g[keep], step[keep]
        if idx.size == 0:
            if x.size > 1000:
                _WARM.clear()
                _WARM[(name, x.shape)] = x.copy()
            return x.reshape(shape)
        l, h = lo[idx], hi[idx]
        l = np.where(g < 0, xi, l)
        h = np.where(g > 0, xi, h)
        lo[idx], hi[idx] = l, h
        xn = xi - step
        ag = np.abs(g)
        # bisect where a step leaves the bracket or |g| fell by less than 4x (Newton creeps on exp(yhat**2) far
        # out: g drops by 1/e a step; a half-bracket step is then faster)
        bad = (xn < l) | (xn > h) | ((ag > 0.25 * gprev[idx]) & (np.abs(step) > 1e-8 * np.maximum(1, np.abs(xi))))
        x[idx] = np.where(bad, 0.5 * (l + h), xn)
        gprev[idx] = ag
    raise ConvergenceError(f"prox of the {name} loss: Newton did not converge", _NEWTON_STEPS)


def _newton_prox(L: Loss, y, w, V):
    r"""Solve :math:`0\in x-\omega+V\partial\ell(y,x)` (increasing in x with slope >= 1, so the root lies between
    ω and :math:`\omega-V\ell'(y,\omega)` for any subgradient selection ℓ'); returns (x, d prox / d ω).

    Smooth loss: d prox/dω = 1/(1+Vℓ'').  Kinked loss (docs/theory/srf-theory.md §13): the root is found without
    a second derivative across a kink (bisection inside the bracket takes over); where it sits on a kink (the
    residual jumps sign there: prox = kink on an ω-interval) d prox/dω = 0."""
    y, w, V = (np.array(a, dtype=float) for a in np.broadcast_arrays(y, w, V))
    with np.errstate(over="ignore", invalid="ignore"):
        e = w - V * L.d1(y, w)
    far = np.isfinite(w) & ~(np.abs(e - w) <= 1e6 * (1 + np.abs(w)))
    if far.any():                      # l' huge or overflowing at omega (exp((y-yhat)**2) far out): bracket by doubling
        e[far] = _far_bracket(L, y[far], w[far], V[far])
    if not (np.all(np.isfinite(e)) and np.all(np.isfinite(w))):
        raise FloatingPointError(f"prox of the {L.name} loss: its derivative is not finite in float64 at |yhat| <= "
                         f"{float(np.max(np.abs(w))):.3g}")
    lo, hi = np.minimum(w, e), np.maximum(w, e)
    x, kink = np.empty_like(w), np.zeros(w.shape, bool)
    for bfn in L.kinks:               # a root on a kink b: g(b-) <= 0 <= g(b+) with a jump; else a smaller bracket
        b = np.asarray(bfn(y, w), float)
        ok = np.isfinite(b) & (b >= lo) & (b <= hi) & ~kink
        dl = 1e-9 * (1 + np.abs(np.where(ok, b, 0)))
        gm, gp = (np.where(ok, b - w + V * L.d1(y, np.where(ok, b + sg * dl, w)), 0) for sg in (-1, 1))
        at = ok & (gm <= 0) & (gp >= 0) & (gp - gm > 1e-12 * (1 + np.abs(w) + np.abs(np.where(ok, b, 0))))
        x[at], kink = b[at], kink | at
        lo, hi = np.where(ok & ~at & (gp < 0), np.maximum(lo, b), lo), np.where(ok & ~at & (gm > 0), np.minimum(hi, b), hi)
    r = ~kink
    yf, wf, Vf = y[r], w[r], V[r]
    x[r] = _bracketed_newton(lambda t, i: (t - wf[i] + Vf[i] * L.d1(yf[i], t),
                                           1 + Vf[i] * np.maximum(L.d2(yf[i], t), 0)),   # ℓ'' < 0: rounding
                             0.5 * (lo[r] + hi[r]), lo[r], hi[r], L.name)
    dx = np.where(kink, 0.0, 1 / (1 + V * np.maximum(L.d2(y, x), 0)))
    if not L.smooth:                  # a kink not found symbolically: the residual did not vanish there
        g = x - w + V * L.d1(y, x)
        dx = np.where(np.abs(g) > 1e-9 * np.maximum(1, np.abs(w)), 0.0, dx)
    return x, dx


def _far_bracket(L: Loss, y, w, V):
    r"""The other end of the prox's bracket where :math:`\omega-V\ell'(y,\omega)` overflows (a loss growing like
    :math:`e^{\hat y^2}`; docs/theory/srf-theory.md §13): :math:`g(x)=x-\omega+V\ell'(y,x)` has the sign of
    :math:`\ell'(y,\omega)` at ω and is increasing, so the first of :math:`\omega-s\,2^k` (s that sign,
    k = 0, 1, ...) where g has the other sign (infinite, if it overflows past the root: the bracketed Newton
    bisects there) closes the bracket; NaN where none does (then refused)."""
    with np.errstate(over="ignore", invalid="ignore"):
        s = np.sign(L.d1(y, w))
        out = np.full(w.shape, np.nan)
        todo = np.isfinite(s) & (s != 0)
        for k in range(1020):
            if not todo.any():
                break
            t = w - s * 2.0 ** k
            g = t - w + V * L.d1(y, t)
            done = todo & ~np.isnan(g) & (g * s <= 0)     # -inf past the root is a sign too (then bisected)
            out[done], todo = t[done], todo & ~done
    return out


def _logistic_prox(y, w, V):
    """log(1 + e^{-yx}): g(x) = x - w - V y sigmoid(-y x), root between w and w + V y (one sigmoid per step)."""
    y, w, V = (np.array(a, dtype=float) for a in np.broadcast_arrays(y, w, V))
    Vy = V * y
    yf, wf, Vyf = y.ravel(), w.ravel(), Vy.ravel()

    def fn(t, i):
        sm = _sigmoid(-yf[i] * t)
        return t - wf[i] - Vyf[i] * sm, 1 + Vyf[i] * yf[i] * sm * (1 - sm)
    x = _bracketed_newton(fn, w + 0.5 * Vy, np.minimum(w, w + Vy), np.maximum(w, w + Vy), "logistic")
    sm = _sigmoid(-y * x)
    return x, 1 / (1 + Vy * y * sm * (1 - sm))


def _square_prox(y, w, V):
    return (w + V * y) / (1 + V), np.broadcast_to(1 / (1 + V), np.broadcast(y, w, V).shape)


def _hinge_prox(y, w, V):
    """max(0, 1 - y x): x = w if y w >= 1; w + V y if y w <= 1 - V y^2; 1/y otherwise (y != 0)."""
    y, w, V = np.broadcast_arrays(np.asarray(y, float), np.asarray(w, float), np.asarray(V, float))
    yw = y * w
    flat = yw >= 1
    lin = yw <= 1 - V * y * y
    with np.errstate(divide="ignore"):
        mid = np.where(y != 0, 1 / np.where(y != 0, y, 1), w)
    x = np.where(flat, w, np.where(lin, w + V * y, mid))
    dx = np.where(flat | lin, 1.0, 0.0)
    return x, dx


LOSSES = {
    "square": Loss("square", lambda y, x: 0.5 * (y - x) ** 2, lambda y, x: x - y,
                   lambda y, x: np.ones_like(np.asarray(x, float)), _square_prox, False, True),
    "logistic": Loss("logistic", lambda y, x: np.logaddexp(0, -y * x), lambda y, x: -y * _sigmoid(-y * x),
                     lambda y, x: y * y * _sigmoid(y * x) * _sigmoid(-y * x), _logistic_prox, True, True),
    "hinge": Loss("hinge", lambda y, x: np.maximum(0, 1 - y * x), None, None, _hinge_prox, True, False, "hinge"),
}


def loss(spec) -> Loss:
    """A :class:`Loss` from a name (``square``, ``logistic``, ``hinge``), an expression in ``y, yhat``, or a Loss.

    >>> x, dx = loss("logistic").prox(1.0, 0.0, 1.0)      # the root of x = sigmoid(-x)
    >>> bool(abs(float(x) - 1 / (1 + np.exp(float(x)))) < 1e-15), round(float(x), 10)
    (True, 0.4010581375)
    """
    if isinstance(spec, Loss):
        return spec
    if isinstance(spec, str) and spec.strip().lower() in LOSSES:
        return LOSSES[spec.strip().lower()]
    if isinstance(spec, (str, sp.Expr)):
        return Loss.from_expression(spec)
    raise InvalidParameterError("loss", spec, f"one of {', '.join(LOSSES)}, an expression in y, yhat, or a Loss")
