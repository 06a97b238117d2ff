r"""Gaussian smoothing :math:`(a,s)\mapsto(\mathbb E f(a+sZ),\ \mathbb E[Zf(a+sZ)],\ \mathbb E f(a+sZ)^2)`.

The conditional Gaussian equivalence (15) of [CPDKLZL24] (:mod:`onestep_theory.srf.features.cge`) and the teacher
quantities :math:`h,h_1,h_2` of docs/theory/srf-theory.md §4.2 (with :math:`a=\gamma\kappa`, :math:`s=\rho`)
are all this smoothing.  Backends (docs/theory/numerics.md §3):

* ``"exact"``: piecewise-polynomial functions (sign, ReLU, Abs, polynomials) in closed form through
  truncated Gaussian moments, vectorised over ``a`` (float64 or Arb);
* closed forms found by the exact engine with symbolic ``(a, s)`` (e.g. :math:`\mathbb E\sin(a+sZ)`);
* ``"panels"``: composite Gauss–Legendre split at the kinks, which move to :math:`(b-a)/s`
  (:func:`onestep_theory.hermite.quadrature.normal_rule`);
* ``"gauss-hermite"``: smooth functions only, a fixed rule of ``nodes`` probabilists' nodes (the reference
  notebook's choice, docs/theory/srf-theory.md §4.10).

Never Gauss–Hermite for a kinked function (docs/theory/hermite.md §5.5).

References
----------
[CPDKLZL24] arXiv:2402.04980, Result 3.2, (13)–(16); [DKLPS23] arXiv:2305.18270.
"""

from __future__ import annotations

import math

import flint
import numpy as np
import sympy as sp

from ...core.caches import cached, cached_at_precision, disk_cached
from ...core.errors import InvalidParameterError
from ...core.precision import arb_to_mpf, mpf_to_arb, past_asked, precision, workdps, working_digits
from ...hermite.activation import Activation
from ...hermite.evaluate import arb_callable, arb_callable_n, as_arb
from ...hermite.expressions import breakpoints, pieces, x
from ...hermite.gauss import NotExact, expect_exact, trunc_moments_arb, trunc_moments_float
from ...hermite.quadrature import gauss_hermite, normal_rule
from .gridsmooth import grid_smooth_arb

__all__ = ["smooth", "smooth_arb", "smoothing_closed_form", "is_piecewise_polynomial", "default_backend"]


@cached(maxsize=256)
def is_piecewise_polynomial(expr: sp.Expr) -> bool:
    return all(g.is_polynomial(x) for _, _, g in pieces(expr))


def default_backend(act: Activation) -> str:
    """``exact`` for piecewise polynomials, ``panels`` (split, scaled Gauss–Legendre) otherwise."""
    return "exact" if is_piecewise_polynomial(act.expr) else "panels"


@cached(maxsize=256)
def _poly_pieces(expr: sp.Expr, square: bool):
    out = []
    for lo, hi, g in pieces(expr):
        gg = sp.expand(g**2 if square else g)
        coeffs = [float(c) for c in reversed(sp.Poly(gg, x).all_coeffs())] if gg != 0 else [0.0]
        out.append((float(lo), float(hi), coeffs))
    return tuple(out)


def _exact_moment(expr, a, s, weight_z: bool, square: bool):
    """E[z^w f(a + s z)^(1 or 2)] for piecewise polynomial f, vectorised over a (s > 0)."""
    total = np.zeros_like(a)
    for lo, hi, coeffs in _poly_pieces(expr, square):
        zlo = (lo - a) / s if math.isfinite(lo) else np.full_like(a, -np.inf)
        zhi = (hi - a) / s if math.isfinite(hi) else np.full_like(a, np.inf)
        deg = len(coeffs) - 1
        T = trunc_moments_float(deg + 1, zlo, zhi)
        # f(a + s z) = sum_k g_k (a + s z)^k = sum_j [sum_{k>=j} g_k C(k,j) a^{k-j} s^j] z^j
        for k, gk in enumerate(coeffs):
            if gk == 0:
                continue
            for j in range(k + 1):
                cj = gk * math.comb(k, j) * a ** (k - j) * s**j
                total = total + cj * T[j + (1 if weight_z else 0)]
    return total


