"""The less-travelled paths of the bottom layers, ``onestep_theory.core`` and ``onestep_theory.hermite``.

Every value is checked against an independent reference: an exact identity (orthogonality, the xi
table, Stein), a closed form, or mpmath at a higher precision (``mpmath.quad``, ``mpmath.hermite``,
``mpmath.besseli``...).  Every error branch is checked for the exception type *and* the parameter
named in the message.  Precision-sensitive tests loop over dps in (15, 30, 50), as mpmath's tests do.

Known bugs found while writing this file are marked ``xfail(strict=True)`` with a reproducer
(section "known bugs" at the end).
"""

import dataclasses
import fractions
import json
import math
import warnings

import flint
import mpmath
import numpy as np
import pytest
import sympy as sp

from onestep_theory.core import errors
from onestep_theory.core.errors import ExpressionError, HypothesisError, InvalidParameterError, QuadratureError
from onestep_theory.core.exact import (InexactInputWarning, check_dps, check_positive, check_range,
                                       check_real, float_in, nstr, to_exact, to_float, to_mpf)
from onestep_theory.core.precision import GUARD_DIGITS, arb_to_mpf, mpf_to_arb, precision, with_dps, workdps
from onestep_theory.core.results import Result, VouchedResult, digits_of, provenance, serialize, vouch, vouched
from onestep_theory.core.syntax import (MAX_EXPR_CHARS, MAX_EXPR_NODES, MAX_LITERAL_DIGITS, parse_constant,
                                        parse_text)
from onestep_theory.hermite import gauss, moments
from onestep_theory.hermite.activation import Activation
from onestep_theory.hermite.coefficients import HermiteCoefficients, he_coeffs
from onestep_theory.hermite.evaluate import arb_callable, arb_callable_n, as_arb
from onestep_theory.hermite.expressions import check_expression, is_even, is_odd, pieces, x
from onestep_theory.hermite.gauss import (NotExact, expect_exact, expect_numeric, expect_numeric_many,
                                          expect_piece_exact, tanh_sinh_vec, tidy, trunc_moments,
                                          trunc_moments_arb, trunc_moments_float)
from onestep_theory.hermite.moments import he_expect, numeric_bundle
from onestep_theory.hermite.parsing import parse
from onestep_theory.hermite.polynomials import (he_eval, he_from_monomial, he_poly, he_to_monomial, he_values, he_xi,
                                                he_xi_table)
from onestep_theory.hermite.quadrature import MAX_NODES, gauss_hermite, gauss_legendre, normal_rule

from .conftest import agree

PRECISIONS = (15, 30, 50)


def raises_naming(exc_type, param):
    """``pytest.raises`` that also requires the message to start with ``param=`` (the parameter is named)."""
    return pytest.raises(exc_type, match=rf"^{param}=")


def npdf(t):
    return mpmath.exp(-t * t / 2) / mpmath.sqrt(2 * mpmath.pi)


def gauss_quad(f, points=(-mpmath.inf, 0, mpmath.inf)):
    """Independent reference: E f(Z) by mpmath's own quad (at the caller's precision)."""
    return mpmath.quad(lambda t: f(t) * npdf(t), list(points))


# =====================================================================================================
# core/exact.py
# =====================================================================================================
@pytest.mark.parametrize("bad", [True, False, [1], None, object(), 1 + 2j],
                         ids=["True", "False", "list", "None", "object", "complex"])
def test_to_exact_refuses_non_numbers(bad):
    with raises_naming(InvalidParameterError, "width") as info:
        to_exact(bad, "width")
    assert info.value.param == "width"
    assert "real number" in info.value.allowed


@pytest.mark.parametrize("dps", PRECISIONS)
def test_to_exact_of_mpf_is_its_exact_binary_value(dps):
    with mpmath.workdps(dps):
        v = mpmath.mpf(1) / 3
        prec = mpmath.mp.prec
        r = to_exact(v)
        # independent: a dyadic rational has a terminating decimal expansion; print it in full
        decimal = mpmath.nstr(v, prec + 10, strip_zeros=True)   # 2^-k needs k decimal digits
    assert r == sp.Rational(decimal)
    assert r.q & (r.q - 1) == 0                                  # denominator is a power of two
    assert 0 < abs(r - sp.Rational(1, 3)) < sp.Rational(1, 2 ** prec)


def test_to_exact_infinities():
    for v in (mpmath.inf, float("inf"), "inf", "Infinity", np.float64("inf")):
        assert to_exact(v, allow_infinite=True) == sp.oo
        with raises_naming(InvalidParameterError, "L") as info:
            to_exact(v, "L")
        assert "finite" in info.value.allowed
    for v in (-mpmath.inf, float("-inf"), "-inf", "-Infinity", "-oo"):
        assert to_exact(v, allow_infinite=True) == -sp.oo


@pytest.mark.parametrize("bad", [float("nan"), sp.nan, sp.zoo, sp.Symbol("y"), sp.I, "sqrt(-1)", "1/0", "0/0",
                                 "log(-1)"], ids=str)
def test_to_exact_refuses_undefined_or_complex(bad):
    with raises_naming(InvalidParameterError, "lam"):
        to_exact(bad, "lam")


def test_to_exact_sympy_float_and_numpy_scalars():
    assert to_exact(sp.Float("0.25")) == sp.Rational(1, 4)
    assert to_exact(sp.Float("0.1", 30)) == sp.Rational(1, 10)
    with pytest.warns(InexactInputWarning, match="ratio"):
        assert to_exact(np.float32(0.5), "ratio") == sp.Rational(1, 2)     # numbers.Real, not a float
    with pytest.warns(InexactInputWarning):
        assert to_exact(np.float64(0.1)) == sp.Rational(1, 10)            # shortest repr, not 0.1000000000000000055
    assert to_exact(fractions.Fraction(-3, 4)) == sp.Rational(-3, 4)


def test_to_float_and_float_in():
    assert to_float("1/3") == 1 / 3
    assert to_float(sp.Rational(2, 3)) == 2 / 3
    assert to_float("-inf") == -math.inf
    with mpmath.workdps(30):
        assert to_float(mpmath.mpf(1) / 7) == 1 / 7
    for bad in (True, float("nan"), np.float64("nan")):
        with raises_naming(InvalidParameterError, "tol"):
            to_float(bad, "tol")
    assert float_in("1/4", "c") == 0.25
    assert float_in(0, "c", strict=False) == 0.0
    for bad, kw in ((0, {}), (-1e-300, {}), ("-1/3", {"strict": False}), ("inf", {}), (2, {"lo": 2.0})):
        with raises_naming(InvalidParameterError, "c") as info:
            float_in(bad, "c", **kw)
        assert ">" in info.value.allowed


@pytest.mark.parametrize("dps", PRECISIONS)
def test_to_mpf_every_input_type(dps):
    with mpmath.workdps(dps):
        third = mpmath.mpf(1) / 3
        assert to_mpf(fractions.Fraction(1, 3)) == third
        assert to_mpf(7) == 7
        assert to_mpf(sp.sqrt(2)) == mpmath.sqrt(2)
        assert to_mpf(sp.oo) == mpmath.inf
        assert to_mpf(-sp.oo) == -mpmath.inf
        with pytest.warns(InexactInputWarning):
            assert to_mpf(0.1) == mpmath.mpf(1) / 10           # via the Rational 1/10, not the binary 0.1
    with mpmath.workdps(dps + 40):
        fine = mpmath.mpf(1) / 3
    with mpmath.workdps(dps):
        got = to_mpf(fine)                                    # rounded to the working precision
        assert got == mpmath.mpf(1) / 3 and got.man_exp != fine.man_exp


