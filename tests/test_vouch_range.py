"""The printing contract (docs/theory/numerics.md §1) over the whole mpf range: ``vouch``, ``vouched``,
``error_text`` and ``digits_of`` from 1e-1000 to 1e1000, at zero, for negative values, for errors larger than
the value, and non-finite values and errors by a stated rule.

The reference is exact rational arithmetic on the numbers as drawn — ``Fraction(man) * 2**exp`` from the
integers that made the mpf, and integer decimal exponents (``10**k * q <= p``) — independent of the code under
test, which never sees these integers.
"""

from __future__ import annotations

import copy
import fractions
import math
import numbers
import pickle

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onestep_theory.core.results import digits_of, error_text, vouch, vouched
from onestep_theory.core.vouching import vmpf, with_error

F = fractions.Fraction


def ilog10(x: F) -> int:
    """floor(log10(x)) for x > 0 by integer comparisons only."""
    p, q = x.numerator, x.denominator
    k = len(str(p)) - len(str(q))
    le = (lambda k: 10**k * q <= p) if k >= 0 else (lambda k: q <= p * 10**-k)
    while not le(k):
        k -= 1
    while le(k + 1):
        k += 1
    return k


def sig_digits(text: str) -> tuple:
    """(significant digits shown, exact?): an integer mantissa ('20.', '120') may end in placeholder zeros."""
    mant = text.lstrip("+-").split("e")[0]
    exact = "." in mant and not mant.endswith(".")
    digits = mant.replace(".", "").lstrip("0")
    return (len(digits), True) if exact else (len(digits.rstrip("0")), False)


def _ldexp(man, k) -> float:
    try:
        return math.ldexp(float(man), k)
    except OverflowError:
        return math.inf


def exact(v) -> F:
    sign, man, exp, _ = v._mpf_
    return (-1) ** sign * F(int(man)) * F(2) ** int(exp)


def make(sign, man, exp):
    """(an mpf, its exact value) from integers: the mpf through mpmath's own constructor, the value as a Fraction."""
    v = mpmath.mp.make_mpf(mpmath.libmp.from_man_exp(-man if sign else man, exp))
    x = F(man) * F(2) ** exp
    return v, (-x if sign else x)


# binary exponents spanning decimal exponents -1000 .. 1000 for mantissas of up to 200 bits
MANT = st.integers(1, 2**200)
EXP = st.integers(-3322 - 200, 3322)
# the error relative to the value: 2**-1150 (~1e-346) .. 2**40 (errors far larger than the value), or 0
REL = st.one_of(st.just(None), st.integers(-1150, 40))
CAP = st.one_of(st.none(), st.integers(1, 60))


def check_contract(text, etext, x: F, e: F, cap, is_float=False):
    gap = abs(F(text) - x)
    assert gap + e <= F(etext), (text, etext, x, e)                     # printed interval contains x +- e
    assert F(etext) <= (gap + e) * F(101, 100), (text, etext)          # rounded up by at most one unit of 3 digits
    if e > 0 and x != 0:
        n = max(1, min(ilog10(abs(x)) - ilog10(e) + 2, 320 if cap is None else min(cap, 320)))
        shown, exact = sig_digits(text)
        assert shown == n if exact and not is_float else shown <= n, (text, n)   # Python's 'g' strips zeros          # the error's place plus one guard digit
        # correctly rounded to those digits (half a unit of the last digit, 1e-6 slack for mpmath's last bit)
        last = ilog10(abs(F(text))) - n + 1
        assert gap <= F(10) ** last / 2 * F(1000001, 1000000), (text, x)


@settings(max_examples=150, deadline=None)
@given(st.booleans(), MANT, EXP, REL, st.integers(1, 2**60), CAP, st.sampled_from(["mpf", "fraction", "float"]))
def test_vouch_contains_the_exact_interval_over_the_mpf_range(sign, man, exp, rel, eman, cap, etype):
    v, x = make(sign, man, exp)
    if rel is None:
        e = F(0)
        err = 0
    else:                                   # e = eman * 2**k with e / |x| ~ 2**rel
        k = exp + man.bit_length() + rel - 60
        e = F(eman) * F(2) ** k
        err = {"mpf": lambda: make(0, eman, k)[0], "fraction": lambda: e,
               "float": lambda: _ldexp(eman, k)}[etype]()
        if etype == "float":                # what the float holds (0 or inf beyond the float range)
            if not math.isfinite(err):
                assert vouch(v, err, cap)[1] == "inf"
                return
            e = F(err)
    text, etext = vouch(v, err, cap)
    assert (text, etext) == (vouched(v, err, cap), error_text(v, err, cap))
    check_contract(text, etext, x, e, cap)
    if e > 0:
        assert digits_of(v, err) == max(0, ilog10(abs(x) / e))
    else:
        assert digits_of(v, err) == 17                                  # an exact value: the digits of a float


@settings(max_examples=100, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False).filter(lambda t: t != 0),
       st.floats(min_value=0, allow_nan=False, allow_infinity=False))
def test_vouch_floats_over_the_float_range(t, err):
    text, etext = vouch(t, err)
    check_contract(text, etext, F(t), F(err), 17, is_float=True)