_A, _S = sp.symbols("a s", real=True)


@cached(maxsize=256)
@disk_cached("smoothing_closed_form")
def smoothing_closed_form(expr: sp.Expr):
    r"""Exact :math:`(\mathbb E f(a+sZ),\ \mathbb E[Zf(a+sZ)],\ \mathbb E f(a+sZ)^2)` in the symbols ``a, s``, or None.

    Found by the exact Gaussian engine (:func:`onestep_theory.gauss.expect_exact`) for smooth
    functions built from polynomials, ``exp``, ``sin``, ``cos``, ``sinh``, ``cosh`` (and the erf table).

    >>> smoothing_closed_form(x**0 * sp.sin(x))[0]
    exp(-s**2/2)*sin(a)
    """
    if breakpoints(expr) or not expr.has(x) or sp.count_ops(expr) > 40:
        return None
    shifted = expr.subs(x, _A + _S * x)
    out = []
    for g in (shifted, x * shifted, shifted**2):
        try:
            v = sp.simplify(expect_exact(g))
        except (NotExact, Exception):  # noqa: BLE001  (anything the exact engine cannot do)
            return None
        if v.has(x) or v.has(sp.Integral) or not v.free_symbols <= {_A, _S}:
            return None
        out.append(v)
    return tuple(out)


def smooth(act, a, s, *, backend: str | None = None, nodes: int = 61, dps: int | None = None,
           digits: float | None = None, level: int = 0):
    r"""Gaussian smoothing :math:`(\mathbb E f(a+sZ),\ \mathbb E[Zf(a+sZ)],\ \mathbb E f(a+sZ)^2)` over an array ``a``.

    Backends (docs/theory/numerics.md §3):

    * ``"exact"`` — piecewise polynomials in closed form (truncated Gaussian moments); float64, or Arb
      at ``dps`` digits;
    * ``"panels"`` (default otherwise) — :func:`~onestep_theory.quadrature.normal_rule` in ``z``, split
      exactly at every kink :math:`(b-a)/s`, panels no wider than :math:`\min(1,1/s)`; ``digits`` and
      ``level`` set the rule (compare two levels for the error);
    * ``"gauss-hermite"`` — a fixed ``nodes``-point rule, smooth functions only (notebook compatibility).

    ``s = 0`` returns :math:`(f(a), 0, f(a)^2)`.  With ``dps`` the values are numpy object arrays of
    ``mpf`` (``a`` and ``s`` may be exact strings), computed in Arb with ``dps`` + guard digits.
    """
    act = Activation.from_any(act)
    if backend == "mp":
        backend = "panels"
    backend = backend or ("exact" if is_piecewise_polynomial(act.expr) else "panels")
    if backend not in ("exact", "panels", "gauss-hermite"):
        raise InvalidParameterError("backend", backend, "'exact', 'panels' or 'gauss-hermite'")
    if backend == "exact" and not is_piecewise_polynomial(act.expr):
        raise InvalidParameterError("backend", backend, "'panels' or 'gauss-hermite' for a non-polynomial piece")
    if backend == "gauss-hermite" and breakpoints(act.expr):
        raise InvalidParameterError("backend", backend, "'exact' or 'panels' for a kinked function (docs/theory/hermite.md §5.5)")
    if dps is not None:
        with precision(dps):             # the boundary: Arb and mpmath at dps + guard digits
            if digits is None:          # the rule's accuracy (a target, not a precision)
                digits = past_asked(3, why="the rule's discretisation error below the last digit asked "
                                    "(docs/theory/numerics.md §3)")
            res = _smooth_arb(act, a, s, backend, digits, level, nodes)
            return tuple(_to_mpf_array(v) for v in res)
    a = np.asarray(a, dtype=float)
    s = float(s)
    f = act.numpy()
    if s < 0 or not math.isfinite(s):
        raise InvalidParameterError("s", s, "a finite real number >= 0")
    if s == 0:
        v = f(a)
        return v, np.zeros_like(a), v * v
    if backend == "exact":
        off = act.offset_float()
        m0 = _exact_moment(act.expr, a, s, False, False) - off
        m1 = _exact_moment(act.expr, a, s, True, False)
        m2 = _exact_moment(act.expr, a, s, False, True) - 2 * off * (m0 + off) + off * off
        return m0, m1, m2
    if backend == "gauss-hermite":
        z, w = gauss_hermite(nodes)
        vals = f(a[..., None] + s * z)
        return vals @ w, vals @ (w * z), (vals * vals) @ w
    cf = smoothing_closed_form(act.expr) if backend == "panels" else None
    if cf is not None:
        off = act.offset_float()
        m0, m1, m2 = (_np_fn2(e)(a, s) for e in cf)
        return m0 - off, m1, m2 - 2 * off * m0 + off * off
    digits = 16.0 if digits is None else digits
    hmax = min(1.0, 1.0 / s)
    kinks = [float(b) for b in breakpoints(act.expr)]
    if not kinks:
        rule = normal_rule(digits=digits, level=level, hmax=hmax)
        z, w = rule.nodes, rule.weights
        vals = f(a[..., None] + s * z)
        return vals @ w, vals @ (w * z), (vals * vals) @ w
    flat = a.ravel()
    out = np.empty((3, flat.size))
    for i, av in enumerate(flat):
        rule = normal_rule(hard=tuple((b - av) / s for b in kinks), digits=digits, level=level, hmax=hmax,
                           cache=False)
        z, w = rule.nodes, rule.weights
        vals = f(av + s * z)
        out[:, i] = vals @ w, vals @ (w * z), (vals * vals) @ w
    return tuple(o.reshape(a.shape) for o in out)


