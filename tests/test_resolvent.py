"""m1, m2 resolvent: independent high-precision references, identities, root selection, sweeps."""

import json
import warnings

import mpmath
import numpy as np
import pytest
import sympy as sp

from onestep_theory import ConvergenceError, HypothesisError, InvalidParameterError
from onestep_theory.spikes.resolvent import (ap20_system, resolvent, resolvent_from_constants, resolvent_sweep, system)
from onestep_theory.simulate import sim_resolvent

from .conftest import DATA, agree

REF = json.loads((DATA / "resolvent_reference.json").read_text())["points"]


@pytest.mark.parametrize("dps", [15, 30, 50])
@pytest.mark.parametrize("pt", REF, ids=lambda p: f"{p['phi']},{p['psi']},{p['lam']},{p['c1'][:5]},{p['c_gt1'][:5]}")
def test_against_independent_reference(pt, dps):
    r = resolvent_from_constants(pt["phi"], pt["psi"], pt["lam"], pt["c1"], pt["c_gt1"], dps=dps)
    assert agree(r.m1, pt["m1"], dps) and agree(r.m2, pt["m2"], dps)
    # central-difference reference derivatives carry ~20 digits (step 1e-20 at 90-digit working precision)
    dd = min(dps, 18)
    assert agree(r.dm1_dlam, pt["dm1_dlam"], dd) and agree(r.dm2_dlam, pt["dm2_dlam"], dd)
    assert r.residual < mpmath.mpf(10) ** (-dps)


def test_spec_reference_values_tanh_at_30_digits():
    # spike-theory.md §11, relative tolerance 1e-8 (values printed to 10 digits)
    r = resolvent("tanh", 1, 2, "1/2", dps=30)
    for got, want in ((r.m1, "0.8225195578"), (r.m2, "0.6885022997"), (r.dm1_dlam, "-1.462254451"),
                      (r.dm2_dlam, "-1.088146673")):
        assert abs(got / mpmath.mpf(want) - 1) < 1e-8


def test_other_real_root_reported_and_trivial_root_never_returned():
    # spike-theory.md §11 row 1: the other real root is (-7.0807, -0.6421); the generic-solver trap (0, 0)
    r = resolvent_from_constants("1/2", "1/2", "1/10", 1, "1/2", dps=20)
    reals = [(a, b) for a, b in r.roots if b is not None]
    assert any(abs(a + mpmath.mpf("7.0807")) < 1e-3 and abs(b + mpmath.mpf("0.6421")) < 1e-3 for a, b in reals)
    assert r.m1 > 0 and r.m2 > 0


def test_symbolic_system_equals_ap20():
    G1, G2 = system()
    s67, s68 = ap20_system()
    psi = [s for s in G1.free_symbols if s.name == "psi"][0]
    assert sp.simplify(s67 / psi - G2) == 0
    assert sp.simplify(-s68 - G1) == 0


@pytest.mark.parametrize("kappa", ["1/3", "2", "7/5"])
def test_scale_invariance(kappa):
    k = sp.Rational(kappa)
    a = resolvent_from_constants("1/2", "3/2", "1/5", "4/5", "1/3", dps=30)
    b = resolvent_from_constants("1/2", "3/2", k**2 / 5, k * sp.Rational(4, 5), k / 3, dps=30)
    with mpmath.workdps(40):
        kk = mpmath.mpf(k.p) / k.q
        assert agree(b.m1 * kk**2, a.m1, 28) and agree(b.m2 * kk**2, a.m2, 28)
        assert agree(b.dm1_dlam * kk**4, a.dm1_dlam, 28)


def test_large_lambda_asymptotics():
    # spike-theory.md §6.3 item 7: error O(lambda^-3)
    phi, psi, c1, cg = mpmath.mpf(1) / 2, mpmath.mpf(3) / 2, mpmath.mpf("0.8"), mpmath.mpf("0.4")
    errs = []
    for L in (100, 1000):
        r = resolvent_from_constants("1/2", "3/2", L, "0.8", "0.4", dps=30)
        with mpmath.workdps(40):
            a1 = phi / psi * (mpmath.mpf(1) / L - phi / psi * (c1**2 + cg**2) / L**2)
            a2 = phi / psi * (mpmath.mpf(1) / L - (c1**2 * (1 + phi) + cg**2 * phi) / psi / L**2)
            errs.append(max(abs(r.m1 - a1), abs(r.m2 - a2)) * L**3)
            assert abs(r.dm1_dlam + phi / psi / L**2) * L**3 < 10
    assert errs[1] < 2 * errs[0] and errs[1] < 10   # bounded by C lambda^-3


