"""Ablations of the trained first layer (onestep_theory.simulate.ablation; docs/studies/mechanism.md).

Each variant is checked against the identity that defines it (exactly, on random matrices), the network against
sim_giant_step with the same seed, the changed steps against an independent dense computation, and the study and
CLI paths; the finding of docs/studies/mechanism.md (row-norm heterogeneity) is checked statistically (slow).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from onestep_theory.core.errors import InvalidParameterError
from onestep_theory.simulate import sim_ablation, sim_giant_step
from onestep_theory.simulate.ablation import VARIANTS, build_variants, step_matrices, variant_names
from onestep_theory.simulate.base import Fn

CASE_A = dict(alpha0=20, eta=3, alpha=3, beta=1, lam=0.1)


@pytest.fixture(scope="module")
def layers():
    """A random W0 (unit rows), a step D with a strong common row, theta, and every variant."""
    rng = np.random.default_rng(11)
    p, d = 40, 30
    W0 = rng.standard_normal((p, d))
    W0 /= np.linalg.norm(W0, axis=1, keepdims=True)
    theta = rng.standard_normal(d)
    theta /= np.linalg.norm(theta)
    D = 0.8 * np.outer(np.ones(p), theta + 0.3 * rng.standard_normal(d) / math.sqrt(d)) \
        + 0.2 * rng.standard_normal((p, d)) / math.sqrt(d)
    steps = {"no_f0": 1.1 * D, "degree2": 0.9 * D}
    W, st = build_variants(VARIANTS, W0, D, steps, theta, np.random.default_rng(3))
    return W0, D, theta, W, st


def test_variant_identities(layers):
    W0, D, theta, W, st = layers
    p, d = W0.shape
    dbar = D.mean(axis=0)
    F = D - dbar
    B = W0 + F
    c = float(np.sum(B * B)) / p
    vh = dbar / np.linalg.norm(dbar)
    assert set(W) == set(VARIANTS)
    np.testing.assert_allclose(W["network"], W0 + D, rtol=0, atol=1e-15)
    assert st["r"] == pytest.approx(np.linalg.norm(dbar), rel=1e-14)
    assert st["c"] == pytest.approx(c, rel=1e-14)
    assert st["gamma"] == pytest.approx(theta @ vh, rel=1e-14)
    np.testing.assert_allclose(W["srf"], math.sqrt(c) * W0 + dbar, atol=1e-14)
    # ideal spike: the trained bulk plus r v with |v| = 1, v.theta = gamma
    v = (W["ideal_spike"] - B)[0] / st["r"]
    np.testing.assert_allclose(W["ideal_spike"] - B, np.outer(np.ones(p), v) * st["r"], atol=1e-14)
    assert np.linalg.norm(v) == pytest.approx(1, abs=1e-14) and v @ theta == pytest.approx(st["gamma"], abs=1e-14)
    # equal spike: every row's step has the same component along vhat (the mean one, r)
    S = (W["equal_spike"] - W0) @ vh
    np.testing.assert_allclose(S, st["r"], atol=1e-14)
    np.testing.assert_allclose((W["equal_spike"] - W["network"]) @ np.linalg.svd(np.eye(d) - np.outer(vh, vh))[0][:, :d - 1],
                               0, atol=1e-14)
    # equal norm: every bulk row has norm sqrt(c) and the direction of the trained bulk row
    Bn = W["equal_norm"] - dbar
    np.testing.assert_allclose(np.linalg.norm(Bn, axis=1), math.sqrt(c), rtol=1e-14)
    np.testing.assert_allclose(Bn / np.linalg.norm(Bn, axis=1, keepdims=True), B / np.linalg.norm(B, axis=1, keepdims=True),
                               atol=1e-14)
    # homogeneous: both at once
    Bh = W["homogeneous"] - dbar
    np.testing.assert_allclose(np.linalg.norm(Bh, axis=1), math.sqrt(c), rtol=1e-14)
    # no_self: the fluctuation of each row is orthogonal to its own initial row; the spike is untouched
    Fs = W["no_self"] - W0 - dbar
    np.testing.assert_allclose(np.sum(Fs * W0, axis=1), 0, atol=1e-15)
    np.testing.assert_allclose(Fs - F, -np.sum(F * W0, axis=1)[:, None] * W0, atol=1e-15)
    # no_shared: the step is orthogonal to the shared direction W0^T 1
    sh = W0.sum(axis=0) / np.linalg.norm(W0.sum(axis=0))
    np.testing.assert_allclose((W["no_shared"] - W0) @ sh, 0, atol=1e-14)
    # isotropic: the rank-one step plus a fluctuation of the same Frobenius norm
    E = W["isotropic"] - W0 - dbar
    assert np.linalg.norm(E) == pytest.approx(np.linalg.norm(F), rel=1e-13)
    np.testing.assert_allclose(W["no_f0"], W0 + 1.1 * D, atol=1e-15)
    np.testing.assert_allclose(W["degree2"], W0 + 0.9 * D, atol=1e-15)
    # shuffled norms: the same multiset of bulk row norms, each row keeps its direction
    Bs = W["shuffled_norm"] - dbar
    np.testing.assert_allclose(np.sort(np.linalg.norm(Bs, axis=1)), np.sort(np.linalg.norm(B, axis=1)), rtol=1e-14)
    np.testing.assert_allclose(Bs / np.linalg.norm(Bs, axis=1, keepdims=True), B / np.linalg.norm(B, axis=1, keepdims=True),
                               atol=1e-14)
    # fitted norms: squared bulk norms exactly affine in w0_i . vhat, with the least-squares slope
    Bf = W["fitted_norm"] - dbar
    nf, nb, ev = np.sum(Bf * Bf, axis=1), np.sum(B * B, axis=1), W0 @ vh
    slope = float(ev @ (nb - nb.mean())) / float(ev @ ev)
    np.testing.assert_allclose(nf, nb.mean() + slope * ev, rtol=1e-13)
    # srf_rescaled at slope 0 is the sRF surrogate; at slope k the squared norms are c + k r w0_i . vhat
    np.testing.assert_allclose(W["srf_rescaled"], W["srf"], atol=1e-14)
    Wk, _ = build_variants(("network", "srf_rescaled"), W0, D, {}, theta, np.random.default_rng(0), slope=-0.3)
    nk = np.sum((Wk["srf_rescaled"] - dbar) ** 2, axis=1)
    np.testing.assert_allclose(nk, c - 0.3 * st["r"] * (W0 @ vh), rtol=1e-13)


def test_gaussian_bulk_row_covariance():
    """Rows of the Gaussian bulk have covariance I/d + F^T F / p: the average of many draws."""
    rng = np.random.default_rng(5)
    p, d = 12, 6
    W0 = rng.standard_normal((p, d))
    W0 /= np.linalg.norm(W0, axis=1, keepdims=True)
    D = rng.standard_normal((p, d)) * 0.7
    F = D - D.mean(axis=0)
    target = np.eye(d) / d + F.T @ F / p
    acc, m = np.zeros((d, d)), 1500
    for k in range(m):
        W, st = build_variants(("network", "gaussian_bulk"), W0, D, {}, np.eye(d)[0], np.random.default_rng(k))
        G = W["gaussian_bulk"] - st["dbar"]
        acc += G.T @ G / p
    # each entry of a sample covariance of p rows has sd <= sqrt(2) max diag / sqrt(p); m draws
    tol = 5 * math.sqrt(2) * float(np.max(np.diag(target))) / math.sqrt(p * m)
    np.testing.assert_allclose(acc / m, target, atol=tol)


def test_step_matrices_against_dense():
    """The blocked step, its f0-free and degree-2 versions against one dense computation (two blocks)."""
    from onestep_theory.simulate import ablation

    rng = np.random.default_rng(2)
    s = Fn("tanh", "student")
    n0, p, d = ablation.CHUNK + 37, 9, 7
    X0 = rng.standard_normal((n0, d))
    W0 = rng.standard_normal((p, d)) / math.sqrt(d)
    y0 = np.sin(X0[:, 0])
    st = step_matrices(s, X0, y0, W0, 2.5, ("no_f0", "degree2"))
    Z = X0 @ W0.T
    e = y0 - np.tanh(Z).sum(axis=1) / p
    dfz = 1 - np.tanh(Z) ** 2
    np.testing.assert_allclose(st["D"], 2.5 / n0 * (dfz * e[:, None]).T @ X0, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(st["no_f0"], 2.5 / n0 * (dfz * y0[:, None]).T @ X0, rtol=1e-12, atol=1e-14)
    # degree 2 of tanh' = 1 - tanh^2: mu1 + b2 He2 with b2 = 3 a3 (He_k' = k He_{k-1})
    b0, b2 = s.c(1), 3 * s.c(3)
    d2 = b0 + b2 * (Z * Z - 1)
    np.testing.assert_allclose(st["degree2"], 2.5 / n0 * (d2 * e[:, None]).T @ X0, rtol=1e-12, atol=1e-14)


def test_degree2_is_the_step_for_a_cubic_student():
    """For sigma of degree 3, sigma' has degree 2: the truncated step is the step (an exact identity)."""
    rng = np.random.default_rng(4)
    s = Fn("x**3/6 + x", "student")
    X0, W0 = rng.standard_normal((300, 5)), rng.standard_normal((4, 5)) / math.sqrt(5)
    st = step_matrices(s, X0, np.cos(X0[:, 1]), W0, 1.0, ("degree2",))
    np.testing.assert_allclose(st["degree2"], st["D"], rtol=1e-12, atol=1e-13)