@cached_at_precision(maxsize=256)
def _poly_pieces_arb(expr: sp.Expr, square: bool):
    """Pieces (lo, hi, coefficients) of a piecewise polynomial as Arb values at the ambient precision."""
    out = []
    for lo, hi, g in pieces(expr):
        gg = sp.expand(g**2 if square else g)
        cs = [arb_callable(cf)(flint.arb(0)) for cf in reversed(sp.Poly(gg, x).all_coeffs())] if gg != 0 else []
        lo_a = None if lo == -sp.oo else arb_callable(lo)(flint.arb(0))
        hi_a = None if hi == sp.oo else arb_callable(hi)(flint.arb(0))
        out.append((lo_a, hi_a, cs))
    return tuple(out)


def _smooth_arb(act, a, s, backend, accuracy, level, nodes):
    """Arb version of :func:`smooth` (numpy object arrays of Arb balls) at the ambient precision."""
    a_arr = np.atleast_1d(np.asarray(a, dtype=object))
    out = [np.empty(a_arr.shape, dtype=object) for _ in range(3)]
    with workdps(flint.ctx.dps):          # mpmath in step with Arb's ambient precision
        s = as_arb(s)
        av_list = [as_arb(v) for v in a_arr.ravel()]
        # the centring offset c_0 is a boundary value: asked to the working digits (Activation adds its guard)
        off = mpf_to_arb(act.raw_mean(working_digits())) if act.center else flint.arb(0)
        if s == 0:
            fn = arb_callable(act.expr)
            res = []
            for av in av_list:
                fv = _eval_piecewise_arb(act, av) - off
                res.append((fv, flint.arb(0), fv * fv))
        elif backend == "exact":
            p1, p2 = _poly_pieces_arb(act.expr, False), _poly_pieces_arb(act.expr, True)
            res = []
            for av in av_list:
                m = []
                for weight_z, pcs in ((False, p1), (True, p1), (False, p2)):
                    tot = flint.arb(0)
                    for lo, hi, cs in pcs:
                        zlo = None if lo is None else (lo - av) / s
                        zhi = None if hi is None else (hi - av) / s
                        T = trunc_moments_arb(len(cs) + 1, zlo, zhi)
                        for k, gk in enumerate(cs):
                            for j in range(k + 1):
                                tot += gk * math.comb(k, j) * av ** (k - j) * s**j * T[j + (1 if weight_z else 0)]
                    m.append(tot)
                m0 = m[0] - off
                res.append((m0, m[1], m[2] - 2 * off * (m0 + off) + off * off))
        elif backend == "panels" and smoothing_closed_form(act.expr) is not None:
            fns = [arb_callable_n(e, (_A, _S)) for e in smoothing_closed_form(act.expr)]
            res = []
            for av in av_list:
                m0, m1, m2 = (f(av, s) for f in fns)
                res.append((m0 - off, m1, m2 - 2 * off * m0 + off * off))
        else:
            fn = arb_callable(act.expr)
            kinks = [arb_callable(b)(flint.arb(0)) for b in breakpoints(act.expr)]
            hmax = min(1.0, 1.0 / float(s))
            shared = None
            if backend == "gauss-hermite":
                zg, wg = gauss_hermite(nodes, mp=True)
                shared = ([mpf_to_arb(v) for v in zg], [mpf_to_arb(v) for v in wg])
            elif not kinks:
                rule = normal_rule(digits=accuracy, level=level, hmax=hmax, arb=True)
                shared = (rule.nodes, rule.weights)
            # many shifts of a smooth f: one shared trapezoidal grid (None where it does not apply or verify)
            grid = grid_smooth_arb(fn, av_list, s, accuracy, level) if backend == "panels" and not kinks else None
            res = [] if grid is None else [(m0 - off, m1, m2 - 2 * off * m0 + off * off) for m0, m1, m2 in grid]
            for av in av_list if grid is None else ():
                if shared is None:
                    rule = normal_rule(hard=tuple((b - av) / s for b in kinks), digits=accuracy, level=level,
                                       hmax=hmax, arb=True, cache=False)
                    zs, ws = rule.nodes, rule.weights
                else:
                    zs, ws = shared
                s0 = s1 = s2 = flint.arb(0)
                for zv, wv in zip(zs, ws):
                    fv = fn(av + s * zv)
                    t = wv * fv
                    s0 += t
                    s1 += t * zv
                    s2 += t * fv
                res.append((s0 - off, s1, s2 - 2 * off * s0 + off * off))
        for i, (m0, m1, m2) in enumerate(res):
            idx = np.unravel_index(i, a_arr.shape)
            out[0][idx], out[1][idx], out[2][idx] = m0, m1, m2
    return tuple(o if np.ndim(a) else o.reshape(()).item() for o in out)