@pytest.mark.parametrize("p,q", [(1, 3 * 10**700), (-22, 7), (10**1000 + 1, 3), (1, 1)])
def test_exact_rationals_far_out_of_the_float_range(p, q):
    """A Fraction value (and the error 1e-720 as a Fraction) never goes through a float."""
    x = F(p, q)
    for e in (F(0), F(1, 10**720) * abs(x), abs(x) * 10):
        text, etext = vouch(x, e, cap=40)
        check_contract(text, etext, x, e, 40)


def test_the_issue_cases():
    with mpmath.workdps(30):
        tiny, huge = mpmath.mpf("1e-400"), mpmath.mpf("1.234567890123e400")
    text, etext = vouch(tiny, 0)
    assert F(text) != 0 and abs(F(text) - F(1, 10**400)) <= F(etext)  # was ('0', '0')
    text, etext = vouch(huge, 1.0)
    assert abs(F(text) - exact(huge)) <= F(etext) - 1                   # was 1.23457e+400 +- 1.00e+00
    assert F(etext) < F(10) ** 81                                        # 320 digits printed, the rest in the error
    assert digits_of(1.0, mpmath.mpf("1e-320")) == 320                  # was 17
    assert digits_of(tiny, tiny / 999) == 2 and digits_of(tiny, tiny / 1001) == 3
    assert vouch(mpmath.mpf(0), mpmath.mpf("1e-400")) == ("0", "1.00e-400")
    assert vouch(-tiny, tiny * 10)[0].startswith("-")                    # sign kept when the error dwarfs the value


def test_non_finite_rule():
    """A non-finite value prints as a word with its error (an infinite limit is exact: error 0); a non-finite or
    NaN error prints as 'inf' — nothing is vouched for — and the value as three digits; digits_of is 0."""
    assert vouch(mpmath.inf, 0) == ("+inf", "0")
    assert vouch(-mpmath.inf, F(1, 1000)) == ("-inf", "1.00e-03")
    assert vouch(float("-inf"), 0.0) == ("-inf", "0")
    assert vouch(mpmath.nan, float("nan")) == ("nan", "inf")
    assert vouch(mpmath.mpf("1.23456e-900"), mpmath.inf) == ("1.23e-900", "inf")
    assert vouch(2.5, float("nan")) == ("2.5", "inf")
    for v, e in ((mpmath.inf, 0), (1.0, float("nan")), (mpmath.mpf("1e-900"), mpmath.inf), (0, 1)):
        assert digits_of(v, e) == 0


def test_vmpf_is_the_mpf_with_its_error():
    """A result's high-precision number: repr/str print the vouched digits with the error; arithmetic, mpmath,
    float(), numpy, comparisons, hashing and pickling behave as for the mpf (derived numbers are plain mpf)."""
    with mpmath.workdps(40):
        v = mpmath.mpf(1) / 3
        x = with_error(v, mpmath.mpf("1e-35"), 30)
        assert x.plain == v and x.plain._mpf_ == v._mpf_                # all 40 digits kept (no rounding to 15)
    assert isinstance(x, mpmath.mpf) and isinstance(x, numbers.Real) and isinstance(x, vmpf)
    text, etext = vouch(v, mpmath.mpf("1e-35"), 30)
    assert repr(x) == str(x) == f"{x}" == f"{text} ± {etext}" and sig_digits(text) == (30, True)
    assert x.text == text and x.error_text == etext and x.digits == 34
    for derived in (x + 0, x * 1, -x, abs(x), +x, mpmath.exp(x), mpmath.mpf(x), x**2):
        assert type(derived) is mpmath.mpf
    assert x == v and hash(x) == hash(v) and x < 1 and x > 0.25 and float(x) == 1 / 3
    assert format(x, "") == str(x)
    assert np.asarray([x, x], dtype=float).tolist() == [1 / 3, 1 / 3]
    for y in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x), copy.copy(x)):
        assert type(y) is vmpf and y == v and y.error == x.error and repr(y) == repr(x)
    assert with_error(0.5, 1e-3) == 0.5 and type(with_error(0.5, 1e-3)) is float   # floats stay floats


def test_a_vouched_number_takes_a_format_spec_at_any_precision():
    """f"{x:.5f}" of a result's number failed (mpmath 1.3's mpf takes no format spec).  Reference: the exact
    rational value of the mpf (its mantissa and exponent), divided out in decimal at 2100 digits and formatted by
    Python's decimal module."""
    import decimal
    import fractions

    import mpmath

    from onestep_theory.core.vouching import with_error

    with mpmath.workdps(50):
        values = (mpmath.mpf(1) / 3, -mpmath.mpf(2) ** -2000, mpmath.mpf(10) ** 400 / 7, mpmath.mpf(0),
                  mpmath.mpf("0.125"))
        for v in values:
            x = with_error(v, abs(v) * mpmath.mpf(10) ** -45 + mpmath.mpf(10) ** -3000)
            sign, man, exp, _ = v._mpf_
            exact = fractions.Fraction((-1) ** sign * int(man)) * fractions.Fraction(2) ** int(exp) if man else \
                fractions.Fraction(0)
            with decimal.localcontext() as ctx:
                ctx.prec = 2100
                ref = decimal.Decimal(exact.numerator) / decimal.Decimal(exact.denominator)
            for spec in (".5f", ".30e", ">40.12g", ".45f", "+.3%"):
                assert f"{x:{spec}}" == format(ref, spec), (v, spec)