def test_to_mpf_refuses_complex():
    with mpmath.workdps(20):
        with raises_naming(InvalidParameterError, "value"):
            to_mpf(1 + sp.I)
        with raises_naming(InvalidParameterError, "value"):
            to_mpf(sp.sqrt(2) + sp.I / 10 ** 5)


@pytest.mark.parametrize("dps", PRECISIONS)
def test_nstr(dps):
    assert nstr(12345, dps) == "12345"
    assert nstr(sp.Integer(0), dps) == "0"
    assert nstr(0.0, dps) == "0"
    assert nstr(mpmath.mpf(0), dps) == "0"
    assert nstr(sp.Rational(1, 3), dps) == "0." + "3" * dps
    assert nstr(sp.Rational(-2, 3), dps) == "-0." + "6" * (dps - 1) + "7"
    with mpmath.workdps(dps + 5):
        seventh = mpmath.mpf(1) / 7
    # independent: the first dps digits of 1/7, rounded, in integer arithmetic
    assert nstr(seventh, dps) == "0." + str((2 * 10 ** dps + 7) // 14)
    assert nstr(0.1, 17) == repr(0.1)
    assert nstr(2 / 3, 3) == "0.667"


def test_check_dps():
    assert check_dps(None, 300) is None
    assert check_dps(np.int64(12), 300) == 12 and type(check_dps(np.int64(12), 300)) is int
    for bad in (True, 2.0, "15", 0, 301, -3):
        with raises_naming(InvalidParameterError, "digits") as info:
            check_dps(bad, 300, "digits")
        assert info.value.allowed == "an integer in [1, 300]"
    with raises_naming(InvalidParameterError, "dps"):
        check_dps(None, 300, optional=False)


def test_check_positive_and_range():
    assert check_positive("1/3", "eta") == sp.Rational(1, 3)
    assert check_positive(0, "eta", strict=False) == 0
    with raises_naming(InvalidParameterError, "eta") as info:
        check_positive(0, "eta")
    assert info.value.allowed == "a real number > 0"
    with raises_naming(InvalidParameterError, "eta") as info:
        check_positive("-1/10**9", "eta", strict=False)
    assert info.value.allowed == "a real number >= 0"

    assert check_range("1/2", "r", lo=0) == sp.Rational(1, 2)             # only a lower bound
    assert check_range("inf", "r", lo=0, allow_infinite=True) == sp.oo
    assert check_range(1, "r", lo=0, hi=1, hi_open=False) == 1
    with raises_naming(InvalidParameterError, "r") as info:
        check_range(0, "r", lo=0)
    assert info.value.allowed == "a real number in (0, inf)"
    with raises_naming(InvalidParameterError, "r") as info:
        check_range(5, "r", hi=1, lo_open=False, hi_open=False)
    assert info.value.allowed == "a real number in [-inf, 1]"


def test_check_real():
    assert check_real(np.float64(0.5), "beta", 0, 1) == 0.5
    m = mpmath.mpf("0.25")
    assert check_real(m, "beta", 0, 1) is m                               # mpf kept as given
    assert check_real("1/3", "beta", None, None) == sp.Rational(1, 3)
    for bad in (1.5, -0.1, float("nan"), float("inf"), "2"):
        with raises_naming(InvalidParameterError, "beta") as info:
            check_real(bad, "beta", 0, 1)
        assert info.value.allowed == "a real number in [0, 1]"
    assert check_real(-1, "beta", None, 0.5) == -1                      # no lower bound
    with raises_naming(InvalidParameterError, "beta") as info:
        check_real(3, "beta", None, 2)
    assert info.value.allowed == "a real number in [-inf, 2]"


# =====================================================================================================
# core/precision.py
# =====================================================================================================
def test_with_dps_sets_and_restores_both_libraries():
    @with_dps
    def probe(dps=None):
        return mpmath.mp.dps, flint.ctx.dps

    base = (mpmath.mp.dps, flint.ctx.dps)
    for d in PRECISIONS:
        assert probe(dps=d) == (d + GUARD_DIGITS, d + GUARD_DIGITS)
        assert (mpmath.mp.dps, flint.ctx.dps) == base
    assert probe() == base and probe(dps=None) == base

    @with_dps
    def boom(dps=None):
        raise RuntimeError("inside")

    with pytest.raises(RuntimeError):
        boom(dps=40)
    assert (mpmath.mp.dps, flint.ctx.dps) == base


@pytest.mark.parametrize("dps", PRECISIONS)
def test_arb_mpf_round_trip_is_exact(dps):
    with workdps(dps):
        for v in (mpmath.mpf(1) / 3, +mpmath.pi, mpmath.mpf(2) ** -200, mpmath.mpf(3)):   # negative: see the bugs
            a = mpf_to_arb(v)
            assert a.rad() == 0                                     # exact ball
            assert arb_to_mpf(a) == v
        assert mpf_to_arb(0) == 0 and mpf_to_arb(mpmath.mpf(0)).is_exact()
        assert mpf_to_arb(2.5) == flint.arb(5) / 2
        assert arb_to_mpf(flint.arb(-5) / 4) == mpmath.mpf(-1.25)
        ball = flint.arb(1) / 3
        assert mpf_to_arb(ball) is ball
        # in the same context the midpoint of an Arb result converts exactly: 1/3 rounded like mpmath rounds it
        assert arb_to_mpf(ball) == mpmath.mpf(1) / 3


def test_precision_is_workdps_plus_guard_digits():
    with precision(20):
        assert (mpmath.mp.dps, flint.ctx.dps) == (20 + GUARD_DIGITS, 20 + GUARD_DIGITS)
    with pytest.raises(ValueError):
        with workdps(25):
            raise ValueError
    assert mpmath.mp.dps == 15


# =====================================================================================================
# core/results.py
# =====================================================================================================
@dataclasses.dataclass
class _Res(Result):
    value: object
    dps: int
    _scratch: object = None


@dataclasses.dataclass
class _NoDps(Result):
    value: object


@dataclasses.dataclass
class _Vouched(VouchedResult):
    value: object
    pair: list
    other: object
    errors: dict
    ERROR_KEYS = {"other": "o"}


def test_provenance_blocks():
    from onestep_theory import __version__

    assert provenance() == {"package": "onestep_theory", "version": __version__}
    p = provenance(dps=30, method="m", references=("a", "b"), extra=1)
    assert p == {"package": "onestep_theory", "version": __version__, "dps": 30, "method": "m",
                 "references": ["a", "b"], "extra": 1}
    assert provenance(method="m") == {"package": "onestep_theory", "version": __version__, "method": "m"}


def test_serialize_every_type():
    y = sp.Symbol("y")
    with mpmath.workdps(30):
        third = mpmath.mpf(1) / 3
        z = mpmath.mpc(1, -2) / 3
    out = serialize({1: np.array([1.5, 2.0]), "b": (np.int64(3), True, None, "s"), "inf": np.float64("inf"),
                     "mp": third, "mpc": z, "sym": y + 1, "num": sp.sqrt(2), "obj": fractions.Fraction(1, 3)}, 10)
    assert out == {"1": [1.5, 2.0], "b": [3, True, None, "s"], "inf": "inf", "mp": "0.3333333333",
                   "mpc": {"re": "0.3333333333", "im": "-0.6666666667"}, "sym": "y + 1", "num": "1.414213562",
                   "obj": "1/3"}
    json.dumps(out)
    r = _Res(value=sp.Rational(1, 7), dps=12, _scratch=object())
    assert serialize([r], 5) == [{"value": "0.142857142857", "dps": 12}]      # the Result's own dps wins


def test_result_to_dict_and_json():
    r = _Res(value=sp.pi, dps=20, _scratch="hidden")
    d = r.to_dict()
    assert d == {"value": "3.1415926535897932385", "dps": 20}          # pi = 3.14159265358979323846...
    assert json.loads(r.to_json(sort_keys=True)) == d
    # no dps field: 17 digits
    assert _NoDps(value=sp.Rational(1, 3)).to_dict() == {"value": "0." + "3" * 17}


def test_digits_of_and_vouched():
    assert digits_of(1.0, 0.0) == 17                       # exact: all of float64
    assert digits_of(0.0, 1e-3) == 0
    assert digits_of(1.0, float("inf")) == 0
    assert digits_of(123.456, 1e-4) == 6                   # floor(-log10(1e-4/123.456)) = 6
    assert digits_of(1.0, 10.0) == 0
    assert vouch(0.0, 1.0) == ("0", "1.00e+00")
    assert vouch(4.321e-18, 1e-16) == ("4e-18", "1.01e-16")   # error larger than the value: one digit
    # to the error's decimal place (1e-6) and one guard digit (1e-7); the rounding 3.3e-8 is added
    assert vouch(2 / 3, fractions.Fraction(1, 10**6)) == ("0.6666667", "1.04e-06")
    # the float 1e-6 is 9.99...95e-7: its leading digit is in the 1e-7 place (exact, not through float log10)
    assert vouch(2 / 3, 1e-6) == ("0.66666667", "1.01e-06")
    with mpmath.workdps(40):
        v = mpmath.mpf(2) / 3
        assert vouch(v, fractions.Fraction(1, 10**30)) == ("0." + "6" * 30 + "7", "1.04e-30")
        assert vouched(v, 0, cap=5) == "0.66667"               # exact value, 5 digits asked


def _exact(v):
    if isinstance(v, mpmath.mpf):
        sign, man, exp, _ = v._mpf_
        f = fractions.Fraction(int(man)) * fractions.Fraction(2) ** int(exp)
        return -f if sign else f
    return fractions.Fraction(v)


@pytest.mark.parametrize("dps", [15, 30, 50])
def test_vouch_contract_printed_interval_contains_every_value_within_the_error(dps):
    """The contract (docs/theory/numerics.md §1): printed value +/- printed error contains [value - err, value + err]
    and the printed error is at most 1.1 x (err + rounding) + one unit of its third digit; sampled over scales."""
    rng = np.random.default_rng(dps)
    with mpmath.workdps(dps + 10):
        for _ in range(300):
            v = mpmath.mpf(rng.standard_normal()) * mpmath.mpf(10) ** int(rng.integers(-12, 12)) / 3
            err = float(abs(v)) * 10.0 ** -float(rng.uniform(0, dps + 5)) if rng.random() > 0.1 else 0.0
            cap = int(rng.integers(1, dps + 1)) if rng.random() < 0.3 else None
            text, etext = vouch(v, err, cap)
            gap = abs(fractions.Fraction(text) - _exact(v))
            assert gap + fractions.Fraction(err) <= fractions.Fraction(etext), (v, err, cap, text, etext)
            assert fractions.Fraction(etext) <= (gap + fractions.Fraction(err)) * fractions.Fraction(101, 100) + \
                fractions.Fraction(etext) / 99
    for _ in range(300):                                       # float64 values
        v = float(rng.standard_normal() * 10.0 ** rng.integers(-8, 8))
        err = abs(v) * 10.0 ** -rng.uniform(0, 17)
        text, etext = vouch(v, err)
        assert abs(fractions.Fraction(text) - fractions.Fraction(v)) + fractions.Fraction(err) <= fractions.Fraction(etext)


def test_vouched_result():
    with mpmath.workdps(30):
        third = mpmath.mpf(1) / 3
        two_thirds = 2 * third
    res = _Vouched(value=third, pair=[third, two_thirds], other=third, errors={})
    d = res.to_dict()
    assert d["errors"] == {}                               # no error estimates: nothing vouched, nothing cut
    assert d["value"] == d["other"] == "0." + "3" * 17     # no dps field: 17 digits
    assert d["pair"] == ["0." + "3" * 17, "0." + "6" * 16 + "7"]
    res = _Vouched(value=third, pair=[third, two_thirds], other=third,
                   errors={"value": 1e-5, "pair": [1e-3, 1e-8], "o": 0.5})
    d = res.to_dict()
    assert d["value"] == "0.333333"                        # to 1e-5 and one guard digit
    assert d["pair"] == ["0.3333", "0.666666667"]
    assert d["other"] == "0.33"                            # error 0.5: to 1e-1 and one guard digit
    assert d["errors"] == {"value": "1.04e-05", "pair": ["1.04e-03", "1.04e-08"], "o": "5.04e-01"}


# =====================================================================================================
# core/syntax.py
# =====================================================================================================
SYNTAX_ERRORS = [
    ("x+" * (MAX_EXPR_CHARS // 2 + 1) + "x", "longer than"),
    ("Max(" + ",".join(["x"] * (MAX_EXPR_NODES // 2 + 10)) + ")", "syntax nodes"),
    ("1" * (MAX_LITERAL_DIGITS + 1) + "*x", "integer literal longer"),
    ("Max(x, 0, evaluate=1)", "keyword arguments"),
    ("tanh(" * 45 + "x" + ")" * 45, "nested deeper than 40"),
    ("2**(1 + x)", "exponent must be a constant"),               # a non-constant side
    ("x**(1/0)", "exponent must be a constant"),                 # division by zero in the exponent
    ("x**(10000000*0)", "exponent must be a constant"),          # literal beyond 1e6 in the exponent
    ("x**-(200)", "exponent -200 outside"),                      # unary minus is folded
    ("x**(-(3*50))", "exponent -150 outside"),
    ("(x+1)**2**3", "exponent towers"),
]


@pytest.mark.parametrize("text,reason", SYNTAX_ERRORS, ids=[r for _, r in SYNTAX_ERRORS])
def test_syntax_limits(text, reason):
    with raises_naming(ExpressionError, "teacher") as info:
        parse_text(text, "teacher", {"x": x})
    assert reason in info.value.reason


def test_syntax_accepts_unary_exponents():
    assert parse_text("x**-2 + x**+3 + x**(-(1/2))*0", "f", {"x": x}) == x ** -2 + x ** 3
    assert parse_text("2**(3*4) - 2**(-1)", "f") == 4096 - sp.Rational(1, 2)


def test_parse_text_sympy_errors_become_expression_errors():
    with raises_naming(ExpressionError, "student") as info:
        parse_text("sin(x, x)", "student", {"x": x})            # passes the whitelist, fails in SymPy
    assert "cannot parse" in info.value.reason
    with raises_naming(ExpressionError, "student") as info:
        parse_text("sin", "student", {"x": x})                   # a function, not a scalar
    assert "not a scalar expression" in info.value.reason


def test_parse_constant_infinities_and_undefined():
    for text in ("-inf", " -Infinity ", "-oo"):
        assert parse_constant(text) == -sp.oo
    for text in ("inf", "+inf", "Infinity", "oo"):
        assert parse_constant(text) == sp.oo
    for text in ("1/0", "0/0", "x"):
        with raises_naming(InvalidParameterError, "phi") as info:
            parse_constant(text, "phi")
        assert "a real number such as" in info.value.allowed
    assert parse_constant("sqrt(8)/2 + 0.5") == sp.sqrt(2) + sp.Rational(1, 2)


# =====================================================================================================
# hermite/evaluate.py
# =====================================================================================================
ARB_CASES = [
    (sp.pi * x, lambda t: mpmath.pi * t),
    (sp.E * x + sp.E ** 2, lambda t: mpmath.e * t + mpmath.exp(2)),
    (sp.Abs(x) ** sp.Rational(3, 2), lambda t: abs(t) ** mpmath.mpf(1.5)),
    (sp.Abs(x) ** sp.Rational(1, 3) + x ** -2, lambda t: mpmath.cbrt(abs(t)) + t ** -2),     # general power
    ((x ** 2 + 1) ** sp.pi, lambda t: (t * t + 1) ** mpmath.pi),
    (sp.Max(x, sp.Rational(1, 3), -x / 2), lambda t: max(t, mpmath.mpf(1) / 3, -t / 2)),
    (sp.Min(x, -sp.Rational(1, 3)) * sp.erfc(x), lambda t: min(t, -mpmath.mpf(1) / 3) * mpmath.erfc(t)),
    (sp.sign(x) * sp.atan(x) + sp.asinh(x) - sp.Abs(x - 1), lambda t: mpmath.sign(t) * mpmath.atan(t)
     + mpmath.asinh(t) - abs(t - 1)),
]


@pytest.mark.parametrize("dps", PRECISIONS)
@pytest.mark.parametrize("case", range(len(ARB_CASES)))
def test_arb_callable_matches_mpmath(case, dps):
    expr, ref = ARB_CASES[case]
    f = arb_callable(expr)
    for t in ("-2.5", "0.75", "3"):                       # exact binary points
        with workdps(dps):
            got = f(flint.arb(t))
            assert got.is_finite()
        with mpmath.workdps(dps + 20):
            want = ref(mpmath.mpf(t))
            assert agree(arb_to_mpf(got), want, dps - 2), (expr, t)


def test_arb_callable_refuses_what_it_cannot_evaluate():
    with raises_naming(ExpressionError, "expression") as info:
        arb_callable(x + sp.Symbol("y"))
    assert "unexpected symbol y" in info.value.reason
    with raises_naming(ExpressionError, "expression") as info:
        arb_callable(sp.gamma(x))
    assert "no Arb evaluation for gamma" in info.value.reason
    with raises_naming(ExpressionError, "expression"):
        arb_callable(sp.Piecewise((x, x > 0), (0, True)))


@pytest.mark.parametrize("dps", PRECISIONS)
def test_arb_callable_n_and_as_arb(dps):
    a, b = sp.symbols("a b")
    f = arb_callable_n(a * b ** 2 + sp.pi / a, (a, b))
    with workdps(dps):
        got = f(flint.arb(2), flint.arb(1) / 3)
        third_arb = as_arb("1/3")
        root2 = as_arb(sp.sqrt(2))
        from_mpf = as_arb(mpmath.mpf(1) / 8)
        from_float = as_arb(0.5)
        from_int = as_arb(7)
        ball = flint.arb(5)
        assert as_arb(ball) is ball
    with mpmath.workdps(dps + 20):
        assert agree(arb_to_mpf(got), 2 * (mpmath.mpf(1) / 9) + mpmath.pi / 2, dps - 2)
        assert agree(arb_to_mpf(third_arb), mpmath.mpf(1) / 3, dps - 2)
        assert agree(arb_to_mpf(root2), mpmath.sqrt(2), dps - 2)
    assert from_mpf == flint.arb(1) / 8 and from_float == flint.arb(1) / 2 and from_int == 7


# =====================================================================================================
# hermite/expressions.py and parsing.py
# =====================================================================================================
REJECTED = [
    (x + sp.Symbol("y"), "free symbols other than x"),
    (sp.Function("g")(x), "undefined function"),
    (sp.Function("g")(sp.Integer(1)) * x, "undefined function"),
    (sp.oo * x, "infinity"),
    (sp.I * x, "complex"),
    (sp.Abs(sp.sin(x)), "cannot locate the kinks"),
    (sp.Piecewise((x, x > 0)), "no branch applies"),
    (1 / (x - sp.Rational(1, 2)), "singular at x=1/2"),
    (sp.tan(x), "tan has poles"),
    (sp.erfinv(x / 2), "cannot evaluate at x=-5"),                # mpmath: erfinv only on [-1, 1]
    (sp.sqrt(10 - x), "not real-valued at x=30"),                 # complex only far out in the tails
    (sp.sqrt(x + 10), "not real-valued at x=-30"),
    (sp.Heaviside(x - 40) / (x - 40), "singular at x=40"),
    (sp.exp(x ** 2 / 3) * sp.Max(x, 0), "does not decay at +infinity"),
    (sp.exp(x ** 2 / 3) * sp.Min(x, 0), "does not decay at -infinity"),
]


@pytest.mark.parametrize("expr,reason", REJECTED, ids=[r for _, r in REJECTED])
def test_check_expression_rejects(expr, reason):
    with raises_naming(ExpressionError, "teacher") as info:
        check_expression(expr, "teacher")
    assert reason in info.value.reason, info.value.reason


def test_check_expression_accepts_smooth_function_with_undecidable_denominator():
    # solveset cannot decide cos(x) + 2 = 0 or 2 + sin(x) + x^2/100 = 0, and raises on erf(x) + 2 = 0 (erfinv(-2));
    # none of these has a real zero, so the checks must not refuse them
    for e in (1 / (sp.cos(x) + 2), 1 / (2 + sp.sin(x) + x ** 2 / 100), sp.log(2 + sp.erf(x))):
        check_expression(e, "f")
    with mpmath.workdps(40):
        ref1 = gauss_quad(lambda t: 1 / (mpmath.cos(t) + 2))
        ref2 = gauss_quad(lambda t: mpmath.log(2 + mpmath.erf(t)))
    assert agree(he_expect(1 / (sp.cos(x) + 2), 25), ref1, 25)
    assert agree(he_expect("log(2 + erf(x))", 25), ref2, 25)


def test_parse_spellings():
    # a SymPy expression in a Symbol('x') without assumptions, with binary floats: made exact and real
    loose = sp.Symbol("x")
    e = parse(loose * sp.Float(0.5) + sp.Float(0.25))
    assert e == x / 2 + sp.Rational(1, 4) and e.free_symbols == {x}
    with raises_naming(ExpressionError, "student") as info:
        parse(3.5, "student")
    assert "give a string" in info.value.reason
    with raises_naming(ExpressionError, "student"):
        parse("y + 1", "student")


def test_two_kinks_and_middle_piece():
    # E|Z - 1/2| + E max(Z, 0) = 2 phi(1/2) + (1/2)(2 Phi(1/2) - 1) + 1/sqrt(2 pi)
    f = parse("Abs(x - 1/2) + Max(x, 0)")
    assert [p[:2] for p in pieces(f)] == [(-sp.oo, 0), (0, sp.Rational(1, 2)), (sp.Rational(1, 2), sp.oo)]
    assert pieces(f)[1][2] == sp.Rational(1, 2)                 # (1/2 - x) + x on the middle piece
    v = expect_exact(f)
    with mpmath.workdps(50):
        h = mpmath.mpf(1) / 2
        want = 2 * npdf(h) + h * (2 * mpmath.ncdf(h) - 1) + 1 / mpmath.sqrt(2 * mpmath.pi)
        assert agree(sp.N(v, 50), want, 45)


def test_parity_with_a_pole_at_a_probe_point():
    # the numeric pre-screen of is_odd/is_even hits the pole at 0.3711: neither parity is claimed
    e = 1 / (x - sp.Rational(3711, 10000))
    assert is_odd(e) is False and is_even(e) is False
    assert is_odd(x ** 3 * sp.tanh(x ** 2)) is True and is_even(sp.cos(x) * sp.Abs(x)) is True


# =====================================================================================================
# hermite/gauss.py
# =====================================================================================================
ENDS = [(-1, 2), (None, sp.Rational(1, 2)), (sp.Rational(-3, 2), None), (None, None), (sp.Rational(7, 3),
                                                                                          sp.Rational(9, 2))]


def trunc_ref(j, a, b):
    r"""Independent reference: :math:`\int_a^b y^j\varphi(y)dy` from the lower incomplete gamma function,
    :math:`\int_0^t y^j\varphi = \operatorname{sign}(t)^{j+1}2^{(j-1)/2}\gamma((j+1)/2, t^2/2)/\sqrt{2\pi}`."""
    def F(t):
        s = mpmath.mpf(j + 1) / 2
        g = mpmath.gamma(s) if mpmath.isinf(t) else mpmath.gammainc(s, 0, t * t / 2)
        sign = 1 if t >= 0 or j % 2 else -1
        return sign * mpmath.mpf(2) ** (mpmath.mpf(j - 1) / 2) * g / mpmath.sqrt(2 * mpmath.pi)
    return F(b) - F(a)


def _mp(v, inf):
    return inf if v is None else mpmath.mpf(sp.Rational(v).p) / sp.Rational(v).q


@pytest.mark.parametrize("dps", PRECISIONS)
def test_trunc_moments_arb_against_incomplete_gamma(dps):
    jmax = 8
    for lo, hi in ENDS:
        with workdps(dps + GUARD_DIGITS):
            ends = [None if v is None else flint.arb(sp.Rational(v).p) / sp.Rational(v).q for v in (lo, hi)]
            arb = trunc_moments_arb(jmax, *ends)
            assert all(t.rad() < mpmath.mpf(10) ** -(dps + 5) for t in arb)      # tight balls
        with mpmath.workdps(dps + 20):
            for j in range(jmax + 1):
                ref = trunc_ref(j, _mp(lo, -mpmath.inf), _mp(hi, mpmath.inf))
                assert agree(arb_to_mpf(arb[j]), ref, dps), (lo, hi, j)


def test_trunc_moments_exact_and_float_against_incomplete_gamma():
    for lo, hi in ENDS:
        a = -sp.oo if lo is None else sp.Rational(lo)
        b = sp.oo if hi is None else sp.Rational(hi)
        exact = trunc_moments(6, a, b)
        flt = trunc_moments_float(6, np.array([float(a)]), np.array([float(b)]))
        with mpmath.workdps(50):
            for j in range(7):
                ref = trunc_ref(j, _mp(lo, -mpmath.inf), _mp(hi, mpmath.inf))
                assert agree(sp.N(exact[j], 50), ref, 45), (lo, hi, j)
                assert abs(float(flt[j][0]) - float(ref)) <= 1e-14 * max(1, abs(float(ref))), (lo, hi, j)


@pytest.mark.slow
def test_trunc_moments_against_sympy_integrate():
    y = sp.Symbol("y", real=True)
    a, b = sp.Integer(-1), sp.Integer(2)
    T = trunc_moments(4, a, b)
    for j in range(5):
        assert sp.simplify(sp.integrate(y ** j * sp.exp(-y ** 2 / 2) / sp.sqrt(2 * sp.pi), (y, a, b)) - T[j]) == 0


NOT_EXACT = [
    (sp.exp(-x ** 4), (-sp.oo, sp.oo)),                    # exponent of degree 4
    (sp.exp(x ** 2), (-sp.oo, sp.oo)),                     # e^{x^2} phi is not integrable
    (sp.exp(x ** 2 / 2) * x, (0, sp.oo)),
    (sp.sin(x), (0, sp.oo)),                               # complex shift on a half line
    (sp.erf(x), (0, sp.oo)),                               # the erf table is for the full line only
    (sp.erf(x ** 2), (-sp.oo, sp.oo)),                     # non-linear erf argument
    (sp.erf(x) * sp.erf(x + 1), (-sp.oo, sp.oo)),          # product with a shift: not in the table
    (sp.erf(x) ** 3, (-sp.oo, sp.oo)),
    (sp.tanh(x), (-sp.oo, sp.oo)),
]


@pytest.mark.parametrize("g,ends", NOT_EXACT, ids=[str(g) for g, _ in NOT_EXACT])
def test_exact_engine_declines(g, ends):
    with pytest.raises(NotExact):
        expect_piece_exact(g, *ends)


def test_erf_table_against_quad():
    a, b = sp.Rational(2), sp.Rational(1, 3)
    v1 = expect_piece_exact(5 * sp.erf(a * x + b))
    v2 = expect_piece_exact(sp.erf(x) * sp.erf(3 * x) + x ** 2)
    with mpmath.workdps(40):
        ref1 = gauss_quad(lambda t: 5 * mpmath.erf(2 * t + mpmath.mpf(1) / 3))
        ref2 = gauss_quad(lambda t: mpmath.erf(t) * mpmath.erf(3 * t)) + 1
        assert agree(sp.N(v1, 40), ref1, 35) and agree(sp.N(v2, 40), ref2, 35)


def test_tidy_large_expression_keeps_its_value():
    v = sum(sp.sqrt(k) / (k + sp.sqrt(2)) for k in range(1, 13))
    assert sp.count_ops(v) > 60                            # the radsimp branch
    t = tidy(v)
    assert abs(sp.N(t - v, 60)) < sp.Float(10) ** -55
    assert tidy(sp.Rational(6, 4)) == sp.Rational(3, 2)


@pytest.mark.parametrize("dps", PRECISIONS)
def test_tanh_sinh_vec_orthogonality(dps):
    # E[He_j He_k] = k! delta_jk for j, k <= 3 from one vector quadrature on [-inf, 0, inf] (a zero-length piece
    # [0, 0] is skipped)
    with precision(dps):
        segs = [([-mpmath.inf, mpmath.mpf(0), mpmath.mpf(0), mpmath.inf], lambda t: 1)]

        def wfun(t, fv):
            h = he_values(3, t)
            return [h[j] * h[k] for j in range(4) for k in range(4)]

        vals = tanh_sinh_vec(segs, wfun, 16)
        for j in range(4):
            for k in range(4):
                want = math.factorial(k) if j == k else 0
                assert abs(vals[4 * j + k] - want) < mpmath.mpf(10) ** -dps * max(1, want), (j, k)
        # ReLU as two segments, zero on the left (nodes with f = 0 are skipped): E[relu He_k] = k! c_k with
        # c = (1/sqrt(2 pi), 1/2, 1/(2 sqrt(2 pi)), 0)
        relu = [([-mpmath.inf, mpmath.mpf(0)], lambda t: 0 * t), ([mpmath.mpf(0), mpmath.inf], lambda t: t)]
        vals = tanh_sinh_vec(relu, lambda t, fv: he_values(3, t), 4)
        r = 1 / mpmath.sqrt(2 * mpmath.pi)
        for got, want in zip(vals, (r, mpmath.mpf(1) / 2, r, 0)):
            assert abs(got - want) < mpmath.mpf(10) ** -dps


def test_tanh_sinh_vec_reports_failure():
    with precision(15):
        segs = [([mpmath.mpf(0), mpmath.inf], lambda t: t ** mpmath.mpf(-0.9))]
        with pytest.raises(QuadratureError, match="did not reach 15 digits") as info:
            tanh_sinh_vec(segs, lambda t, fv: [1], 1, maxdegree=3, label="t^-0.9")
    assert info.value.iterations == 3 and info.value.residual > 0
    assert isinstance(info.value, errors.ConvergenceError)


@pytest.mark.parametrize("dps", PRECISIONS)
def test_numeric_fallback_to_tanh_sinh(dps):
    # besselj has no Arb evaluation, |x|^(1/3) is not resolved by the Gauss-Legendre panels at its cusp:
    # both go to tanh-sinh.  Closed forms: E J0(Z) = e^{-1/4} I0(1/4), E|Z|^{1/3} = 2^{1/6} Gamma(2/3)/sqrt(pi)
    j0 = expect_numeric(sp.besselj(0, x), dps)
    cusp = expect_numeric(sp.Abs(x) ** sp.Rational(1, 3), dps)
    with mpmath.workdps(dps + 20):
        q = mpmath.mpf(1) / 4
        assert agree(j0, mpmath.exp(-q) * mpmath.besseli(0, q), dps)
        assert agree(cusp, mpmath.mpf(2) ** (mpmath.mpf(1) / 6) * mpmath.gamma(mpmath.mpf(2) / 3)
                     / mpmath.sqrt(mpmath.pi), dps)


@pytest.mark.parametrize("dps", PRECISIONS)
def test_numeric_growing_integrand_moves_the_cutoff(dps):
    # e^{x^2/8} is not negligible at the default cut-off; E e^{Z^2/8} = (1 - 1/4)^{-1/2} = 2/sqrt(3)
    v = expect_numeric(sp.exp(x ** 2 / 8), dps)
    assert expect_piece_exact(sp.exp(x ** 2 / 8)) == 2 / sp.sqrt(3)
    with mpmath.workdps(dps + 20):
        assert agree(v, 2 / mpmath.sqrt(3), dps)


def test_panel_rule_refuses_a_non_real_integrand():
    with pytest.raises(QuadratureError, match="did not converge"), precision(15):
        gauss._panel_expect_vec(x ** sp.Rational(1, 3), lambda t, fv: [1], 1)


def test_expect_numeric_many_orthogonality():
    # x^3 = 3 He_1 + He_3: E[Z^3 He_k] = (0, 3, 0, 6) for k = 0..3
    weights = [lambda t, k=k: he_values(3, t)[k] for k in range(4)]
    with precision(20):
        got = expect_numeric_many(x ** 3, weights)
    with mpmath.workdps(30):
        assert all(abs(g - w) < mpmath.mpf(10) ** -20 for g, w in zip(got, (0, 3, 0, 6)))


# =====================================================================================================
# hermite/moments.py
# =====================================================================================================
@pytest.mark.parametrize("dps", PRECISIONS)
def test_expectation_exact_or_numeric(dps):
    assert he_expect("Max(x, 0)**2") == sp.Rational(1, 2)          # exact: E relu(Z)^2 = 1/2
    with mpmath.workdps(dps + 10):
        assert he_expect("Max(x, 0)**2", dps) == mpmath.mpf(1) / 2


@pytest.mark.parametrize("dps", PRECISIONS)
def test_expectation_without_exact_mean(dps):
    # sin(x)/x is undefined at 0 (so its parity mean is not used); E sin(Z)/Z = sqrt(pi/2) erf(1/sqrt 2)
    v = he_expect(sp.sin(x) / x, dps)
    with mpmath.workdps(dps + 20):
        assert agree(v, mpmath.sqrt(mpmath.pi / 2) * mpmath.erf(1 / mpmath.sqrt(2)), dps)


def test_numeric_bundle_cache_is_bounded(monkeypatch):
    full = {("dummy", i): (0, ()) for i in range(4097)}
    monkeypatch.setattr(moments, "_BUNDLES", full)
    f = sp.tanh(x) ** 3 + sp.Rational(1, 5)
    with precision(15):
        b = numeric_bundle(f, 2)
    assert len(moments._BUNDLES) == 1                      # cleared, then this entry stored
    # Stein: E[f He_1] = E f' = E[3 tanh^2 sech^2]; E[f He_0] = 1/5 (tanh^3 is odd)
    with mpmath.workdps(35):
        assert agree(b[0], mpmath.mpf(1) / 5, 15)
        assert agree(b[1], gauss_quad(lambda t: 3 * mpmath.tanh(t) ** 2 / mpmath.cosh(t) ** 2), 15)
        assert agree(b[-1], gauss_quad(lambda t: (mpmath.tanh(t) ** 3 + mpmath.mpf(1) / 5) ** 2), 15)
    with precision(15):
        assert numeric_bundle(f, 1) == b[:2] + (b[-1],)   # served from the larger bundle


# =====================================================================================================
# hermite/polynomials.py
# =====================================================================================================
@pytest.mark.parametrize("call,param", [
    (lambda: he_eval(-1, 0.5), "k"), (lambda: he_values(-2, 0.5), "k"), (lambda: he_poly(-1), "k"),
    (lambda: he_xi(-1, 0), "p, i"), (lambda: he_xi(3, -1), "p, i"), (lambda: he_xi_table(-1), "pmax"),
])
def test_polynomial_errors(call, param):
    with raises_naming(InvalidParameterError, param):
        call()


@pytest.mark.parametrize("dps", PRECISIONS)
def test_he_eval_against_mpmath_hermite(dps):
    # He_n(t) = 2^{-n/2} H_n(t/sqrt 2) with mpmath's physicists' H_n
    with mpmath.workdps(dps + 10):
        t = mpmath.mpf(7) / 5
        for n in (0, 1, 2, 7, 20):
            got = he_eval(n, t)
            with mpmath.workdps(dps + 40):
                want = mpmath.hermite(n, t / mpmath.sqrt(2)) / mpmath.sqrt(2) ** n
            assert agree(got, want, dps), n
        assert he_xi(5, 7) == 0 and he_xi(6, 3) == 0


def test_change_of_basis_accepts_exact_strings_and_mpf():
    coeffs = ["1/3", "sqrt(2)", mpmath.mpf("0.5"), fractions.Fraction(2, 7)]
    h = he_from_monomial(coeffs)
    want = [sp.Rational(1, 3), sp.sqrt(2), sp.Rational(1, 2), sp.Rational(2, 7)]
    assert sp.expand(sum(c * he_poly(i) for i, c in enumerate(h)) - sum(a * x ** p for p, a in enumerate(want))) == 0
    assert [sp.simplify(u - v) for u, v in zip(he_to_monomial(h), want)] == [0] * 4
    with pytest.warns(InexactInputWarning):
        assert he_from_monomial([0.25]) == [sp.Rational(1, 4)]


# =====================================================================================================
# hermite/quadrature.py
# =====================================================================================================
@pytest.mark.parametrize("bad", [0, 5001, 2.0, "3", -1])
def test_rule_sizes_checked(bad):
    with raises_naming(InvalidParameterError, "nodes"):
        gauss_legendre(bad)
    with raises_naming(InvalidParameterError, "nodes"):
        gauss_hermite(bad, mp=True)


@pytest.mark.parametrize("dps", PRECISIONS)
def test_gauss_legendre_at_precision_is_exact_to_degree_2m_minus_1(dps):
    m = 6
    with workdps(dps):
        xs, ws = gauss_legendre(m, arb=True)           # at the ambient precision
    with mpmath.workdps(dps):
        for k in range(2 * m):
            got = mpmath.fsum(arb_to_mpf(w) * arb_to_mpf(t) ** k for t, w in zip(xs, ws))
            want = mpmath.mpf(2) / (k + 1) if k % 2 == 0 else 0
            assert abs(got - want) < mpmath.mpf(10) ** (-(dps - 2)), k
        # degree 2m is no longer exact (the rule is Gaussian, not better)
        got = mpmath.fsum(arb_to_mpf(w) * arb_to_mpf(t) ** (2 * m) for t, w in zip(xs, ws))
        assert abs(got - mpmath.mpf(2) / (2 * m + 1)) > mpmath.mpf(10) ** -6


@pytest.mark.parametrize("dps", PRECISIONS)
def test_gauss_hermite_at_precision_moments(dps):
    n = 5
    with workdps(dps):
        z, w = gauss_hermite(n, mp=True)              # at the ambient precision
    with mpmath.workdps(dps):
        for k in range(2 * n):
            got = mpmath.fsum(wi * zi ** k for zi, wi in zip(z, w))
            want = sp.factorial2(k - 1) if k % 2 == 0 else 0           # E Z^k
            assert abs(got - int(want)) < mpmath.mpf(10) ** (-(dps - 3)) * max(1, int(want)), k
        got = mpmath.fsum(wi * zi ** (2 * n) for zi, wi in zip(z, w))
        assert abs(got - int(sp.factorial2(2 * n - 1))) > 1            # degree 2n: not exact


def test_normal_rule_len_mp_and_uncached():
    with workdps(30):
        rule = normal_rule(digits=12, arb=True)
    assert len(rule) == len(rule.nodes) == len(rule.weights) and rule.mirror and rule.dps == 30
    z, w = rule.mp()
    with mpmath.workdps(30):
        assert agree(mpmath.fsum(w), 1, 12) and agree(mpmath.fsum(wi * zi ** 4 for zi, wi in zip(z, w)), 3, 12)
    with workdps(30):
        fresh = normal_rule(digits=12, arb=True, cache=False)
    assert fresh is not rule and fresh.panels == rule.panels
    assert all(a.mid() == b.mid() for a, b in zip(fresh.nodes, rule.nodes))


@pytest.mark.parametrize("hmax", [0, -1.0, math.inf, math.nan])
def test_normal_rule_bad_hmax(hmax):
    with raises_naming(InvalidParameterError, "hmax"):
        normal_rule(hmax=hmax, cache=False)


def test_normal_rule_bounded_work():
    with raises_naming(InvalidParameterError, "hard"):
        normal_rule(hard=(0.0, 5e-324), cache=False)            # two points closer than 1e-300
    with raises_naming(InvalidParameterError, "quadrature") as info:
        normal_rule(hmax=1e-4, cache=False)                     # panels > MAX_NODES while marching
    assert "panels" in info.value.allowed and str(MAX_NODES) in info.value.allowed
    with raises_naming(InvalidParameterError, "quadrature") as info:
        normal_rule(hmax=1e-3, cache=False)                     # few enough panels, too many nodes
    assert "nodes" in info.value.allowed


def test_normal_rule_soft_feature_is_a_panel_edge():
    # with a wide soft feature at 0.3 the march stops exactly there; the rule still integrates polynomials
    # (E Z^4 = 3) and a kink at the feature to near float64 accuracy
    rule = normal_rule(soft=((0.3, 0.5),), digits=14, cache=False)
    assert not rule.mirror
    z, w = rule.nodes, rule.weights
    assert abs(w.sum() - 1) < 1e-13 and abs(w @ z ** 4 - 3) < 1e-12
    a = 0.3
    want = math.exp(-a * a / 2) / math.sqrt(2 * math.pi) - a * 0.5 * math.erfc(a / math.sqrt(2))
    assert abs(w @ np.maximum(z - a, 0) - want) < 1e-13    # E (Z - a)_+ = phi(a) - a (1 - Phi(a))


def test_normal_rule_float_with_asymmetric_kink():
    rule = normal_rule(hard=(0.5,), digits=14)
    assert not rule.mirror
    z, w = rule.nodes, rule.weights
    a = 0.5
    want = math.exp(-a * a / 2) / math.sqrt(2 * math.pi) - a * 0.5 * math.erfc(a / math.sqrt(2))
    assert abs(w @ np.maximum(z - a, 0) - want) < 1e-14


@pytest.mark.parametrize("dps", PRECISIONS)
def test_normal_rule_hard_point_spellings(dps):
    # the kink 1/3 given as an Arb ball, an mpf, a SymPy Rational and a decimal string: the panels end there and
    # E (Z - 1/3)_+ = phi(1/3) - (1/3)(1 - Phi(1/3)) comes out to the digits asked for
    with workdps(dps + 10):
        spellings = [flint.arb(1) / 3, mpmath.mpf(1) / 3, sp.Rational(1, 3), "0." + "3" * (dps + 20)]
    with mpmath.workdps(dps + 20):
        a = mpmath.mpf(1) / 3
        want = npdf(a) - a * (1 - mpmath.ncdf(a))
    for h in spellings:
        with workdps(dps + 10):
            rule = normal_rule(hard=(h,), digits=dps + 2, arb=True, cache=False)
        with workdps(dps + 10):
            third = flint.arb(1) / 3
            tot = arb_to_mpf(sum((w * (zz - third) for zz, w in zip(rule.nodes, rule.weights) if zz > third),
                                 flint.arb(0)))
        assert agree(tot, want, dps), type(h)


# =====================================================================================================
# hermite/activation.py
# =====================================================================================================
def test_activation_centering_an_activation():
    relu = Activation.from_any("relu")
    c = Activation.from_any(relu, center=True)
    assert c.center and c.expr == relu.expr and c.name == "centered(relu)"
    assert Activation.from_any(c, center=True) is c and Activation.from_any(relu) is relu
    assert c.coeff(0) == 0 and c.coeff(1) == sp.Rational(1, 2)
    # Var(ReLU(Z)) = 1/2 - 1/(2 pi)
    assert sp.simplify(c.second_moment() - (sp.Rational(1, 2) - 1 / (2 * sp.pi))) == 0


def test_activation_errors():
    with raises_naming(InvalidParameterError, "k"):
        Activation.from_any("tanh").coeff(-1)
    # sqrt(ReLU)' = 1/(2 sqrt x) on x > 0: E sigma'^2 = infinity
    with raises_naming(HypothesisError, "activation") as info:
        Activation.from_any("Max(x, 0)**(1/2)").derivative()
    assert "square-integrable derivative" in info.value.allowed


def test_numpy_callables():
    relu = Activation.from_any("relu")
    d = relu.numpy_derivative()
    np.testing.assert_array_equal(d(np.array([-2.0, -0.5, 0.5, 3.0])), [0.0, 0.0, 1.0, 1.0])
    tanh = Activation.from_any("tanh")
    t = np.linspace(-3, 3, 13)
    np.testing.assert_allclose(tanh.numpy_derivative()(t), 1 - np.tanh(t) ** 2, rtol=1e-14, atol=1e-15)
    const = Activation.from_any("1/2")
    np.testing.assert_array_equal(const.numpy()(np.array([1.0, -4.0, 9.0])), [0.5, 0.5, 0.5])
    assert np.asarray(const.numpy()(2.0)).shape == ()
    centred = Activation.from_any("1/2", center=True)
    np.testing.assert_array_equal(centred.numpy()(np.array([1.0, 2.0])), [0.0, 0.0])
    assert centred.offset_float() == 0.5 and const.offset_float() == 0.0


def test_coeffs_method_and_centered_methods():
    res = Activation.from_any("relu", center=True).coeffs(3, 20)
    assert isinstance(res, HermiteCoefficients)
    assert res.methods[0] == "centered" and res.values[0] == 0 and res.centered
    assert res.exact[1] == sp.Rational(1, 2) and res.exact[3] == 0
    d = res.to_dict()
    assert [c["k"] for c in d["coefficients"]] == [0, 1, 2, 3] and d["coefficients"][1]["exact"] == "1/2"
    # Parseval partial sum <= E sigma^2 = 1/2 - 1/(2 pi)
    with mpmath.workdps(30):
        assert res.parseval_partial <= mpmath.mpf(1) / 2 - 1 / (2 * mpmath.pi)
    tanh = he_coeffs("tanh", 2, 15)
    assert tanh.methods == ["exact (parity)", "tanh-sinh quadrature", "exact (parity)"]


@pytest.mark.parametrize("dps", PRECISIONS)
def test_centered_second_moment_with_exact_square_but_numeric_mean(dps):
    # E (1 + Z^2) = 2 is exact, E sqrt(1 + Z^2) is not: Var = 2 - (E sqrt(1+Z^2))^2
    act = Activation.from_any("sqrt(1 + x**2)", center=True)
    v = act.second_moment(dps)
    with mpmath.workdps(dps + 20):
        m = gauss_quad(lambda t: mpmath.sqrt(1 + t * t))
        assert agree(v, 2 - m * m, dps - 1)
    assert Activation.from_any("sqrt(1 + x**2)").second_moment() == 2


def test_c_gt1_cancellation_guard(monkeypatch):
    # sigma = x (tanh^2 + sech^2) = x: c_>1 = 0 exactly, but the engine sees no closed form for E sigma^2;
    # E sigma^2 is reported lower by delta (below the ambient-precision function c_>1 reads) to reach the guard
    from onestep_theory.hermite import activation as act_mod

    expr = parse("x*(tanh(x)**2 + 1/cosh(x)**2)")
    real = act_mod.numeric_second_moment
    monkeypatch.setattr(act_mod, "numeric_second_moment", lambda a: real(a) - mpmath.mpf(10) ** -25)
    assert Activation(expr).c_gt1(20) == 0               # below the guard 10^-(dps-2): clamped to 0
    monkeypatch.setattr(act_mod, "numeric_second_moment", lambda a: real(a) - mpmath.mpf(10) ** -3)
    with pytest.raises(QuadratureError, match="second moment"):
        Activation(expr).c_gt1(20)
    monkeypatch.setattr(act_mod, "numeric_second_moment", real)
    with mpmath.workdps(30):
        assert abs(Activation(expr).c_gt1(20)) < mpmath.mpf(10) ** -9


# =====================================================================================================
# regressions of bugs found while writing this file (fixed in the package)
# =====================================================================================================
def test_bug_numpy_integer_exact():
    with warnings.catch_warnings():
        warnings.simplefilter("error", InexactInputWarning)
        assert to_exact(np.int64(2 ** 53 + 1)) == 2 ** 53 + 1


def test_bug_parse_boolean_expression():
    with raises_naming(ExpressionError, "expression"):
        parse(x > 0)


def test_bug_kink_beyond_seven_refused():
    check_expression(parse("Max(x - 10, 0)**(1/2)"), "f")


def test_bug_kink_condition_without_solutions_refused():
    assert expect_exact(parse("Max(x**2 + 1, x/2)")) == 2


def test_bug_pole_at_kink_accepted():
    with pytest.raises(ExpressionError):
        parse("Heaviside(x - 1)/(x - 1)")


@pytest.mark.parametrize("probe", ["to_exact", "mpf_to_arb", "as_arb", "he_from_monomial", "check_range"])
def test_bug_negative_mpf_loses_its_sign(probe):
    with mpmath.workdps(30):
        v = -mpmath.mpf(1) / 3
        if probe == "to_exact":
            assert to_exact(v) < 0
        elif probe == "mpf_to_arb":
            assert arb_to_mpf(mpf_to_arb(v)) == v
        elif probe == "as_arb":
            assert as_arb(mpmath.mpf(-1)) == -1
        elif probe == "he_from_monomial":
            assert he_from_monomial([mpmath.mpf(-1)]) == [-1]
        else:
            with raises_naming(InvalidParameterError, "r"):
                check_range(v, "r", lo=0)                      # -1/3 is not > 0, but passes as +1/3


def test_bug_heaviside_has_no_arb_evaluation():
    f = arb_callable(sp.Heaviside(x - 1))
    with workdps(20):
        assert f(flint.arb(2)) == 1 and f(flint.arb(0)) == 0


def test_arb_to_mpf_is_exact_inside_workdps_and_rounds_outside():
    """As documented: exact inside workdps (mpmath and Arb at the same precision), rounded to mpmath's
    precision outside."""
    with workdps(60):
        ball = flint.arb(1) / 3
        exact = arb_to_mpf(ball)
        assert abs(exact * 3 - 1) < mpmath.mpf(10) ** -59
    got = arb_to_mpf(ball)                                      # at the default 53 bits
    with workdps(60):
        assert got != exact and abs(got - exact) < mpmath.mpf(2) ** -52