def test_network_is_sim_giant_step():
    """Same seed, same network: the ablation's network test error is sim_giant_step's (the step summed in
    blocks: equal to rounding)."""
    a = sim_ablation("tanh", "sin", 60, variants="srf", seed=9, reps=2, n_test=2000, **CASE_A)
    g = sim_giant_step("tanh", "sin", 60, seed=9, reps=2, n_test=2000, **CASE_A)
    np.testing.assert_allclose(a.stats["test_error"].values, g.stats["test_error"].values, rtol=1e-10)
    for key in ("r", "c", "gamma"):
        np.testing.assert_allclose(a.stats[key].values, g.stats[key].values, rtol=1e-10)
    assert set(a.stats) >= {"ablation_srf", "cge_A", "cge_B", "cge_C", "cge_signal", "srf_cge_signal"}
    assert "ablation_no_self" not in a.stats


def test_variants_do_not_change_the_network():
    """A variant's own draws come from a fourth stream: asking for more variants leaves the others unchanged."""
    few = sim_ablation("tanh", "sin", 50, variants="srf", seed=1, n_test=1000, **CASE_A)
    many = sim_ablation("tanh", "sin", 50, variants="srf,isotropic,gaussian_bulk", seed=1, n_test=1000, **CASE_A)
    assert few.stats["test_error"].values == many.stats["test_error"].values
    assert few.stats["ablation_srf"].values == many.stats["ablation_srf"].values


