"""Simulator: ridge algebra, reproducibility, statistical agreement with closed forms, bad input."""

import json
import math

import numpy as np
import pytest

from onestep_theory import InvalidParameterError
from onestep_theory.srf.mapping import srf_params
from onestep_theory.simulate import (Ridge, sim_giant_step, sim_resolvent, sim_spectrum, sim_spike_model, sim_spikes,
                                     sim_srf, sizes_spike, spawn)

from .conftest import run_cli


def _within(stat, ref, n_se, rel_bias=0.0):
    """|mean - ref| <= n_se * se + rel_bias * |ref|: statistical error plus a documented finite-size bias."""
    return abs(stat.mean - ref) <= n_se * stat.se + rel_bias * abs(ref)


# ---------------------------------------------------------------- ridge algebra
@pytest.mark.parametrize("shape", [(60, 25), (25, 60)])
@pytest.mark.parametrize("method", ["cholesky", "eigh"])
def test_ridge_against_normal_equations(shape, method):
    rng = np.random.default_rng(1)
    F = rng.standard_normal(shape)
    y = rng.standard_normal(shape[0])
    rg = Ridge(F, y, method=method)
    for mu in (1e-3, 0.7, 30.0):
        a_ref = np.linalg.solve(F.T @ F + mu * np.eye(shape[1]), F.T @ y)       # reference only
        np.testing.assert_allclose(rg.coef(mu), a_ref, rtol=1e-9, atol=1e-11)
        obj = float(np.sum((y - F @ a_ref) ** 2) + mu * a_ref @ a_ref)
        assert rg.objective(mu) == pytest.approx(obj, rel=1e-9)


# ---------------------------------------------------------------- seeds
def test_same_seed_identical_different_seed_differs():
    kw = dict(n=300, phi=1, psi=2, lam=[0.3, 1.0], reps=2)
    a = sim_resolvent("tanh", seed=7, **kw).to_dict()["stats"]
    b = sim_resolvent("tanh", seed=7, **kw).to_dict()["stats"]
    c = sim_resolvent("tanh", seed=8, **kw).to_dict()["stats"]
    assert a == b
    assert a != c
    g1 = sim_giant_step("tanh", "sin", 100, alpha0=2, eta=1, alpha=1, beta=1, n_test=500, seed=3)
    g2 = sim_giant_step("tanh", "sin", 100, alpha0=2, eta=1, alpha=1, beta=1, n_test=500, seed=3)
    assert g1.to_dict()["stats"] == g2.to_dict()["stats"]


def test_spawn_streams_independent():
    (w1, t1, s1), (w2, _, _) = spawn(0, 2)
    assert w1.random() != w2.random() and t1.random() != s1.random()


# ---------------------------------------------------------------- statistics against closed forms
def test_resolvent_traces_against_spec_values():
    # spike-theory.md §11: tanh, (phi, psi, lambda) = (1, 2, 0.5); theory from §6.3/6.4.
    # Allowance: O(1/n) finite-size bias of the traces (spec: 3-4 digits at n = 1500) -> 1/n relative.
    res = sim_resolvent("tanh", n=2000, phi=1, psi=2, lam=0.5, reps=4, seed=11)
    ref = {"m1": 0.8225195578, "m2": 0.6885022997, "dm1_dlam": -1.462254451, "dm2_dlam": -1.088146673}
    for k, v in ref.items():
        assert _within(res[k], v, 4, 1 / 2000), (k, res[k].mean, res[k].se, v)


def test_resolvent_gaussian_equivalent_bulk():
    # generic student c1 = 1, c_>1 = 0.5 via He1 + He2/(2 sqrt 2): spec row 3 (phi, psi, lam) = (1, 2, 0.5)
    res = sim_resolvent("He1 + He2/(2*sqrt(2))", n=1500, phi=1, psi=2, lam=0.5, reps=4, seed=2, bulk="gaussian")
    assert _within(res["m1"], 0.7044128307, 4, 1 / 1500)
    assert _within(res["m2"], 0.5469119973, 4, 1 / 1500)


