"""The piecewise-polynomial recursion of hermite.moments (docs/theory/hermite.md §2.2; issue 23: `hermite relu
--kmax 200 --dps 300` took minutes in the per-coefficient exact engine) against exact identities and that engine."""

import math

import pytest
import sympy as sp

from onestep_theory.hermite import Activation, he_coeffs
from onestep_theory.hermite.moments import RECURSION, _exact_weighted, _poly_table, moment_exact
from onestep_theory.hermite.parsing import parse
from onestep_theory.hermite.polynomials import he_poly


def he_at_zero(j):
    """He_j(0) = (-1)^(j/2) (j-1)!! for even j, 0 for odd j (exact)."""
    return 0 if j % 2 else (-1) ** (j // 2) * sp.factorial2(j - 1)


def test_relu_coefficients_are_the_closed_form_to_k_200():
    """E[relu He_k] = int_0^oo x He_k phi = He_k(0) phi(0) + k He_{k-2}(0) phi(0) = He_{k-2}(0) phi(0), k >= 2."""
    act = Activation.from_any("relu")
    phi0 = 1 / sp.sqrt(2 * sp.pi)
    assert act.coeff_exact(0) == phi0 and act.coeff_exact(1) == sp.Rational(1, 2)
    for k in range(2, 201):
        assert sp.simplify(act.coeff_exact(k) - he_at_zero(k - 2) * phi0 / sp.factorial(k)) == 0, k


@pytest.mark.parametrize("expr", ["relu_centered", "sign", "Abs(x - 1/3)", "Max(x, 0)**2",
                                  "Max(x - 1/2, 0)*x + Heaviside(x + 1)", "x**3 - x"])
def test_recursion_equals_the_exact_engine(expr):
    f = parse(expr)
    table = _poly_table(f, 10)
    assert table is not None
    for k in range(11):
        assert sp.simplify(table[k] - _exact_weighted(f, he_poly(k))) == 0, (expr, k)


def test_recursion_is_used_only_where_it_applies():
    assert _poly_table(parse("tanh"), 4) is None and _poly_table(parse("Max(x - sqrt(2), 0)"), 4) is None
    assert moment_exact(parse("relu"), 7)[1] in (RECURSION, "exact (parity)")
    assert moment_exact(parse("relu"), 8)[1] == RECURSION


def test_high_order_coefficients_at_300_digits():
    """The user's path (he_coeffs at 300 digits): c_200 of relu against the closed form evaluated independently."""
    import mpmath

    res = he_coeffs("relu", 200, 300)
    with mpmath.workdps(320):
        ref = mpmath.mpf(int(he_at_zero(198))) / mpmath.factorial(200) / mpmath.sqrt(2 * mpmath.pi)
        text, err, _ = res.printed("values", 200)        # the printed digits and their printed error
        assert abs(mpmath.mpf(text) - ref) <= mpmath.mpf(err)
        assert abs(res.values[200] - ref) <= abs(ref) * mpmath.mpf(10) ** -300
    assert math.isfinite(float(res.values[199]))
