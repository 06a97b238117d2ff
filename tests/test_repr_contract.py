"""The printing contract in Python (docs/theory/numerics.md §1): on the API path, typed as a user types (str
"1/10", Fraction, mpf), the *repr text* of every theory result — and of its fields — shows each number to its
vouched digits with its error, and ``|printed − reference| ≤ printed error + reference error`` holds exactly
(Fractions) against independent references: the 40-digit sRF fixed points and 60-digit resolvent of
``tests/data`` (each made by a script in ``tests/data/precompute``, independent of the package), the closed form
of Δ₁, exact limits, and for the bounds the same quantity solved at dps + 20.  The fields stay numbers
(mpf, float): arithmetic, mpmath, numpy, comparisons, pickling.
"""

from __future__ import annotations

import fractions
import json
import pathlib
import pickle
import re

import mpmath
import numpy as np
import pytest

DATA = pathlib.Path(__file__).parent / "data"
F = fractions.Fraction
NUM = r"[-+]?\d[\d.]*(?:e[-+]?\d+)?"
ERR = r"\d[\d.]*e[-+]\d+|0|inf"
PAIR = re.compile(rf"(?:(\w+)=|'(\w+)': )({NUM}) ± ({ERR})")
LIST = re.compile(rf"(\w+)=\[((?:{NUM} ± (?:{ERR})(?:, )?)+)\]")


def printed(text: str) -> dict:
    """``name -> (value text, error text)`` of every ``name=v ± e`` and ``'name': v ± e`` in a repr, and
    ``name[i]`` for the items of a list ``name=[v ± e, ...]``."""
    out = {(m.group(1) or m.group(2)): (m.group(3), m.group(4)) for m in PAIR.finditer(text)}
    for m in LIST.finditer(text):
        for i, item in enumerate(m.group(2).split(", ")):
            v, e = item.split(" ± ")
            out[f"{m.group(1)}[{i}]"] = (v, e)
    return out


def contains(pair, ref, ref_err=0) -> bool:
    v, e = pair
    return abs(F(v) - F(ref)) <= F(e) + F(ref_err)


def sig(text: str) -> int:
    return len(text.lstrip("-").split("e")[0].replace(".", "").lstrip("0"))


def vouches(pair, dps) -> bool:
    """The printed value has ``dps`` significant digits and its error vouches for at least dps - 1 of them."""
    v, e = pair
    return sig(v) == dps and F(e) <= abs(F(v)) * F(1, 10 ** (dps - 1))


# --------------------------------------------------------------------------------------------- sRF saddle point
@pytest.fixture(scope="module")
def p0():
    return json.loads((DATA / "srf_reference.json").read_text())["points"]["P0"]


HATS = {"hat_V1": "Vh1", "hat_V2": "Vh2", "hat_q1": "qh1", "hat_q2": "qh2", "hat_theta": "thh", "hat_psi": "psh"}


def _typed(p, dps):
    """P0 as a user types it: r a str, c a Fraction, gamma an mpf made at high precision (its distance to the
    decimal, < 1e-70, moves the test error far below the reference error allowed), alpha a str, lam a Fraction."""
    with mpmath.workdps(80):
        gamma = mpmath.mpf(p["gamma"])
    return dict(r=p["r"], c=F(p["c"]), gamma=gamma, alpha=p["alpha"], beta=int(p["beta"]), lam=F(p["lam"]), dps=dps)


@pytest.mark.parametrize("dps", [15, pytest.param(30, marks=pytest.mark.slow)])
def test_srf_solve_repr_shows_dps_vouched_digits(p0, dps):
    from onestep_theory.srf import srf_solve

    sol = srf_solve(p0["student"], p0["teacher"], **_typed(p0, dps))
    text = repr(sol)
    pr = printed(text)
    assert contains(pr["test_error"], p0["test_error"], F(1, 10**50)), (pr["test_error"], p0["test_error"])
    assert vouches(pr["test_error"], dps), pr["test_error"]
    for k in ("m", "theta", "psi", "q1", "q2", "V1", "V2"):
        assert contains(pr[k], p0[k], F(1, 10**49)), (k, pr[k], p0[k])
    for k, ref in HATS.items():
        assert contains(pr[k], p0["conjugates"][ref], F(1, 10**49)), (k, pr[k])
    assert contains(pr["D"], p0["conjugates"]["D"], F(1, 10**49))
    # the same digits in str (one field a line) and in the bare field; the error stays with the field
    v, e = pr["test_error"]
    assert re.search(rf"\n  test_error +=  ?{re.escape(v)} ± {e}\n", str(sol))
    assert repr(sol.test_error) == f"{v} ± {e}" == str(sol.test_error)
    assert repr(sol.order["m"]) == " ± ".join(pr["m"])
    assert "errors=" not in text and "provenance" not in text      # errors beside their values; provenance apart
    # ... and the field is the number: arithmetic, mpmath, float, numpy, comparisons
    x = sol.test_error
    assert isinstance(x, mpmath.mpf) and type(x * 2) is mpmath.mpf and x * 2 == 2 * x.plain
    assert abs(float(x) - float(p0["test_error"])) < 1e-16 and np.float64(x) == float(x)
    assert mpmath.log(x) < 0 < x < 1 and np.asarray([x], dtype=float)[0] == float(x)
    back = pickle.loads(pickle.dumps(sol))
    assert repr(back) == text and back.test_error == x


