"""Safe parsing of formulas: a syntax-tree whitelist with size, depth and exponent limits.

Text is checked on its Python syntax tree before SymPy evaluates anything, so no arbitrary code runs and
no input can make the symbolic layer hang (docs/theory/numerics.md §1).  :func:`parse_constant` reads exact
numbers such as ``"1/3"``, ``"0.1"`` or ``"sqrt(2)/2"``; expressions in ``x`` are parsed by
``onestep_theory.hermite.parsing`` on top of :func:`parse_text`.
"""

from __future__ import annotations

import ast
import difflib
import io
import re
import tokenize

import sympy as sp
from sympy.parsing.sympy_parser import (
    convert_xor,
    parse_expr,
    rationalize,
    standard_transformations,
)

from .errors import ExpressionError, InvalidParameterError

__all__ = ["FUNCTIONS", "CONSTANTS", "check_syntax", "parse_text", "parse_constant", "MAX_EXPR_CHARS",
           "MAX_EXPR_NODES", "MAX_EXPR_DEPTH", "MAX_EXPONENT_X", "MAX_EXPONENT_CONST", "MAX_LITERAL_DIGITS"]

#: Functions a formula may call.
FUNCTIONS = {
    "sin": sp.sin, "cos": sp.cos, "tan": sp.tan, "exp": sp.exp, "log": sp.log, "sqrt": sp.sqrt,
    "tanh": sp.tanh, "sinh": sp.sinh, "cosh": sp.cosh, "atan": sp.atan, "asinh": sp.asinh,
    "erf": sp.erf, "erfc": sp.erfc, "Abs": sp.Abs, "abs": sp.Abs, "sign": sp.sign,
    "Max": sp.Max, "Min": sp.Min, "max": sp.Max, "min": sp.Min, "Heaviside": sp.Heaviside,
    "Rational": sp.Rational, "cbrt": sp.cbrt,
}
CONSTANTS = {"pi": sp.pi, "E": sp.E, "e": sp.E}


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
    return any(isinstance(n, ast.Name) and n.id not in FUNCTIONS and n.id not in CONSTANTS
               for n in ast.walk(node))


def check_syntax(text: str, param: str, names: set[str], symbols=("x",)) -> None:
    """Raise :class:`ExpressionError` unless *text* passes the whitelist and the size limits; ``symbols`` are the
    free symbols among ``names`` (named in the message for an unknown name)."""
    if len(text) > MAX_EXPR_CHARS:
        raise ExpressionError(param, text[:40] + "...", f"expression longer than {MAX_EXPR_CHARS} characters")
    try:
        tree = ast.parse(text.replace("^", "**"), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        raise ExpressionError(param, text, f"cannot parse: {getattr(exc, 'msg', exc)}") from None
    _check_number_literals(text.replace("^", "**"), param)
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
            rest = ", ".join(sorted(set(names) - set(symbols)))
            close = difflib.get_close_matches(node.id, sorted(names), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ExpressionError(param, text, f"unknown name '{node.id}'{hint}; the symbols here: "
                                               f"{', '.join(symbols) or 'none'}; functions and names: {rest}")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
                raise ExpressionError(param, text, "only whitelisted functions may be called")
            if node.keywords:
                raise ExpressionError(param, text, "keyword arguments are not allowed")


_DECIMAL = re.compile(r"(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _check_number_literals(text: str, param: str) -> None:
    """Numbers are decimal literals: Python's hex, octal and binary forms (``0x10``), digit separators (``1_0``)
    and imaginary literals (``2j``) are refused, not read as numbers."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return                                     # ast.parse has accepted the text; nothing numeric to add
    for tok in tokens:
        if tok.type == tokenize.NUMBER and not _DECIMAL.fullmatch(tok.string):
            raise ExpressionError(param, text, f"'{tok.string}' is not a decimal number (hex, octal, binary, digit "
                                               "separators and imaginary literals are not read as numbers)")


def parse_text(text: str, param: str, variables: dict | None = None) -> sp.Expr:
    """Parse *text* with the whitelisted functions and constants plus the names in *variables*
    (name → SymPy expression, e.g. ``{"x": x, "relu": Max(x, 0)}``), after :func:`check_syntax`."""
    variables = variables or {}
    # the free symbols (not aliases of another name, such as He1 -> x)
    symbols = tuple(sorted(k for k, v in variables.items()
                           if isinstance(v, sp.Symbol) and (v.name == k or v.name not in variables)))
    try:
        check_syntax(text, param, set(FUNCTIONS) | set(CONSTANTS) | set(variables), symbols)
    except ExpressionError as exc:
        if symbols in (("x",), ()):
            raise
        # a formula or a loss: not "an expression in x" (the symbols of the quantity, e.g. y, yhat)
        what = ", ".join(symbols) if len(symbols) <= 4 else "the symbols listed"
        raise ExpressionError(param, text, exc.reason, allowed=f"an expression in {what}") from None
    local = dict(FUNCTIONS)
    local.update(CONSTANTS)
    local.update(variables)
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
        expr = parse_text(t, param)
    except ExpressionError as exc:
        raise InvalidParameterError(param, text, "a real number such as 0.5, 1/3 or sqrt(2)/2", exc.reason) from None
    if not expr.is_number or expr.has(sp.zoo, sp.nan):
        raise InvalidParameterError(param, text, "a real number such as 0.5, 1/3 or sqrt(2)/2")
    return expr
