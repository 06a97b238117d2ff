"""Activations and teachers as SymPy expressions in ``x``.

Strings are parsed by SymPy's parser after a syntax-tree whitelist check, so no
arbitrary code is evaluated.  Names such as ``tanh`` or ``relu_centered`` map to
fixed expressions.  :func:`pieces` splits an expression at every kink or jump
(found symbolically), which both the exact Gaussian integrator and the
breakpoint-split quadrature of ``hermite.md`` §5.4 need.

References
----------
``hermite.md`` §§2.3, 4, 5 of the package specification.
"""

from __future__ import annotations

import ast
import functools

import mpmath
import sympy as sp
from sympy.parsing.sympy_parser import (
    convert_xor,
    parse_expr,
    rationalize,
    standard_transformations,
)

from .precision import workdps
from .errors import ExpressionError, InvalidParameterError

__all__ = [
    "x",
    "NAMED",
    "parse",
    "parse_constant",
    "pieces",
    "breakpoints",
    "is_odd",
    "is_even",
    "check_expression",
]

#: The variable of every activation and teacher.
x = sp.Symbol("x", real=True)

_FUNCTIONS = {
    "sin": sp.sin, "cos": sp.cos, "tan": sp.tan, "exp": sp.exp, "log": sp.log, "sqrt": sp.sqrt,
    "tanh": sp.tanh, "sinh": sp.sinh, "cosh": sp.cosh, "atan": sp.atan, "asinh": sp.asinh,
    "erf": sp.erf, "erfc": sp.erfc, "Abs": sp.Abs, "abs": sp.Abs, "sign": sp.sign,
    "Max": sp.Max, "Min": sp.Min, "max": sp.Max, "min": sp.Min, "Heaviside": sp.Heaviside,
    "Rational": sp.Rational, "cbrt": sp.cbrt,
}
_CONSTANTS = {"pi": sp.pi, "E": sp.E, "e": sp.E}


def _he_expr(k: int) -> sp.Expr:
    return sp.expand(sp.hermite_prob(k, x))


#: Named activations and teachers (``hermite.md`` §4).
NAMED: dict[str, sp.Expr] = {
    "tanh": sp.tanh(x),
    "relu": sp.Max(x, 0),
    "relu_centered": sp.Max(x, 0) - 1 / sp.sqrt(2 * sp.pi),
    "sin": sp.sin(x),
    "erf": sp.erf(x / sp.sqrt(2)),
    "sign": sp.sign(x),
    "softplus": sp.log(1 + sp.exp(x)),
    "sigmoid": 1 / (1 + sp.exp(-x)),
    "sigmoid_centered": 1 / (1 + sp.exp(-x)) - sp.Rational(1, 2),
    "linear": x,
    **{f"He{k}": _he_expr(k) for k in range(1, 10)},
}

_ALLOWED_NODES = (
    ast.Expression, ast.BinOp, ast.UnaryOp, ast.Call, ast.Name, ast.Load, ast.Constant,
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.USub, ast.UAdd, ast.BitXor,
)


#: Bounded work for any expression (checked on the syntax tree, before SymPy evaluates anything).
MAX_EXPR_CHARS = 2000
MAX_EXPR_NODES = 400
MAX_EXPR_DEPTH = 40
#: Largest |integer exponent| of an expression in x, and of a constant.
MAX_EXPONENT_X = 100
MAX_EXPONENT_CONST = 1000
#: Largest integer literal (digits).
MAX_LITERAL_DIGITS = 400
_EXP_TYPE = {"exp", "sinh", "cosh"}


def _depth(node, d=0) -> int:
    kids = list(ast.iter_child_nodes(node))
    return d if not kids else max(_depth(k, d + 1) for k in kids)


