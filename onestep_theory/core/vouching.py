"""The printing contract of a theory number (docs/theory/numerics.md §1), exact over the whole mpf range.

:func:`vouch` prints a value to the digits its absolute error vouches for and returns the printed error (the
estimate plus the rounding of the printed value, rounded up); :func:`digits_of` counts those digits.  Every
decision (the value's and the error's decimal exponents, the rounding) is made in exact rational arithmetic on
the binary value (``man * 2**exp`` of an mpf, the exact value of a float), never through ``float()``, so the
contract holds from 1e-1000 to 1e1000 and beyond, at zero, for negative values and for errors larger than the
value.  Non-finite values print as words (``inf``, ``+inf``, ``-inf``, ``nan``) with their error; a non-finite
(or NaN) error prints as ``inf``: nothing is vouched for.

:class:`vmpf` is an mpf that carries its error: a result's high-precision number whose repr and str show the
vouched digits and the error, and which otherwise *is* the mpf (arithmetic, ``float()``, mpmath and numpy give
plain mpf; ``x.plain`` is the value itself; ``x.error`` the estimate).
"""

from __future__ import annotations

import contextlib
import decimal
import fractions
import functools
import math
import re

import mpmath
import numpy as np
import sympy as sp

from .exact import nstr, to_mpf
from .precision import workdps

__all__ = ["as_fraction", "round_up", "digits_of", "vouch", "vouched", "error_text", "vmpf", "with_error", "attach"]

F = fractions.Fraction


def _pow10(e: int) -> F:
    return F(10**e) if e >= 0 else F(1, 10**-e)


def _finite(value) -> bool:
    if isinstance(value, mpmath.mpf):
        return bool(mpmath.isfinite(value))
    if isinstance(value, (float, np.floating)):
        return math.isfinite(float(value))
    if isinstance(value, sp.Basic):
        return bool(value.is_finite)
    if isinstance(value, str):                      # a printed number: 'inf' and 'nan' are words
        return value.strip().lstrip("+-").lower() not in ("inf", "infinity", "nan")
    return True                                     # int, Fraction: finite


def as_fraction(value) -> F:
    """The exact value of a float, an mpf (``man * 2**exp``), an int, a Fraction, a SymPy Rational or a decimal
    string; ``ValueError`` for a non-finite one.

    >>> as_fraction(mpmath.mpf(3) / 4), as_fraction(0.1) == F(3602879701896397, 2**55)
    (Fraction(3, 4), True)
    """
    if isinstance(value, F):
        return value
    if isinstance(value, mpmath.mpf):
        sign, man, exp, _ = value._mpf_
        if not man:
            if exp:
                raise ValueError(f"not a finite number: {mpmath.nstr(value)}")
            return F(0)
        f = F(int(man) << int(exp)) if exp >= 0 else F(int(man), 1 << int(-exp))
        return -f if sign else f
    if isinstance(value, sp.Rational):
        return F(int(value.p), int(value.q))
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(float(value)):
            raise ValueError(f"not a finite number: {value}")
        return F(float(value))
    if isinstance(value, (int, np.integer)):
        return F(int(value))
    if isinstance(value, sp.Basic):
        with workdps(70):           # 60 digits asked and the guard digits
            v = to_mpf(value)
        return as_fraction(+v)      # rounded to the caller's working precision (as to_mpf(value, 60) did)
    return F(value)


def _ilog10(x: F) -> int:
    """``floor(log10(x))`` for ``x > 0``, exactly (the float logarithm of the integers, corrected)."""
    e = math.floor(math.log10(x.numerator) - math.log10(x.denominator))
    while _pow10(e) > x:
        e -= 1
    while _pow10(e + 1) <= x:
        e += 1
    return e


