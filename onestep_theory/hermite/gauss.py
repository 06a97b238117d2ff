r"""Gaussian expectations :math:`\mathbb E f(Z)`, :math:`Z\sim\mathsf N(0,1)`: exact and numeric.

Exact layer (SymPy).  An expression is split at its kinks (:func:`~.expressions.pieces`);
on each piece it is expanded into terms :math:`p(x)\,e^{Ax^2+Bx+C}` (polynomial times the
exponential of a quadratic; ``sin``, ``cos``, ``sinh``, ``cosh`` are rewritten through
``exp``).  Each term is integrated in closed form by completing the square and using the
truncated Gaussian moments

.. math::  T_j(a,b)=\int_a^b y^j\varphi(y)\,dy,\quad
           T_j = a^{j-1}\varphi(a)-b^{j-1}\varphi(b)+(j-1)T_{j-2},

with :math:`T_0=\Phi(b)-\Phi(a)` and :math:`T_1=\varphi(a)-\varphi(b)`.  A small table of
``erf`` integrals (Owen 1980) covers :math:`\mathbb E\,\mathrm{erf}(aZ+b)` and
:math:`\mathbb E[\mathrm{erf}(aZ)\mathrm{erf}(bZ)]`.  SymPy's general ``integrate`` is not
used: it is slow and unreliable on these integrands.

Numeric layer (mpmath).  ``mp.quad`` (tanh-sinh) over ``[-inf, b_1, ..., b_m, inf]`` with a
breakpoint at every kink and at 0, each piece integrated with its own smooth formula
(docs/theory/hermite.md §5.4).  Gauss–Hermite is never used here.

References
----------
docs/theory/hermite.md §§1–5.  D. B. Owen, *A table of normal integrals*, Comm. Statist.
Simul. Comput. 9 (1980) 389–419 (formulas 7.1.x for erf).
"""

from __future__ import annotations

import math

import mpmath
import flint
import numpy as np
import sympy as sp

from ..core.caches import cached
from ..core.errors import ExpressionError, QuadratureError
from ..core.exact import check_dps, to_mpf
from .expressions import pieces, x
from ..core.limits import MAX_DPS
from ..core.precision import arb_to_mpf, asked_digits, past_asked, precision, tolerance

__all__ = ["NotExact", "trunc_moments", "trunc_moments_float", "trunc_moments_arb", "trunc_recursion", "tidy",
           "expect_exact", "expect_piece_exact", "expect_numeric", "expect_numeric_many", "expect_numeric_vec",
           "tanh_sinh_vec"]


class NotExact(Exception):
    """The exact engine cannot integrate this expression (internal signal)."""


def _npdf(t):
    if t in (sp.oo, -sp.oo):
        return sp.Integer(0)
    return sp.exp(-t**2 / 2) / sp.sqrt(2 * sp.pi)


def _ncdf(t):
    if t == sp.oo:
        return sp.Integer(1)
    if t == -sp.oo:
        return sp.Integer(0)
    return (1 + sp.erf(t / sp.sqrt(2))) / 2


def trunc_recursion(jmax: int, lo, hi, mass, pdf_lo, pdf_hi, edge) -> list:
    r"""The recursion :math:`T_0=\Phi(b)-\Phi(a)`, :math:`T_1=\varphi(a)-\varphi(b)`,
    :math:`T_j=a^{j-1}\varphi(a)-b^{j-1}\varphi(b)+(j-1)T_{j-2}` of the truncated moments
    :math:`T_j(a,b)=\int_a^b y^j\varphi(y)dy` (docs/theory/hermite.md §4), in any arithmetic.

    ``mass`` is :math:`T_0`, ``pdf_lo``/``pdf_hi`` the densities at the ends and ``edge(t, k, pdf)`` the
    boundary term :math:`t^k\varphi(t)` (zero at an infinite end).  One home for the exact, float64 and
    Arb versions (:func:`trunc_moments`, :func:`trunc_moments_float`, :func:`trunc_moments_arb`).
    """
    T = [mass, pdf_lo - pdf_hi]
    for j in range(2, jmax + 1):
        T.append(edge(lo, j - 1, pdf_lo) - edge(hi, j - 1, pdf_hi) + (j - 1) * T[j - 2])
    return T[: jmax + 1]


