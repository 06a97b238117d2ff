"""The one precision mechanism of the package: mpmath and Arb (python-flint) together.

Every high-precision evaluation runs inside :func:`workdps` (a context manager) or a function
decorated with :func:`with_dps`.  Both set the working precision of mpmath *and* of python-flint's
Arb context and restore both on exit, so no global precision ever leaks.  ``GUARD_DIGITS`` extra
digits are added where the caller asks for ``dps`` correct digits (:func:`precision`).

The split between the two libraries (docs/theory/numerics.md §2): Arb evaluates the integrands of
Gaussian expectations (elementary functions on ball arithmetic, about 5x faster than mpmath per
call) and gives Gauss–Legendre nodes at any precision; mpmath runs the solvers (Newton, root
finding), whose inputs are converted once with :func:`arb_to_mpf`.  ``gmpy2``, when installed, is
picked up by mpmath as its integer backend.
"""

from __future__ import annotations

import contextlib
import functools

import flint
import mpmath

#: Guard digits added to every evaluation of a result of ``dps`` digits (docs/theory/hermite.md §5.1: at least 10).
GUARD_DIGITS = 10

__all__ = ["GUARD_DIGITS", "workdps", "precision", "with_dps", "arb_to_mpf", "mpf_to_arb", "signed_man_exp"]



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


def precision(dps: int):
    """:func:`workdps` with ``dps + GUARD_DIGITS`` digits: the context for a result of ``dps`` digits."""
    return workdps(int(dps) + GUARD_DIGITS)


def with_dps(fn):
    """Decorator: run ``fn(..., dps=D)`` inside :func:`precision` (``D`` + guard digits).

    A call without ``dps`` (or with ``dps=None``) runs at the caller's precision.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kw):
        dps = kw.get("dps")
        if dps is None:
            return fn(*args, **kw)
        with precision(dps):
            return fn(*args, **kw)

    return wrapper


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
