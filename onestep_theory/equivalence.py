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

import functools
import math

import mpmath
import numpy as np
import sympy as sp
from scipy.special import ndtr

from .errors import InvalidParameterError
from .exact import GUARD_DIGITS, to_mpf
from .expressions import breakpoints, pieces, x
from .gauss import tanh_sinh_vec, trunc_moments
from .hermite import Activation

__all__ = ["smooth", "cge_coeffs", "cge_symbolic", "gh_nodes", "is_piecewise_polynomial", "default_backend"]


@functools.lru_cache(maxsize=64)
def gh_nodes(n: int):
    """Probabilists' Gauss–Hermite nodes and weights normalised to sum 1 (float64)."""
    from numpy.polynomial.hermite_e import hermegauss

    z, w = hermegauss(n)
    return z, w / w.sum()


@functools.lru_cache(maxsize=256)
def is_piecewise_polynomial(expr: sp.Expr) -> bool:
    return all(g.is_polynomial(x) for _, _, g in pieces(expr))


def default_backend(act: Activation) -> str:
    """``exact`` for piecewise polynomials, ``gauss-hermite`` for smooth functions, ``mp`` otherwise."""
    if is_piecewise_polynomial(act.expr):
        return "exact"
    if not breakpoints(act.expr):
        return "gauss-hermite"
    return "mp"


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


def smooth(act, a, s, *, backend: str | None = None, nodes: int = 61, dps: int | None = None):
    r"""Gaussian smoothing :math:`(\mathbb E f(a+sZ),\ \mathbb E[Zf(a+sZ)],\ \mathbb E f(a+sZ)^2)` over an array ``a``.

    ``s = 0`` returns :math:`(f(a), 0, f(a)^2)`.  With ``backend="mp"`` (or ``dps`` given) ``a`` may hold
    mpf values and the result is a triple of object arrays of mpf at ``dps`` digits.
    """
    act = Activation.from_any(act)
    backend = backend or ("mp" if dps is not None else default_backend(act))
    if backend == "mp":
        return _smooth_mp(act, a, s, dps or 15)
    a = np.asarray(a, dtype=float)
    s = float(s)
    f = act.numpy()
    if s == 0:
        v = f(a)
        return v, np.zeros_like(a), v * v
    if s < 0:
        raise InvalidParameterError("s", s, "a real number >= 0")
    if backend == "exact":
        if not is_piecewise_polynomial(act.expr):
            raise InvalidParameterError("backend", backend, "'gauss-hermite' or 'mp' for a non-polynomial piece")
        off = act.offset_float()
        m0 = _exact_moment(act.expr, a, s, False, False) - off
        m1 = _exact_moment(act.expr, a, s, True, False)
        m2 = _exact_moment(act.expr, a, s, False, True) - 2 * off * (m0 + off) + off * off
        return m0, m1, m2
    if backend == "gauss-hermite":
        if breakpoints(act.expr):
            raise InvalidParameterError("backend", backend, "'exact' or 'mp' for a kinked function (hermite.md §5.5)")
        z, w = gh_nodes(nodes)
        vals = f(a[..., None] + s * z)
        return vals @ w, vals @ (w * z), (vals * vals) @ w
    raise InvalidParameterError("backend", backend, "'exact', 'gauss-hermite' or 'mp'")


@functools.lru_cache(maxsize=256)
def _mp_piece_fns(expr: sp.Expr) -> tuple:
    """mpmath callables of the smooth pieces of *expr*, lambdified once per expression."""
    return tuple(sp.lambdify(x, g, modules="mpmath") for _, _, g in pieces(expr))