def trunc_moments(jmax: int, a, b) -> list:
    r"""Exact truncated moments :math:`T_j(a,b)=\int_a^b y^j\varphi(y)dy`, ``j = 0..jmax``.

    Implements the integration-by-parts recursion stated in the module docstring.
    Infinite end points contribute nothing to the boundary terms.

    >>> trunc_moments(4, -sp.oo, sp.oo)
    [1, 0, 1, 0, 3]
    >>> trunc_moments(1, 0, sp.oo)
    [1/2, sqrt(2)/(2*sqrt(pi))]
    """
    def edge(t, k, pdf):
        return 0 if t in (sp.oo, -sp.oo) else sp.expand(t**k * pdf)

    return [sp.expand(v) for v in trunc_recursion(jmax, a, b, _ncdf(b) - _ncdf(a), _npdf(a), _npdf(b), edge)]


def trunc_moments_float(jmax: int, lo, hi) -> list:
    """:func:`trunc_moments` in vectorised float64 (arrays ``lo``, ``hi``; ``±inf`` allowed)."""
    def pdf(t):
        with np.errstate(over="ignore", invalid="ignore"):
            v = np.exp(-0.5 * t * t) / math.sqrt(2 * math.pi)
        return np.where(np.isinf(t), 0.0, v)

    def edge(t, k, p):
        with np.errstate(invalid="ignore", over="ignore"):
            return np.where(np.isinf(t), 0.0, t**k * p)

    from scipy.special import ndtr      # SciPy loads only when a float64 rule needs it (start-up, issue 23)

    return trunc_recursion(jmax, lo, hi, ndtr(hi) - ndtr(lo), pdf(lo), pdf(hi), edge)


def trunc_moments_arb(jmax: int, lo, hi) -> list:
    """:func:`trunc_moments` in Arb ball arithmetic at the current precision (``None`` = infinite end); the
    mass is computed from upper tails, without cancellation."""
    norm = 1 / (2 * flint.arb.pi()).sqrt()
    sq2 = flint.arb(2).sqrt()

    def pdf(t):
        return flint.arb(0) if t is None else norm * (-t * t / 2).exp()

    def up(t):  # 1 - Phi(t)
        return (t / sq2).erfc() / 2

    def edge(t, k, p):
        return flint.arb(0) if t is None else t**k * p

    mass = (flint.arb(1) if lo is None else up(lo)) - (flint.arb(0) if hi is None else up(hi))
    return trunc_recursion(jmax, lo, hi, mass, pdf(lo), pdf(hi), edge)


def _split_term(term: sp.Expr):
    """Return (poly, exponent) with term = poly(x) * exp(exponent); raise NotExact otherwise."""
    poly = sp.Integer(1)
    expo = sp.Integer(0)
    for f in sp.Mul.make_args(term):
        if not f.has(x):
            poly *= f
        elif isinstance(f, sp.exp):
            expo += f.args[0]
        elif isinstance(f, sp.Pow) and f.base == sp.E:
            expo += f.exp
        elif f.is_polynomial(x):
            poly *= f
        else:
            raise NotExact(f)
    expo = sp.expand(expo)
    if not expo.is_polynomial(x) or sp.degree(expo, x) > 2:
        raise NotExact(expo)
    return poly, expo


