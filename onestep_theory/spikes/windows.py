r"""α-windows of the step size :math:`\eta\asymp N^{\alpha}` [MLHD23]: window ℓ is
:math:`\frac{\ell-1}{2\ell}<\alpha<\frac{\ell}{2\ell+2}`, decided exactly (docs/theory/spike-theory.md §5.1).
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from ..core.errors import InvalidParameterError
from ..core.exact import to_exact
from ..core.results import Result

__all__ = ["Window", "window", "window_bounds"]


@dataclasses.dataclass
class Window(Result):
    """Window of the step-size exponent α: ``regime`` is ``window``, ``boundary`` or ``uncovered``."""

    alpha: object
    ell: int | None
    lo: object
    hi: object
    regime: str


def window_bounds(ell: int) -> tuple:
    r"""Exact bounds :math:`\big(\frac{\ell-1}{2\ell},\frac{\ell}{2\ell+2}\big)` of window ℓ (§5.1).

    >>> window_bounds(2)
    (1/4, 1/3)
    """
    if not isinstance(ell, int) or ell < 1:
        raise InvalidParameterError("ell", ell, "an integer >= 1")
    return sp.Rational(ell - 1, 2 * ell), sp.Rational(ell, 2 * ell + 2)


def window(alpha) -> Window:
    r"""Window of α: :math:`\ell(\alpha)=\lfloor1/(1-2\alpha)\rfloor` inside (0, 1/2), boundaries detected exactly.

    >>> window("0.3").ell, window("1/3").regime, window("0.6").regime
    (2, 'boundary', 'uncovered')
    """
    a = to_exact(alpha, "alpha")
    if not (a > 0 and a < sp.Rational(1, 2)):
        return Window(alpha=a, ell=None, lo=None, hi=None, regime="uncovered")
    t = 1 / (1 - 2 * a)
    if t.is_Integer or (t.is_Rational and t.q == 1):
        return Window(alpha=a, ell=None, lo=None, hi=None, regime="boundary")
    ell = int(sp.floor(t))
    lo, hi = window_bounds(ell)
    return Window(alpha=a, ell=ell, lo=lo, hi=hi, regime="window")