def test_derivatives_negative_and_sanity():
    r = resolvent_from_constants(2, "1/3", "1/50", "1/2", "1/2", dps=20)
    assert r.dm1_dlam < 0 and r.dm2_dlam < 0
    assert 0 < r.lam * r.psi * r.m1 / r.phi < 1


def test_c_gt1_zero_degree_drop():
    r = resolvent_from_constants(2, 2, 2, 1, 0, dps=30)
    assert agree(r.m1, next(p["m1"] for p in REF if p["c_gt1"] == "0"), 30)


def test_bad_inputs():
    with pytest.raises(InvalidParameterError):
        resolvent_from_constants(1, 1, 0, 1, 1)
    with pytest.raises(InvalidParameterError):
        resolvent_from_constants(-1, 1, 1, 1, 1)
    with pytest.raises(HypothesisError):
        resolvent_from_constants(1, 1, 1, 0, 1)
    with pytest.raises(HypothesisError):
        resolvent("He2", 1, 1, 1)                      # c1 = 0


def test_sweep_matches_mp_and_handles_random_draws():
    # spike-theory.md §6.3 item 3: random draws always have exactly one positive root
    rng = np.random.default_rng(0)
    n = 2000
    P, S = np.exp(rng.uniform(np.log(0.03), np.log(30), (2, n)))
    L = np.exp(rng.uniform(np.log(1e-4), np.log(10), n))
    C1 = rng.uniform(0.1, 3.2, n)
    CG = rng.uniform(0.01, 3.2, n)
    m1, m2, d1, d2, res = resolvent_sweep(P, S, L, C1, CG)
    assert not np.isnan(m1).any()
    assert np.all(m1 > 0) and np.all(m2 > 0) and np.all(d1 < 0) and np.all(d2 < 0)
    for i in range(0, n, 250):
        r = resolvent_from_constants(*(repr(float(v[i])) for v in (P, S, L, C1, CG)), dps=20)
        assert m1[i] == pytest.approx(float(r.m1), rel=1e-10)
        assert d2[i] == pytest.approx(float(r.dm2_dlam), rel=1e-8)


@pytest.mark.slow     # 24 s of simulated traces (slow stage)
@pytest.mark.parametrize("student", ["tanh", "relu_centered"])
def test_against_simulated_traces(student):
    # spike-theory.md §9.4/§9.5: traces at n = 2000; tolerance 4 s.e. + O(1/n) finite-size bias
    sim = sim_resolvent(student, n=2000, phi=1, psi=2, lam=[0.2, 1.0], reps=3, seed=21)
    for lam in (0.2, 1.0):
        th = resolvent(student, 1, 2, repr(lam))
        for key, val in (("m1", th.m1), ("m2", th.m2), ("dm1_dlam", th.dm1_dlam), ("dm2_dlam", th.dm2_dlam)):
            st = sim[f"{key}@{lam:g}"]
            assert abs(st.mean - float(val)) <= 4 * st.se + abs(float(val)) / 2000, (student, lam, key, st.mean, val)


@pytest.mark.parametrize("dps", [15, 30, 50])
def test_error_estimates_honest_against_60_digit_reference(dps):
    """The stated errors of m1, m2 and their lambda-derivatives cover the distance to the independent
    60-digit reference (tests/data/precompute/resolvent_reference.py), and vouch for >= dps digits."""
    for p in REF:
        r = resolvent_from_constants(p["phi"], p["psi"], p["lam"], p["c1"], p["c_gt1"], dps)
        with mpmath.workdps(80):
            for k in ("m1", "m2", "dm1_dlam", "dm2_dlam"):
                ref = mpmath.mpf(p[k])
                ref_err = abs(ref) * mpmath.mpf(10) ** -(len(p[k].lower().split("e")[0].lstrip("-").replace(".", "").lstrip("0")) - 1)
                if k.startswith("dm"):       # central differences with h = 1e-20 in the reference: ~30 digits
                    ref_err = max(ref_err, abs(ref) * mpmath.mpf(10) ** -30)
                assert abs(getattr(r, k) - ref) <= r.errors[k] + ref_err, (p, k)
        assert min(r.digits.values()) >= dps