#: Exact decimal arithmetic of the float fast path: every float is a terminating decimal of at most 767 significant
#: digits, so sums and differences of floats and printed decimals fit in 3000 digits; a rounding would raise.
_EXACT = decimal.Context(prec=3000, rounding=decimal.ROUND_HALF_EVEN, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN,
                         traps=[decimal.Inexact, decimal.Rounded, decimal.InvalidOperation, decimal.Overflow])


def _up(x: decimal.Decimal, sig: int) -> str:
    """:func:`round_up` of an exact decimal ``x`` (``adjusted()`` is ``floor(log10 x)`` exactly)."""
    if x <= 0:
        return "0"
    e = x.adjusted()
    m = math.ceil(x.scaleb(sig - 1 - e, _EXACT))
    if m >= 10**sig:
        m, e = m // 10 + (m % 10 > 0), e + 1
    text = str(m)
    return f"{text[0]}.{text[1:]}e{e:+03d}" if sig > 1 else f"{text}e{e:+03d}"


def round_up(x, sig: int = 3) -> str:
    """``x >= 0`` rounded *up* to ``sig`` significant digits, in exponent form (an error never shrinks in print).

    >>> round_up(F(1, 3)), round_up(mpmath.mpf('1e-400')), round_up(0), round_up(0.1)
    ('3.34e-01', '1.00e-400', '0', '1.01e-01')
    """
    if isinstance(x, (float, np.floating)) and math.isfinite(x):      # a float is an exact decimal: no Fraction
        with contextlib.suppress(decimal.DecimalException):            # (a guard, never met: the Fraction path)
            return _up(decimal.Decimal(float(x)), sig)
    x = as_fraction(x)
    if x <= 0:
        return "0"
    e = _ilog10(x)
    m = math.ceil(x / _pow10(e - sig + 1))
    if m >= 10**sig:
        m, e = m // 10 + (m % 10 > 0), e + 1
    text = str(m)
    return f"{text[0]}.{text[1:]}e{e:+03d}" if sig > 1 else f"{text}e{e:+03d}"


def digits_of(value, err) -> int:
    """Significant digits vouched for by an absolute error estimate: ``floor(log10(|value| / err))``, exactly;
    0 for a zero or non-finite value or a non-finite error, 17 for an exact value (error 0).

    >>> digits_of(mpmath.mpf(1), mpmath.mpf('1e-320')), digits_of(mpmath.mpf('3e-400'), mpmath.mpf('1e-420'))
    (320, 20)
    """
    if not (_finite(value) and _finite(err)):
        return 0
    v, e = abs(as_fraction(value)), abs(as_fraction(err))
    if v == 0:
        return 0
    if e == 0:
        return 17
    return max(0, _ilog10(v / e))


def _word(value) -> str:
    return str(float(value)) if isinstance(value, (float, np.floating)) else mpmath.nstr(value)


_FLOATS, _ERRS = (float, np.floating), (float, np.floating, int)


@functools.lru_cache(maxsize=4096)
def _vouch_float(v: float, r: float, cap) -> tuple:
    """:func:`vouch` of a finite float ``v`` with a finite error ``r``, in exact decimal arithmetic (the same decisions
    as the exact path, proven equal in tests/test_fast_vouch.py); cached: a result prints its numbers more than once."""
    x, e = decimal.Decimal(v), decimal.Decimal(abs(r))
    if not x:
        return "0", _up(e, 3)
    if e:
        n = x.adjusted() - e.adjusted() + 2           # to the error's decimal place + one guard digit
    else:
        n = 17 if cap is None else cap
    if cap is not None and cap < n:
        n = cap
    text = f"{v:.{1 if n < 1 else 17 if n > 17 else n}g}"
    return text, _up(_EXACT.add(e, _EXACT.subtract(decimal.Decimal(text), x).copy_abs()), 3)


