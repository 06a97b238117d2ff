"""The fast paths of the printing contract and of exact input are the exact paths, digit for digit (issue 35: a
sweep's or a curve's numbers printed at the speed of its solver).

* ``vouch`` of a float value with a float error runs in exact decimal arithmetic (``decimal`` with every rounding
  trapped), cached; ``vouch(..., exact=True)`` is the Fraction path it replaces -- compared on a large random
  sample and on the hard cases: ties at the last printed digit, errors that carry into a fourth digit, zero and
  -0.0, negative values, subnormal and huge exponents, zero and integer errors, every cap;
* ``round_up`` of a float (the same decimal arithmetic) against its Fraction;
* ``to_float`` of a plain decimal or ``n/d`` string (a Fraction, no SymPy) against SymPy's exact parse, including
  decimals exactly halfway between two floats, the overflow and underflow edges, '1e400' and refused inputs;
* ``nstr`` of an mpf (cached) against mpmath;
* a CLI range ``a:b:n`` with rational ends (Fractions) against the SymPy arithmetic it replaces;
* ``SRFSolution.to_dict`` (which no longer runs VouchedResult's layer, overwritten whole) against that layer.
"""

import fractions
import math
import random
import struct

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from onestep_theory.cli.common import exact_grid, exact_text
from onestep_theory.core.errors import InvalidParameterError
from onestep_theory.core.exact import nstr, to_exact, to_float
from onestep_theory.core.precision import precision
from onestep_theory.core.results import VouchedResult
from onestep_theory.core.vouching import round_up, vouch
from onestep_theory.srf import srf_solve

F = fractions.Fraction
CAPS = (None, 1, 2, 3, 5, 15, 17, 30)


def _bits(u: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", u))[0]


def _value(rng):
    """A float drawn to hit every branch: any bit pattern, ordinary sizes, short decimals, exact binary ties."""
    k = rng.randrange(9)
    if k == 0:
        while True:
            v = _bits(rng.getrandbits(64))
            if math.isfinite(v):
                return v
    if k == 1:
        return rng.choice([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1.0, -1.0])
    if k == 2:                                   # a tie at the last printed digit: k + 1/2 units, exactly binary
        return rng.choice([1, -1]) * (rng.randrange(1, 10**6) + 0.5) * 2.0 ** rng.randint(-8, 0)
    if k == 3:
        return round(rng.uniform(-2, 2), rng.randint(0, 16))
    if k == 4:
        return rng.uniform(-1, 1) * 10.0 ** rng.randint(-320, 307)
    return rng.uniform(-3, 3)


def _error(rng, v):
    k = rng.randrange(9)
    if k == 0:
        return abs(v) * 10.0 ** -rng.uniform(0, 18)
    if k == 1:
        return rng.choice([0.0, 0, 1, 5e-324, 1e-300, 1e300, 0.5, 2.5e-16])
    if k == 2:                                   # a printed error that carries: 9.99...e-N + a rounding
        return float(f"9.99{rng.randrange(10)}{rng.randrange(10)}e{rng.randint(-20, 0)}")
    if k == 3:                                   # an error exactly a 3-digit decimal (nothing to round up)
        return rng.choice([rng.randrange(100, 1000) * 10.0 ** rng.randint(0, 12),
                           rng.choice([0.5, 0.25, 0.125, 0.375, 0.625, 0.875, 0.0625, 1.25])])
    if k == 4:
        return -abs(v) * 1e-10                   # a negative estimate counts by its size
    if k == 5:
        return _bits(rng.getrandbits(63)) if rng.random() < 0.5 else 1e-15
    return abs(v) * 10.0 ** -rng.randint(1, 16) * rng.uniform(0.9, 1.1)


def test_fast_vouch_is_the_exact_vouch_on_a_large_random_sample():
    rng = random.Random(35)
    n = 0
    for _ in range(8000):
        v = _value(rng)
        e = _error(rng, v)
        if not math.isfinite(e):
            continue
        cap = rng.choice(CAPS)
        assert vouch(v, e, cap) == vouch(v, e, cap, exact=True), (v, e, cap)
        n += 1
    assert n > 7300


@pytest.mark.parametrize("v, e, cap", [
    (0.125, 0.01, None), (0.375, 0.001, 2), (-2.5, 0.3, None), (1e22 + 2**20, 1.0, 17),      # ties
    (0.1, 0.009999, None), (0.99951, 9.99e-5, None), (9.9999, 9.9e-4, None), (999.5, 0.4, 3),  # carries
    (0.0, 0.0, None), (-0.0, 1e-20, None), (0.0, 5e-324, 3), (-1e-300, 1e-320, None),
    (5e-324, 5e-324, 1), (1.7976931348623157e308, 1e300, None), (-1.7976931348623157e308, 0.0, 5),
    (2 / 3, 0.0, 5), (2 / 3, 0, None), (np.float64(0.1), np.float64(1e-12), 15), (np.float32(0.1), 1e-9, None),
    (0.12323667957530252, 3.45e-14, None), (1.0, 1e300, None), (123.456, 0.5, 1),
])
def test_fast_vouch_hard_cases(v, e, cap):
    assert vouch(v, e, cap) == vouch(v, e, cap, exact=True)
    assert vouch(v, e, cap) == vouch(v, e, cap)          # the cached answer is the same


def test_fast_vouch_non_finite_is_the_exact_path():
    for v, e in [(math.inf, 1e-3), (-math.inf, 0.0), (math.nan, 1.0), (1.0, math.inf), (1.0, math.nan)]:
        assert vouch(v, e) == vouch(v, e, exact=True)


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False), st.floats(allow_nan=False, allow_infinity=False),
       st.sampled_from(CAPS))