# --------------------------------------------------------------------------------------------- K groups
@pytest.mark.parametrize("dps", [None, pytest.param(15, marks=pytest.mark.slow),
                                 pytest.param(30, marks=pytest.mark.slow)])
def test_kgroup_repr_against_the_single_group_reference(p0, dps):
    """One group through the K-group solver (``reduce=False``: its own saddle point, Powell and chord Newton)
    against the single-group 40-digit reference (an exact reduction, a different code)."""
    from onestep_theory.srf import srf_groups

    kw = _typed(p0, dps)
    sol = srf_groups(p0["student"], p0["teacher"], readout_spec="1:1", reduce=False, **kw)
    pr = printed(repr(sol))
    assert contains(pr["test_error"], p0["test_error"], F(1, 10**50)), pr["test_error"]
    if dps:
        assert vouches(pr["test_error"], dps), pr["test_error"]
        assert repr(sol.test_error) == " ± ".join(pr["test_error"])
    else:
        assert float(F(pr["test_error"][1])) < 1e-12 and type(sol.test_error) is np.float64   # floats stay floats


@pytest.mark.slow
def test_two_group_repr_against_a_15_digit_solve():
    """Two groups (readout 1:1/2, 2:1/2, from the mapping) in float64 against the same solve at 15 digits (the
    reference's own printed error allowed for)."""
    from onestep_theory.srf import srf_groups

    kw = dict(readout_spec="1:1/2,2:1/2", alpha0=20, eta=3, alpha="1.6", beta=1, lam=F(1, 3))
    lo, hi = srf_groups("tanh", "sin", **kw), srf_groups("tanh", "sin", dps=15, **kw)
    pr = printed(repr(lo))
    assert contains(pr["test_error"], F(hi.test_error.text), F(hi.test_error.error_text)), (pr, hi.test_error)
    assert vouches(printed(repr(hi))["test_error"], 15)


# --------------------------------------------------------------------------------------------- resolvent, gains
@pytest.fixture(scope="module")
def rref():
    return json.loads((DATA / "resolvent_reference.json").read_text())["points"]


def _form(text: str, i: int):
    """Point i typed as str, Fraction or (when dyadic, so exact) mpf, in turn."""
    f = F(text)
    if i % 3 == 2 and (f.denominator & (f.denominator - 1)) == 0 and len(text) < 20:
        return mpmath.mpf(f.numerator) / f.denominator
    return f if i % 3 == 1 and len(text) < 20 else text


def _ref_err(p, k):
    """The reference's error: m1, m2 to 60 digits; the derivatives are central differences (h = 1e-20 at 60 digits,
    about 1e-40 |m'| / lam^2) printed to 35 digits (half a unit of the last)."""
    if not k.startswith("d"):
        return F(1, 10**45)
    mant, _, exp = p[k].lstrip("-").partition("e")
    last = int(exp or 0) - (len(mant.split(".")[1]) if "." in mant else 0)
    return 3 * abs(F(p[k])) / F(10**40) / F(p["lam"]) ** 2 + F(10) ** last / 2


@pytest.mark.parametrize("dps", [15, 30, pytest.param(50, marks=pytest.mark.slow)])
def test_resolvent_repr_contains_the_reference(rref, dps):
    from onestep_theory.spikes.resolvent import resolvent_from_constants

    points = rref if dps == 50 else rref[::3]
    for i, p in enumerate(points):
        r = resolvent_from_constants(*(_form(p[k], i + j) for j, k in enumerate(("phi", "psi", "lam", "c1", "c_gt1"))),
                                     dps=dps)
        pr = printed(repr(r))
        for k in ("m1", "m2", "dm1_dlam", "dm2_dlam"):
            assert contains(pr[k], p[k], _ref_err(p, k)), (p, k, pr[k])
            if dps < 50 or not k.startswith("d"):         # the 60-digit reference derivatives hold 40 digits
                assert vouches(pr[k], dps), (p, k, pr[k])


@pytest.mark.parametrize("dps", [15, 30, pytest.param(50, marks=pytest.mark.slow)])
def test_gains_repr_delta1_against_its_closed_form(rref, dps):
    """Δ₁ = ψ λ c*₁⁴ m₂ / (φ b²), b² = c*₁² + φ (c*² + noise) (docs/theory/spike-theory.md §7.3) with the teacher
    He1 and m₂ from the independent reference; the nested resolvent's m₂ too."""
    from onestep_theory.spikes import gains

    for i, p in enumerate(x for x in rref if x["c1"] == "1" and x["c_gt1"] == "1/2"):
        phi, psi, lam = (F(p[k]) for k in ("phi", "psi", "lam"))
        delta1 = psi * lam * F(p["m2"]) / (phi * (1 + phi))
        g = gains("He1 + He2/(2*sqrt(2))", "He1", _form(p["phi"], i), _form(p["psi"], i + 1), _form(p["lam"], i + 2),
                  ell=1, dps=dps)
        pr = printed(repr(g))
        assert contains(pr["delta[0]"], delta1, F(1, 10**55)), (p, pr["delta[0]"])
        assert vouches(pr["delta[0]"], dps) and repr(g.delta[0]) == " ± ".join(pr["delta[0]"])
        assert contains(pr["m2"], p["m2"], F(1, 10**45))