def _smooth_mp(act: Activation, a, s, dps: int):
    kinks = [to_mpf(b, dps) for b in breakpoints(act.expr)]
    fn_pieces = _mp_piece_fns(act.expr)
    a_arr = np.atleast_1d(np.asarray(a, dtype=object))
    out = [np.empty(a_arr.shape, dtype=object) for _ in range(3)]
    with mpmath.workdps(dps + GUARD_DIGITS):
        s = mpmath.mpf(s)
        off = act.raw_mean(dps + GUARD_DIGITS) if act.center else mpmath.mpf(0)
        for idx, av in np.ndenumerate(a_arr):
            av = mpmath.mpf(av)
            if s == 0:
                fv = _eval_pieces(act, fn_pieces, kinks, av) - off
                out[0][idx], out[1][idx], out[2][idx] = fv, mpmath.mpf(0), fv * fv
                continue
            zk = [(b - av) / s for b in kinks]
            edges = [-mpmath.inf, *zk, mpmath.inf]
            segs = []
            for k, fn in enumerate(fn_pieces):
                lo, hi = edges[k], edges[k + 1]
                pts = [lo, hi] if not (lo < 0 < hi) else [lo, mpmath.mpf(0), hi]
                segs.append((pts, lambda z, fn=fn: fn(av + s * z) - off))
            m0, m1, m2 = tanh_sinh_vec(segs, lambda z, fv: [1, z, fv], 3, dps, label=act.name)
            out[0][idx], out[1][idx], out[2][idx] = m0, m1, m2
    return tuple(o if np.ndim(a) else o.reshape(()).item() for o in out)


def _eval_pieces(act, fns, kinks, t):
    k = sum(1 for b in kinks if t > b)
    return mpmath.mpf(fns[k](t))


def cge_coeffs(student, r, c, kappa, *, backend: str | None = None, nodes: int = 61, dps: int | None = None):
    r""":math:`\mu_0(\kappa),\mu_1(\kappa),\mu_\star^2(\kappa)` of eq. (15) [CPDKLZL24] (srf-theory.md §3).

    ``kappa`` is an array (float64) or, with ``dps``, values evaluated at ``dps`` digits.
    :math:`\mu_\star^2` is clipped at 0.

    >>> m0, m1, ms2 = cge_coeffs("sign", 1.0, 1.0, np.array([0.0, 1.0, 2.0]))    # srf-theory.md §11.3
    >>> np.round(m0, 8).tolist(), np.round(m1, 8).tolist(), np.round(ms2, 8).tolist()
    ([0.0, 0.68268949, 0.95449974], [0.79788456, 0.48394145, 0.10798193], [0.36338023, 0.29973573, 0.07727016])
    """
    c_f = float(c)
    if not c_f > 0:
        raise InvalidParameterError("c", c, "a real number > 0")
    if dps is not None or backend == "mp":
        dps = dps or 15
        with mpmath.workdps(dps + GUARD_DIGITS):
            rr, cc = mpmath.mpf(r), mpmath.mpf(c)
            sc = mpmath.sqrt(cc)
            k = np.atleast_1d(np.asarray(kappa, dtype=object))
            a = np.array([rr * mpmath.mpf(v) for v in k.ravel()], dtype=object).reshape(k.shape)
            e0, e1, e2 = _smooth_mp(Activation.from_any(student, "student"), a, sc, dps)
            mu0 = e0
            mu1 = np.array([v / sc for v in e1.ravel()], dtype=object).reshape(k.shape)
            ms2 = np.array([max(mpmath.mpf(0), e2f - e0f**2 - cc * (e1f / sc) ** 2)
                            for e0f, e1f, e2f in zip(e0.ravel(), e1.ravel(), e2.ravel())], dtype=object).reshape(k.shape)
        return mu0, mu1, ms2
    kap = np.asarray(kappa, dtype=float)
    sc = math.sqrt(c_f)
    e0, e1, e2 = smooth(student, float(r) * kap, sc, backend=backend, nodes=nodes)
    mu1 = e1 / sc
    return e0, mu1, np.maximum(0.0, e2 - e0 * e0 - c_f * mu1 * mu1)


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