@pytest.mark.parametrize("bad", ["bogus", "srf,nope", "", []])
def test_bad_variants(bad):
    with pytest.raises(InvalidParameterError, match="variants"):
        variant_names(bad)


def test_variant_names_order():
    assert variant_names("no_self, srf") == ("network", "srf", "no_self")
    assert variant_names(None) == VARIANTS


def test_study_ablation_subset(tmp_path):
    """The study protocol reports one paired comparison per variant it builds, and the CLI refuses a bad name."""
    from onestep_theory.study import run_study

    params = dict(student="tanh", teacher="sin", alpha=3, beta=1, lam=0.1, alpha0=20, eta=3, n_test=500,
                  variants="equal_norm,srf")
    res = run_study("ablation", params, [40, 60], 2, compare="equal_norm", theory=(0.0325, 1e-13))
    assert set(res.comparisons) == {"theory", "srf", "equal_norm"}
    assert res.sizes == res.comparisons["equal_norm"]["sizes"]
    cmd = [sys.executable, "-m", "onestep_theory", "study", "ablation", "--student", "tanh", "--teacher", "sin",
           "--alpha", "3", "--beta", "1", "--lam", "0.1", "--alpha0", "20", "--eta", "3", "--d", "40,60",
           "--reps", "2", "--store", str(tmp_path / "s.sqlite")]
    bad = subprocess.run(cmd + ["--variants", "srf,bogus"], capture_output=True, text=True)
    assert bad.returncode == 2 and "variants" in bad.stderr and "no_self" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) <= 2


@pytest.mark.slow
def test_cli_study_ablation(tmp_path):
    cmd = [sys.executable, "-m", "onestep_theory", "study", "ablation", "--student", "tanh", "--teacher", "sin",
           "--alpha", "3", "--beta", "1", "--lam", "0.1", "--alpha0", "20", "--eta", "3", "--d", "40,60",
           "--reps", "2", "--store", str(tmp_path / "s.sqlite")]
    ok = subprocess.run(cmd + ["--variants", "no_self", "--n-test", "500", "--json", "--quiet"], capture_output=True,
                        text=True)
    assert ok.returncode == 0, ok.stderr
    out = json.loads(ok.stdout)
    assert set(out["comparisons"]) == {"theory", "row_norms", "no_self"}


@pytest.mark.slow
def test_row_norm_heterogeneity_is_the_gap():
    """docs/studies/mechanism.md, case A at d = 500 over 8 seeds, every shift paired and judged by its own standard
    error: equalising the row norms costs the network more than 4 standard errors; keeping only the norms' line
    against w0.v changes it by less than 4; the equal-spike variant changes nothing (within 4); and the sRF surrogate
    gains from the predicted norms what the corrected theory (srf-theory.md §4.11) gains over Result 3.3, within 4
    standard errors of that paired difference."""
    from onestep_theory.srf import srf_solve

    res = sim_ablation("tanh", "sin", 500, variants="srf,equal_norm,equal_spike,fitted_norm,srf_rescaled", seed=2026,
                       reps=8, **CASE_A)
    net = np.array(res.stats["test_error"].values)
    err = {name: np.array(res.stats[f"ablation_{name}"].values) for name in
           ("srf", "equal_norm", "equal_spike", "fitted_norm", "srf_rescaled")}

    def mean_se(v):
        return v.mean(), v.std(ddof=1) / math.sqrt(v.size)

    m, se = mean_se(net - err["equal_norm"])
    assert m < -4 * se
    for name in ("fitted_norm", "equal_spike"):
        m, se = mean_se(net - err[name])
        assert abs(m) < 4 * se, name
    kw = dict(alpha0=20, eta=3, alpha=3, beta=1, lam="0.1")
    gain = float(srf_solve("tanh", "sin", **kw, row_norms=True).test_error - srf_solve("tanh", "sin", **kw).test_error)
    m, se = mean_se(err["srf_rescaled"] - err["srf"])
    assert abs(m - gain) < 4 * se, (m, se, gain)