def smooth_arb(act, a, s, *, backend: str | None = None, digits: float | None = None, level: int = 0,
               nodes: int = 61):
    """:func:`smooth` in Arb at the current working precision (``a``: array of Arb balls, ``s``: Arb).

    Must run inside :func:`~onestep_theory.precision.workdps`; returns object arrays of Arb balls.
    """
    act = Activation.from_any(act)
    backend = backend or default_backend(act)
    return _smooth_arb(act, a, s, backend, digits if digits is not None else flint.ctx.dps, level, nodes)


@cached(maxsize=256)
def _np_fn2(e):
    f = sp.lambdify((_A, _S), e, modules=["numpy", "scipy"])

    def g(a, s):
        v = f(a, s)
        return np.broadcast_to(np.asarray(v, dtype=float), np.shape(a)).copy()
    return g


def _to_mpf_array(v):
    if isinstance(v, np.ndarray):
        return np.array([arb_to_mpf(t) for t in v.ravel()], dtype=object).reshape(v.shape)
    return arb_to_mpf(v)


def _eval_piecewise_arb(act, t):
    """The expression at ``t`` on the piece containing ``t`` (kinks decided on the midpoint)."""
    for lo, hi, g in pieces(act.expr):
        if (lo == -sp.oo or t.mid() >= arb_callable(lo)(t).mid()) and (hi == sp.oo or t.mid() < arb_callable(hi)(t).mid()):
            return arb_callable(g)(t)
    return arb_callable(act.expr)(t)
