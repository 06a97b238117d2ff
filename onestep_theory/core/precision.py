"""The one precision mechanism of the package: mpmath and Arb (python-flint) together.

The model is mpmath's (``_wrap_specfun``): a public function takes ``dps``, the digits the user asks for,
and sets the working precision **once** at its boundary, with :func:`precision` (a context manager) or
the decorator :func:`with_dps`: ``dps + GUARD_DIGITS`` digits in mpmath *and* in python-flint's Arb
context, both restored on exit, so no global precision ever leaks.  Everything below the boundary takes
no precision argument: it computes at the ambient precision (:func:`working_digits`), and reads the digits
asked with :func:`asked_digits`.  An inner routine that needs more raises the precision locally with
:func:`refined`, which names its reason: the second evaluation that estimates an error (``REFINE_DIGITS``
more digits), a cancellation, a root finder's extra precision.  ``GUARD_DIGITS`` is used here only.

The split between the two libraries (docs/theory/numerics.md §2): Arb evaluates the integrands of
Gaussian expectations (elementary functions on ball arithmetic, about 5x faster than mpmath per
call) and gives Gauss–Legendre nodes at any precision; mpmath runs the solvers (Newton, root
finding), whose inputs are converted once with :func:`arb_to_mpf`.  ``gmpy2``, when installed, is
picked up by mpmath as its integer backend.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import numbers

import flint
import mpmath

from .errors import InvalidParameterError
from .limits import MAX_DPS, WORK_HEADROOM

#: Guard digits added to every evaluation of a result of ``dps`` digits (docs/theory/hermite.md §5.1: at least 10).
GUARD_DIGITS = 10
#: Digits the error-estimating second evaluation runs above the first (docs/theory/numerics.md §1): the
#: change between the two bounds the first one's error when the second is this much more accurate.
REFINE_DIGITS = 10

__all__ = ["GUARD_DIGITS", "REFINE_DIGITS", "workdps", "precision", "with_dps", "refined", "boundary_digits", "working_digits",
           "asked_digits", "arb_to_mpf", "mpf_to_arb", "signed_man_exp"]



@contextlib.contextmanager
def workdps(digits: int):
    """Work with ``digits`` decimal digits in mpmath and Arb; both are restored on exit.

    >>> with workdps(40):
    ...     mpmath.mp.dps, flint.ctx.dps
    (40, 40)
    >>> mpmath.mp.dps
    15
    """
    digits = int(digits)
    with mpmath.workdps(digits), flint.ctx.workdps(digits):
        yield


def _asked(dps) -> int:
    """``dps`` as the digits asked at a boundary: an integer in [1, MAX_DPS + WORK_HEADROOM] (an inner
    boundary, e.g. a refinement's second evaluation, may ask above ``MAX_DPS``), else a clear error."""
    if isinstance(dps, bool) or not isinstance(dps, numbers.Real) or dps != int(dps) \
            or not 1 <= int(dps) <= MAX_DPS + WORK_HEADROOM:
        raise InvalidParameterError("dps", dps, f"an integer in [1, {MAX_DPS + WORK_HEADROOM}]")
    return int(dps)


def precision(dps: int):
    """The boundary: :func:`workdps` with ``dps + GUARD_DIGITS`` digits, the context for a result of ``dps``
    digits (``dps`` validated here; the guard digits are added here and nowhere else).

    >>> with precision(30):
    ...     working_digits(), asked_digits()
    (40, 30)
    """
    return workdps(boundary_digits(dps))


def boundary_digits(dps: int) -> int:
    """The working digits of a boundary that asks for ``dps`` digits: ``dps + GUARD_DIGITS`` (``dps`` checked)."""
    return _asked(dps) + GUARD_DIGITS


def with_dps(fn):
    """Decorator form of :func:`precision`: ``fn(..., dps=D)`` (keyword or positional) runs at ``D`` + guard
    digits; a call without ``dps`` (or with ``dps=None``) runs at the caller's precision.

    >>> @with_dps
    ... def probe(x, dps=None):
    ...     return working_digits()
    >>> probe(1, 20), probe(1, dps=20), probe(1) == mpmath.mp.dps
    (30, 30, True)
    """
    sig = inspect.signature(fn)
    if "dps" not in sig.parameters:
        raise TypeError(f"with_dps: {fn.__qualname__} has no 'dps' parameter")

    @functools.wraps(fn)
    def wrapper(*args, **kw):
        dps = sig.bind_partial(*args, **kw).arguments.get("dps")
        if dps is None:
            return fn(*args, **kw)
        with precision(dps):
            return fn(*args, **kw)

    return wrapper


def working_digits() -> int:
    """The ambient working precision in decimal digits (mpmath's, which :func:`workdps` keeps Arb's equal to)."""
    return mpmath.mp.dps


def asked_digits() -> int:
    """The digits asked at the enclosing boundary: the working digits less the guard digits (at least 1).

    Below a boundary this is the ``dps`` of the tolerances (a quadrature converged to ``10**-(D+4)``, a
    rounding term ``10**-(D+GUARD_DIGITS-2)`` written as ``10**-(working_digits() - 2)``)."""
    return max(1, mpmath.mp.dps - GUARD_DIGITS)


@contextlib.contextmanager
def refined(extra: int = REFINE_DIGITS, *, why: str):
    """Raise the working precision of mpmath and Arb by ``extra`` digits, locally, for the reason ``why``.

    The default is the error estimate's second evaluation (:data:`REFINE_DIGITS` more digits: the values
    computed inside are the reference the first evaluation is compared with).  ``why`` is required, so
    that every local increase of precision says at the call what it is for.

    >>> with precision(15), refined(why="error estimate"):
    ...     working_digits(), asked_digits()
    (35, 25)
    """
    if not why:
        raise ValueError("refined: give the reason (why=...)")
    with workdps(mpmath.mp.dps + int(extra)):
        yield


def arb_to_mpf(v) -> mpmath.mpf:
    """Midpoint of an Arb ball (or a flint number) as an ``mpf``, rounded to the current mpmath precision
    (exact inside :func:`workdps`, which sets mpmath and Arb to the same precision)."""
    man, exp = v.mid().man_exp()
    return mpmath.mpf((int(man), int(exp)))


def mpf_to_arb(v) -> flint.arb:
    """An ``mpf`` (or int/float) as an exact Arb number."""
    if isinstance(v, flint.arb):
        return v
    if not isinstance(v, mpmath.mpf):
        v = mpmath.mpf(v)                  # int/float: exact at any precision >= 53 bits
    if v == 0:
        return flint.arb(0)
    man, exp = signed_man_exp(v)
    return flint.arb((flint.fmpz(man), flint.fmpz(exp)))


def signed_man_exp(v) -> tuple:
    """``(man, exp)`` with ``v = man * 2**exp`` exactly, sign included (``mpf.man_exp`` drops the sign)."""
    # an mpf is read as it is: mpmath.mpf(v) would round it to the ambient precision (53 bits outside a
    # precision context, the bug class of issue 21)
    sign, man, exp, _ = (v if isinstance(v, mpmath.mpf) else mpmath.mpf(v))._mpf_
    return (-int(man) if sign else int(man)), int(exp)
