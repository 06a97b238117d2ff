r"""Probabilists' Hermite polynomials and the monomial-to-Hermite coefficients ξ_{p,i} (exact).

=====================  ====================================================================
``he_eval``            :math:`\mathrm{He}_k(t)` by the three-term recurrence (mpf, float, array)
``he_values``          :math:`(\mathrm{He}_0(t),\dots,\mathrm{He}_K(t))` by the same recurrence
``he_poly``            :math:`\mathrm{He}_k` as an exact SymPy polynomial in ``x``
``he_xi``              :math:`\xi_{p,i}` with :math:`x^p=\sum_i\xi_{p,i}\mathrm{He}_i` (exact int)
``he_xi_row``          :math:`(\xi_{p,0},\dots,\xi_{p,p})`
``he_xi_table``        rows ``p = 0..pmax``
``he_from_monomial``   monomial coefficients → Hermite coefficients (exact)
``he_to_monomial``     Hermite coefficients → monomial coefficients (exact)
=====================  ====================================================================

References
----------
docs/theory/hermite.md §1 (polynomials), §3 (ξ_{p,i}).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np  # noqa: F401  (doctests)
import sympy as sp

from ..core.caches import cached
from ..core.errors import InvalidParameterError
from ..core.exact import to_exact
from .expressions import x

__all__ = ["he_eval", "he_values", "he_poly", "he_xi", "he_xi_row", "he_xi_table", "he_from_monomial",
           "he_to_monomial"]


def he_eval(k: int, t):
    r"""Evaluate :math:`\mathrm{He}_k(t)` by :math:`\mathrm{He}_{k+1}=t\mathrm{He}_k-k\mathrm{He}_{k-1}`.

    Works for ``mpf``, Python numbers and numpy arrays (docs/theory/hermite.md §1.1, §1.5).

    >>> he_eval(4, 2)
    -5
    >>> he_eval(3, np.array([1.0, 2.0]))
    array([-2.,  2.])
    """
    if k < 0:
        raise InvalidParameterError("k", k, "an integer >= 0")
    return he_values(k, t)[k]


def he_values(kmax: int, t) -> list:
    r"""``[He_0(t), ..., He_kmax(t)]`` by the recurrence of :func:`he_eval` (one home of the recurrence;
    docs/theory/hermite.md §1).

    >>> he_values(3, 2)
    [1, 2, 3, 2]
    """
    if kmax < 0:
        raise InvalidParameterError("k", kmax, "an integer >= 0")
    out = [t * 0 + 1, t]
    for j in range(1, kmax):
        out.append(t * out[j] - j * out[j - 1])
    return out[: kmax + 1]


@cached(maxsize=None)
def he_poly(k: int) -> sp.Expr:
    r"""Exact :math:`\mathrm{He}_k(x)` (docs/theory/hermite.md §1.1 closed form).

    >>> he_poly(4)
    x**4 - 6*x**2 + 3
    """
    if k < 0:
        raise InvalidParameterError("k", k, "an integer >= 0")
    return sp.Add(*(c * x**j for j, c in enumerate(_monomials(k)) if c))


@cached(maxsize=None)
def _monomials(k: int) -> tuple:
    """Exact monomial coefficients of He_k: (-1)^m k!/(m! (k-2m)! 2^m) at x^(k-2m) (docs/theory/hermite.md §1)."""
    out = [sp.Integer(0)] * (k + 1)
    for m in range(k // 2 + 1):
        out[k - 2 * m] = sp.Rational((-1) ** m * math.factorial(k), math.factorial(m) * math.factorial(k - 2 * m) * 2**m)
    return tuple(out)


def he_xi(p: int, i: int) -> int:
    r""":math:`\xi_{p,i}=p!/(i!\,j!\,2^j)` with :math:`j=(p-i)/2` if :math:`p-i` is even and
    :math:`\ge0`, else 0 (docs/theory/hermite.md §3).  Exact Python integer.

    >>> he_xi(4, 0), he_xi(4, 2), he_xi(5, 2)
    (3, 6, 0)
    """
    if p < 0 or i < 0:
        raise InvalidParameterError("p, i", (p, i), "integers >= 0")
    if i > p or (p - i) % 2:
        return 0
    j = (p - i) // 2
    return math.factorial(p) // (math.factorial(i) * math.factorial(j) * 2**j)


@cached(maxsize=None)
def he_xi_row(p: int) -> tuple:
    r"""Row :math:`(\xi_{p,0},\dots,\xi_{p,p})` of exact integers.

    >>> he_xi_row(6)
    (15, 0, 45, 0, 15, 0, 1)
    """
    return tuple(he_xi(p, i) for i in range(p + 1))


def he_xi_table(pmax: int) -> list:
    """Rows ``he_xi_row(p)`` for ``p = 0..pmax``."""
    if pmax < 0:
        raise InvalidParameterError("pmax", pmax, "an integer >= 0")
    return [he_xi_row(p) for p in range(pmax + 1)]


def _exactify(c):
    if isinstance(c, sp.Basic):
        return c
    if isinstance(c, Fraction):
        return sp.Rational(c.numerator, c.denominator)
    if isinstance(c, int):
        return sp.Integer(c)
    return to_exact(c, "coefficient")


def he_from_monomial(coeffs) -> list:
    r"""Hermite coefficients :math:`h` with :math:`\sum_p a_px^p=\sum_ih_i\mathrm{He}_i` (exact).

    >>> he_from_monomial([0, 0, 0, 1])      # x**3 = 3 He_1 + He_3
    [0, 3, 0, 1]
    """
    a = [_exactify(c) for c in coeffs]
    return [sp.Add(*(ap * he_xi(p, i) for p, ap in enumerate(a) if p >= i)) for i in range(len(a))]


def he_to_monomial(coeffs) -> list:
    r"""Monomial coefficients of :math:`\sum_i h_i\mathrm{He}_i` (exact inverse of :func:`he_from_monomial`).

    >>> he_to_monomial([0, 3, 0, 1])
    [0, 0, 0, 1]
    """
    h = [_exactify(c) for c in coeffs]
    return [sp.Add(*(hk * _monomials(k)[j] for k, hk in enumerate(h) if k >= j)) for j in range(len(h))]


