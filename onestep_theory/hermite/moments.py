r"""Gaussian moments :math:`\mathbb E[f(Z)\mathrm{He}_k(Z)]` of an expression: exact where the engine finds
a closed form (parity, the exact engine, Stein's identity), otherwise one numeric quadrature pass for all
weights at once.

References
----------
docs/theory/hermite.md §2 (expansion coefficients), §5 (numerics policy).
"""

from __future__ import annotations


import mpmath  # noqa: F401  (doctests)
import sympy as sp

from ..core.caches import cached, register
from ..core.exact import to_mpf
from ..core.precision import precision
from .expressions import is_even, is_odd, pieces, x
from .parsing import parse
from .gauss import NotExact, expect_exact, expect_numeric_vec, expect_piece_exact, tidy
from .polynomials import he_poly, he_values

__all__ = ["he_expect", "moment_exact", "numeric_bundle", "moments_numeric"]


def _exact_weighted(f: sp.Expr, w: sp.Expr):
    """Exact E[f(Z) w(Z)] over the pieces of f, w a polynomial; None if not found."""
    try:
        total = sp.Integer(0)
        for a, b, g in pieces(f):
            total += expect_piece_exact(g * w, a, b)
        return tidy(total)
    except NotExact:
        return None


@cached(maxsize=1024)
def _smooth_derivative(f: sp.Expr):
    """(f', f'(0), f' - f'(0) is odd) for a smooth f (single piece), else None."""
    if len(pieces(f)) != 1:
        return None
    g = sp.diff(f, x)
    g0 = g.subs(x, 0)
    odd = bool(g0.is_number) and not g0.has(sp.zoo, sp.nan) and is_odd(g - g0)
    return g, g0, odd


@cached(maxsize=4096)
def moment_exact(f: sp.Expr, k: int):
    r"""Exact :math:`\mathbb E[f(Z)\mathrm{He}_k(Z)]` and how it was found, or ``(None, None)``.

    Tries, in order: parity of *f*; the exact engine on the pieces of *f*; Stein's
    identity once, :math:`\mathbb E[f\mathrm{He}_k]=\mathbb E[f'\mathrm{He}_{k-1}]`
    (docs/theory/hermite.md §2.2), with the exact engine or the parity of :math:`f'-f'(0)`.
    """
    if k % 2 == 1 and is_even(f) or k % 2 == 0 and is_odd(f):
        return sp.Integer(0), "exact (parity)"
    v = _exact_weighted(f, he_poly(k))
    if v is not None:
        return v, "exact"
    if k >= 1:
        d = _smooth_derivative(f)
        if d is not None:
            g, g0, odd = d
            v = _exact_weighted(g, he_poly(k - 1))
            if v is not None:
                return v, "exact (Stein)"
            if odd and (k - 1) % 2 == 0:
                return (sp.nsimplify(g0) if k == 1 else sp.Integer(0)), "exact (Stein, parity)"
    if k == 0:
        v = _parity_mean(f)
        if v is not None:
            return v, "exact (parity)"
        try:
            return expect_exact(f), "exact"
        except NotExact:
            pass
    return None, None


def _parity_mean(g: sp.Expr):
    """E g(Z) = g(0) when g - g(0) is odd (proven symbolically), else None."""
    if len(pieces(g)) != 1:
        return None
    g0 = g.subs(x, 0)
    if not g0.is_number or g0.has(sp.zoo, sp.nan):
        return None
    return sp.nsimplify(g0) if is_odd(g - g0) else None


_BUNDLES: dict = {}
register(_BUNDLES.clear)


def numeric_bundle(f: sp.Expr, kmax: int, dps: int) -> tuple:
    r"""Numeric :math:`(\mathbb E[f\mathrm{He}_0],\dots,\mathbb E[f\mathrm{He}_K],\ \mathbb E f^2)` at ``dps``.

    One quadrature pass for all weights; cached by (expression, dps), reusing a
    previous pass with a larger ``K``.
    """
    key = (f, dps)
    hit = _BUNDLES.get(key)
    if hit is not None and hit[0] >= kmax:
        return hit[1][: kmax + 1] + (hit[1][-1],)
    kk = max(kmax, 2)

    def wfun(t, fv):
        return he_values(kk, t) + [fv]

    deg = sp.Poly(f, x).degree() if f.is_polynomial(x) else 2
    vals = tuple(expect_numeric_vec(f, wfun, kk + 2, dps, growth=kk + 2 * deg))
    if len(_BUNDLES) > 4096:
        _BUNDLES.clear()
    _BUNDLES[key] = (kk, vals)
    return vals[: kmax + 1] + (vals[-1],)


def moments_numeric(f: sp.Expr, ks: tuple, dps: int) -> tuple:
    bundle = numeric_bundle(f, max(ks), dps)
    return tuple(bundle[k] for k in ks)


def he_expect(f, dps: int | None = None, *, param: str = "f"):
    r""":math:`\mathbb E f(Z)`, :math:`Z\sim\mathsf N(0,1)`.

    Exact SymPy value when the exact engine finds one (``dps=None`` then returns it),
    otherwise an ``mpf`` at ``dps`` digits (default 15) from breakpoint-split tanh-sinh
    quadrature (docs/theory/hermite.md §5.4).

    >>> he_expect("Max(x,0)**2")
    1/2
    >>> print(mpmath.nstr(he_expect("tanh(x)**2", 20), 20))
    0.39429449039784117442
    """
    e = parse(f, param) if not isinstance(f, sp.Expr) else f
    v, _ = moment_exact(e, 0)
    if v is not None:
        if dps is None:
            return v
        with precision(dps):
            return to_mpf(v, dps)
    return moments_numeric(e, (0,), dps or 15)[0]


