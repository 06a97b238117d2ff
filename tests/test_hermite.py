"""Hermite layer: exact identities, xi table, closed forms, reference constants, errors."""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from onestep_theory import (Activation, ExpressionError, HypothesisError, InvalidParameterError, he_coeffs, he_eval,
                            he_expect, he_from_monomial, he_poly, he_to_monomial, he_xi_row, he_xi_table)
from onestep_theory.hermite.expressions import x
from onestep_theory.hermite.gauss import expect_exact, trunc_moments

from .conftest import agree

PRECISIONS = (15, 30, 50)


# ---------------------------------------------------------------- polynomials
def test_he_small_table():
    # hermite.md §1.1
    assert he_poly(2) == x**2 - 1
    assert he_poly(3) == x**3 - 3 * x
    assert he_poly(4) == x**4 - 6 * x**2 + 3
    assert he_poly(5) == x**5 - 10 * x**3 + 15 * x
    assert he_poly(6) == x**6 - 15 * x**4 + 45 * x**2 - 15


@pytest.mark.parametrize("n", range(0, 15))
def test_he_parity_derivative_recurrence(n):
    p = he_poly(n)
    assert sp.expand(p.subs(x, -x) - (-1) ** n * p) == 0                 # He_n(-x) = (-1)^n He_n(x)
    if n >= 1:
        assert sp.expand(sp.diff(p, x) - n * he_poly(n - 1)) == 0         # He_n' = n He_{n-1}
        assert sp.expand(he_poly(n + 1) - (x * p - n * he_poly(n - 1))) == 0
    assert p == sp.expand(sp.hermite_prob(n, x))                          # SymPy's own He_n
    # He_n(0)
    want = 0 if n % 2 else (-1) ** (n // 2) * sp.factorial2(n - 1)
    assert p.subs(x, 0) == want


@pytest.mark.parametrize("j", range(0, 7))
@pytest.mark.parametrize("k", range(0, 7))
def test_orthogonality_exact(j, k):
    v = expect_exact(sp.expand(he_poly(j) * he_poly(k)))
    assert v == (math.factorial(k) if j == k else 0)


def test_he_eval_matches_poly_and_scipy():
    from scipy.special import eval_hermitenorm

    t = np.linspace(-4, 4, 17)
    for k in range(12):
        np.testing.assert_allclose(he_eval(k, t), eval_hermitenorm(k, t), rtol=1e-12, atol=1e-12)
    with mpmath.workdps(40):
        t0 = mpmath.mpf("0.3")
        assert agree(he_eval(9, t0), sp.N(he_poly(9).subs(x, sp.Rational(3, 10)), 50), 35)


# ---------------------------------------------------------------- xi
def test_xi_table_spec():
    # hermite.md §3 table
    assert he_xi_table(6) == [(1,), (0, 1), (1, 0, 1), (0, 3, 0, 1), (3, 0, 6, 0, 1), (0, 15, 0, 10, 0, 1),
                              (15, 0, 45, 0, 15, 0, 1)]


@pytest.mark.parametrize("p", [0, 1, 2, 5, 12, 33, 40])
def test_xi_identities(p):
    row = he_xi_row(p)
    assert row[p] == 1
    if p >= 2:
        assert row[p - 2] == math.comb(p, 2)
    assert row[0] == (0 if p % 2 else sp.factorial2(p - 1))                   # E Z^p
    assert sum(math.factorial(i) * v**2 for i, v in enumerate(row)) == sp.factorial2(2 * p - 1)  # E Z^{2p}
    assert all(isinstance(v, int) for v in row)


@pytest.mark.parametrize("p", [3, 10, 25, 40])
def test_monomial_round_trip(p):
    # x^p = sum_i xi_{p,i} He_i exactly, and back
    h = he_from_monomial([0] * p + [1])
    assert sp.expand(sum(c * he_poly(i) for i, c in enumerate(h)) - x**p) == 0
    assert he_to_monomial(h) == [0] * p + [1]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.fractions(min_value=-5, max_value=5, max_denominator=50), min_size=1, max_size=12))
def test_change_of_basis_inverse(coeffs):
    h = he_from_monomial(coeffs)
    assert he_to_monomial(h) == [sp.Rational(c.numerator, c.denominator) for c in coeffs]


def test_xi_table_exactness_beyond_float():
    table = he_xi_table(40)
    # numpy's poly2herme loses exactness above 2**53 (hermite.md §3); we stay exact
    assert table[40][0] == sp.factorial2(39) and table[40][0] > 2**53


