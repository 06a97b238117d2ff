"""Compile a parsed SymPy expression in ``x`` into an Arb (python-flint) callable.

SymPy's ``lambdify`` has no Arb printer, and printing through Python would turn ``1/3`` into a
binary float.  :func:`arb_callable` walks the expression tree once (cached by the expression) and
builds a closure in which every constant is exact: Rationals become Arb quotients of integers,
``pi`` and ``E`` Arb constants at the working precision.  Only the whitelisted functions of the
parser occur (docs/theory/numerics.md §2).  Kinks (``Abs``, ``sign``, ``Max``, ``Min``,
``Heaviside``) are evaluated on the ball midpoint; quadrature never straddles them
(docs/theory/numerics.md §3).
"""

from __future__ import annotations


import flint
import mpmath
import sympy as sp

from ..core.caches import cached
from ..core.errors import ExpressionError
from ..core.exact import to_exact
from ..core.precision import mpf_to_arb
from .expressions import x

__all__ = ["arb_callable", "arb_callable_n", "as_arb"]

_UNARY = {
    sp.sin: lambda v: v.sin(), sp.cos: lambda v: v.cos(), sp.tan: lambda v: v.tan(),
    sp.exp: lambda v: v.exp(), sp.log: lambda v: v.log(), sp.tanh: lambda v: v.tanh(),
    sp.sinh: lambda v: v.sinh(), sp.cosh: lambda v: v.cosh(), sp.atan: lambda v: v.atan(),
    sp.asinh: lambda v: v.asinh(), sp.erf: lambda v: v.erf(), sp.erfc: lambda v: v.erfc(),
    sp.Abs: lambda v: abs(v), sp.sign: lambda v: flint.arb(v.mid().sgn()),
}


def _const(e: sp.Expr):
    if e.is_Integer:
        n = int(e)
        return lambda: flint.arb(n)
    if e.is_Rational:
        p, q = int(e.p), int(e.q)
        return lambda: flint.arb(p) / q
    if e is sp.pi:
        return flint.arb.pi
    if e is sp.E:
        return lambda: flint.arb(1).exp()
    return None


def _compile(e: sp.Expr, var=x):
    c = _const(e)
    if c is not None:
        return lambda t: c()
    if isinstance(var, tuple):
        if e in var:
            i = var.index(e)
            return lambda t: t[i]
    elif e == var:
        return lambda t: t
    if isinstance(e, sp.Symbol):
        raise ExpressionError("expression", e, f"unexpected symbol {e}")
    if isinstance(e, sp.Piecewise):
        raise ExpressionError("expression", e, "a Piecewise has no Arb evaluation here (split it into pieces)")
    if isinstance(e, sp.Heaviside):      # SymPy stores H(u) as Heaviside(u, 1/2): the value at 0 is the 2nd argument
        u = _compile(e.args[0], var)
        h0 = _compile(e.args[1], var) if len(e.args) > 1 else (lambda t: flint.arb(1) / 2)

        def heaviside(t):
            v = u(t)
            return flint.arb(1) if v.mid() > 0 else (flint.arb(0) if v.mid() < 0 else h0(t))
        return heaviside
    args = [_compile(a, var) for a in e.args]
    if isinstance(e, sp.Add):
        def add(t):
            s = args[0](t)
            for f in args[1:]:
                s = s + f(t)
            return s
        return add
    if isinstance(e, sp.Mul):
        def mul(t):
            s = args[0](t)
            for f in args[1:]:
                s = s * f(t)
            return s
        return mul
    if isinstance(e, sp.Pow):
        base, ex = args[0], e.args[1]
        if ex.is_Integer:
            n = int(ex)
            return lambda t: base(t) ** n
        if ex.is_Rational and ex.q == 2:
            n = int(ex.p)
            return lambda t: base(t).sqrt() ** n
        eb = args[1]
        return lambda t: (eb(t) * base(t).log()).exp()
    if isinstance(e, sp.Max):
        def mx(t):
            vals = [f(t) for f in args]
            return max(vals, key=lambda v: v.mid())
        return mx
    if isinstance(e, sp.Min):
        def mn(t):
            vals = [f(t) for f in args]
            return min(vals, key=lambda v: v.mid())
        return mn
    fn = _UNARY.get(e.func)
    if fn is not None and len(args) == 1:
        if not isinstance(var, tuple) and e.args[0] == var:
            return fn                   # f(x) itself: no identity call in between (hot in the Arb smoothing loops)
        a0 = args[0]
        return lambda t: fn(a0(t))
    raise ExpressionError("expression", e, f"no Arb evaluation for {e.func.__name__}")


@cached(maxsize=512)
def arb_callable_n(expr: sp.Expr, symbols: tuple):
    """Arb callable ``(t1, ..., tk) -> expr`` in the given symbols (exact constants; cached)."""
    fn = _compile(sp.sympify(expr), tuple(symbols))
    return lambda *t: fn(t)


@cached(maxsize=512)
def arb_callable(expr: sp.Expr):
    """Arb callable ``t -> expr(t)`` of an expression in ``x`` (exact constants; cached by expression).

    >>> f = arb_callable(sp.tanh(x) / 3)
    >>> with flint.ctx.workdps(30):
    ...     print(f(flint.arb(1)).str(20, radius=False))
    0.25386471865192162937
    """
    return _compile(sp.sympify(expr))


def as_arb(v):
    """An Arb ball from an Arb, mpf, int, exact string or SymPy number (current precision)."""
    if isinstance(v, flint.arb):
        return v
    if isinstance(v, (mpmath.mpf, int, float)):
        return mpf_to_arb(mpmath.mpf(v))
    if isinstance(v, str):
        v = to_exact(v)
    return arb_callable(sp.sympify(v))(flint.arb(0))
