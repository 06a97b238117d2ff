"""The certified argmin (core.search.certified_argmin, docs/theory/numerics.md §9) and its users: the eta-optimised
bounds (28) (`bounds --optimize-eta`), tau-star's eta*, the bias-optimised lower bound.

References are independent: closed forms ([BES+22] Cor. 8 in both erf conventions: eta* = 3 sqrt(3) pi/4 for
erf(x), sqrt(2) pi for erf(x/sqrt 2) = the package's named "erf", derivations/j_bes22_cor8_erf.py), exact minimisers of
synthetic functions, and a 45-digit computation by nested quadrature and mpmath.findroot
(tests/data/precompute/optimize_reference.py) for the non-degenerate optimum tanh/sin at alpha0 = 20.  Every check on
the CLI is made on the PRINTED text: |printed - truth| <= printed error.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import mpmath
import pytest

from onestep_theory.cli import main
from onestep_theory.core.errors import ConvergenceError
from onestep_theory.core.precision import asked_digits, precision
from onestep_theory.core.search import certified_argmin, differences

ETA_ERFX = "3*sqrt(3)*pi/4"      # erf(x): r = sqrt 3 at eta = sqrt(3)/mu1^2, mu1 = 2/sqrt(3 pi)
ETA_ERF = "sqrt(2)*pi"           # erf(x/sqrt 2): r = sqrt 2 at eta = sqrt(2)/mu1^2, mu1 = 1/sqrt(pi)
REF = Path(__file__).parent / "data" / "optimize_reference.json"


def truth(expr, dps=60):
    with mpmath.workdps(dps):
        return mpmath.mpf(mpmath.mpmathify(eval(expr, {"sqrt": mpmath.sqrt, "pi": mpmath.pi})))


def printed(text, name):
    """``(value, error)`` of the line ``name = value   +/- error`` of the printed text, as exact decimals."""
    m = re.search(rf"^{re.escape(name)}\s*= (\S+)\s+\+/- (\S+)", text, re.M)
    assert m, (name, text)
    with mpmath.workdps(80):
        return mpmath.mpf(m.group(1)), mpmath.mpf(m.group(2))


def contains(text, name, ref):
    v, e = printed(text, name)
    with mpmath.workdps(80):
        assert abs(v - ref) <= e, (name, v, e, ref)
        return v, e


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


# ------------------------------------------------------------------------------------------- the search itself
@pytest.mark.parametrize("dps", [None, 30, 50])
def test_zero_minimum_value_is_no_problem(dps):
    """f = (x - pi/3)^2 has minimum value 0; its argmin comes with an error that contains pi/3, to dps digits."""
    ref = truth("pi/3")

    def val(t, mp):         # at the ambient precision (dps + 10 digits): rounding below 10^-(dps + 8)
        if not mp:
            return (t - float(ref)) ** 2, 0.0
        return (t - ref) ** 2, mpmath.mpf(10) ** -(asked_digits() + 8)

    def der(t, mp, gtol):
        if not mp:
            return 2 * (t - float(ref)), 4e-16
        return 2 * (t - ref), mpmath.mpf(10) ** -(asked_digits() + 8)

    with precision(dps) if dps is not None else contextlib.nullcontext():      # the boundary sets the precision
        m = certified_argmin(lambda t: float(val(t, False)[0]), der, val, 0.0 if dps is None else mpmath.mpf(0),
                             2.0 if dps is None else mpmath.mpf(2), mp=dps is not None)
    assert m.dps == dps
    with mpmath.workdps(70):
        assert abs(m.x - ref) <= m.errors["x"]
        assert m.digits["x"] >= (dps or 15) and m.order == 1
        assert abs(m.value) <= m.errors["value"]


def test_a_biased_derivative_is_bracketed_by_its_error():
    """The derivative carries a bias up to its stated error: the certified interval still contains the root."""
    x0 = 0.7123456789

    def der(t, mp, gtol):
        return 3 * (t - x0) + 1e-9 * (1 + t * t), 1e-9 * (1 + t * t) * 1.01

    m = certified_argmin(lambda t: 1.5 * (t - x0) ** 2, der, lambda t, mp: (1.5 * (t - x0) ** 2, 1e-15), -1.0, 3.0)
    assert abs(m.x - x0) <= m.errors["x"] and m.errors["x"] < 1e-8


def test_flat_minimum_is_reported_with_its_order():
    """f = (x - 1.3)^4: f' ~ (x - x*)^3, the argmin is determined to ~1/3 of the derivative's digits, and said."""
    x0 = 1.3
    m = certified_argmin(lambda t: (t - x0) ** 4, lambda t, mp, g: (4 * (t - x0) ** 3, 1e-15),
                         lambda t, mp: ((t - x0) ** 4, 1e-16), 0.0, 4.0)
    assert m.order == 3 and abs(m.x - x0) <= m.errors["x"] < 1e-4


def test_minimum_at_the_end_and_differences():
    """A decreasing function: the minimiser is the end (error 0).  Central differences from values with ABSOLUTE
    errors at a zero minimum (cosh(x - 1) - 1) still contain the argmin."""
    m = certified_argmin(lambda t: -t, lambda t, mp, g: (-1.0, 1e-15), lambda t, mp: (-t, 1e-16), 0.0, 2.0)
    assert m.at_end and m.x == 2.0 and m.errors["x"] == 0

    import math

    def val(t, mp):
        return math.cosh(t - 1.0) - 1.0, 1e-13

    m = certified_argmin(lambda t: val(t, False)[0], differences(val), val, -2.0, 5.0)
    assert abs(m.x - 1.0) <= m.errors["x"] < 1e-3


def test_constant_and_inconsistent_functions():
    """f constant within its errors: every point minimises (the reported error covers the range, order 0); a
    derivative that contradicts the values (no sign change where the grid has an interior minimum) is refused."""
    m = certified_argmin(lambda t: 0.0, lambda t, mp, g: (0.0, 1e-15), lambda t, mp: (0.0, 1e-16), 0.0, 1.0)
    assert m.order == 0 and abs(0.0 - m.x) <= m.errors["x"] and abs(1.0 - m.x) <= m.errors["x"]
    with pytest.raises(ConvergenceError):
        certified_argmin(lambda t: (t - 1) ** 2, lambda t, mp, g: (1.0, 1e-15), lambda t, mp: ((t - 1) ** 2, 1e-16),
                         0.0, 2.0)


# ------------------------------------------------------------------------------------------------ the CLI
def test_optimize_eta_refuses_given_r_c_gamma(capsys):
    """`--optimize-eta` with explicit r, c, gamma: one line naming the parameter, exit 2 (never replaced)."""
    for flag in ("--r", "--c", "--gamma"):
        rc, out, err = run(capsys, "bounds", "--student", "tanh", "--teacher", "sin", flag, "1", "--optimize-eta")
        assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and flag in err, err


def test_cor8_erfx_float64_printed(capsys):
    """[BES+22] Cor. 8, erf(x): eta* = 3 sqrt(3) pi/4 to >= 12 digits in float64; both minima print 0 within their
    errors by the stated absolute criterion; eta_lower (a flat minimum) contains the truth too."""
    rc, out, err = run(capsys, "bounds", "--student", "erf(x)", "--teacher", "erf(x)", "--optimize-eta")
    assert rc == 0, err
    v, e = contains(out, "eta_upper", truth(ETA_ERFX))
    assert e / v < 1e-12
    contains(out, "eta_lower", truth(ETA_ERFX))
    for name in ("upper (26)", "lower (27)"):
        assert printed(out, name)[0] == 0
    assert out.count("digits absolute") == 2 and "flat minimum" in out


@pytest.mark.slow
def test_cor8_named_erf_and_eta_max_printed(capsys):
    """The other convention (erf = erf(x/sqrt 2)): eta* = sqrt(2) pi to >= 12 digits; the answer does not move with
    --eta-max beyond its error."""
    outs = []
    for em in ("10", "7.3"):
        rc, out, err = run(capsys, "bounds", "--student", "erf", "--teacher", "erf", "--optimize-eta", "--eta-max", em)
        assert rc == 0, err
        v, e = contains(out, "eta_upper", truth(ETA_ERF))
        assert e / v < 1e-12
        outs.append((v, e))
    (v1, e1), (v2, e2) = outs
    assert abs(v1 - v2) <= e1 + e2


@pytest.mark.slow
@pytest.mark.parametrize("dps", [20, 30])
def test_cor8_at_dps_printed(capsys, dps):
    """eta* of Cor. 8 (erf(x)) to dps digits at --dps 20 and 30, printed; minima 0 by the stated absolute criterion."""
    rc, out, err = run(capsys, "bounds", "--student", "erf(x)", "--teacher", "erf(x)", "--optimize-eta", "--dps", dps)
    assert rc == 0, err
    v, e = contains(out, "eta_upper", truth(ETA_ERFX))
    # dps digits: the printed error (the estimate plus the rounding of the printed value) below one unit of the
    # dps-th significant digit
    assert e <= mpmath.mpf(10) ** (mpmath.floor(mpmath.log10(v)) - dps + 1)
    contains(out, "eta_lower", truth(ETA_ERFX))
    assert printed(out, "upper (26)")[0] == 0 and f"--dps {dps} met by this absolute criterion" in out


@pytest.mark.slow
def test_bounds_at_the_optimum_with_dps(capsys):
    """`bounds --eta 3*sqrt(3)*pi/4 --dps 20`: both bounds are 0 and meet --dps by the absolute criterion."""
    rc, out, err = run(capsys, "bounds", "--student", "erf(x)", "--teacher", "erf(x)", "--eta", ETA_ERFX,
                       "--dps", "20")
    assert rc == 0, err
    for name in ("upper (26)", "lower (27)"):
        v, e = printed(out, name)
        assert v == 0 and e <= 1e-20
    assert "--dps 20 met by this absolute criterion" in out


@pytest.mark.slow
@pytest.mark.parametrize("dps", [None, 30])
def test_tanh_sin_alpha0_20_against_45_digit_reference(capsys, dps):
    """The non-degenerate optimum (tanh/sin, alpha0 = 20; c moves with eta) against Gauss-Hermite x tanh-sinh
    quadrature + findroot at 45 digits, in float64 and at --dps 30."""
    ref = json.loads(REF.read_text())
    rc, out, err = run(capsys, "bounds", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--optimize-eta",
                       *(["--dps", dps] if dps else []))
    assert rc == 0, err
    with mpmath.workdps(60):
        v, e = contains(out, "eta_upper", mpmath.mpf(ref["eta_upper"]))
        assert e <= mpmath.mpf(10) ** (mpmath.floor(mpmath.log10(v)) - (dps or 12) + 1)
        contains(out, "upper (26)", mpmath.mpf(ref["upper"]))


def test_tau_star_prints_eta_star(capsys):
    """tau-star prints eta* = kappa*/(mu1 mu1*) with its error (and the closed form when proved)."""
    rc, out, err = run(capsys, "tau-star", "--student", "erf(x)", "--teacher", "erf(x)")
    assert rc == 0, err
    contains(out, "eta*", truth(ETA_ERFX))
    assert "exact: 3*sqrt(3)*pi/4" in out


def test_bias_lower_bound_is_a_result_object():
    from onestep_theory.srf.optimal.bounds import BiasBound, bias_lower_bound

    out = bias_lower_bound("x**3", "relu", r=1, c=1, gamma=1, bias_max=2)
    assert isinstance(out, BiasBound) and out.lower < out.lower_at_zero
    d = out.to_dict()
    assert set(d["errors"]) == {"lower", "bias", "lower_at_zero"} and isinstance(d["lower"], str)


def test_a_bound_that_does_not_depend_on_eta_is_reported_constant(capsys):
    """Review finding: tanh/He2 at alpha0 = inf has mu1* = 0, so r = eta mu1 |mu1*| = 0 for every eta and both bounds
    are constant (2 = ||He2||^2 exactly); eta_upper printed '0 ± 0 (the bound decreases towards it)'.  Now every
    eta of [0, eta_max] is reported as a minimiser (midpoint ± half the range), and the bound prints 2 within its
    error."""
    import fractions

    from onestep_theory.cli import main

    rc = main(["bounds", "--student", "tanh", "--teacher", "He2", "--alpha0", "inf", "--eta", "1", "--optimize-eta",
               "--json"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 0
    for k in ("eta_upper", "eta_lower"):
        assert fractions.Fraction(d[k]) == 5 and fractions.Fraction(d["errors"][k]) >= 5, (k, d[k])
    for k in ("upper", "lower"):
        assert abs(fractions.Fraction(d[k]) - 2) <= fractions.Fraction(d["errors"][k])


def test_a_search_range_beyond_the_node_budget_names_eta_max(capsys):
    """Review finding: `--eta-max 1e6` was refused as 'quadrature=40001' (a name the user never typed): exit 2, one
    line naming --eta-max."""
    from onestep_theory.cli import main

    rc = main(["bounds", "--student", "erf(x)", "--teacher", "erf(x)", "--alpha0", "inf", "--eta", "1",
               "--optimize-eta", "--eta-max", "1e6"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "eta-max" in err[0] and "quadrature=" not in err[0], err