# --------------------------------------------------------------------------------------------- bounds
@pytest.mark.slow
@pytest.mark.parametrize("dps", [None, 15, 30])
def test_bounds_repr_against_a_solve_at_dps_plus_20(p0, dps):
    from onestep_theory.srf import bounds

    kw = {k: v for k, v in _typed(p0, dps).items() if k in ("r", "c", "gamma")}
    b = bounds(p0["student"], p0["teacher"], dps=dps, **kw)
    ref = bounds(p0["student"], p0["teacher"], dps=(dps or 0) + 20, **kw)
    pr = printed(repr(b))
    for k in ("upper", "lower", "best_linear"):
        ref_v = getattr(ref, k)
        assert contains(pr[k], F(ref_v.text), F(ref_v.error_text)), (k, pr[k], ref_v)
        if dps:
            assert vouches(pr[k], dps), (k, pr[k])


# --------------------------------------------------------------------------------------------- tau*, spectrum
@pytest.mark.slow
def test_tau_star_repr_erf_erf_closed_forms():
    """erf/erf: κ* = √2 and the kernel bound 2/π asin(1/2) − 1/π (docs/theory/srf-theory.md §9) on the repr."""
    from onestep_theory.srf.optimal.taustar import tau_star

    t = tau_star("erf", "erf", dps=30)
    pr = printed(repr(t))
    with mpmath.workdps(60):
        assert contains(pr["kappa"], mpmath.nstr(mpmath.sqrt(2), 55), F(1, 10**50))
        kb = 2 / mpmath.pi * mpmath.asin(mpmath.mpf(1) / 2) - 1 / mpmath.pi
        assert contains(pr["kernel_bound"], mpmath.nstr(kb, 55), F(1, 10**50))
    assert vouches(pr["kappa"], 30)


@pytest.mark.slow
def test_spectrum_repr_density_beyond_the_bulk_contains_zero():
    """Far beyond the bulk (x = 40, 60 for c(1 + √β)² ≈ 4) the density is exactly 0: the repr's density ± error
    contains it (tests/test_claims.py checks the same on the CLI)."""
    from onestep_theory.srf import spectrum

    s = spectrum("tanh", r="1.13", c="1.02", alpha=2, beta=1, xs=["40", "60"], lams=("1/10",))
    pr = printed(repr(s))
    assert contains(pr["density[0]"], 0) and contains(pr["density[1]"], 0), pr
    assert re.search(r"\n  density +=  ?\[", str(s)) and s._repr_html_().count("±") >= 2


class _Printer:
    """The part of IPython's ``PrettyPrinter`` protocol that ``_repr_pretty_`` uses (IPython is optional)."""

    def __init__(self):
        self.parts = []

    def text(self, s):
        self.parts.append(s)


def _pretty(obj):
    try:
        from IPython.lib.pretty import pretty
    except ImportError:  # the protocol itself, as IPython calls it
        p = _Printer()
        obj._repr_pretty_(p, False)
        return "".join(p.parts)
    return pretty(obj)


def test_ipython_pretty_is_the_str():
    from onestep_theory.spikes.resolvent import resolvent_from_constants

    r = resolvent_from_constants("1/2", "1/2", "1/10", 1, "1/2", dps=30)
    assert _pretty(r) == str(r) and _pretty(r.m1) == repr(r.m1)
    assert str(r).splitlines()[1].startswith("  m1") and " ± " in str(r).splitlines()[1]
    p = _Printer()
    r._repr_pretty_(p, True)  # a cycle prints the type, not a recursion
    assert p.parts == [type(r).__name__ + "(...)"]

# --------------------------------------------------------------------------------------------- Hermite layer
@pytest.mark.parametrize("dps", [15, 30])
def test_hermite_coefficients_repr_contains_the_reference(hermite_ref, dps):
    """c_0..c_6, E σ² and c_>1 of tanh on the repr text against the 60-digit reference (tests/data)."""
    from onestep_theory.hermite.coefficients import he_coeffs

    ref = hermite_ref["tanh"]
    h = he_coeffs("tanh", 6, dps=dps)
    pr = printed(repr(h))
    for k, c in enumerate(ref["c"]):
        assert contains(pr[f"values[{k}]"], c, F(1, 10**60)), (k, pr[f"values[{k}]"])
    assert contains(pr["second_moment"], ref["second_moment"], F(1, 10**60))
    assert contains(pr["c_gt1"], ref["c_gt1"], F(1, 10**60)) and vouches(pr["c_gt1"], dps)