def _term_integral(poly: sp.Expr, expo: sp.Expr, a, b) -> sp.Expr:
    r"""Exact :math:`\int_a^b p(x)e^{Ax^2+Bx+C}\varphi(x)dx` (completing the square)."""
    pe = sp.Poly(expo, x)
    A = pe.coeff_monomial(x**2)
    B = pe.coeff_monomial(x)
    C = pe.coeff_monomial(1)
    if A.has(sp.I) or not (sp.Rational(1, 2) - A).is_positive:
        raise NotExact("exponent not integrable")
    q = sp.Rational(1, 2) - A          # exponent = -q x^2 + B x + C
    mu = B / (2 * q)                   # x = mu + y / sqrt(2q)
    s = 1 / sp.sqrt(2 * q)
    full = a == -sp.oo and b == sp.oo
    if not full and (B.has(sp.I) or not B.is_real):
        raise NotExact("complex shift on a truncated interval")
    ya = -sp.oo if a == -sp.oo else (a - mu) / s
    yb = sp.oo if b == sp.oo else (b - mu) / s
    p = sp.Poly(sp.expand(poly), x)
    deg = p.degree()
    y = sp.Symbol("y")
    shifted = sp.Poly(sp.expand(p.as_expr().subs(x, mu + s * y)), y)
    tm = trunc_moments(max(deg, 0) + 1, ya, yb)
    acc = sp.Integer(0)
    for (j,), coeff in shifted.terms():
        acc += coeff * tm[j]
    return sp.exp(B**2 / (4 * q) + C) * s * acc


def _erf_table(g: sp.Expr):
    """Exact E g(Z) for g = c*erf(aZ+b) or c*erf(aZ)*erf(bZ) (Owen 1980), else NotExact."""
    coeff, rest = g.as_independent(x, as_Add=False)
    erfs = [f for f in sp.Mul.make_args(rest)]
    flat = []
    for f in erfs:
        if isinstance(f, sp.Pow) and isinstance(f.base, sp.erf) and f.exp == 2:
            flat += [f.base, f.base]
        else:
            flat.append(f)
    if not all(isinstance(f, sp.erf) for f in flat) or not 1 <= len(flat) <= 2:
        raise NotExact(g)
    lin = []
    for f in flat:
        arg = sp.expand(f.args[0])
        if not arg.is_polynomial(x) or sp.degree(arg, x) != 1:
            raise NotExact(g)
        lin.append((arg.coeff(x, 1), arg.coeff(x, 0)))
    if len(lin) == 1:
        a1, b1 = lin[0]
        return coeff * sp.erf(b1 / sp.sqrt(1 + 2 * a1**2))
    (a1, b1), (a2, b2) = lin
    if b1 != 0 or b2 != 0:
        raise NotExact(g)
    return coeff * 2 / sp.pi * sp.asin(2 * a1 * a2 / sp.sqrt((1 + 2 * a1**2) * (1 + 2 * a2**2)))


def expect_piece_exact(g: sp.Expr, a=-sp.oo, b=sp.oo) -> sp.Expr:
    r"""Exact :math:`\int_a^b g(x)\varphi(x)dx` for a smooth piece *g*; raise :class:`NotExact`.

    >>> expect_piece_exact(x**2, 0, sp.oo)
    1/2
    >>> expect_piece_exact(x*sp.sin(x))
    exp(-1/2)
    """
    g = sp.expand(g)
    if g == 0:
        return sp.Integer(0)
    if g.has(sp.erf):
        if a != -sp.oo or b != sp.oo:
            raise NotExact(g)
        return sp.Add(*[_erf_table(t) if t.has(sp.erf) else expect_piece_exact(t) for t in sp.Add.make_args(g)])
    h = g
    if h.has(sp.sin, sp.cos, sp.sinh, sp.cosh):
        h = sp.expand(h.rewrite(sp.exp))
    total = sp.Integer(0)
    for term in sp.Add.make_args(h):
        poly, expo = _split_term(term)
        total += _term_integral(poly, expo, a, b)
    if total.has(sp.I):
        total = sp.expand_complex(total).as_real_imag()[0]
    return total


def tidy(v: sp.Expr) -> sp.Expr:
    v = sp.nsimplify(v) if v.is_Rational else v
    if sp.count_ops(v) > 60:
        return sp.radsimp(sp.expand(v))
    try:
        return sp.simplify(v)
    except Exception:  # noqa: BLE001
        return v


