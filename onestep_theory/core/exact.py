"""Exact numbers at the API boundary and decimal serialisation.

Implements the input policy of docs/theory/hermite.md §5.2: exact strings (``"1/3"``,
``"0.1"``, ``"sqrt(2)/2"``), :class:`fractions.Fraction`, SymPy numbers and
``mpmath.mpf`` are accepted; a Python ``float`` is converted through its shortest
``repr`` to a Rational and flagged as inexact.  Nothing here touches the global
mpmath precision.
"""

from __future__ import annotations

import fractions
import math
import numbers
import re
import warnings

import mpmath
import numpy as np
import sympy as sp

from .errors import InvalidParameterError
from .precision import precision, signed_man_exp, tolerance, working_digits
from .syntax import parse_constant

__all__ = [
    "binary_exact",
    "to_float",
    "float_in",
    "to_exact",
    "to_mpf",
    "nstr",
    "check_positive",
    "check_dps",
    "check_range",
    "check_real",
    "InexactInputWarning",
]



class InexactInputWarning(UserWarning):
    """A binary float was converted to a Rational through its shortest repr."""


#: Largest numerator or denominator (in bits) of an exact input: bounded work for any input.
MAX_EXACT_BITS = 3400

def to_exact(value, param: str = "value", *, allow_infinite: bool = False) -> sp.Expr:
    """Convert *value* to an exact real SymPy number.

    Parameters
    ----------
    value : str, int, Fraction, float, sympy.Expr or mpmath.mpf
        Strings are parsed with the restricted expression parser, so ``"1/3"``
        and ``"sqrt(2)/2"`` stay exact and ``"0.1"`` becomes ``1/10``.
    param : str
        Name used in error messages.
    allow_infinite : bool
        Accept ``"inf"``/``oo``.

    Examples
    --------
    >>> to_exact("1/3")
    1/3
    >>> to_exact("sqrt(2)/2")
    sqrt(2)/2
    >>> to_exact(0.1)
    1/10
    """
    if isinstance(value, bool):
        raise InvalidParameterError(param, value, "a real number")
    if isinstance(value, sp.Basic):
        expr = value
    elif isinstance(value, numbers.Integral):  # int and numpy integers, exactly (bool refused above)
        expr = sp.Integer(int(value))
    elif isinstance(value, fractions.Fraction):
        expr = sp.Rational(value.numerator, value.denominator)
    elif isinstance(value, mpmath.mpf):
        if not mpmath.isfinite(value):
            expr = sp.oo if value > 0 else -sp.oo
        else:
            man, exp = signed_man_exp(value)
            expr = sp.Integer(man) * sp.Integer(2) ** exp
    elif isinstance(value, float):
        value = float(value)  # numpy float64 -> float (its repr differs)
        if math.isinf(value):
            expr = sp.oo if value > 0 else -sp.oo
        elif math.isnan(value):
            raise InvalidParameterError(param, value, "a real number")
        else:
            warnings.warn(
                f"{param}: binary float {value!r} converted to the Rational {repr(value)}; "
                "pass a string for an exact value",
                InexactInputWarning,
                stacklevel=2,
            )
            expr = sp.Rational(repr(value))
    elif isinstance(value, numbers.Real):  # numpy scalars
        return to_exact(float(value), param, allow_infinite=allow_infinite)
    elif isinstance(value, str):                 # a plain decimal or n/d: its Rational without the parser's 0.5 ms
        expr = _plain_rational(value)
        if expr is None:
            expr = parse_constant(value, param)
    else:
        raise InvalidParameterError(param, value, "a real number (int, str, Fraction, SymPy number or mpf)")
    if expr.has(sp.zoo, sp.nan) or not expr.is_number:
        raise InvalidParameterError(param, value, "a real number")
    if expr in (sp.oo, -sp.oo):
        if allow_infinite:
            return expr
        raise InvalidParameterError(param, value, "a finite real number")
    if expr.has(sp.Float):
        expr = sp.nsimplify(expr, rational=True)
    if any(max(abs(r.p), r.q).bit_length() > MAX_EXACT_BITS for r in expr.atoms(sp.Rational)):
        raise InvalidParameterError(param, str(value)[:40], f"a number with at most {MAX_EXACT_BITS // 3} digits in "
                                                           "its numerator and denominator")
    if expr.is_real is False or (expr.is_real is None and abs(sp.im(sp.N(expr, 30))) > 0):
        raise InvalidParameterError(param, value, "a real number")
    return expr