def vouch(value, err, cap: int | None = None, exact: bool = False) -> tuple:
    """``(value_text, error_text)``: the contract of every printed theory number (docs/theory/numerics.md §1).

    The value is printed to the decimal place of the error's leading digit plus one guard digit (at most
    ``cap`` significant digits); the printed error is the estimate ``err`` *plus the rounding of the printed
    value*, rounded up to three significant digits.  So the interval ``printed ± printed error`` contains
    every number within ``err`` of ``value`` — a reader may use the printed pair as it stands.  Exact (rational)
    arithmetic throughout: any mpf exponent.

    >>> vouch(0.12323667957530252, 3.45e-14)
    ('0.123236679575303', '3.50e-14')
    >>> vouch(2 / 3, 0.0, cap=5)          # an exact value: the error is the rounding alone
    ('0.66667', '3.34e-06')
    >>> vouch(mpmath.mpf('1.234567890123e400'), mpmath.mpf('1e394'))
    ('1.2345679e+400', '1.01e+394')

    A finite float value with a finite float (or int) error takes a fast path in exact decimal arithmetic, cached
    (the same texts: tests/test_fast_vouch.py); ``exact=True`` forces the Fraction path, the reference.
    """
    if not exact and isinstance(value, _FLOATS) and isinstance(err, _ERRS) and math.isfinite(value) \
            and math.isfinite(err):
        try:
            return _vouch_float(float(value), float(err), None if cap is None else int(cap))
        except decimal.DecimalException:            # never met (a guard): the Fraction path decides
            pass
    if not exact and isinstance(value, mpmath.mpf) and isinstance(err, (float, int)):
        return _vouch_mpf(value._mpf_, err, None if cap is None else int(cap))   # the same mpf at every point
    if isinstance(value, F):
        value = sp.Rational(value.numerator, value.denominator)
    if isinstance(value, sp.Basic) and not isinstance(value, sp.Rational):
        with workdps(60 if cap is None else cap + 20):
            value = to_mpf(value)
    e = abs(as_fraction(err)) if _finite(err) else None
    if not _finite(value):                      # kappa* = +-inf (a limit), nan: printed as words
        return _word(value), ("0" if e == 0 else round_up(e) if e is not None else "inf")
    is_float = isinstance(value, (float, np.floating))
    if e is None:
        return (f"{float(value):.3g}" if is_float else nstr(value, 3)), "inf"
    x = as_fraction(value)
    if x == 0:
        return "0", round_up(e)
    mag = _ilog10(abs(x))
    if e > 0:
        n = mag - (_ilog10(e) - 1) + 1          # to the error's decimal place + one guard digit
    elif cap is not None:
        n = int(cap)
    elif isinstance(value, mpmath.mpf):         # all the digits the binary value holds
        n = max(17, int(value._mpf_[3] * 0.30103) + 2)
    else:
        n = 17
    if cap is not None:
        n = min(n, int(cap))
    n = max(1, min(n, 17 if is_float else 320))
    if is_float:
        text = f"{float(value):.{n}g}"
    else:
        with workdps(n + 10):
            v = mpmath.mpf(value.p) / value.q if isinstance(value, sp.Rational) else mpmath.mpf(value)
            text = mpmath.nstr(v, n, strip_zeros=False, min_fixed=-6, max_fixed=15)
    text = text.replace(".e", "e")              # mpmath prints one digit as "2.e-40"
    return text, round_up(e + abs(F(text) - x))


@functools.lru_cache(maxsize=1024)
def _vouch_mpf(raw: tuple, err, cap) -> tuple:
    """:func:`vouch` of the mpf ``raw`` (its ``_mpf_``; its text depends on nothing else), cached."""
    return vouch(mpmath.mp.make_mpf(raw), err, cap, exact=True)


def vouched(value, err, cap: int | None = None) -> str:
    """The value text of :func:`vouch`."""
    return vouch(value, err, cap)[0]


def error_text(value, err, cap: int | None = None) -> str:
    """The error text of :func:`vouch` (the estimate plus the rounding of the printed value, rounded up)."""
    return vouch(value, err, cap)[1]