@cached(maxsize=4096)
def expect_exact(f: sp.Expr) -> sp.Expr:
    r"""Exact :math:`\mathbb E f(Z)` summed over the smooth pieces of *f*; raise :class:`NotExact`.

    >>> expect_exact(sp.Max(x, 0))
    sqrt(2)/(2*sqrt(pi))
    >>> expect_exact(sp.erf(x/sp.sqrt(2))**2)
    1/3
    """
    total = sp.Integer(0)
    for a, b, g in pieces(f):
        total += expect_piece_exact(g, a, b)
    return tidy(total)


def _quad_pieces(f: sp.Expr):
    """Pieces with mpmath callables and the breakpoint lists (0 always included)."""
    out = []
    for a, b, g in pieces(f):
        pts = [a, b]
        if a < 0 < b:
            pts = [a, sp.Integer(0), b]
        out.append((pts, sp.lambdify(x, g, modules="mpmath")))
    return out


@cached(maxsize=1024)
def _lambdified_pieces(f: sp.Expr):
    return tuple(_quad_pieces(f))


def tanh_sinh_vec(segments, wfun, nw: int, *, maxdegree: int = 12, label: str = "integrand") -> list:
    r"""Vector-valued tanh-sinh quadrature of :math:`\int f(t)\,w_j(t)\,\varphi(t)\,dt`, ``j < nw``.

    ``segments`` is a list of ``(points, f)`` with ``points`` increasing mpf end points (``±inf``
    allowed) between which ``f`` is smooth.  ``wfun(t, f(t))`` returns the ``nw`` weights.
    mpmath's tanh-sinh nodes, our summation: ``f`` is evaluated once per node for all weights.
    Degrees are raised until mpmath's error estimate of every component is below ``10**-(D+4)`` times the
    scale of the integrals, ``D`` the digits asked at the enclosing boundary (ambient precision), else
    :class:`QuadratureError`.
    """
    from mpmath.calculus.quadrature import TanhSinh

    ctx = mpmath.mp
    rule = TanhSinh(ctx)
    prec = ctx.prec
    dps = asked_digits()
    norm = 1 / mpmath.sqrt(2 * mpmath.pi)
    eps = tolerance(4, why="c_>1 cancels E s^2 against the c_k^2: 4 digits (docs/theory/hermite.md §2.4)")
    totals = [mpmath.mpf(0)] * nw
    for pts, fn in segments:
        for a, b in zip(pts[:-1], pts[1:]):
            if a == b:
                continue
            results = []
            err = mpmath.inf
            for degree in range(1, maxdegree + 1):
                h = mpmath.ldexp(1, -degree)
                acc = [r / (2 * h) for r in results[-1]] if results else [mpmath.mpf(0)] * nw
                for t, w in rule.get_nodes(a, b, degree, prec):
                    fv = fn(t)
                    if fv == 0:
                        continue
                    base = w * fv * mpmath.exp(-t * t / 2) * norm
                    ws = wfun(t, fv)
                    for j in range(nw):
                        acc[j] += base * ws[j]
                results.append([h * v for v in acc])
                if degree > 1:
                    scale = max(1, max(abs(v) for v in results[-1]))
                    err = max(rule.estimate_error([r[j] for r in results], prec, eps) for j in range(nw))
                    if err <= eps * scale:
                        break
            scale = max(1, max(abs(v) for v in results[-1]))
            if not err <= eps * scale:
                raise QuadratureError(
                    f"Gaussian quadrature of {label} on [{mpmath.nstr(a, 5)}, {mpmath.nstr(b, 5)}] did not reach "
                    f"{dps} digits (error estimate {mpmath.nstr(err, 3)})", iterations=maxdegree, residual=float(err))
            totals = [u + v for u, v in zip(totals, results[-1])]
    return totals