def binary_exact(value) -> sp.Rational:
    """The exact value of a binary float (an optimiser's or a grid's point) as a SymPy Rational: no decimal
    round trip, no warning (the number *is* this binary value; user input goes through :func:`to_exact`).

    >>> binary_exact(0.5), binary_exact(0.1) == sp.Rational(1, 10)
    (1/2, False)
    """
    v = float(value)
    if not math.isfinite(v):
        raise InvalidParameterError("value", value, "a finite real number")
    num, den = v.as_integer_ratio()
    return sp.Rational(num, den)


#: A plain decimal (``0.2``, ``-3.25e-4``) or ``n/d``, as the expression parser reads it (no leading zeros).
_PLAIN = re.compile(r"[-+]?(0|[1-9]\d*)(\.\d*)?([eE][-+]?\d{1,3})?|[-+]?(0|[1-9]\d*)/[1-9]\d*")


def _plain_rational(text: str):
    """The Rational of a plain decimal or ``n/d`` string (exact: ``fractions.Fraction`` reads it as the parser does),
    or None where :func:`~onestep_theory.core.syntax.parse_constant` decides (anything else).

    >>> _plain_rational("0.2"), _plain_rational("-6/4"), _plain_rational("1e3"), _plain_rational("1/0")
    (1/5, -3/2, 1000, None)
    """
    if len(text) > 400 or not _PLAIN.fullmatch(text):
        return None
    f = fractions.Fraction(text)
    return sp.Rational(f.numerator, f.denominator)


def _plain_float(text: str):
    """The float of a plain decimal or ``n/d`` string, correctly rounded from its exact value (Python's ``float`` of a
    decimal string and ``int / int`` are; so is the float of the Rational SymPy's parser gives, for normal floats:
    the same float without its 0.08 ms), or None where :func:`to_exact` decides (anything else, a float that
    overflows, underflows or is subnormal).

    >>> _plain_float("0.2"), _plain_float("-3/7"), _plain_float("-0"), _plain_float("1e400"), _plain_float("007")
    (0.2, -0.42857142857142855, 0.0, None, None)
    """
    # at most 400 characters: a finite normal float's numerator and denominator then have < 2400 bits, inside
    # MAX_EXACT_BITS (beyond it, or for a subnormal, zero-rounded or infinite float, to_exact decides)
    if len(text) > 400 or not _PLAIN.fullmatch(text):
        return None
    num, slash, den = text.partition("/")
    try:
        v = int(num) / int(den) if slash else float(text)    # both correctly rounded from the exact value
    except OverflowError:
        return None
    if v == 0:
        return 0.0 if not any(c in "123456789" for c in num.split("e")[0].split("E")[0]) else None   # '-0': 0.0
    return v if 2.2250738585072014e-308 <= abs(v) < math.inf else None


def to_float(value, param: str = "value") -> float:
    """float64 value of a number or an exact string (for float64 fast paths; no inexactness warning)."""
    if isinstance(value, bool):
        raise InvalidParameterError(param, value, "a real number")
    if isinstance(value, (int, float, numbers.Real)) and not isinstance(value, sp.Basic):
        v = float(value)
    elif isinstance(value, str) and (v := _plain_float(value)) is not None:
        pass                                  # a plain decimal or n/d: exact without SymPy, the same float
    else:
        v = float(to_exact(value, param, allow_infinite=True))
    if math.isnan(v):
        raise InvalidParameterError(param, value, "a real number")
    return v


def float_in(value, param: str, *, lo: float = 0.0, strict: bool = True) -> float:
    """:func:`to_float` after checking ``value > lo`` (``>= lo`` if not strict); else a clear error."""
    v = to_float(value, param)
    if not (v > lo if strict else v >= lo) or math.isinf(v):
        raise InvalidParameterError(param, value, f"a real number {'>' if strict else '>='} {lo:g}")
    return v


