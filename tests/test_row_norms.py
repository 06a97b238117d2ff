"""The row-norm correction of the sRF theory (docs/theory/srf-theory.md §2 "Row norms", §4.11;
docs/studies/mechanism.md).  The independent solver of derivations/m_row_norm_saddle.py and the constants of
derivations/l_row_norm_heterogeneity.py are run by tests/test_derivations.py; here: the exact reduction, the
precision contract on the user's path, the refusals and the CLI."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from onestep_theory.core.errors import InvalidParameterError
from onestep_theory.srf import srf_solve
from onestep_theory.core.precision import workdps
from onestep_theory.srf.features.kappa import srf_setup
from onestep_theory.srf.features.mapping import row_norm_params
from onestep_theory.srf.single.saddle import MapOptions, fp_map

CASE_A = dict(alpha0=20, eta=3, alpha=3, beta=1, lam="0.1")


def test_zero_correction_is_result_3_3_exactly():
    """k = s = 0 in the corrected map gives the printed map bit for bit (float64 and mpf)."""
    for dps in (None, 20):
        with workdps(dps or 15):
            S = srf_setup("tanh", "sin", "1.134", "1.019", "0.97", curvature=True, mp=bool(dps),
                          digits=22 if dps else 16)
        o = MapOptions(3, 1, 0.1, 0)
        x = tuple(S.w[0] * 0 + v for v in (0.3, 0.2, 0.1, 0.4, 0.5, 0.6, 0.7))
        plain = fp_map(x, S, o)
        zero = fp_map(x, S, dataclasses.replace(o, row_norms=(0 * S.w[0], 0 * S.w[0])))
        assert [float(v) for v in plain[0]] == [float(v) for v in zero[0]]
        assert float(plain[3]) == float(zero[3])


def test_row_norm_params_infinite_alpha0_and_no_step():
    k, s2, err = row_norm_params("tanh", "sin", "inf", 3, 0, "1.2")
    assert s2 == 0 and float(k) < 0
    k0, s20, _ = row_norm_params("tanh", "sin", 20, 0, 0, 0)
    assert k0 == 0 and s20 == 0


def test_dmu0_nodes_against_quadrature():
    """The setup's d mu0/dc = E sigma''(r kappa + sqrt(c) z)/2 at 20 digits, against mpmath quadrature at 40."""
    import mpmath as mp

    with workdps(20):
        S = srf_setup("tanh", "sin", "1.134", "1.019", "0.97", curvature=True, mp=True, digits=22)
    idx = np.argsort([abs(float(k) - 0.7) for k in S.kappa])[0]
    k = S.kappa[idx]
    with mp.workdps(40):
        r, c = mp.mpf("1.134"), mp.mpf("1.019")
        ref = mp.quad(lambda z: -mp.tanh(r * k + mp.sqrt(c) * z) * mp.sech(r * k + mp.sqrt(c) * z) ** 2 * mp.npdf(z),
                      [-mp.inf, -r * k / mp.sqrt(c), mp.inf])
    assert abs(S.dmu0[idx] - ref) < mp.mpf(10) ** -19 * abs(ref)


@pytest.mark.slow
def test_float64_claimed_error_is_a_bound():
    """The float64 corrected test error and its claimed error, against the same quantity at 25 digits."""
    ref = srf_solve("tanh", "sin", **CASE_A, row_norms=True, dps=25)
    f64 = srf_solve("tanh", "sin", **CASE_A, row_norms=True)
    assert f64.digits >= 10
    assert abs(f64.test_error - ref.test_error) <= f64.abs_error


@pytest.mark.slow
@pytest.mark.parametrize("dps", [15, 30, 50])
def test_claimed_error_is_a_bound(dps):
    """The corrected test error at dps, its claimed error checked against the same quantity at dps + 20."""
    sol = srf_solve("tanh", "sin", **CASE_A, row_norms=True, dps=dps)
    ref = srf_solve("tanh", "sin", **CASE_A, row_norms=True, dps=dps + 20)
    assert sol.digits >= dps
    assert abs(sol.test_error - ref.test_error) <= sol.abs_error
    f64 = srf_solve("tanh", "sin", **CASE_A, row_norms=True)
    assert abs(f64.test_error - ref.test_error) <= f64.abs_error


