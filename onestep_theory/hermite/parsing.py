"""Parse activations and teachers given as text into SymPy expressions in ``x``, safely.

Strings are parsed by SymPy's parser only after a syntax-tree whitelist check (names, calls, size,
depth and exponent limits), so no arbitrary code is evaluated and no input can make the symbolic
layer hang.  Names such as ``tanh`` or ``relu_centered`` map to fixed expressions.

References
----------
docs/theory/hermite.md §4 (named activations), docs/theory/numerics.md §1 (bounded work).
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy as sp

from ..core.caches import cached
from ..core.errors import ExpressionError
from ..core.syntax import FUNCTIONS, parse_text
from .expressions import check_expression, x

__all__ = ["NAMED", "parse"]



def _he_expr(k: int) -> sp.Expr:
    return sp.expand(sp.hermite_prob(k, x))


class _Named(Mapping):
    """Name -> expression, each built on first use (building them all took ~0.1 s of every start: issue 35)."""

    def __init__(self, builders: dict):
        self._builders, self._built = builders, {}

    def __getitem__(self, name: str) -> sp.Expr:
        if name not in self._built:
            self._built[name] = self._builders[name]()
        return self._built[name]

    def __iter__(self):
        return iter(self._builders)

    def __len__(self) -> int:
        return len(self._builders)

    def __repr__(self) -> str:
        return repr(dict(self))


#: Named activations and teachers (docs/theory/hermite.md §4): a read-only mapping name -> SymPy expression.
NAMED: Mapping = _Named({
    "tanh": lambda: sp.tanh(x),
    "relu": lambda: sp.Max(x, 0),
    "relu_centered": lambda: sp.Max(x, 0) - 1 / sp.sqrt(2 * sp.pi),
    "sin": lambda: sp.sin(x),
    "erf": lambda: sp.erf(x / sp.sqrt(2)),
    "sign": lambda: sp.sign(x),
    "softplus": lambda: sp.log(1 + sp.exp(x)),
    "sigmoid": lambda: 1 / (1 + sp.exp(-x)),
    "sigmoid_centered": lambda: 1 / (1 + sp.exp(-x)) - sp.Rational(1, 2),
    "linear": lambda: x,
    **{f"He{k}": (lambda k=k: _he_expr(k)) for k in range(1, 10)},
})

def _named_values() -> dict:
    """Named expressions usable inside formulas (``"relu - 1/sqrt(2*pi)"``, ``"He1 + He2/sqrt(2)"``)."""
    return {k: v for k, v in NAMED.items() if k not in FUNCTIONS}


@cached(maxsize=512)
def _parse_cached(text: str, param: str) -> sp.Expr:
    key = text.strip()
    if key in NAMED:
        return NAMED[key]
    return parse_text(key, param, {"x": x, **_named_values()})


def parse(expr, param: str = "expression") -> sp.Expr:
    """Return the SymPy expression of an activation or teacher.

    Parameters
    ----------
    expr : str or sympy.Expr
        A name from :data:`NAMED` (``"tanh"``, ``"relu_centered"``, ``"He3"`` …) or a
        formula in ``x`` (``"Max(x,0) - 1/sqrt(2*pi)"``).  Decimal literals are made
        Rational (``0.5`` → ``1/2``) so that nothing is frozen at 53 bits.
    param : str
        Parameter name for error messages (``"student"``, ``"teacher"``…).

    Raises
    ------
    ExpressionError
        For unparsable text, names outside the whitelist, free symbols other than
        ``x``, complex or undefined values on the real line, and functions that are
        not square integrable under N(0, 1).

    Examples
    --------
    >>> parse("relu_centered")
    Max(0, x) - sqrt(2)/(2*sqrt(pi))
    >>> parse("x^2 - 1")
    x**2 - 1
    """
    if isinstance(expr, sp.Basic):
        e = expr
        if not isinstance(e, sp.Expr) or isinstance(e, sp.logic.boolalg.Boolean):
            raise ExpressionError(param, expr, "not a scalar expression in x (a relation or a truth value?)")
        if isinstance(e, sp.Expr):
            other = [s for s in e.free_symbols if s.name == "x" and s != x]
            if other:
                e = e.subs(other[0], x)
            if e.has(sp.Float):
                e = sp.nsimplify(e, rational=True)
    elif isinstance(expr, str):
        e = _parse_cached(expr, param)
    else:
        raise ExpressionError(param, expr, "give a string or a SymPy expression")
    check_expression(e, param, str(expr))
    return e