def _const_value(node):
    """Value of a constant exponent made of literals, + - * / and unary minus, or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _const_value(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        a, b = _const_value(node.left), _const_value(node.right)
        if a is None or b is None or (isinstance(node.op, ast.Div) and b == 0):
            return None
        if abs(a) > 1e6 or abs(b) > 1e6:
            return None
        return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b, ast.Div: a / b}[type(node.op)]
    return None


def _has_x(node) -> bool:
    return any(isinstance(n, ast.Name) and n.id not in _FUNCTIONS and n.id not in _CONSTANTS
               for n in ast.walk(node))


def _check_syntax(text: str, param: str, names: set[str]) -> None:
    if len(text) > MAX_EXPR_CHARS:
        raise ExpressionError(param, text[:40] + "...", f"expression longer than {MAX_EXPR_CHARS} characters")
    try:
        tree = ast.parse(text.replace("^", "**"), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        raise ExpressionError(param, text, f"cannot parse: {getattr(exc, 'msg', exc)}") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_EXPR_NODES:
        raise ExpressionError(param, text, f"more than {MAX_EXPR_NODES} syntax nodes")
    if _depth(tree) > MAX_EXPR_DEPTH:
        raise ExpressionError(param, text, f"nested deeper than {MAX_EXPR_DEPTH} levels")
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and \
                len(str(abs(node.value))) > MAX_LITERAL_DIGITS:
            raise ExpressionError(param, text[:40], f"an integer literal longer than {MAX_LITERAL_DIGITS} digits")
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Pow, ast.BitXor)):
            if any(isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Pow, ast.BitXor)) for n in ast.walk(node.right)):
                raise ExpressionError(param, text, "exponent towers (a**b**c) are not allowed")
            ev = _const_value(node.right)
            if ev is None:
                raise ExpressionError(param, text, "an exponent must be a constant number (e.g. x**3, x**(1/2))")
            cap = MAX_EXPONENT_X if _has_x(node.left) else MAX_EXPONENT_CONST
            if abs(ev) > cap:
                raise ExpressionError(param, text, f"exponent {ev:g} outside [-{cap}, {cap}]")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _EXP_TYPE:
            inner = [n for arg in node.args for n in ast.walk(arg)
                     if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _EXP_TYPE]
            if inner and _has_x(node):
                raise ExpressionError(param, text, "nested exponentials grow too fast to be square-integrable "
                                                   "under N(0,1)")
    for node in nodes:
        if not isinstance(node, _ALLOWED_NODES):
            raise ExpressionError(param, text, f"'{type(node).__name__}' is not allowed in an expression")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)) or (
            isinstance(node, ast.Constant) and isinstance(node.value, bool)
        ):
            raise ExpressionError(param, text, "only numbers may appear as literals")
        if isinstance(node, ast.Name) and node.id not in names:
            allowed = ", ".join(sorted(set(_FUNCTIONS) | set(_CONSTANTS)))
            raise ExpressionError(param, text, f"unknown name '{node.id}' (allowed: x, {allowed})")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS:
                raise ExpressionError(param, text, "only whitelisted functions may be called")
            if node.keywords:
                raise ExpressionError(param, text, "keyword arguments are not allowed")


def _named_values() -> dict:
    """Named expressions usable inside formulas (``"relu - 1/sqrt(2*pi)"``, ``"He1 + He2/sqrt(2)"``)."""
    return {k: v for k, v in NAMED.items() if k not in _FUNCTIONS}


def _parse_text(text: str, param: str, allow_x: bool) -> sp.Expr:
    names = set(_FUNCTIONS) | set(_CONSTANTS) | ({"x"} | set(_named_values()) if allow_x else set())
    _check_syntax(text, param, names)
    local = dict(_FUNCTIONS)
    local.update(_CONSTANTS)
    if allow_x:
        local["x"] = x
        local.update(_named_values())
    transformations = standard_transformations + (convert_xor, rationalize)
    try:
        glob = {"__builtins__": {}, "Integer": sp.Integer, "Float": sp.Float, "Rational": sp.Rational,
                "Symbol": sp.Symbol, "Function": sp.Function, **local}
        expr = parse_expr(text, local_dict=local, global_dict=glob,
                          transformations=transformations, evaluate=True)
    except (SyntaxError, TypeError, ValueError, AttributeError, ZeroDivisionError, NameError) as exc:
        raise ExpressionError(param, text, f"cannot parse: {exc}") from None
    if not isinstance(expr, sp.Expr):
        raise ExpressionError(param, text, "not a scalar expression")
    return expr


def parse_constant(text: str, param: str = "value") -> sp.Expr:
    """Parse an exact real constant such as ``"1/3"``, ``"0.1"`` or ``"sqrt(2)/2"``.

    >>> parse_constant("0.1")
    1/10
    >>> parse_constant("inf")
    oo
    """
    t = text.strip()
    if t.lower() in ("inf", "+inf", "infinity", "oo"):
        return sp.oo
    if t.lower() in ("-inf", "-infinity", "-oo"):
        return -sp.oo
    try:
        expr = _parse_text(t, param, allow_x=False)
    except ExpressionError as exc:
        raise InvalidParameterError(param, text, "a real number such as 0.5, 1/3 or sqrt(2)/2", exc.reason) from None
    if not expr.is_number or expr.has(sp.zoo, sp.nan):
        raise InvalidParameterError(param, text, "a real number such as 0.5, 1/3 or sqrt(2)/2")
    return expr


@functools.lru_cache(maxsize=512)
def _parse_cached(text: str, param: str) -> sp.Expr:
    key = text.strip()
    if key in NAMED:
        return NAMED[key]
    return _parse_text(key, param, allow_x=True)


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


@functools.lru_cache(maxsize=512)
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
        if sing:
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
    """First real point in (a, b) where a denominator or log argument vanishes, else None."""
    cands = []
    for sub in sp.preorder_traversal(g):
        if isinstance(sub, sp.Pow) and sub.exp.is_negative and sub.base.has(x):
            cands.append(sub.base)
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
        if roots not in (sp.S.EmptySet,) and not isinstance(roots, sp.FiniteSet):
            # could not decide: probe numerically on a grid
            continue
    return None


def _probe_points(a, b):
    pts = []
    lo = -7 if a == -sp.oo else float(a)
    hi = 7 if b == sp.oo else float(b)
    for frac in (sp.Rational(1, 7), sp.Rational(1, 2), sp.Rational(5, 6)):
        pts.append(sp.nsimplify(lo + (hi - lo) * float(frac), rational=True))
    if a == -sp.oo:
        pts.append(sp.Integer(-30))
    if b == sp.oo:
        pts.append(sp.Integer(30))
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


@functools.lru_cache(maxsize=512)
def breakpoints(e: sp.Expr) -> tuple:
    """Exact, sorted real points where *e* has a kink or jump.

    Found symbolically from the conditions of ``Max``, ``Min``, ``Abs``, ``sign`` and
    ``Heaviside``.  ``0`` is not added here; quadrature adds it (``hermite.md`` §5.4).

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


@functools.lru_cache(maxsize=512)
def pieces(e: sp.Expr) -> tuple:
    """Split *e* into smooth pieces ``(a, b, g)`` with ``e = g`` on the open interval (a, b).

    >>> pieces(parse("relu"))
    ((-oo, 0, 0), (0, oo, x))
    """
    pts = breakpoints(e)
    if not pts:
        g = _rewrite_nonsmooth(e)
        if g.has(sp.Piecewise):
            g = _select_branch(g, sp.Integer(0))
        return ((-sp.oo, sp.oo, e if not g.has(sp.Piecewise) and not e.has(sp.erfc) else g),)
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


@functools.lru_cache(maxsize=512)
def is_odd(e: sp.Expr) -> bool:
    """True if ``e(-x) = -e(x)`` is proven (so every even Hermite coefficient is exactly 0).

    >>> is_odd(parse("tanh")), is_odd(parse("relu"))
    (True, False)
    """
    return _parity(e, -1)


@functools.lru_cache(maxsize=512)
def is_even(e: sp.Expr) -> bool:
    """True if ``e(-x) = e(x)`` is proven (so every odd Hermite coefficient is exactly 0)."""
    return _parity(e, 1)
