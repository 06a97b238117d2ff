"""Activations and teachers as SymPy expressions in ``x``: admissibility, pieces, kinks and parity.

:func:`check_expression` decides whether an expression is a usable activation (real, finite,
square-integrable under N(0,1)).  :func:`pieces` splits an expression at every kink or jump
(found symbolically), which both the exact Gaussian integrator and the
breakpoint-split quadrature of docs/theory/hermite.md §5.4 need.

References
----------
docs/theory/hermite.md §§2.3, 4, 5.
"""

from __future__ import annotations


import mpmath
import sympy as sp

from ..core.caches import cached, disk_cached
from ..core.precision import workdps
from ..core.errors import ExpressionError

__all__ = [
    "x",
    "pieces",
    "breakpoints",
    "is_odd",
    "is_even",
    "check_expression",
]

#: The variable of every activation and teacher.
x = sp.Symbol("x", real=True)



@cached(maxsize=512)
@disk_cached("check_expression")
def _check_cached(e: sp.Expr) -> str | None:
    """Return None if *e* is admissible, else the reason."""
    extra = e.free_symbols - {x}
    if extra:
        return f"free symbols other than x: {sorted(map(str, extra))}"
    if e.atoms(sp.core.function.AppliedUndef):
        return "undefined function"
    if e.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
        return "expression contains an infinity"
    if e.has(sp.I):
        return "expression is complex"
    try:
        segs = pieces(e)
    except ExpressionError as exc:
        return exc.reason
    # values on the real line: finite and real at probe points inside every piece
    for a, b, g in segs:
        for t in _probe_points(a, b):
            with workdps(30):
                try:
                    val = sp.N(g.subs(x, t), 20)
                except (TypeError, ValueError, ZeroDivisionError):
                    return f"cannot evaluate at x={t}"
            if val.has(sp.zoo, sp.nan) or not val.is_number:
                return f"undefined at x={t}"
            re, im = val.as_real_imag()
            if abs(im) > 1e-12 * (1 + abs(re)):
                return f"not real-valued at x={t} (value {val})"
        sing = _finite_singularities(g, a, b)
        if sing is not None:
            return f"singular at x={sing}"
    # square integrability under N(0,1): growth of f^2 phi at +-infinity
    for a, b, g in (segs[0], segs[-1]):
        side = -1 if a == -sp.oo else (1 if b == sp.oo else 0)
        if side and not _square_integrable_tail(g, side):
            return "not square-integrable under N(0,1): f(x)^2 exp(-x^2/2) does not decay at " + (
                "+infinity" if side > 0 else "-infinity")
    return None


def check_expression(e: sp.Expr, param: str = "expression", shown=None) -> None:
    """Raise :class:`ExpressionError` unless *e* is a usable activation (see :func:`parse`)."""
    reason = _check_cached(e)
    if reason is not None:
        raise ExpressionError(param, shown if shown is not None else e, reason)


def _finite_singularities(g: sp.Expr, a, b):
    r"""First real point in (a, b) where a denominator or log argument vanishes, or an end of the piece where a
    power :math:`u^e` with :math:`e\le-1/2` has :math:`u\to0` (not square-integrable there); else None."""
    cands, ends = [], []
    for sub in sp.preorder_traversal(g):
        if isinstance(sub, sp.Pow) and sub.exp.is_negative and sub.base.has(x):
            cands.append(sub.base)
            if sub.exp <= sp.Rational(-1, 2):
                ends.append(sub.base)
        elif isinstance(sub, sp.log) and sub.args[0].has(x):
            cands.append(sub.args[0])
        elif isinstance(sub, sp.tan) and sub.args[0].has(x):
            return "pi/2 (tan has poles)"
    for c in cands:
        try:
            roots = sp.solveset(c, x, sp.Interval.open(a, b))
        except Exception:  # noqa: BLE001 - solveset may raise anything
            continue
        if isinstance(roots, sp.FiniteSet) and len(roots):
            return list(roots)[0]
    for c in ends:                 # a pole at a kink: e.g. Heaviside(x-1)/(x-1), Abs(x)**(-3/4)
        for t in (a, b):
            if t.is_finite and sp.simplify(c.subs(x, t)) == 0:
                return t
    return None


def _probe_points(a, b):
    """Points strictly inside the piece (a, b): three interior fractions, and far points on infinite sides."""
    pts = []
    lo = (min(-7.0, float(b) - 14) if b != sp.oo else -7.0) if a == -sp.oo else float(a)
    hi = (max(7.0, float(a) + 14) if a != -sp.oo else 7.0) if b == sp.oo else float(b)
    for frac in (sp.Rational(1, 7), sp.Rational(1, 2), sp.Rational(5, 6)):
        pts.append(sp.nsimplify(lo + (hi - lo) * float(frac), rational=True))
    if a == -sp.oo:
        pts.append(sp.Integer(min(-30, int(float(b)) - 30) if b != sp.oo else -30))
    if b == sp.oo:
        pts.append(sp.Integer(max(30, int(float(a)) + 30) if a != -sp.oo else 30))
    return pts


def _square_integrable_tail(g: sp.Expr, side: int) -> bool:
    """Numerical test that g(t)^2 phi(t) t^2 -> 0 as t -> side*infinity (log scale)."""
    f = sp.lambdify(x, g, modules="mpmath")
    vals = []
    with workdps(30):
        for t in (40, 80, 160, 320):
            tt = mpmath.mpf(side * t)
            try:
                v = abs(mpmath.mpf(mpmath.re(f(tt))))
            except (ZeroDivisionError, ValueError, OverflowError):
                return False
            if v == 0:
                vals.append(-mpmath.inf)
                continue
            vals.append(2 * mpmath.log(v) - tt**2 / 2 + 2 * mpmath.log(abs(tt)))
    return vals[-1] < -1000 and vals[-1] <= vals[-2] <= vals[-3]


