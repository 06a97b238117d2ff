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

from ..core.caches import cached, disk_cached, register
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


#: Method name of the piecewise-polynomial recursion (its values need no simplification).
RECURSION = "exact (piecewise-polynomial recursion)"


def _poly_table(f: sp.Expr, kmax: int):
    r""":math:`(\mathbb E[f\mathrm{He}_k])_{k\le K}` at once for an *f* whose pieces are polynomials in x with
    rational breakpoints (relu, sign, |x - 1/3|, …), or None (docs/theory/hermite.md §2.2).

    On a piece (a, b): :math:`I_0=\Phi(b)-\Phi(a)`, :math:`I_k=\mathrm{He}_{k-1}(a)\varphi(a)-\mathrm{He}_{k-1}(b)
    \varphi(b)` (as :math:`(\mathrm{He}_{k-1}\varphi)'=-\mathrm{He}_k\varphi`), and
    :math:`T(m+1,k)=T(m,k+1)+kT(m,k-1)` (from :math:`x\mathrm{He}_k=\mathrm{He}_{k+1}+k\mathrm{He}_{k-1}`) with
    :math:`T(0,k)=I_k`.  Every T is a combination of the atoms :math:`\Phi(b)-\Phi(a),\varphi(a),\varphi(b)`
    with rational coefficients (exact Fractions), so K = 200 costs milliseconds where the exact engine takes
    minutes (issue 23)."""
    from fractions import Fraction

    polys = []
    for a, b, g in pieces(f):
        try:
            poly = sp.Poly(g, x)
        except sp.PolynomialError:
            return None
        if not all(c.is_number for c in poly.all_coeffs()) or not all(
                t in (-sp.oo, sp.oo) or t.is_Rational for t in (a, b)):
            return None
        polys.append((a, b, poly))
    total = [sp.Integer(0)] * (kmax + 1)
    for a, b, poly in polys:
        if poly.is_zero:
            continue
        deg = poly.degree()
        top = kmax + deg + 1
        ends = []
        for t in (a, b):           # (He_j(t) for j < top as Fractions, phi(t) exactly); None at +-oo
            if t in (-sp.oo, sp.oo):
                ends.append(None)
                continue
            ends.append(he_values(top - 1, Fraction(int(t.p), int(t.q))))     # the one home of the recurrence
        # T(0, k) as (coefficient of Phi(b)-Phi(a), of phi(a), of phi(b))
        row = [(Fraction(1), Fraction(0), Fraction(0))]
        for k in range(1, top + 1):
            row.append((Fraction(0), ends[0][k - 1] if ends[0] else Fraction(0),
                        -ends[1][k - 1] if ends[1] else Fraction(0)))
        rows = [row]
        for m in range(deg):
            prev = rows[-1]
            rows.append([tuple(u + k * w for u, w in zip(prev[k + 1], prev[k - 1] if k else (0, 0, 0)))
                         for k in range(len(prev) - 1)])
        atoms = [(sp.erf(b / sp.sqrt(2)) - sp.erf(a / sp.sqrt(2))) / 2,
                 sp.exp(-a * a / 2) / sp.sqrt(2 * sp.pi) if ends[0] else sp.Integer(0),
                 sp.exp(-b * b / 2) / sp.sqrt(2 * sp.pi) if ends[1] else sp.Integer(0)]
        coeffs = dict(zip(range(deg, -1, -1), poly.all_coeffs()))
        for k in range(kmax + 1):
            for j, atom in enumerate(atoms):
                c = sum((coeffs[m] * sp.Rational(rows[m][k][j].numerator, rows[m][k][j].denominator)
                         for m in range(deg + 1) if rows[m][k][j]), sp.Integer(0))
                if c != 0:
                    total[k] += c * atom
    return tuple(sp.expand(v) for v in total)


@cached(maxsize=256)
def _poly_moments(f: sp.Expr, kmax: int):
    return _poly_table(f, kmax)


@cached(maxsize=4096)
@disk_cached("moment_exact")
def moment_exact(f: sp.Expr, k: int):
    r"""Exact :math:`\mathbb E[f(Z)\mathrm{He}_k(Z)]` and how it was found, or ``(None, None)``.

    Tries, in order: parity of *f*; for piecewise polynomials with rational kinks the recursion of
    :func:`_poly_table` (all k up to the next power of two at once); the exact engine on the pieces of *f*;
    Stein's identity once, :math:`\mathbb E[f\mathrm{He}_k]=\mathbb E[f'\mathrm{He}_{k-1}]`
    (docs/theory/hermite.md §2.2), with the exact engine or the parity of :math:`f'-f'(0)`.
    """
    if k % 2 == 1 and is_even(f) or k % 2 == 0 and is_odd(f):
        return sp.Integer(0), "exact (parity)"
    table = _poly_moments(f, max(16, 1 << int(k).bit_length()))
    if table is not None:
        return table[k], RECURSION
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


def numeric_bundle(f: sp.Expr, kmax: int) -> tuple:
    r"""Numeric :math:`(\mathbb E[f\mathrm{He}_0],\dots,\mathbb E[f\mathrm{He}_K],\ \mathbb E f^2)` at the ambient
    precision.

    One quadrature pass for all weights; cached by (expression, working precision), reusing a
    previous pass with a larger ``K``.
    """
    key = (f, mpmath.mp.prec)
    hit = _BUNDLES.get(key)
    if hit is not None and hit[0] >= kmax:
        return hit[1][: kmax + 1] + (hit[1][-1],)
    kk = max(kmax, 2)
    vals = _bundle(f, kk)
    if len(_BUNDLES) > 4096:
        _BUNDLES.clear()
    _BUNDLES[key] = (kk, vals)
    return vals[: kmax + 1] + (vals[-1],)


@disk_cached("numeric_bundle", at_precision=True)
def _bundle(f: sp.Expr, kk: int) -> tuple:
    """:func:`numeric_bundle`'s quadrature pass at the ambient precision (it depends on nothing else but ``f`` and
    ``kk``: kept on disk bit for bit, keyed on the working precision too)."""

    def wfun(t, fv):
        return he_values(kk, t) + [fv]

    deg = sp.Poly(f, x).degree() if f.is_polynomial(x) else 2
    return tuple(expect_numeric_vec(f, wfun, kk + 2, growth=kk + 2 * deg))


def moments_numeric(f: sp.Expr, ks: tuple) -> tuple:
    r"""The numeric :math:`\mathbb E[f\mathrm{He}_k]`, ``k`` in ``ks``, at the ambient precision."""
    bundle = numeric_bundle(f, max(ks))
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
    if v is not None and dps is None:
        return v
    with precision(dps or 15):                     # the boundary: dps = the digits asked
        return to_mpf(v) if v is not None else moments_numeric(e, (0,))[0]