def to_mpf(value):
    """Evaluate an exact real SymPy number (or mpf/int) as ``mpf`` at the ambient working precision.

    Called below a boundary (:func:`~onestep_theory.core.precision.precision`): SymPy evaluates with the
    working digits and the result is a plain ``mpf`` rounded to the working precision.  An imaginary part
    left by the evaluation passes only as round-off (2 digits below those asked at the boundary).

    >>> from onestep_theory.core.precision import precision
    >>> with precision(10):
    ...     print(to_mpf(sp.sqrt(2)))
    1.4142135623730950488
    """
    if isinstance(value, mpmath.mpf):
        return +value
    if isinstance(value, (int, fractions.Fraction)):
        value = to_exact(value)
    if isinstance(value, float):
        value = to_exact(value)
    if value is sp.oo:
        return mpmath.inf
    if value is -sp.oo:
        return -mpmath.inf
    digits = working_digits()
    num = sp.N(value, digits)
    if isinstance(num, sp.Float):
        return mpmath.mpf(num._mpf_)
    re, im = num.as_real_imag()
    # a real number whose evaluation left an imaginary part: only round-off (2 digits below those asked) passes
    if im != 0 and abs(im) > tolerance(2, sp.Float, why="round-off: 2 digits below those asked") * (1 + abs(re)):
        raise InvalidParameterError("value", value, "a real number")
    return mpmath.mpf(sp.Float(re, digits)._mpf_)


def nstr(value, dps: int) -> str:
    """Decimal string of *value* with ``dps`` significant digits (docs/theory/hermite.md §5.7)."""
    at = max(1, int(dps))                 # a formatter's boundary: a count below 1 prints at 1 digit's precision
    if isinstance(value, sp.Basic):
        if value.is_zero:
            return "0"
        with precision(at):
            value = to_mpf(value)
    if isinstance(value, (int,)):
        return str(value)
    if isinstance(value, mpmath.mpf) and value == 0:
        return "0"
    if isinstance(value, float):
        if value == 0:
            return "0"
        return repr(value) if dps >= 17 else f"{value:.{dps}g}"
    # an mpf's text depends on its binary value and dps alone: cached (a sweep prints the same (r, c, γ) at each point)
    key = (value._mpf_, dps) if isinstance(value, mpmath.mpf) else None
    if key in _NSTR:
        return _NSTR[key]
    with precision(at):
        text = mpmath.nstr(mpmath.mpf(value), dps, strip_zeros=False, min_fixed=-6, max_fixed=12)
    if key is not None:
        if len(_NSTR) >= 4096:
            _NSTR.clear()
        _NSTR[key] = text
    return text


#: :func:`nstr`'s texts of mpf values, by (``_mpf_``, dps).
_NSTR: dict = {}


def check_dps(dps, hi: int, param: str = "dps", *, optional: bool = True):
    """The one check of a requested number of digits: an integer in [1, hi] (or None when optional)."""
    if dps is None and optional:
        return None
    if isinstance(dps, bool) or not isinstance(dps, numbers.Integral) or not 1 <= int(dps) <= hi:
        raise InvalidParameterError(param, dps, f"an integer in [1, {hi}]")
    return int(dps)


def check_positive(value, param: str, *, strict: bool = True):
    """Return ``value`` as exact number after checking ``value > 0`` (or ``>= 0``)."""
    v = to_exact(value, param)
    ok = bool(v > 0) if strict else bool(v >= 0)
    if not ok:
        raise InvalidParameterError(param, value, "a real number > 0" if strict else "a real number >= 0")
    return v


def check_range(value, param: str, lo=None, hi=None, *, lo_open=True, hi_open=True, allow_infinite=False):
    """Return ``value`` as exact number after checking it lies in the interval (lo, hi)."""
    v = to_exact(value, param, allow_infinite=allow_infinite)
    ok = True
    if lo is not None:
        ok &= bool(v > lo) if lo_open else bool(v >= lo)
    if hi is not None:
        ok &= bool(v < hi) if hi_open else bool(v <= hi)
    if not ok:
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        rng = f"{left}{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}{right}"
        raise InvalidParameterError(param, value, f"a real number in {rng}")
    return v


def check_real(v, name, lo, hi):
    """A finite real parameter in [lo, hi] (``None``: unbounded); floats and mpf stay as given (no inexactness
    warning), everything else becomes exact."""
    val = float(v) if isinstance(v, (float, mpmath.mpf, np.floating)) else to_exact(v, name)
    f = float(val)
    if not math.isfinite(f) or (lo is not None and f < lo) or (hi is not None and f > hi):
        rng = f"[{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]"
        raise InvalidParameterError(name, v, f"a real number in {rng}")
    return v if isinstance(v, mpmath.mpf) else val