def test_giant_step_measured_parameters_against_result_3_1():
    # srf-theory.md §10.4: at d = p ~ 1000-1500 r, gamma agree within about 3 %, c within about 0.3 %
    # (finite-size bias); the allowance below is that documented bias plus 3 standard errors.
    res = sim_giant_step("tanh", "sin", 1000, alpha0=2, eta=2, alpha=1, beta=1, lam=0.1, n_test=4000, reps=3,
                         seed=0)
    th = srf_params("tanh", "sin", 2, 2)
    assert _within(res["r"], float(th.r), 3, 0.03)
    assert _within(res["gamma"], float(th.gamma), 3, 0.03)
    assert _within(res["c"], float(th.c), 3, 0.003)


def test_srf_rf_limit_odd_student_mean_overlap_zero():
    # r = 0, odd student: W -> -W (a symmetry of the law of W) maps a -> -a, so E m = 0 exactly at any size
    res = sim_srf("tanh", "sin", 300, r=0, c=1, gamma=0.5, alpha=2, beta=1, lam=0.1, n_test=2000, reps=6, seed=4)
    assert abs(res["m"].mean) <= 4 * res["m"].se
    assert res["q2"].mean > 0 and res["test_error"].mean > 0


def test_spectrum_top_eigenvalue_scales_with_n():
    """srf-theory.md §7 (191): lambda_max(A) = n E mu0^2 + O(1) for r > 0, the O(1) being of the bulk's size;
    at r = 0 (odd sigma) the spike is absent and the top eigenvalue is the bulk's right edge (theory density
    support), up to Tracy-Widom fluctuations of relative size p^(-2/3)."""
    import numpy as np

    from onestep_theory.srf.spectrum import density, mean_spike

    xs = np.linspace(0.01, 6, 1200)
    dens = density("tanh", xs, r=0.0, c=1, alpha=2, beta=1)
    edge = xs[np.nonzero(dens > 1e-3 * dens.max())[0][-1]]
    for d in (300, 600):
        off = sim_spectrum("tanh", d, r=0.0, c=1, gamma=1, alpha=2, beta=1, reps=3, seed=5)["top_eigenvalue"]
        on = sim_spectrum("tanh", d, r=1.2, c=1, gamma=1, alpha=2, beta=1, reps=3, seed=5)["top_eigenvalue"]
        assert abs(off.mean - edge) <= 3 * off.se + 3 * edge * d ** (-2 / 3)
        assert abs(on.mean - mean_spike("tanh", r=1.2, c=1, alpha=2, d=d)) <= 3 * on.se + edge


def test_spikes_protocol_runs_and_gains_positive_in_window_one():
    res = sim_spikes("relu_centered", "He1", n=600, d=300, N=600, lam=0.1, alpha=0.2, noise_var=1, reps=3,
                     n_test=1200, singular=True, ell=2, seed=1)
    assert res["train_gain"].mean > 0
    # exact finite-n mean: E|beta|^2 = [(d-1) E y^2 + E y^2 z^2]/n + (n-1)/n c*1^2, with y = z + eps, z = beta*.x:
    # E y^2 = 2, E y^2 z^2 = E z^4 + E z^2 = 4, c*1 = 1  (its n -> infinity limit is b^2 = 1 + 2 phi)
    n, d = 600, 300
    exact = ((d - 1) * 2 + 4) / n + (n - 1) / n
    assert abs(res["beta_norm2"].mean - exact) <= 3 * res["beta_norm2"].se
    assert len(res.extra["singular_values"][0]) >= 3