def test_fast_vouch_any_floats(v, e, cap):
    assert vouch(v, e, cap) == vouch(v, e, cap, exact=True)


def test_round_up_of_a_float_is_the_fraction_rounding():
    rng = random.Random(7)
    xs = [abs(_error(rng, _value(rng))) for _ in range(3000)] + [0.0, 5e-324, 1e308, 0.999, 9.995, 99.95, 0.1]
    for x in xs:
        if math.isfinite(x):
            for sig in (1, 2, 3, 5):
                assert round_up(x, sig) == round_up(F(x), sig), (x, sig)
    for x in (math.inf, math.nan):                # non-finite: the Fraction path refuses it, as before
        with pytest.raises(ValueError):
            round_up(x)


def _plain_strings(rng):
    out = []
    for _ in range(1500):
        k = rng.randrange(6)
        sign = rng.choice(["", "-", "+"])
        if k == 0:
            out.append(f"{sign}{rng.randrange(10**rng.randint(1, 20))}.{rng.randrange(10**rng.randint(0, 25))}")
        elif k == 1:
            out.append(f"{sign}{rng.randint(1, 9)}.{rng.randrange(10**12)}e{rng.randint(-330, 330)}")
        elif k == 2:
            out.append(f"{sign}{rng.randrange(10**rng.randint(1, 30))}/{rng.randint(1, 10**rng.randint(1, 30))}")
        elif k == 3:                  # exactly halfway between two adjacent floats: round-half-even decides
            x = min(abs(_value(rng)), 1e308) or 1.0
            mid = (F(x) + F(math.nextafter(x, math.inf))) / 2
            out.append(sign + _decimal_of(mid))
        elif k == 4:
            out.append(sign + rng.choice(["1e400", "1e-400", "1e308", "1.7976931348623158e308", "0", "0.0", "1e999",
                                          "2.2250738585072011e-308", "4.9e-324"]))
        else:
            out.append(f"{sign}{rng.randint(0, 10**6)}")
    return out


def _decimal_of(q: F) -> str:
    """The terminating decimal of a dyadic rational, exactly."""
    den, k = q.denominator, 0
    while den > 1:
        den //= 2
        k += 1
    digits = str(q.numerator * 5**k).rjust(k + 1, "0")
    return digits[:-k] + "." + digits[-k:] if k else digits


def _sympy_float(text):
    try:
        return float(to_exact(text, "x", allow_infinite=True))
    except InvalidParameterError as exc:
        return type(exc)


def _fast_float(text):
    try:
        return to_float(text, "x")
    except InvalidParameterError as exc:
        return type(exc)


def test_plain_strings_read_as_sympy_reads_them():
    texts = _plain_strings(random.Random(3)) + ["007", "00.5", ".5", "5.", "1/0", "0/1", "1e2000", "1/3e2", " 0.2",
                                                "0.2 ", "1_000", "-0", "-0.0", "2.4703282292062328e-324", "1e+3"]
    for t in texts:
        a, b = _fast_float(t), _sympy_float(t)
        assert a == b and (not isinstance(a, float) or math.copysign(1, a) == math.copysign(1, b)), (t, a, b)
    assert to_float("1e400") == math.inf and to_float("1e-400") == 0.0