# ---------------------------------------------------------------- Gaussian integrals
def test_trunc_moments_full_and_half_line():
    assert trunc_moments(6, -sp.oo, sp.oo) == [1, 0, 1, 0, 3, 0, 15]
    half = trunc_moments(3, 0, sp.oo)
    assert half[0] == sp.Rational(1, 2) and sp.simplify(half[2] - sp.Rational(1, 2)) == 0


def test_breakpoint_matters_exact():
    # hermite.md §5.4: E ReLU(Z - 0.3) -- exact engine splits at the kink 3/10
    v = he_expect("Max(x - 3/10, 0)", 30)
    with mpmath.workdps(45):
        ref = mpmath.quad(lambda z: (z - mpmath.mpf(3) / 10) * mpmath.npdf(z), [mpmath.mpf(3) / 10, mpmath.inf])
        assert agree(v, ref, 30)


# ---------------------------------------------------------------- closed forms (hermite.md §4)
def _c(name, k, center=False):
    return Activation.from_any(name, center=center).coeff(k)


def test_he_m_coefficients_are_deltas():
    for m in range(1, 8):
        act = Activation.from_any(f"He{m}" if m < 10 else he_poly(m))
        assert [act.coeff(k) for k in range(9)] == [1 if k == m else 0 for k in range(9)]
        assert act.second_moment() == math.factorial(m)
        assert act.c_gt1() == (0 if m == 1 else sp.sqrt(math.factorial(m)))


def test_relu_closed_forms():
    s2pi = sp.sqrt(2 * sp.pi)
    assert sp.simplify(_c("relu", 0) - 1 / s2pi) == 0
    assert _c("relu", 1) == sp.Rational(1, 2)
    assert sp.simplify(_c("relu", 2) - 1 / (2 * s2pi)) == 0
    assert _c("relu", 3) == 0
    assert sp.simplify(_c("relu", 4) + 1 / (24 * s2pi)) == 0
    assert sp.simplify(_c("relu", 6) - 1 / (240 * s2pi)) == 0
    for k in range(2, 10):  # c_k = He_{k-2}(0) / (sqrt(2 pi) k!)
        assert sp.simplify(_c("relu", k) - he_poly(k - 2).subs(x, 0) / (s2pi * sp.factorial(k))) == 0
    relu = Activation.from_any("relu")
    assert relu.second_moment() == sp.Rational(1, 2)
    assert sp.simplify(relu.c_gt1() - sp.sqrt(sp.Rational(1, 4) - 1 / (2 * sp.pi))) == 0
    rc = Activation.from_any("relu_centered")
    assert rc.coeff(0) == 0
    assert sp.simplify(rc.second_moment() - (sp.Rational(1, 2) - 1 / (2 * sp.pi))) == 0