@pytest.mark.slow
def test_printed_digits_on_the_user_path(tmp_path):
    """`srf --row-norms --dps 30 --json` as a user types it (exact strings, alpha0 and eta): the printed value within
    its printed error of the dps-50 reference, and 30 digits claimed; the network note names the correction."""
    ref = srf_solve("tanh", "sin", **CASE_A, row_norms=True, dps=50)
    cmd = [sys.executable, "-m", "onestep_theory", "srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20",
           "--eta", "3", "--alpha", "3", "--beta", "1", "--lam", "1/10", "--row-norms", "--dps", "30"]
    out = subprocess.run(cmd + ["--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    got, err = Fraction(d["test_error"]), Fraction(d["abs_error"])
    assert abs(got - Fraction(mpmath.nstr(ref.test_error, 55))) <= err + Fraction(1, 10**54)
    assert int(d["digits"]) >= 30
    assert d["options"]["row_norms"] is True
    assert Fraction(d["row_norm_k"]) < 0
    text = subprocess.run(cmd, capture_output=True, text=True).stdout
    assert "row_norm_k" in text and "row_norm_s2" in text


@pytest.mark.parametrize("kw, match", [
    (dict(r=1.1, c=1.02, gamma=0.97, alpha=3, beta=1, lam=0.1), "row_norms"),
    (dict(CASE_A, loss="logistic"), "row_norms"),
])
def test_refusals(kw, match):
    with pytest.raises(InvalidParameterError, match=match):
        srf_solve("tanh", "sign" if "loss" in kw else "sin", **kw, row_norms=True)


def test_kinked_or_non_odd_student_refused():
    from onestep_theory.srf.features.mapping import NonOddWarning

    with pytest.raises(InvalidParameterError, match="twice-differentiable"):
        srf_solve("x + x*Abs(x)/4", "sin", **CASE_A, row_norms=True)
    with pytest.warns(NonOddWarning), pytest.raises(InvalidParameterError, match="odd student"):
        srf_solve("tanh(x) + x**2/10", "sin", **CASE_A, row_norms=True, strict_odd=False)


def test_cli_row_norms_with_groups_refused():
    out = subprocess.run([sys.executable, "-m", "onestep_theory", "srf", "--student", "tanh", "--teacher", "sin",
                          "--alpha0", "20", "--eta", "3", "--alpha", "2", "--beta", "1", "--lam", "0.1",
                          "--readout", "1:0.5,2:0.5", "--row-norms"], capture_output=True, text=True)
    assert out.returncode == 2 and "--row-norms" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_explicit_zero_heterogeneity_is_result_3_3():
    """row_norms=(0, 0) with any (r, c, gamma): the same solution as Result 3.3, bit for bit."""
    kw = dict(r="1.1340555093", c="1.0189732005", gamma="0.9718544445", alpha=3, beta=1, lam="0.1")
    plain = srf_solve("tanh", "sin", **kw)
    zero = srf_solve("tanh", "sin", **kw, row_norms=(0, "0"))
    assert zero.test_error == plain.test_error and zero.order == plain.order
    assert zero.options["row_norms"] == ["0", "0"]


@pytest.mark.parametrize("bad", [(0, -1), ("x", 1), (1, 2, 3), "yes"])
def test_explicit_heterogeneity_refusals(bad):
    with pytest.raises(InvalidParameterError, match="row_norms"):
        srf_solve("tanh", "sin", r=1, c=1, gamma=1, alpha=1, beta=1, lam=1, row_norms=bad)


# ------------------------------------------------------------------ the measured map that `srf` quotes
def test_network_map_is_consistent():
    """Every entry of the shipped map: both theory values are the package's (float64 solve of the entry's
    setting), and the two gaps describe the same network mean."""
    from onestep_theory.srf.features.network_map import _entries

    entries = _entries()
    assert len(entries) >= 8
    for e in entries[:3]:
        p = e["params"]
        kw = dict(alpha0=p["alpha0"], eta=p["eta"], alpha=p["alpha"], beta=p["beta"], lam=p["lam"])
        th = float(srf_solve(p["student"], p["teacher"], **kw).test_error)
        tc = float(srf_solve(p["student"], p["teacher"], **kw, row_norms=True).test_error)
        assert abs(th - e["theory"]) < 1e-11 * th and abs(tc - e["theory_corrected"]) < 1e-11 * tc
        assert e["se"] > 0 and e["seeds"] >= 2


@pytest.mark.slow      # default-suite budget: seven solves with the row-norm map, 7 s
def test_srf_quotes_the_map():
    from onestep_theory.srf.features.network_map import network_gap

    g = network_gap("tanh", "sin", alpha0="20", eta="3", alpha="3", beta="1", lam="1/10")
    assert g["match"] == "exact" and g["entry"]["setting"] == "case A"
    e = g["entry"]
    net_u = e["uncorrected"]["theory"] * (1 + e["uncorrected"]["gap_percent"] / 100)
    net_c = e["corrected"]["theory"] * (1 + e["corrected"]["gap_percent"] / 100)
    assert abs(net_u - net_c) < 1e-12
    far = network_gap("tanh", "sin", alpha0="7", eta="3", alpha="3", beta="1", lam="1/10")
    assert far["match"] == "between"
    base = [sys.executable, "-m", "onestep_theory", "srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20",
            "--eta", "3", "--alpha", "3", "--beta", "1", "--lam", "0.1"]
    out = subprocess.run(base + ["--row-norms"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "against the one-step network: at this setting" in out.stdout
    assert "with the row-norm correction" in out.stdout and "at this setting" in out.stdout
    js = json.loads(subprocess.run(base + ["--json"], capture_output=True, text=True).stdout)
    assert js["network"]["entry"]["setting"] == "case A" and "gap_percent" in js["network"]["entry"]["uncorrected"]


def test_study_compares_with_the_corrected_theory_on_the_same_tasks(tmp_path):
    """`row_norms` is a theory-only option of the giant-step study: the tasks (seeds, store keys) are the same, so
    a study asked again with it reuses every task and only its theory changes (to srf_solve(row_norms=True))."""
    from onestep_theory.study import run_study

    params = dict(student="tanh", teacher="sin", alpha=3, beta=1, lam=0.1, alpha0=20, eta=3, n_test=500)
    store = tmp_path / "s.sqlite"
    first = run_study("giant-step", params, [40, 60], 2, store=str(store))
    again = run_study("giant-step", dict(params, row_norms=True), [40, 60], 2, store=str(store))
    assert first.run["executed"] == 4 and again.run["executed"] == 0 and again.run["reused"] == 4
    corr = srf_solve("tanh", "sin", alpha0="20", eta="3", alpha="3", beta="1", lam="0.1", row_norms=True)
    assert abs(again.theory - float(corr.test_error)) < 1e-12
    assert again.params["row_norms"] is True
    g1, g2 = first.sizes[0]["gap"], again.sizes[0]["gap"]
    assert abs((g2 - g1) - (first.theory - again.theory)) < 1e-12
