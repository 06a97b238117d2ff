r"""Hermite coefficients of an expression: :func:`he_coeffs` parses the function, then returns
:math:`c_0..c_K` (exact closed forms where found), the Gaussian moments, and an error estimate for every number
(docs/theory/hermite.md §2, §5; docs/theory/numerics.md §1).

The result and its errors have one home, :mod:`~onestep_theory.hermite.expansion`, which needs no
:class:`~onestep_theory.hermite.activation.Activation`; this module sits above both (imports go
``expansion`` → ``activation`` → ``coefficients``, never back).
"""

from __future__ import annotations

from ..core.exact import check_dps
from ..core.limits import MAX_DPS
from .activation import Activation
from .expansion import HermiteCoefficients, check_kmax, expansion

__all__ = ["he_coeffs", "HermiteCoefficients"]


def he_coeffs(f, kmax: int, dps: int = 15, *, center: bool = False, param: str = "expression") -> HermiteCoefficients:
    r"""Hermite coefficients :math:`c_0..c_K` and moments of an expression.

    Parameters
    ----------
    f : str, sympy.Expr or Activation
        The function (``"tanh"``, ``"Max(x,0)"``, …).
    kmax : int
        Largest degree ``K >= 0``.
    dps : int
        Decimal digits of the numeric values (closed forms are also returned exactly).
    center : bool
        Expand :math:`\sigma-c_0` instead.

    Returns
    -------
    HermiteCoefficients
        Values, exact forms, methods, :math:`\mathbb E\sigma`, :math:`\mathbb E\sigma^2`,
        :math:`c_{>1}`, :math:`c_\star`, breakpoints and the Parseval partial sum
        :math:`\sum_{k\le K}k!c_k^2` (docs/theory/hermite.md §2.1) as a diagnostic.

    Examples
    --------
    >>> import mpmath
    >>> r = he_coeffs("Max(x,0)", 4)
    >>> r.exact[2], r.exact[3]
    (sqrt(2)/(4*sqrt(pi)), 0)
    >>> print(mpmath.nstr(he_coeffs("tanh", 1, 30).values[1], 30))
    0.605705509602158825583540227556
    """
    kmax = check_kmax(kmax)
    dps = check_dps(dps, MAX_DPS, optional=False)
    return expansion(Activation.from_any(f, param, center=center), kmax, dps)
