r"""Conditional Gaussian equivalence: :math:`\mu_0(\kappa),\mu_1(\kappa),\mu_\star(\kappa)` and Gaussian smoothing.

Implements Result 3.2 of [CPDKLZL24], eq. (15), as in srf-theory.md §3:

.. math::
    \mu_0(\kappa)=\mathbb E_z\sigma(r\kappa+\sqrt cz),\quad
    \mu_1(\kappa)=\tfrac1{\sqrt c}\mathbb E_z[z\sigma(r\kappa+\sqrt cz)],\quad
    \mu_\star(\kappa)^2=\max\{0,\mathbb E_z\sigma(r\kappa+\sqrt cz)^2-\mu_0^2-c\mu_1^2\}.

The same Gaussian smoothing :math:`(a,s)\mapsto(\mathbb E f(a+sZ),\mathbb E[Zf(a+sZ)],\mathbb E f(a+sZ)^2)` gives the
teacher quantities :math:`h,h_1,h_2` of §4.2 (with :math:`a=\gamma\kappa`, :math:`s=\rho`).  Three backends:

* ``"exact"`` (float64): piecewise-polynomial functions (sign, ReLU, Abs, polynomials) in closed form
  through truncated Gaussian moments, vectorised over ``a``;
* ``"gauss-hermite"`` (float64): smooth functions, ``nodes`` probabilists' nodes (default 61, §5);
* ``"mp"``: breakpoint-split tanh-sinh at any precision (the kinks move to :math:`(b-a)/s`).

Never Gauss–Hermite for a kinked function (hermite.md §5.5).

References
----------
[CPDKLZL24] arXiv:2402.04980, Result 3.2, (13)–(16); [DKLPS23] arXiv:2305.18270.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import mpmath
import numpy as np
import sympy as sp
from scipy.special import ndtr

import flint

from .errors import InvalidParameterError
from .evaluate import arb_callable, arb_callable_n
from .exact import to_exact, to_float
from .expressions import breakpoints, pieces, x
from .gauss import NotExact, expect_exact, trunc_moments
from .hermite import Activation
from .precision import arb_to_mpf, mpf_to_arb, precision, workdps
from .quadrature import gauss_hermite, normal_rule
from .results import Result, provenance, vouched

__all__ = ["smooth", "smooth_arb", "cge_coeffs", "cge_arb", "cge_values", "CGEValues", "cge_symbolic", "gh_nodes", "is_piecewise_polynomial", "default_backend"]


def gh_nodes(n: int):
    """Probabilists' Gauss–Hermite nodes and weights normalised to sum 1 (float64): see
    :func:`onestep_theory.quadrature.gauss_hermite` (kept for compatibility)."""
    return gauss_hermite(n)


@functools.lru_cache(maxsize=256)
def is_piecewise_polynomial(expr: sp.Expr) -> bool:
    return all(g.is_polynomial(x) for _, _, g in pieces(expr))


def default_backend(act: Activation) -> str:
    """``exact`` for piecewise polynomials, ``panels`` (split, scaled Gauss–Legendre) otherwise."""
    return "exact" if is_piecewise_polynomial(act.expr) else "panels"


@functools.lru_cache(maxsize=256)
def _poly_pieces(expr: sp.Expr, square: bool):
    out = []
    for lo, hi, g in pieces(expr):
        gg = sp.expand(g**2 if square else g)
        coeffs = [float(c) for c in reversed(sp.Poly(gg, x).all_coeffs())] if gg != 0 else [0.0]
        out.append((float(lo), float(hi), coeffs))
    return tuple(out)


def _npdf(t):
    with np.errstate(over="ignore", invalid="ignore"):
        v = np.exp(-0.5 * t * t) / math.sqrt(2 * math.pi)
    return np.where(np.isinf(t), 0.0, v)


def _trunc_np(jmax, lo, hi):
    """Truncated moments T_j(lo, hi) = int_lo^hi y^j phi(y) dy, arrays, j = 0..jmax: the recursion of
    :func:`onestep_theory.gauss.trunc_moments` (exact SymPy) in vectorised float64."""
    plo, phi_ = _npdf(lo), _npdf(hi)
    T = [ndtr(hi) - ndtr(lo), plo - phi_]
    for j in range(2, jmax + 1):
        with np.errstate(invalid="ignore", over="ignore"):
            ta = np.where(np.isinf(lo), 0.0, lo ** (j - 1) * plo)
            tb = np.where(np.isinf(hi), 0.0, hi ** (j - 1) * phi_)
        T.append(ta - tb + (j - 1) * T[j - 2])
    return T


def _exact_moment(expr, a, s, weight_z: bool, square: bool):
    """E[z^w f(a + s z)^(1 or 2)] for piecewise polynomial f, vectorised over a (s > 0)."""
    total = np.zeros_like(a)
    for lo, hi, coeffs in _poly_pieces(expr, square):
        zlo = (lo - a) / s if math.isfinite(lo) else np.full_like(a, -np.inf)
        zhi = (hi - a) / s if math.isfinite(hi) else np.full_like(a, np.inf)
        deg = len(coeffs) - 1
        T = _trunc_np(deg + 1, zlo, zhi)
        # f(a + s z) = sum_k g_k (a + s z)^k = sum_j [sum_{k>=j} g_k C(k,j) a^{k-j} s^j] z^j
        for k, gk in enumerate(coeffs):
            if gk == 0:
                continue
            for j in range(k + 1):
                cj = gk * math.comb(k, j) * a ** (k - j) * s**j
                total = total + cj * T[j + (1 if weight_z else 0)]
    return total


_A, _S = sp.symbols("a s", real=True)


@functools.lru_cache(maxsize=256)
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
        raise InvalidParameterError("backend", backend, "'exact' or 'panels' for a kinked function (hermite.md §5.5)")
    if dps is not None:
        with precision(dps):
            res = _smooth_arb(act, a, s, backend, flint.ctx.dps, digits if digits is not None else dps + 3, level,
                              nodes)
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


@functools.lru_cache(maxsize=256)
def _poly_pieces_arb(expr: sp.Expr, square: bool, dps: int):
    """Pieces (lo, hi, coefficients) of a piecewise polynomial as Arb values at ``dps`` digits."""
    out = []
    with workdps(dps):
        for lo, hi, g in pieces(expr):
            gg = sp.expand(g**2 if square else g)
            cs = [arb_callable(cf)(flint.arb(0)) for cf in reversed(sp.Poly(gg, x).all_coeffs())] if gg != 0 else []
            lo_a = None if lo == -sp.oo else arb_callable(lo)(flint.arb(0))
            hi_a = None if hi == sp.oo else arb_callable(hi)(flint.arb(0))
            out.append((lo_a, hi_a, cs))
    return tuple(out)


def _trunc_arb(jmax, lo, hi):
    """Truncated moments T_j(lo, hi), j = 0..jmax, in Arb (None = infinite end): the recursion of
    :func:`onestep_theory.gauss.trunc_moments`."""
    norm = 1 / (2 * flint.arb.pi()).sqrt()
    pdf = (lambda t: flint.arb(0) if t is None else norm * (-t * t / 2).exp())
    sq2 = flint.arb(2).sqrt()
    # Phi(hi) - Phi(lo) without cancellation in the upper tail
    up = (lambda t: flint.arb(0) if t is None else (t / sq2).erfc() / 2)   # 1 - Phi(t); None = +inf
    p_hi = flint.arb(0) if hi is None else up(hi)
    p_lo = flint.arb(1) if lo is None else up(lo)
    plo, phi_ = pdf(lo), pdf(hi)
    T = [p_lo - p_hi, plo - phi_]
    for j in range(2, jmax + 1):
        ta = flint.arb(0) if lo is None else lo ** (j - 1) * plo
        tb = flint.arb(0) if hi is None else hi ** (j - 1) * phi_
        T.append(ta - tb + (j - 1) * T[j - 2])
    return T


def _smooth_arb(act, a, s, backend, dps, digits, level, nodes):
    """Arb version of :func:`smooth` (numpy object arrays of Arb balls)."""
    a_arr = np.atleast_1d(np.asarray(a, dtype=object))
    out = [np.empty(a_arr.shape, dtype=object) for _ in range(3)]
    with workdps(dps):
        s = _as_arb(s)
        av_list = [_as_arb(v) for v in a_arr.ravel()]
        off = mpf_to_arb(act.raw_mean(dps)) if act.center else flint.arb(0)
        if s == 0:
            fn = arb_callable(act.expr)
            res = []
            for av in av_list:
                fv = _eval_piecewise_arb(act, av) - off
                res.append((fv, flint.arb(0), fv * fv))
        elif backend == "exact":
            p1, p2 = _poly_pieces_arb(act.expr, False, dps), _poly_pieces_arb(act.expr, True, dps)
            res = []
            for av in av_list:
                m = []
                for weight_z, pcs in ((False, p1), (True, p1), (False, p2)):
                    tot = flint.arb(0)
                    for lo, hi, cs in pcs:
                        zlo = None if lo is None else (lo - av) / s
                        zhi = None if hi is None else (hi - av) / s
                        T = _trunc_arb(len(cs) + 1, zlo, zhi)
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
                zg, wg = gauss_hermite(nodes, dps)
                shared = ([mpf_to_arb(v) for v in zg], [mpf_to_arb(v) for v in wg])
            elif not kinks:
                rule = normal_rule(digits=digits, level=level, hmax=hmax, dps=dps)
                shared = (rule.nodes, rule.weights)
            res = []
            for av in av_list:
                if shared is None:
                    rule = normal_rule(hard=tuple((b - av) / s for b in kinks), digits=digits, level=level,
                                       hmax=hmax, dps=dps, cache=False)
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
    return _smooth_arb(act, a, s, backend, flint.ctx.dps, digits if digits is not None else flint.ctx.dps, level,
                       nodes)


@functools.lru_cache(maxsize=256)
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


def _as_arb(v):
    """An Arb ball from an Arb, mpf, int, exact string or SymPy number (current precision)."""
    if isinstance(v, flint.arb):
        return v
    if isinstance(v, (mpmath.mpf, int, float)):
        return mpf_to_arb(mpmath.mpf(v))
    if isinstance(v, str):
        v = to_exact(v)
    return arb_callable(sp.sympify(v))(flint.arb(0))


def _eval_piecewise_arb(act, t):
    """The expression at ``t`` on the piece containing ``t`` (kinks decided on the midpoint)."""
    for lo, hi, g in pieces(act.expr):
        if (lo == -sp.oo or t.mid() >= arb_callable(lo)(t).mid()) and (hi == sp.oo or t.mid() < arb_callable(hi)(t).mid()):
            return arb_callable(g)(t)
    return arb_callable(act.expr)(t)


def cge_coeffs(student, r, c, kappa, *, backend: str | None = None, nodes: int = 61, dps: int | None = None,
               digits: float | None = None, level: int = 0):
    r""":math:`\mu_0(\kappa),\mu_1(\kappa),\mu_\star^2(\kappa)` of eq. (15) [CPDKLZL24] (srf-theory.md §3).

    ``kappa`` is an array (float64), or with ``dps`` exact values (strings, mpf, SymPy numbers); the
    result is then a triple of numpy object arrays of ``mpf`` correct to ``dps`` digits (rules with
    ``dps`` + guard digits).  :math:`\mu_\star^2` is clipped at 0.  For an error estimate use
    :func:`cge_values`.

    >>> m0, m1, ms2 = cge_coeffs("sign", 1.0, 1.0, np.array([0.0, 1.0, 2.0]))    # srf-theory.md §11.3
    >>> np.round(m0, 8).tolist(), np.round(m1, 8).tolist(), np.round(ms2, 8).tolist()
    ([0.0, 0.68268949, 0.95449974], [0.79788456, 0.48394145, 0.10798193], [0.36338023, 0.29973573, 0.07727016])
    """
    if dps is not None:
        with precision(dps):
            if not _as_arb(c) > 0:
                raise InvalidParameterError("c", c, "a real number > 0")
            k = np.atleast_1d(np.asarray(kappa, dtype=object))
            arrs = cge_arb(student, _as_arb(r), _as_arb(c), [_as_arb(v) for v in k.ravel()],
                           backend=backend, nodes=nodes, digits=(digits or dps) + 3, level=level)
            out = tuple(np.array([arb_to_mpf(v) for v in arr], dtype=object).reshape(k.shape) for arr in arrs)
        return out
    c_f = float(c)
    if not c_f > 0:
        raise InvalidParameterError("c", c, "a real number > 0")
    kap = np.asarray(kappa, dtype=float)
    sc = math.sqrt(c_f)
    e0, e1, e2 = smooth(student, float(r) * kap, sc, backend=backend, nodes=nodes, digits=digits, level=level)
    mu1 = e1 / sc
    return e0, mu1, np.maximum(0.0, e2 - e0 * e0 - c_f * mu1 * mu1)


def cge_arb(student, r, c, kappa, *, backend=None, nodes=61, digits=None, level=0):
    r"""(15) in Arb at the current working precision: lists of balls :math:`\mu_0,\mu_1,\mu_\star^2` over ``kappa``
    (a list of Arb balls).  Must run inside :func:`~onestep_theory.precision.workdps`."""
    act = Activation.from_any(student, "student")
    backend = backend or default_backend(act)
    sc = c.sqrt()
    e0, e1, e2 = _smooth_arb(act, np.array([r * k for k in kappa], dtype=object), sc, backend, flint.ctx.dps,
                             digits if digits is not None else flint.ctx.dps, level, nodes)
    e0, e1, e2 = (np.atleast_1d(v).ravel() for v in (e0, e1, e2))
    mu1 = [v / sc for v in e1]
    ms2 = [_clip0(a2 - a0 * a0 - c * m1 * m1) for a0, m1, a2 in zip(e0, mu1, e2)]
    return list(e0), mu1, ms2


def _clip0(v):
    """max(0, v) on the midpoint (clipping of mu_star^2, eq. (15))."""
    return v if v.mid() > 0 else flint.arb(0)


@dataclasses.dataclass
class CGEValues(Result):
    r"""μ0, μ1, μ⋆² of (15) at given κ with error estimates (change under a refined inner rule)."""

    kappa: list
    mu0: list
    mu1: list
    mustar2: list
    errors: dict
    r: object
    c: object
    dps: int | None
    provenance: dict

    def to_dict(self) -> dict:
        d = super().to_dict()
        for key in ("mu0", "mu1", "mustar2"):
            d[key] = [vouched(v, e) for v, e in zip(getattr(self, key), self.errors[key])]
        d["errors"] = {k: [f"{e:.1e}" for e in v] for k, v in self.errors.items()}
        return d


def cge_values(student, r, c, kappa, *, dps: int | None = None) -> CGEValues:
    r"""(15) at the points ``kappa`` with an error estimate: two inner-rule levels compared (float64, or Arb
    at ``dps`` digits), plus rounding.  Exact values (closed forms) have only the rounding error."""
    if dps is None:
        kappa = np.array([to_float(k, "kappa") for k in np.atleast_1d(np.asarray(kappa, dtype=object))])
        r, c = to_float(r, "r"), to_float(c, "c")
    vals = [cge_coeffs(student, r, c, kappa, dps=dps, level=lev) for lev in (0, 1)]
    rnd = 1e-15 if dps is None else 10.0 ** -(dps + 5)
    errors = {}
    for name, a, b in zip(("mu0", "mu1", "mustar2"), vals[0], vals[1]):
        errors[name] = [float(abs(x1 - x0)) + rnd * max(1.0, abs(float(x1))) for x0, x1 in
                        zip(np.atleast_1d(a), np.atleast_1d(b))]
    return CGEValues(kappa=list(np.atleast_1d(kappa)), mu0=list(np.atleast_1d(vals[1][0])),
                     mu1=list(np.atleast_1d(vals[1][1])), mustar2=list(np.atleast_1d(vals[1][2])), errors=errors,
                     r=r, c=c, dps=dps, provenance=provenance(dps=dps, method="closed form or split Gauss-Legendre "
                                                              "panels, error from a refined rule",
                                                              references=["[CPDKLZL24] eq. (15)",
                                                                          "srf-theory.md §3"]))


KAPPA, R, C = sp.symbols("kappa r c", real=True)


def cge_symbolic(student) -> dict:
    r"""Exact :math:`\mu_0,\mu_1,\mu_\star^2` in the symbols ``kappa, r, c`` where found (piecewise polynomials, erf).

    Uses the truncated-moment formulas of module ``gauss`` with symbolic limits, and
    :math:`\mathbb E\,\mathrm{erf}(\alpha(a+sZ))=\mathrm{erf}(\alpha a/\sqrt{1+2\alpha^2s^2})` (Owen 1980).
    Missing entries mean no closed form was found.

    >>> cge_symbolic("sign")["mu0"]
    erf(sqrt(2)*kappa*r/(2*sqrt(c)))
    """
    act = Activation.from_any(student, "student")
    cpos = sp.Symbol("c", positive=True)
    a, s = R * KAPPA, sp.sqrt(cpos)
    out = {}
    z = sp.Symbol("z", real=True)
    if is_piecewise_polynomial(act.expr):
        def ex(weight, square):
            tot = sp.Integer(0)
            for lo, hi, g in pieces(act.expr):
                gg = sp.expand((g**2 if square else g).subs(x, a + s * z) * (z if weight else 1))
                if gg == 0:
                    continue
                poly = sp.Poly(gg, z)
                zlo = -sp.oo if lo == -sp.oo else (lo - a) / s
                zhi = sp.oo if hi == sp.oo else (hi - a) / s
                T = trunc_moments(poly.degree() + 1, zlo, zhi)
                tot += sum(cf * T[j] for (j,), cf in poly.terms())
            return sp.simplify(tot)

        e0, e1, e2 = ex(False, False), ex(True, False), ex(False, True)
        out = {"mu0": e0, "mu1": sp.simplify(e1 / s), "mustar2": sp.simplify(e2 - e0**2 - e1**2)}
    else:
        e = act.expr
        coeff, rest = e.as_independent(x, as_Add=False)
        if isinstance(rest, sp.erf) and sp.Poly(rest.args[0], x).degree() == 1 and rest.args[0].subs(x, 0) == 0:
            al = rest.args[0].coeff(x)
            out["mu0"] = coeff * sp.erf(al * a / sp.sqrt(1 + 2 * al**2 * s**2))
            # mu1 = E sigma'(a + sZ) (Stein): sigma' = coeff * 2 al/sqrt(pi) exp(-al^2 x^2)
            out["mu1"] = sp.simplify(coeff * 2 * al / sp.sqrt(sp.pi) / sp.sqrt(1 + 2 * al**2 * s**2)
                                     * sp.exp(-al**2 * a**2 / (1 + 2 * al**2 * s**2)))
    return {k: v.subs(cpos, C) for k, v in out.items()}