def test_spike_model_finite_approaches_limit():
    # B-finite spikes (strength gamma_k = c1^k c_k eta^k, eta = n^alpha) approach the unpenalised B-limit as alpha
    # grows (spike-theory.md §5.2): the paired gap Delta_limit - Delta_finite shrinks from alpha = 0.1 to 0.3.
    # Same seed -> same data and weights in both modes and at both alphas, so the comparison is paired.
    import numpy as np

    kw = dict(n=800, phi=0.5, psi=0.5, lam=0.1, ell=1, noise_var=1, reps=4, seed=3)
    lim = np.array(sim_spike_model("relu_centered", "He1", mode="limit", **kw)["delta"].values)
    gaps = [lim - np.array(sim_spike_model("relu_centered", "He1", mode="finite", alpha=a, **kw)["delta"].values)
            for a in (0.1, 0.3)]
    shrink = gaps[0] - gaps[1]
    assert shrink.mean() > 3 * shrink.std(ddof=1) / math.sqrt(shrink.size)
    assert gaps[0].mean() > 3 * gaps[0].std(ddof=1) / math.sqrt(gaps[0].size)   # finite spikes are penalised


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("call", [
    lambda: sizes_spike(n=0, d=10, N=10),
    lambda: sizes_spike(n=10, d=10, N=10, phi=2.0),           # mismatched sizes
    lambda: sim_resolvent("tanh", n=100, phi=1, psi=-1),
    lambda: sim_resolvent("tanh", n=100, phi=1, psi=1, lam=0),
    lambda: sim_resolvent("tanh", n=100, phi=1, psi=1, lam=-1),
    lambda: sim_resolvent("tanh", n=100, phi=1, psi=1, reps=0),
    lambda: sim_resolvent("tanh", n=100, phi=1, psi=1, bulk="nope"),
    lambda: sim_srf("tanh", "sin", 50, r=1, c=1, gamma=2, alpha=1, beta=1),
    lambda: sim_srf("tanh", "sin", 50, r=1, c=-1, gamma=0.5, alpha=1, beta=1),
    lambda: sim_giant_step("tanh", "sin", 50, alpha0=-1, eta=1, alpha=1, beta=1),
])
def test_bad_input_raises(call):
    with pytest.raises(InvalidParameterError):
        call()


@pytest.mark.parametrize("args", [
    ("simulate", "resolvent", "--student", "tanh", "--phi", "1", "--psi", "2", "--n", "100", "--lam", "0"),
    ("simulate", "resolvent", "--student", "tanh", "--phi", "1", "--psi", "-2", "--n", "100"),
    ("simulate", "spikes", "--student", "tanh", "--teacher", "He1", "--n", "0", "--phi", "1", "--psi", "1"),
    ("simulate", "unknown"),
    ("simulate", "srf", "--student", "tanh", "--teacher", "sin", "--d", "50", "--alpha", "1", "--beta", "1",
     "--r", "1", "--c", "1", "--gamma", "3"),
])
def test_cli_bad_input_exit_2(args):
    rc, _, err = run_cli(*args)
    assert rc == 2 and "Traceback" not in err
    assert len([ln for ln in err.splitlines() if ln.strip()]) == 1


def test_cli_json_shape():
    rc, out, _ = run_cli("simulate", "resolvent", "--student", "tanh", "--phi", "1", "--psi", "2", "--n", "200",
                         "--reps", "2", "--json", "--quiet")
    assert rc == 0
    d = json.loads(out)
    st = d["stats"]["m1"]
    assert set(st) == {"mean", "se", "values"} and len(st["values"]) == 2
    assert d["params"]["N"] == 100


@pytest.mark.slow
def test_cli_acceptance_giant_step_and_resolvent():
    rc, out, _ = run_cli("simulate", "giant-step", "--student", "tanh", "--teacher", "sin", "--d", "1000", "--beta",
                         "1", "--alpha0", "2", "--eta", "2", "--alpha", "1", "--lam", "0.1", "--seed", "0", "--reps",
                         "2", "--json", "--quiet")
    d = json.loads(out)
    for k in ("r", "c", "gamma"):
        assert abs(d["stats"][k]["mean"] / float(d["theory"][k]) - 1) < 0.03
    rc, out, _ = run_cli("simulate", "resolvent", "--student", "tanh", "--phi", "1", "--psi", "2", "--lam", "0.5",
                         "--n", "2000", "--reps", "2", "--json", "--quiet")
    d = json.loads(out)
    assert abs(d["stats"]["m1"]["mean"] / 0.822519 - 1) < 0.01
    assert abs(d["stats"]["m2"]["mean"] / 0.688502 - 1) < 0.01