# ------------------------------------------------------------------ the sRF with row-norm heterogeneity
SRF_A = dict(r=1.1340555093, c=1.0189732005, gamma=0.9718544445, alpha=3, beta=1, lam=0.1)


def test_norm_shifts_formula():
    from onestep_theory.simulate.srf import norm_shifts

    rng = np.random.default_rng(8)
    W0 = rng.standard_normal((20, 15))
    W0 /= np.linalg.norm(W0, axis=1, keepdims=True)
    v = np.eye(15)[2]
    dc = norm_shifts(math.sqrt(1.5) * W0, v, 1.5, -1.25, 0.4, np.random.default_rng(1))
    zeta = np.random.default_rng(1).standard_normal(20)
    np.testing.assert_allclose(dc, -1.25 * W0[:, 2] + 0.4 * zeta / math.sqrt(15), rtol=1e-13, atol=1e-15)


def test_srf_without_heterogeneity_is_unchanged():
    """norm_slope = norm_noise = 0 draws nothing more: the same numbers as before (the fourth stream is unused)."""
    from onestep_theory.simulate import sim_srf

    a = sim_srf("tanh", "sin", 50, seed=4, reps=2, n_test=1000, **SRF_A)
    b = sim_srf("tanh", "sin", 50, seed=4, reps=2, n_test=1000, norm_slope=0, norm_noise=0, **SRF_A)
    assert a.stats["test_error"].values == b.stats["test_error"].values
    c = sim_srf("tanh", "sin", 50, seed=4, reps=2, n_test=1000, norm_slope=-1.3, **SRF_A)
    assert c.stats["test_error"].values != a.stats["test_error"].values
    assert c.params["norm_slope"] == -1.3 and "norm_slope" not in a.params


@pytest.mark.parametrize("kw, match", [
    (dict(norm_noise=-1.0), "norm_noise"),
    (dict(norm_slope=float("nan")), "norm_slope"),
    (dict(norm_slope=1.0, readout="1:0.5,2:0.5"), "readout"),
    (dict(norm_slope=1.0, features="cgep", mu_fns=(np.tanh,) * 3), "mu_fns"),
])
def test_srf_heterogeneity_refusals(kw, match):
    from onestep_theory.simulate import sim_srf

    with pytest.raises(InvalidParameterError, match=match):
        sim_srf("tanh", "sin", 30, n_test=200, **SRF_A, **kw)


def test_dmu0_dc_is_half_the_mean_second_derivative():
    """The fourth cGE callable of the srf study: d mu0/dc = E sigma''(r kappa + sqrt(c) z)/2 (heat equation),
    against mpmath quadrature."""
    import mpmath as mp

    from onestep_theory.study.protocols import cge_functions

    r, c = 1.134, 1.019
    kap = np.array([-1.0, 0.5, 2.0])
    got = cge_functions("tanh", r, c)[3](kap)
    with mp.workdps(20):
        ref = [0.5 * mp.quad(lambda z, k=k: -2 * mp.tanh(r * k + mp.sqrt(c) * z) * mp.sech(r * k + mp.sqrt(c) * z) ** 2
                             * mp.npdf(z), [-mp.inf, 0, mp.inf]) for k in kap]
    np.testing.assert_allclose(got, np.array(ref, dtype=float), rtol=1e-12, atol=1e-15)
    # the heat equation itself: d mu0/dc by a central difference of cge_coeffs in c, step h = 1e-3: truncation
    # h^2/6 |d^3 mu0/dc^3| with |d^3 mu0/dc^3| = |E sigma^(6)|/8 <= 7 (max |tanh^(6)| = 52.2), rounding ~ eps/h
    from onestep_theory.srf.features.cge import cge_coeffs

    h = 1e-3
    fd = (cge_coeffs("tanh", r, c + h, kap)[0] - cge_coeffs("tanh", r, c - h, kap)[0]) / (2 * h)
    np.testing.assert_allclose(got, fd, rtol=0, atol=7 * h * h / 6 + 1e-12)
