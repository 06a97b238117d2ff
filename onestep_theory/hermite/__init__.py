"""The Hermite layer: expressions in ``x``, exact Gaussian integrals, quadrature rules, probabilists' Hermite
polynomials and the coefficients of activations (docs/theory/hermite.md).

One function per operation, prefix ``he_`` (in the style of ``numpy.polynomial.hermite_e``):

=====================  ====================================================================  ==================
``he_eval``            :math:`\\mathrm{He}_k(t)` by the three-term recurrence                 ``polynomials``
``he_values``          :math:`(\\mathrm{He}_0(t),\\dots,\\mathrm{He}_K(t))`                     ``polynomials``
``he_poly``            :math:`\\mathrm{He}_k` as an exact SymPy polynomial                     ``polynomials``
``he_xi``              :math:`\\xi_{p,i}` with :math:`x^p=\\sum_i\\xi_{p,i}\\mathrm{He}_i`          ``polynomials``
``he_xi_row``          :math:`(\\xi_{p,0},\\dots,\\xi_{p,p})`                                   ``polynomials``
``he_xi_table``        rows ``p = 0..pmax``                                                  ``polynomials``
``he_from_monomial``   monomial → Hermite coefficients (exact)                               ``polynomials``
``he_to_monomial``     Hermite → monomial coefficients (exact)                               ``polynomials``
``he_expect``          :math:`\\mathbb E f(Z)`, exact where possible                          ``moments``
``he_coeffs``          :math:`c_0..c_K` with exact closed forms where found                  ``coefficients``
=====================  ====================================================================  ==================
"""

from .activation import Activation
from .coefficients import HermiteCoefficients, he_coeffs
from .expressions import breakpoints, check_expression, is_even, is_odd, pieces, x
from .moments import he_expect
from .parsing import NAMED, parse
from .polynomials import (he_eval, he_from_monomial, he_poly, he_to_monomial, he_values, he_xi, he_xi_row,
                          he_xi_table)
from .quadrature import gauss_hermite, gauss_legendre, normal_rule

__all__ = ["Activation", "HermiteCoefficients", "he_coeffs", "breakpoints", "check_expression", "is_even", "is_odd",
           "pieces", "x", "he_expect", "NAMED", "parse", "he_eval", "he_from_monomial", "he_poly", "he_to_monomial",
           "he_values", "he_xi", "he_xi_row", "he_xi_table", "gauss_hermite", "gauss_legendre", "normal_rule"]