def expect_numeric_vec(f: sp.Expr, wfun, nw: int, *, maxdegree: int = 12, growth: int = 4) -> list:
    r"""Numeric :math:`\mathbb E[f(Z)\,w_j(Z)]`, ``j < nw``, in one pass (one evaluation of ``f`` per node), at
    the ambient precision, converged to the digits asked at the enclosing boundary (``D``).

    First choice: the split Gauss–Legendre rule of :func:`onestep_theory.quadrature.normal_rule` in Arb
    (panels end exactly at every kink; the integrand is evaluated with exact constants), accepted when
    two refinement levels agree to ``10**-(D+4)`` of the scale and the integrand is negligible at
    the cut-off.  Otherwise (an integrand that turns faster than the panels resolve, or grows too
    fast for the cut-off) mpmath's tanh-sinh on the pieces, :func:`tanh_sinh_vec` (docs/theory/hermite.md
    §5.4).  Returns ``mpf`` values at the working precision.
    """
    try:
        return _panel_expect_vec(f, wfun, nw, growth)
    except QuadratureError:
        pass
    segs = [([to_mpf(p) for p in pts], fn) for pts, fn in _lambdified_pieces(f)]
    return [+t for t in tanh_sinh_vec(segs, wfun, nw, maxdegree=maxdegree, label=str(f))]


def _panel_expect_vec(f: sp.Expr, wfun, nw: int, growth: int = 4) -> list:
    import bisect

    import flint

    from .evaluate import arb_callable
    from .quadrature import normal_rule

    pcs = pieces(f)
    hard = tuple(b for _, b, _ in pcs[:-1])
    cuts = [float(b) for b in hard]
    try:
        fns = [arb_callable(g) for _, _, g in pcs]
    except ExpressionError:
        raise QuadratureError(f"no Arb evaluation of {f}") from None
    # at the ambient precision (mpmath and Arb in step); converged to 10**-(D+4), D the digits asked
    why = "the tolerance of tanh_sinh_vec: 4 digits for the cancellation of c_>1 (docs/theory/hermite.md §2.4)"
    eps, digits = tolerance(4, flint.arb, why=why), past_asked(4, why=why)    # digits: the rule's accuracy
    prev = None
    for level in range(4):
        rule = normal_rule(hard, (), digits=digits, level=level, hmax=1.0, arb=True, degree=growth)
        tot = [flint.arb(0)] * nw
        for z, w in zip(rule.nodes, rule.weights):
            fv = fns[bisect.bisect_right(cuts, float(z))](z)
            base = w * fv
            ws = wfun(z, fv)
            tot = [t + base * wj for t, wj in zip(tot, ws)]
        if not all(t.is_finite() for t in tot):
            break
        scale = max(flint.arb(1), max(abs(t) for t in tot))
        # the Gaussian tail beyond the cut-off must be negligible for this integrand
        L = max(abs(float(z)) for z in (rule.nodes[0], rule.nodes[-1]))
        tail = flint.arb(0)
        for zt in (flint.arb(L), flint.arb(-L)):
            fv = fns[bisect.bisect_right(cuts, float(zt))](zt)
            tail = max(tail, max(abs(fv * wj) for wj in wfun(zt, fv)) * (-zt * zt / 2).exp())
        if not tail * 10 < eps * scale:
            digits += 20                      # larger cut-off for a growing integrand
            prev = None
            continue
        if prev is not None and max(abs(a - b) for a, b in zip(tot, prev)) < eps * scale:
            return [arb_to_mpf(t) for t in tot]
        prev = tot
    raise QuadratureError(f"split Gauss-Legendre quadrature of {f} did not converge", iterations=4)


def expect_numeric_many(f: sp.Expr, weights) -> list:
    r"""Numeric :math:`\mathbb E[f(Z)w_j(Z)]` for a list of weight callables, at the ambient precision (see
    :func:`expect_numeric_vec`)."""
    weights = list(weights)
    return expect_numeric_vec(f, lambda t, fv: [w(t) for w in weights], len(weights))


def expect_numeric(f: sp.Expr, dps: int = 15):
    r"""Numeric :math:`\mathbb E f(Z)` at ``dps`` digits (a boundary: the working precision is set here) by
    breakpoint-split quadrature (:func:`expect_numeric_vec`).

    >>> print(mpmath.nstr(expect_numeric(sp.tanh(x)**2, 20), 20))
    0.39429449039784117442
    """
    with precision(check_dps(dps, MAX_DPS, optional=False)):
        return expect_numeric_vec(f, lambda t, fv: [1], 1)[0]