def _collect_relationals(e: sp.Expr):
    rels = set()
    for pw in e.atoms(sp.Piecewise):
        for _, cond in pw.args:
            if isinstance(cond, sp.logic.boolalg.BooleanAtom):
                continue
            rels |= cond.atoms(sp.core.relational.Relational)
    return rels


def _rewrite_nonsmooth(e: sp.Expr) -> sp.Expr:
    e = e.rewrite(sp.erfc, sp.erf) if e.has(sp.erfc) else e
    for cls in (sp.Max, sp.Min, sp.Abs, sp.sign, sp.Heaviside):
        if e.has(cls):
            e = e.rewrite(sp.Piecewise)
            break
    if e.has(sp.Piecewise):
        e = sp.piecewise_fold(e)
    return e


@cached(maxsize=512)
def breakpoints(e: sp.Expr) -> tuple:
    """Exact, sorted real points where *e* has a kink or jump.

    Found symbolically from the conditions of ``Max``, ``Min``, ``Abs``, ``sign`` and
    ``Heaviside``.  ``0`` is not added here; quadrature adds it (docs/theory/hermite.md §5.4).

    >>> from onestep_theory.hermite.parsing import parse
    >>> breakpoints(parse("Max(x,0) + Abs(x - 1/2)"))
    (0, 1/2)
    """
    g = _rewrite_nonsmooth(e)
    pts = set()
    for rel in _collect_relationals(g):
        expr = rel.lhs - rel.rhs
        if not expr.has(x):
            continue
        try:
            sol = sp.solveset(expr, x, sp.S.Reals)
        except Exception as exc:  # noqa: BLE001
            raise ExpressionError("expression", e, f"cannot locate the kink {rel}: {exc}") from None
        if sol is sp.S.EmptySet:         # the condition never changes sign on the real line: no kink
            continue
        if not isinstance(sol, sp.FiniteSet):
            raise ExpressionError("expression", e, f"cannot locate the kinks of {rel} (infinitely many?)")
        pts |= set(sol)
    return tuple(sorted(pts, key=lambda p: float(p)))


def _select_branch(e: sp.Expr, t) -> sp.Expr:
    if isinstance(e, sp.Piecewise):
        for val, cond in e.args:
            c = cond.subs(x, t) if hasattr(cond, "subs") else cond
            if c == sp.true or c is True:
                return _select_branch(val, t)
        raise ExpressionError("expression", e, f"undefined at x={t} (no branch applies)")
    if not e.args or not e.has(sp.Piecewise):
        return e
    return e.func(*[_select_branch(a, t) for a in e.args])


@cached(maxsize=512)
@disk_cached("pieces")
def pieces(e: sp.Expr) -> tuple:
    """Split *e* into smooth pieces ``(a, b, g)`` with ``e = g`` on the open interval (a, b).

    >>> from onestep_theory.hermite.parsing import parse
    >>> pieces(parse("relu"))
    ((-oo, 0, 0), (0, oo, x))
    """
    pts = breakpoints(e)
    if not pts:
        g = _rewrite_nonsmooth(e)
        if g.has(sp.Piecewise):    # Max/Min/Abs whose condition never changes sign: one smooth branch
            return ((-sp.oo, sp.oo, sp.simplify(_select_branch(g, sp.Integer(0)))),)
        return ((-sp.oo, sp.oo, e if not e.has(sp.erfc) else g),)
    g = _rewrite_nonsmooth(e)
    edges = [-sp.oo, *pts, sp.oo]
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        if a == -sp.oo:
            t = sp.floor(b) - 1
        elif b == sp.oo:
            t = sp.ceiling(a) + 1
        else:
            t = sp.nsimplify((a + b) / 2)
        out.append((a, b, sp.simplify(_select_branch(g, t)) if g.has(sp.Piecewise) else g))
    return tuple(out)


def _parity(e: sp.Expr, sign: int) -> bool:
    """True if e(-x) = sign*e(x) is proven symbolically (numeric pre-screen first)."""
    h = e.subs(x, -x) - sign * e
    if h == 0:
        return True
    f = sp.lambdify(x, h, modules="mpmath")
    with workdps(30):
        for t in ("0.3711", "1.2903", "2.71", "-0.77", "5.1"):
            try:
                if abs(f(mpmath.mpf(t))) > mpmath.mpf(10) ** -20:
                    return False
            except (ZeroDivisionError, ValueError):
                return False
    try:
        return sp.simplify(_rewrite_nonsmooth(h)) == 0 or sp.simplify(h.rewrite(sp.exp)) == 0
    except Exception:  # noqa: BLE001
        return False


@cached(maxsize=512)
def is_odd(e: sp.Expr) -> bool:
    """True if ``e(-x) = -e(x)`` is proven (so every even Hermite coefficient is exactly 0).

    >>> from onestep_theory.hermite.parsing import parse
    >>> is_odd(parse("tanh")), is_odd(parse("relu"))
    (True, False)
    """
    return _parity(e, -1)


@cached(maxsize=512)
def is_even(e: sp.Expr) -> bool:
    """True if ``e(-x) = e(x)`` is proven (so every odd Hermite coefficient is exactly 0)."""
    return _parity(e, 1)