class vmpf(mpmath.mpf):
    r"""An mpf with its absolute error ``error`` (and the digit cap ``cap`` of its result): ``repr`` and ``str``
    print :func:`vouch` — the vouched digits and the printed error, ``0.0416039760597924… ± 2.31e-32`` — so a
    field shows the digits it earned at any dps.  Everything else is the mpf: arithmetic and mpmath functions
    return plain mpf (a derived number has no vouched error), comparisons and hashing are the mpf's, ``float()``
    and numpy work; ``format(x, spec)`` formats :attr:`plain`; pickling keeps the error.

    >>> x = with_error(mpmath.mpf(2) / 3, 2e-11)
    >>> x, str(x), type(x * 1).__name__, x.digits
    (0.666666666667 ± 2.04e-11, '0.666666666667 ± 2.04e-11', 'mpf', 10)
    """

    @property
    def plain(self) -> mpmath.mpf:
        """The value as a plain mpf (all its binary digits)."""
        return mpmath.mp.make_mpf(self._mpf_)

    @property
    def text(self) -> str:
        """The printed value (:func:`vouched`)."""
        return self._pair()[0]

    @property
    def error_text(self) -> str:
        """The printed error (:func:`error_text`)."""
        return self._pair()[1]

    @property
    def digits(self) -> int:
        """The significant digits the error vouches for (:func:`digits_of`)."""
        return digits_of(self.plain, self.error)

    def _pair(self) -> tuple:
        if self.__dict__.get("_printed") is None:
            self.__dict__["_printed"] = vouch(self.plain, self.error, self.cap)
        return self.__dict__["_printed"]

    def __repr__(self) -> str:
        return "%s ± %s" % self._pair()

    __str__ = __repr__

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(repr(self))

    def __format__(self, spec: str) -> str:
        """No spec: the vouched text with its error; a spec (``.5f``, ``>20.3e``, ...): the value formatted as
        Python formats a ``decimal.Decimal`` of all its binary digits (mpmath 1.3's mpf takes no spec)."""
        if not spec:
            return str(self)
        try:
            return format(self.plain, spec)
        except (TypeError, ValueError):
            # enough decimal digits for the spec (its precision, plus the integer digits of a fixed-point or
            # percent format) and for every binary digit of the mantissa, with 12 to spare against double rounding
            m = re.search(r"\.(\d+)", spec)
            places = int(m.group(1)) if m else 6          # the spec's precision: decimal places, not mpmath's
            _, man, exp, bc = self._mpf_ if self.plain else (0, 0, 0, 1)
            mag = max(0, math.floor((exp + bc) * 0.30103) + 3) if man else 0
            n = min(20000, max(20, int(bc * 0.30103) + 5, places + mag + 12))
            return format(decimal.Decimal(mpmath.libmp.to_str(self._mpf_, n)) if man else decimal.Decimal(0), spec)

    def __reduce__(self):
        return with_error, (self.plain, self.error, self.cap)


def with_error(value, err, cap: int | None = None):
    """``value`` as a :class:`vmpf` carrying ``err`` when it is an mpf and ``err`` a number; any other value (a
    float keeps Python's float repr, which code relies on as the float's exact literal) unchanged."""
    if not isinstance(value, mpmath.mpf) or err is None or isinstance(err, (dict, list, tuple, str, bool)):
        return value
    out = mpmath.mpf.__new__(vmpf)
    out._mpf_ = value._mpf_
    out.error, out.cap = err, cap
    return out


def attach(value, err, cap: int | None = None):
    """:func:`with_error` through nested dicts and lists paired with the same structure of errors."""
    if isinstance(err, dict) and isinstance(value, dict):
        return {k: attach(v, err.get(k, err.get(str(k))), cap) for k, v in value.items()}
    if isinstance(err, (list, tuple)) and isinstance(value, (list, tuple)) and len(err) == len(value):
        out = [attach(v, e, cap) for v, e in zip(value, err)]
        return out if isinstance(value, list) else tuple(out)
    return with_error(value, err, cap)