def test_plain_strings_are_the_parsers_rationals():
    from onestep_theory.core.syntax import parse_constant

    texts = _plain_strings(random.Random(4))[:600] + ["0", "-0", "+0.50", "5.", "6/4", "-6/4", "1e400", "1e-400", "2"]
    for t in texts:
        want = parse_constant(t, "x")
        assert sp.srepr(to_exact(t, "x", allow_infinite=True)) == sp.srepr(want), t
    with pytest.raises(InvalidParameterError, match="digits"):
        to_exact("1e2000", "x")                  # the bound on exact inputs, as before
    with pytest.raises(InvalidParameterError):
        to_exact("007", "x")


def test_nstr_of_an_mpf_is_mpmaths_every_time():
    rng = random.Random(5)
    for _ in range(200):
        x = mpmath.mpf(rng.uniform(-1, 1)) * mpmath.mpf(10) ** rng.randint(-50, 50)
        dps = rng.choice([1, 5, 15, 17, 30])
        with precision(dps):
            want = mpmath.nstr(+x, dps, strip_zeros=False, min_fixed=-6, max_fixed=12)
        assert nstr(x, dps) == want and nstr(x, dps) == want
    assert nstr(mpmath.mpf(0), 5) == "0"


@pytest.mark.parametrize("spec", ["0.2:3:1000", "-1/3:7/9:17", "1e-3:1e3:11", "5:5:3", "0.1:0.2:1", "2:1:4"])
def test_cli_range_of_rational_ends_is_the_sympy_range(spec):
    a, b, n = spec.split(":")
    lo, hi, n = to_exact(a), to_exact(b), int(n)
    want = [exact_text(sp.expand(lo + (hi - lo) * sp.Rational(i, max(n - 1, 1)))) for i in range(n)]
    assert exact_grid("--alphas")(spec) == want


def test_cli_range_with_irrational_ends_keeps_sympy():
    got = exact_grid("--alphas")("sqrt(2):2:3")
    assert got[0] == "sqrt(2)" and got[-1] == "2" and len(got) == 3


@pytest.fixture(scope="module")
def sols():
    """sRF solutions of every kind to_dict meets: batched (the mapping's r, c, γ with errors), r, c, γ given (no
    errors for them), float64 and at a dps (mpf fields)."""
    from onestep_theory.srf import srf_sweep

    out = srf_sweep("tanh", "sin", "alpha", ["1/5", "1", "3"], alpha0="20", eta="3", beta="1", lam="1/10")
    return out + [srf_solve("tanh", "sin", alpha="1/2", r="1/2", c="1/3", gamma="1/4", beta="1", lam="1/10", dps=d)
                  for d in (None, 16)]


def test_srf_solution_to_dict_is_the_vouched_layer_overwritten(monkeypatch, sols):
    """SRFSolution.to_dict starts from Result.to_dict, its own fields omitted: the same dict as from VouchedResult's
    (its super's) with nothing omitted, whose printed fields and errors it overwrites whole (in the same order)."""
    from onestep_theory.srf.single import solution

    new = [s.to_dict() for s in sols]
    layer = type("Layer", (), {"to_dict": lambda self, omit=(): VouchedResult.to_dict(self)})   # nothing omitted
    monkeypatch.setattr(solution, "Result", layer)
    old = [s.to_dict() for s in sols]
    assert old == new and [list(d) for d in old] == [list(d) for d in new]


def test_printed_is_what_to_dict_prints(sols):
    """``SRFSolution.printed`` (srf-curve's rows) gives to_dict's texts: vouched where ``errors`` has the key (the
    mapping's r, c, γ), the serialised value where it has not (r, c, γ given), at float64 and at a dps."""
    for s in sols:
        d = s.to_dict()
        p = s.printed(("test_error", *s.order, "r", "c", "gamma"))
        assert p["test_error"] == (d["test_error"], d["abs_error"])
        assert s.printed_digits(p["test_error"][0]) == d["digits"]
        assert {k: p[k][0] for k in s.order} == d["order"]
        assert [p[k][0] for k in ("r", "c", "gamma")] == [d[k] for k in ("r", "c", "gamma")]
    assert "r" not in sols[-1].errors and "r" in sols[0].errors       # both branches met