def test_sign_erf_sin_closed_forms():
    for k in range(0, 10):
        if k % 2:
            want_sign = sp.sqrt(2 / sp.pi) * he_poly(k - 1).subs(x, 0) / sp.factorial(k)
            want_erf = (sp.Rational(-1, 2)) ** ((k - 1) // 2) * sp.factorial2(k - 2) / (sp.sqrt(sp.pi) * sp.factorial(k))
            want_sin = (-1) ** ((k - 1) // 2) * sp.exp(sp.Rational(-1, 2)) / sp.factorial(k)
        else:
            want_sign = want_erf = want_sin = 0
        assert sp.simplify(_c("sign", k) - want_sign) == 0, k
        assert sp.simplify(_c("erf", k) - want_erf) == 0, k
        assert sp.simplify(_c("sin", k) - want_sin) == 0, k
    assert Activation.from_any("erf").second_moment() == sp.Rational(1, 3)
    assert sp.simplify(Activation.from_any("sin").second_moment() - (1 - sp.exp(-2)) / 2) == 0
    assert sp.simplify(Activation.from_any("sign").c_gt1() - sp.sqrt(1 - 2 / sp.pi)) == 0


def test_exact_zero_detection_for_odd_functions():
    for name in ("tanh", "erf", "sign", "sin", "sigmoid_centered"):
        act = Activation.from_any(name)
        assert all(act.is_zero_coeff(k) for k in (0, 2, 4, 6)), name
    assert not Activation.from_any("relu_centered").is_zero_coeff(2)
    assert not Activation.from_any("tanh").is_zero_coeff(1)


def test_softplus_exact_identities():
    # hermite.md §4: c_1 = 1/2 and c_3 = 0 exactly; c_2 = c_1(sigmoid)/2
    sp_act = Activation.from_any("softplus")
    assert sp_act.coeff(1) == sp.Rational(1, 2)
    assert sp_act.coeff(3) == 0
    with mpmath.workdps(50):
        assert agree(sp_act.coeff(2, 40), Activation.from_any("sigmoid").coeff(1, 40) / 2, 38)


@pytest.mark.parametrize("dps", PRECISIONS)
def test_smooth_sigmoid_identities(dps):
    tanh = Activation.from_any("tanh")
    sig = Activation.from_any("sigmoid", center=True)
    with mpmath.workdps(dps + 10):
        assert agree(tanh.second_moment(dps), 1 - tanh.coeff(1, dps), dps)               # E tanh^2 = 1 - c_1
        assert agree(sig.second_moment(dps), mpmath.mpf(1) / 4 - sig.coeff(1, dps), dps)  # E (s-1/2)^2 = 1/4 - c_1


# ---------------------------------------------------------------- reference constants at 15/30/50 digits
REF_NAMES = ["tanh", "sigmoid", "softplus", "relu", "sign", "erf", "sin"]


@pytest.mark.parametrize("dps", PRECISIONS)
@pytest.mark.parametrize("name", REF_NAMES)
def test_against_precomputed_reference(name, dps, hermite_ref):
    ref = hermite_ref[name]
    res = he_coeffs(name, 6, dps)
    for k in range(7):
        assert agree(res.values[k], ref["c"][k], dps), (name, k)
    assert agree(res.second_moment["value"], ref["second_moment"], dps)
    # c_>1 of the *centred* function equals c_>1 of the raw one (c_0 is subtracted)
    assert agree(res.c_gt1["value"], ref["c_gt1"], dps - 1)


SPEC_TABLE = {  # hermite.md §6: c1, c2, c3, E sigma^2 (centred), c_>1 (16 digits)
    "tanh": ("0.6057055096021588", "0", "-0.06059922938016236", "0.3942944903978412", "0.1655757410837417"),
    "relu_centered": ("0.5", "0.1994711402007163", "0", "0.3408450569081047", "0.3014051374945435"),
    "softplus": ("0.5", "0.1033104820709535", "0", "0.2715145018005587", "0.1466782253797704"),
    "sigmoid": ("0.2066209641419070", "0", "-0.01039941399320987", "0.04337903585809296", "0.02620711802472239"),
    "erf": ("0.5641895835477563", "0", "-0.04701579862897969", "0.3333333333333333", "0.1225701723485068"),
    "sin": ("0.6065306597126334", "0", "-0.1010884432854389", "0.4323323583816937", "0.2538757909101443"),
}


@pytest.mark.parametrize("name", list(SPEC_TABLE))
def test_spec_reference_table(name):
    act = Activation.from_any(name, center=True)
    c1, c2, c3, m2, cg = SPEC_TABLE[name]
    for got, want in ((act.coeff(1, 20), c1), (act.coeff(2, 20), c2), (act.coeff(3, 20), c3),
                      (act.second_moment(20), m2), (act.c_gt1(20), cg)):
        assert agree(got, want, 14), (name, got, want)
    assert agree(Activation.from_any("softplus").coeff(0, 20), "0.8060591833474398", 14)


def test_further_spec_checks():
    assert agree(Activation.from_any("tanh").coeff(5, 20), "0.005709781612574324", 15)
    assert agree(Activation.from_any("relu_centered").coeff(4, 20), "-0.01662259501672636", 15)
    assert agree(Activation.from_any("softplus").coeff(4, 20), "-0.002599853498302466", 15)
    assert agree(Activation.from_any("sign").c_gt1(20), "0.6028102749890870", 15)


@pytest.mark.parametrize("name", ["tanh", "erf", pytest.param("sin", marks=pytest.mark.slow), "sigmoid_centered"])
def test_parseval_smooth(name):      # sin: 10 s (its 40 coefficients at 25 digits), in the slow stage
    # hermite.md §2.1: sum_{k<=K} k! c_k^2 increases to E sigma^2.  The gap is >= 0 (up to the
    # working precision), decreases in K, and for these analytic functions falls by more than
    # 10^4 between K = 10 and K = 40 (tanh, with poles at +-i pi/2, is the slowest: 1.8e-4 -> 1.1e-8).
    dps = 25
    res = he_coeffs(name, 40, dps)
    with mpmath.workdps(dps + 10):
        m2 = mpmath.mpf(res.second_moment["value"])
        gaps = [m2 - mpmath.fsum(math.factorial(k) * res.values[k] ** 2 for k in range(K + 1)) for K in (10, 20, 40)]
        assert all(g > -mpmath.mpf(10) ** -dps for g in gaps)
        assert gaps[0] > gaps[1] >= gaps[2] - mpmath.mpf(10) ** -dps
        assert gaps[2] < 1e-4 * gaps[0]


def test_parseval_polynomial_exact():
    act = Activation.from_any("x + (x**2-1)/sqrt(2) + He5/7")
    cs = [act.coeff(k) for k in range(7)]
    assert sp.simplify(sum(math.factorial(k) * c**2 for k, c in enumerate(cs)) - act.second_moment()) == 0


def test_cross_check_gauss_legendre_nonsmooth():
    # tanh-sinh result against mpmath gauss-legendre on a kinked function with a shifted kink
    act = Activation.from_any("Abs(x - 1/3) * tanh(x)")
    v = act.coeff(2, 30)
    with mpmath.workdps(45):
        third = mpmath.mpf(1) / 3
        f = lambda z: abs(z - third) * mpmath.tanh(z) * (z * z - 1) * mpmath.npdf(z) / 2  # noqa: E731
        ref = mpmath.quad(f, [-mpmath.inf, -5, 0, third, 5, mpmath.inf], method="gauss-legendre")
    assert agree(v, ref, 28)


def test_second_call_is_a_cache_hit():
    # a cache hit returns the very object computed by the first call (a recomputation would build a new tuple
    # of new mpf objects, equal in value but not identical)
    a = Activation.from_any("tanh")
    first = a.coeffs_mp(3, 21)
    assert Activation.from_any("tanh").coeffs_mp(3, 21) is first
    assert a.coeffs_mp(3, 21) is first
    # different keys are not confused: another precision, another expression
    assert a.coeffs_mp(3, 22) is not first
    other = Activation.from_any("tanh(2*x)")
    assert other.coeffs_mp(3, 21) is not first
    assert abs(other.coeff(1, 20) - a.coeff(1, 20)) > 0.1


def test_caching_keyed_on_expression_not_name():
    # the Activation docstring: the cache key is the expression itself, never a name
    a = Activation.from_any("tanh")
    b = Activation.from_any("tanh(x)")
    assert a.expr == b.expr and a.label != b.label
    first = a.coeffs_mp(3, 23)
    assert b.coeffs_mp(3, 23) is first          # same expression, other spelling: a cache hit
    assert b.second_moment(23) == a.second_moment(23)


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize("bad", ["exp(x**2)", "exp(x**2/4)", "__import__('os')", "x.real", "y + x", "sqrt(x)",
                                 "1/x", "tanh(", "log(x)", "'a'", "lambda: 1", "open('f')"])
def test_bad_expressions(bad):
    with pytest.raises(ExpressionError):
        Activation.from_any(bad)


def test_bad_numeric_parameters():
    with pytest.raises(InvalidParameterError, match="kmax"):
        he_coeffs("tanh", -1)
    with pytest.raises(InvalidParameterError, match="dps"):
        he_coeffs("tanh", 3, 0)


def test_derivative_of_jump_is_not_square_integrable():
    with pytest.raises(HypothesisError):
        Activation.from_any("sign").deriv_second_moment()
    assert Activation.from_any("relu").deriv_second_moment() == sp.Rational(1, 2)


def test_exact_inputs_accepted():
    from onestep_theory.core.exact import to_exact

    assert to_exact("1/3") == sp.Rational(1, 3)
    assert to_exact(Fraction(2, 7)) == sp.Rational(2, 7)
    assert to_exact("sqrt(2)/2") == sp.sqrt(2) / 2
    with pytest.warns(UserWarning):
        assert to_exact(0.1) == sp.Rational(1, 10)
    with pytest.raises(InvalidParameterError):
        to_exact("x + 1")


def test_float64_callable_centered():
    act = Activation.from_any("relu", center=True)
    f = act.numpy()
    z = np.random.default_rng(0).standard_normal(200_000)
    assert abs(f(z).mean()) < 5 * f(z).std() / np.sqrt(z.size)
    np.testing.assert_allclose(f(np.array([2.0])), 2.0 - 1 / np.sqrt(2 * np.pi))
