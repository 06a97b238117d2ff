"""The claim audit (docs/theory/numerics.md §1): on the path a user takes — the command line with exact strings and
with decimals, the API with str, Fraction, mpf and float — every printed theory number ± its printed error must
contain the true value, against references computed independently of the package (``tests/data``, each made by a
script in ``tests/data/precompute``) or by exact identities.

The assertion is the contract itself, on the printed text: ``|printed − reference| ≤ printed error + reference
error``, exactly (Fractions), at every point and for every reported quantity.
"""

from __future__ import annotations

import fractions
import json
import pathlib

import mpmath
import pytest

from onestep_theory.cli import main

DATA = pathlib.Path(__file__).parent / "data"
F = fractions.Fraction


def _frac(v) -> F:
    if isinstance(v, mpmath.mpf):
        sign, man, exp, _ = v._mpf_
        f = F(int(man)) * F(2) ** int(exp)
        return -f if sign else f
    return F(str(v)) if not isinstance(v, (int, F)) else F(v)


def contains(text, err_text, ref, ref_err=0) -> bool:
    """The printed interval ``text ± err_text`` contains the reference (within its own error)."""
    return abs(F(text) - _frac(ref)) <= F(err_text) + _frac(ref_err)


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out) if "--json" in argv else out


def no_floats(obj, where="") -> None:
    """JSON numbers are decimal strings (integers such as counts and seeds excepted)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            no_floats(v, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            no_floats(v, f"{where}[{i}]")
    else:
        assert not isinstance(obj, float), f"float at {where}: {obj!r}"


# --------------------------------------------------------------------------------------------- Hermite layer
@pytest.fixture(scope="module")
def href():
    return json.loads((DATA / "hermite_reference.json").read_text())


@pytest.mark.parametrize("name,dps", [("tanh", 15), ("tanh", 30), ("relu", 30), ("sign", 15)])
def test_hermite_printed_values_contain_the_reference(capsys, href, name, dps):
    d = run(capsys, "hermite", name, "--kmax", "6", "--dps", dps, "--json")
    ref = href[name]
    for k, c in enumerate(d["coefficients"]):
        assert contains(c["value"], c["abs_error"], ref["c"][k], F(1, 10**60)), (name, dps, k, c)
        assert c["digits"] >= dps or abs(float(ref["c"][k])) < 10.0 ** -dps
    assert contains(d["second_moment"]["value"], d["second_moment"]["abs_error"], ref["second_moment"], F(1, 10**60))
    assert contains(d["c_gt1"]["value"], d["c_gt1"]["abs_error"], ref["c_gt1"], F(1, 10**60))
    no_floats(d)


@pytest.mark.slow
@pytest.mark.parametrize("dps", [15, 30, 50])
def test_hermite_every_reference_activation(capsys, href, dps):
    for name in (k for k in href if not k.startswith("_")):
        d = run(capsys, "hermite", name, "--kmax", "6", "--dps", dps, "--json")
        for k, c in enumerate(d["coefficients"]):
            assert contains(c["value"], c["abs_error"], href[name]["c"][k], F(1, 10**60)), (name, dps, k, c)


# --------------------------------------------------------------------------------------------- resolvent, gains
@pytest.fixture(scope="module")
def rref():
    return json.loads((DATA / "resolvent_reference.json").read_text())["points"]


# c_1 = 1, c_>1 = 1/2: the student He1 + He2/(2 sqrt 2) (2! c_2^2 = 1/4)
STUDENT_C1_HALF = "He1 + He2/(2*sqrt(2))"


def _decimal(text: str) -> str:
    """'1/2' -> '0.5' (the same number typed as a decimal), for terminating fractions."""
    f = F(text)
    return str(float(f)) if float(f) == f else text


@pytest.mark.parametrize("dps", [15, 30])
def test_resolvent_printed_values_contain_the_reference(capsys, rref, dps):
    for i, p in enumerate(x for x in rref if x["c1"] == "1" and x["c_gt1"] == "1/2"):
        form = (lambda t: t) if i % 2 == 0 else _decimal        # exact strings and decimals
        d = run(capsys, "resolvent", "--student", STUDENT_C1_HALF, "--phi", form(p["phi"]), "--psi", form(p["psi"]),
                "--lam", form(p["lam"]), "--dps", dps, "--json")
        for k in ("m1", "m2", "dm1_dlam", "dm2_dlam"):
            # the reference derivatives are central differences with h = 1e-20 at 60 digits: truncation
            # h^2 |m3|/6 with m3 ~ 6 m'/lam^2 the third derivative, so their error is about 1e-40 |m'|/lam^2
            ref_err = F(1, 10**45) if not k.startswith("d") else 3 * abs(F(p[k])) / F(10**40) / F(p["lam"]) ** 2
            assert contains(d[k], d["errors"][k], p[k], ref_err), (p, k, d[k], d["errors"][k])
            assert d["digits"][k] >= dps - 1
        no_floats(d)


def test_gains_delta1_against_its_closed_form_from_the_reference_resolvent(capsys, rref):
    """Delta_1 = psi lam c*_1^4 m2 / (phi b^2), b^2 = c*_1^2 + phi (c*^2 + noise) (docs/theory/spike-theory.md §7.3),
    with the teacher He1 (c*_1 = c* = 1) and m2 from the independent reference."""
    for p in (x for x in rref if x["c1"] == "1" and x["c_gt1"] == "1/2"):
        phi, psi, lam = (F(p[k]) for k in ("phi", "psi", "lam"))
        m2 = F(p["m2"])
        delta1 = psi * lam * m2 / (phi * (1 + phi))
        d = run(capsys, "gains", "--student", STUDENT_C1_HALF, "--teacher", "He1", "--phi", p["phi"], "--psi",
                p["psi"], "--lam", p["lam"], "--ell", "1", "--dps", "30", "--json")
        assert contains(d["delta"][0], d["errors"]["delta"][0], delta1, F(1, 10**31)), (p, d["delta"])
        assert contains(d["resolvent"]["m2"], d["errors"]["resolvent"]["m2"], p["m2"], F(1, 10**40))
        no_floats(d)


# --------------------------------------------------------------------------------------------- tau*, bounds
@pytest.mark.slow
def test_tau_star_erf_erf_prints_sqrt2_to_100_digits(capsys):
    d = run(capsys, "tau-star", "--student", "erf", "--teacher", "erf", "--dps", "100", "--json")
    with mpmath.workdps(130):
        assert contains(d["kappa"], d["errors"]["kappa"], mpmath.sqrt(2))
        assert len(d["kappa"].replace(".", "")) >= 100
        # the kernel bound is the best linear error of erf: E erf^2 - mu1*^2 = 2/pi asin(1/2) - 1/pi
        kb = 2 / mpmath.pi * mpmath.asin(mpmath.mpf(1) / 2) - 1 / mpmath.pi
        assert contains(d["kernel_bound"], d["errors"]["kernel_bound"], kb)
    no_floats(d)


@pytest.mark.slow
def test_bounds_optimizer_prints_only_vouched_digits(capsys):
    """The eta-optimised bounds (28) and their argmins at float64 against the mpmath/Arb path at 20 digits (a
    different rule, arithmetic and polish): every printed digit, the argmin's included, is inside its error."""
    lo = run(capsys, "bounds", "--student", "tanh", "--teacher", "sin", "--optimize-eta", "--json")
    hi = run(capsys, "bounds", "--student", "tanh", "--teacher", "sin", "--optimize-eta", "--dps", "20", "--json")
    for k in ("upper", "lower", "eta_upper", "eta_lower", "r", "best_linear"):
        assert contains(lo[k], lo["errors"][k], hi[k], hi["errors"][k]), (k, lo[k], lo["errors"][k], hi[k])
    assert float(hi["errors"]["upper"]) < 1e-20 * float(hi["upper"])
    no_floats(lo)


# --------------------------------------------------------------------------------------------- the spectrum
def test_spectrum_density_vanishes_beyond_the_bulk_within_its_error(capsys):
    """The smoothed density at eta > 0 has a 1/x^2 tail; the printed density is the eta -> 0 limit, whose printed
    error covers the extrapolation: far beyond the bulk (x = 40, 60 for c(1 + sqrt beta)^2 ~ 4) it contains 0."""
    d = run(capsys, "spectrum", "--student", "tanh", "--r", "1.13", "--c", "1.02", "--gamma", "0.97", "--alpha", "2",
            "--beta", "1", "--z", "40,60", "--lam", "1/10", "--json")
    for v, e in zip(d["density"], d["errors"]["density"]):
        assert contains(v, e, 0), (v, e)
    no_floats(d)
