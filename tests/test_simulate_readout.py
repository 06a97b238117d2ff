"""Non-uniform initial readout a0 = u/sqrt(p) in the simulators (docs/theory/srf-theory.md §8, §10.2).

References are independent of the code under test: a direct re-implementation of the gradient step and of the
ridge on the same random streams (a different formulation: the gradient of the loss with a0 = u/sqrt(p) and
eta = eta~ p), the step map of §8 applied to Result 3.1, exact symmetries (odd student: u -> -u is w -> -w), and
the laws of the sampled objects.  Statistical assertions: K = 4 standard errors of >= 3 repetitions, with a
finite-size extrapolation from d and 2d (``_richardson``) where a 1/d bias is measured, or a paired design.
"""

import json
import math

import numpy as np
import pytest
import scipy.stats

from onestep_theory import InvalidParameterError
from onestep_theory.cli import main
from onestep_theory.cli.common import decimal_strings
from onestep_theory.simulate import sample_bulks, sim_giant_step, sim_spectrum, sim_srf, spawn
from onestep_theory.simulate.srf import srf_weights
from onestep_theory.srf.features.mapping import srf_params
from onestep_theory.srf.grouped.readout import readout

#: z-threshold of every statistical assertion in this file
K = 4


def _check_z(est, se, ref, what=""):
    assert math.isfinite(se) and se > 0, (what, se)
    assert abs(est - ref) <= K * se, f"{what}: {est:.6g} vs {ref:.6g}, se {se:.3g}, z = {(est - ref) / se:+.2f}"


def _paired(a, b):
    d = np.asarray(a.values, dtype=float) - np.asarray(b.values, dtype=float)
    assert d.size >= 3
    return float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size))


def _richardson(small, large):
    """2 S(2d) - S(d) (a 1/d bias removed) and its standard error (independent runs)."""
    assert len(small.values) >= 3 and len(large.values) >= 3
    return 2 * large.mean - small.mean, math.hypot(2 * large.se, small.se)


# ---------------------------------------------------------------- uniform readout: nothing changes
def test_uniform_readout_is_bit_identical():
    gs = dict(alpha0=3, eta=2, alpha=1.5, beta=0.8, lam=[0.1, 1.0], noise_var=0.1, n_test=500, reps=2, seed=5)
    base = sim_giant_step("tanh", "sin", 60, **gs)
    for spec in ("uniform", "1:1", "1:1/2,1:1/2", [(1, 1)]):
        other = sim_giant_step("tanh", "sin", 60, readout=spec, **gs)
        assert other.to_dict()["stats"] == base.to_dict()["stats"] and other.params == base.params, spec
    assert base.params["readout"]["kind"] == "uniform"
    kw = dict(r=1.1, c=1.05, gamma=0.9, alpha=1.5, beta=0.8, reps=2, seed=3)
    a, b = sim_srf("tanh", "sin", 60, lam=0.2, n_test=500, **kw), sim_srf("tanh", "sin", 60, lam=0.2, n_test=500,
                                                                          readout="1:1", **kw)
    assert a.to_dict()["stats"] == b.to_dict()["stats"] and a.params == b.params
    a, b = sim_spectrum("tanh", 60, **kw), sim_spectrum("tanh", 60, readout="uniform", **kw)
    assert a.to_dict()["stats"] == b.to_dict()["stats"]


# ---------------------------------------------------------------- the step, re-implemented
def _reference_step(seed, d, p, n0, n, n_test, u, eta, lam):
    """srf-theory.md §1 on the simulator's streams: W1 = W0 - eta grad_W L, L = (1/2n0) sum (y - a.sigma(Wx)/sqrt p)^2,
    a = u/sqrt(p), eta = eta~ p; then the ridge (4) by the normal equations and the test error (5)."""
    rw, rtr, rte = spawn(seed, 1)[0]
    W0 = rw.standard_normal((p, d))
    W0 /= np.linalg.norm(W0, axis=1, keepdims=True)
    theta = rw.standard_normal(d)
    theta /= np.linalg.norm(theta)
    X0 = rtr.standard_normal((n0, d))
    y0 = np.sin(X0 @ theta) + 0 * rtr.standard_normal(n0)
    a = np.asarray(u, dtype=float) / math.sqrt(p)
    grad = np.zeros((p, d))
    for mu in range(n0):
        res = y0[mu] - a @ np.tanh(W0 @ X0[mu]) / math.sqrt(p)
        grad -= np.outer(res * a / math.sqrt(p) * (1 - np.tanh(W0 @ X0[mu]) ** 2), X0[mu]) / n0
    W1 = W0 - eta * p * grad
    X = rtr.standard_normal((n, d))
    y = np.sin(X @ theta) + 0 * rtr.standard_normal(n)
    Phi = np.tanh(X @ W1.T)
    ahat = np.linalg.solve(Phi.T @ Phi / p + lam * np.eye(p), Phi.T @ y / math.sqrt(p))
    Xt = rte.standard_normal((n_test, d))
    err = float(np.mean((np.sin(Xt @ theta) - np.tanh(Xt @ W1.T) @ ahat / math.sqrt(p)) ** 2))
    return W0, W1, theta, err


@pytest.mark.parametrize("spec,u", [(None, [1.0] * 7), ("-1:1/3,1/2:1/3,2:1/3", [-1.0] * 3 + [0.5] * 2 + [2.0] * 2)])
def test_giant_step_against_a_direct_gradient(spec, u):
    """p = 7 neurons, three groups of 7/3: largest remainders give sizes (3, 2, 2), contiguous in value order."""
    d, p, n0, n, n_test, eta, lam = 30, 7, 45, 24, 300, 1.7, 0.3
    res = sim_giant_step("tanh", "sin", d, alpha0=n0 / d, eta=eta, alpha=n / d, beta=p / d, lam=lam, n_test=n_test,
                         seed=11, readout=spec)
    W0, W1, theta, err = _reference_step(11, d, p, n0, n, n_test, u, eta, lam)
    assert res["test_error"].values[0] == pytest.approx(err, rel=1e-9)
    blocks = {"": slice(0, p)} if spec is None else {"[-1]": slice(0, 3), "[1/2]": slice(3, 5), "[2]": slice(5, 7)}
    if spec is not None:
        assert res.params["group_sizes"] == [3, 2, 2]
        blocks[""] = slice(0, p)
    for lab, b in blocks.items():
        dbar = (W1[b] - W0[b]).mean(axis=0)
        r = np.linalg.norm(dbar)
        assert res[f"r{lab}"].values[0] == pytest.approx(r, rel=1e-9)
        assert res[f"gamma{lab}"].values[0] == pytest.approx(theta @ dbar / r, rel=1e-9)
        assert res[f"c{lab}"].values[0] == pytest.approx(np.mean(np.sum((W1[b] - dbar) ** 2, axis=1)), rel=1e-9)


# ---------------------------------------------------------------- group diagnostics against Result 3.1 (§8 step map)
GROUP_SPEC = "-1:1/2,2:1/2"


@pytest.fixture(scope="module")
def grouped_steps():
    """tanh/sin, alpha0 = eta~ = 2, beta = 1 (the readout is irrelevant here: alpha = 0.2, few test points), at
    d = 200 (48 repetitions) and d = 400 (24 repetitions); about 3 s."""
    kw = dict(alpha0=2, eta=2, alpha=0.2, beta=1, n_test=10, seed=1, readout=GROUP_SPEC)
    return {d: sim_giant_step("tanh", "sin", d, reps=reps, **kw) for d, reps in ((200, 48), (400, 24))}


def test_group_diagnostics_against_the_step_map(grouped_steps):
    """r_j = |u_j| r, c_j = 1 + u_j^2 (c - 1), gamma_j = sign(u_j) gamma with (r, c, gamma) of Result 3.1.

    Finite-size check: c_j carries a 1/d bias growing with u_j^2 (measured d (c_j - pred) = 1.4 and 7 at
    d = 200 for u = -1, 2, i.e. plain z up to +6 at d = 400), r_j and gamma_j none resolved; the extrapolation
    2 S(400) - S(200) gave |z| <= 2.3 over 6 seeds for all six quantities."""
    th = srf_params("tanh", "sin", 2, 2)
    r, c, g = float(th.r), float(th.c), float(th.gamma)
    assert grouped_steps[200].params["group_sizes"] == [100, 100]
    for u in (-1, 2):
        pred = {"r": abs(u) * r, "c": 1 + u * u * (c - 1), "gamma": math.copysign(g, u)}
        for k, ref in pred.items():
            est, se = _richardson(grouped_steps[200][f"{k}[{u}]"], grouped_steps[400][f"{k}[{u}]"])
            _check_z(est, se, ref, f"{k}[{u}]")


def test_group_spikes_are_proportional_to_u(grouped_steps):
    """Within one run the two groups share the data and the residual: r[2] / 2 - r[-1] and gamma[2] + gamma[-1]
    are paired differences with mean 0 up to the O(1/sqrt p) initial output."""
    for d, res in grouped_steps.items():
        half = res["r[2]"].values
        diff = np.array(half) / 2 - np.array(res["r[-1]"].values)
        _check_z(float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(diff.size)), 0.0, f"r, d={d}")
        s = np.array(res["gamma[2]"].values) + np.array(res["gamma[-1]"].values)
        _check_z(float(s.mean()), float(s.std(ddof=1) / math.sqrt(s.size)), 0.0, f"gamma, d={d}")


# ---------------------------------------------------------------- odd student: u -> -u is a symmetry
def test_symmetric_readout_test_error_equals_uniform_for_odd_student():
    """For odd sigma, the neuron (w0, u = -1) is the neuron (-w0, u = 1) with its readout sign flipped, and -w0 has
    the law of w0: the test error of '1:1/2,-1:1/2' has the uniform readout's law exactly.  Paired design (same
    seeds: same data, half the neurons the same)."""
    kw = dict(alpha0=2, eta=2, alpha=1, beta=1, lam=[0.1, 1.0], n_test=2000, reps=12, seed=2)
    a = sim_giant_step("tanh", "sin", 120, **kw)
    b = sim_giant_step("tanh", "sin", 120, readout="1:1/2,-1:1/2", **kw)
    for lv in (0.1, 1):
        _check_z(*_paired(b[f"test_error@{lv:g}"], a[f"test_error@{lv:g}"]), 0.0, f"test error, lambda={lv}")
    assert np.all(np.array(b["test_error@0.1"].values) != np.array(a["test_error@0.1"].values))
    kw = dict(r=1.0, c=1.1, gamma=0.8, alpha=1.5, beta=1, lam=0.1, n_test=2000, reps=12, seed=3)
    a = sim_srf("tanh", "sin", 120, **kw)
    b = sim_srf("tanh", "sin", 120, readout="1:1/2,-1:1/2", **kw)
    _check_z(*_paired(b["test_error"], a["test_error"]), 0.0, "sRF test error")


# ---------------------------------------------------------------- Gaussian readout
def test_gaussian_readout_draws_standard_normal_u_after_the_weights():
    kw = dict(alpha0=2, eta=1, alpha=0.5, beta=2, n_test=50, seed=4)
    res = sim_giant_step("tanh", "sin", 100, reps=6, readout="gaussian", **kw)
    p = res.params["p"]
    assert res.params["readout"]["kind"] == "gaussian" and "group_sizes" not in res.params
    rw = spawn(4, 1)[0][0]
    rw.standard_normal((p, 100)), rw.standard_normal(100)             # W0 and theta come first
    u = rw.standard_normal(p)
    assert res["u_mean"].values[0] == pytest.approx(u.mean(), rel=1e-12)
    assert res["u_std"].values[0] == pytest.approx(u.std(ddof=1), rel=1e-12)
    assert scipy.stats.kstest(u, "norm").pvalue > 6e-5                # 4 sigma, two-sided
    _check_z(res["u_mean"].mean, 1 / math.sqrt(p * 6), 0.0, "E u")    # exact se of the mean of 6 p draws
    _check_z(res["u_std"].mean, res["u_std"].se, 1.0 - 1 / (4 * p), "sd u")   # E s = 1 - 1/(4p) + O(p^-2)
    with pytest.raises(InvalidParameterError, match="readout"):
        sim_srf("tanh", "sin", 40, r=1, c=1, gamma=1, alpha=1, beta=1, readout="gaussian")


# ---------------------------------------------------------------- the direct K-group sRF
def test_srf_groups_rows_and_order_parameters():
    """sRF with groups (srf-theory.md §8): rows sqrt(c_j) w0_i + r_j v, group order parameters re-computed from the
    streams; the aggregate keys are the group sums."""
    d, p, n, spec, r, c, g, lam = 40, 30, 50, "1/2:1/3,-1:1/3,2:1/3", 0.9, 1.2, 0.7, 0.3
    res = sim_srf("tanh", "sin", d, r=r, c=c, gamma=g, alpha=n / d, beta=p / d, lam=lam, n_test=20, seed=6,
                  readout=spec)
    u = np.repeat([-1.0, 0.5, 2.0], 10)                                  # value order, blocks of p/3
    assert [gr["size"] for gr in res.params["groups"]] == [10, 10, 10]
    rw, rtr, _ = spawn(6, 1)[0]
    W0 = rw.standard_normal((p, d))
    W0 /= np.linalg.norm(W0, axis=1, keepdims=True)
    v = rw.standard_normal(d)
    v /= np.linalg.norm(v)
    tp = rw.standard_normal(d)
    tp -= (tp @ v) * v
    tp /= np.linalg.norm(tp)
    theta = g * v + math.sqrt(1 - g * g) * tp
    Wt = np.sqrt(1 + u**2 * (c - 1))[:, None] * W0
    X = rtr.standard_normal((n, d))
    y = np.sin(X @ theta)
    Phi = np.tanh(X @ (Wt + r * u[:, None] * v[None, :]).T)
    a = np.linalg.solve(Phi.T @ Phi / p + lam * np.eye(p), Phi.T @ y / math.sqrt(p))
    for lab, b in (("-1", slice(0, 10)), ("1/2", slice(10, 20)), ("2", slice(20, 30))):
        ref = {"m": a[b].sum() / math.sqrt(p), "theta": a[b] @ Wt[b] @ v / math.sqrt(p),
               "psi": a[b] @ Wt[b] @ tp / math.sqrt(p), "q2": a[b] @ a[b] / p}
        for k, val in ref.items():
            assert res[f"{k}[{lab}]"].values[0] == pytest.approx(val, rel=1e-8, abs=1e-12), (k, lab)
    for k in ("m", "theta", "psi", "q2"):
        parts = sum(res[f"{k}[{lab}]"].values[0] for lab in ("-1", "1/2", "2"))
        assert res[k].values[0] == pytest.approx(parts, rel=1e-10, abs=1e-13), k
    spec_res = sim_spectrum("tanh", d, r=r, c=c, gamma=g, alpha=n / d, beta=p / d, lam=[1.0], seed=6, readout=spec)
    ev = np.linalg.eigvalsh(Phi.T @ Phi / p)
    assert spec_res["top_eigenvalue"].values[0] == pytest.approx(ev[-1], rel=1e-10)


def test_srf_weights_groups_use_the_same_draws():
    rd = readout("1:1/4,3:3/4")
    Wt, v, tp, theta = srf_weights(spawn(8, 1)[0][0], 20, 8, 0.5, 1.5, 0.6, rd)
    Wu, vu, _, _ = srf_weights(spawn(8, 1)[0][0], 20, 8, 0.5, 1.0, 0.6)
    np.testing.assert_array_equal(v, vu)
    cj = np.repeat([1.5, 1 + 9 * 0.5], [2, 6])
    np.testing.assert_allclose(Wt, np.sqrt(cj)[:, None] * Wu, rtol=1e-14)


@pytest.mark.parametrize("call,needle", [
    (lambda: sim_srf("tanh", "sin", 40, r=1, c=0.5, gamma=1, alpha=1, beta=1, readout="3:1/2,1:1/2"), "c"),
    (lambda: sim_srf("tanh", "sin", 40, r=1, c=1, gamma=1, alpha=1, beta=1, readout="1:1/2,2:1/2",
                     features="cgep", mu_fns=(np.tanh,) * 3), "readout"),
    (lambda: sim_giant_step("tanh", "sin", 10, alpha0=1, eta=1, alpha=1, beta=0.2, readout="1:1/3,2:1/3,3:1/3"), "p"),
    (lambda: sim_giant_step("tanh", "sin", 10, alpha0=1, eta=1, alpha=1, beta=1, readout="1:0.3,2:0.3"), "readout"),
    (lambda: sim_spectrum("tanh", 10, r=1, c=1, alpha=1, beta=1, readout="x"), "readout"),
])
def test_bad_readouts(call, needle):
    with pytest.raises(InvalidParameterError) as exc:
        call()
    assert exc.value.param.startswith(needle)


# ---------------------------------------------------------------- sampled bulks
def test_sample_bulks():
    bulks = sample_bulks(25, 12, 3, seed=9)
    assert len(bulks) == 3
    for W0, v, tp in bulks:
        assert W0.shape == (12, 25) and v.shape == tp.shape == (25,)
        np.testing.assert_allclose(np.linalg.norm(W0, axis=1), 1, rtol=1e-14)
        assert np.linalg.norm(v) == pytest.approx(1, rel=1e-14) and np.linalg.norm(tp) == pytest.approx(1, rel=1e-14)
        assert abs(v @ tp) < 1e-14
    again, longer = sample_bulks(25, 12, 3, seed=9), sample_bulks(25, 12, 5, seed=9)
    for k in range(3):
        for x, y, z in zip(bulks[k], again[k], longer[k]):
            np.testing.assert_array_equal(x, y)
            np.testing.assert_array_equal(x, z)                          # draw k does not depend on count
    assert not np.array_equal(bulks[0][0], bulks[1][0])
    assert not np.array_equal(bulks[0][0], sample_bulks(25, 12, 1, seed=10)[0][0])
    # draw k is the bulk of repetition k of sim_srf with the same seed
    Wt, v, tp, _ = srf_weights(spawn(9, 3)[2][0], 25, 12, 0.7, 1.3, 0.5, "1:1/2,2:1/2")
    np.testing.assert_array_equal(v, bulks[2][1])
    np.testing.assert_array_equal(tp, bulks[2][2])
    np.testing.assert_allclose(Wt[:6], math.sqrt(1.3) * bulks[2][0][:6], rtol=1e-15)
    for bad in (0, 1.5, True):
        with pytest.raises(InvalidParameterError, match="count"):
            sample_bulks(5, 5, bad)


# ---------------------------------------------------------------- CLI
GIANT = ["simulate", "giant-step", "--student", "tanh", "--teacher", "sin", "--d", "60", "--alpha0", "2", "--eta",
         "2", "--alpha", "1", "--beta", "1", "--n-test", "200", "--quiet"]


def _run(argv, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_readout(capsys):
    rc, out, err = _run(GIANT + ["--readout=-1:0.5,2:0.5", "--json"], capsys)
    assert rc == 0, err
    doc = json.loads(out)
    api = sim_giant_step("tanh", "sin", 60, alpha0=2, eta=2, alpha=1, beta=1, n_test=200, readout="-1:1/2,2:1/2")
    # the same numbers; the JSON prints them as decimal strings (cli.common.decimal_strings)
    assert doc["stats"] == decimal_strings(api.to_dict()["stats"])
    assert doc["params"]["readout"]["label"] == "-1:1/2,2:1/2"
    th = srf_params("tanh", "sin", 2, 2)
    assert float(doc["theory"]["c[2]"]) == pytest.approx(1 + 4 * float(th.c - 1), rel=1e-14)
    assert float(doc["theory"]["gamma[-1]"]) == pytest.approx(-float(th.gamma), rel=1e-14)
    assert "r" not in doc["theory"]                     # the overall keys are not Result 3.1 for this readout
    rc, out, err = _run(["simulate", "srf", "--student", "tanh", "--teacher", "sin", "--d", "40", "--alpha", "1",
                         "--beta", "1", "--r", "1", "--c", "1.1", "--gamma", "0.9", "--n-test", "100",
                         "--readout", "1:1/2,2:1/2"], capsys)
    assert rc == 0 and "readout=1:1/2,2:1/2" in out.splitlines()[0] and "m[2]" in out


@pytest.mark.parametrize("argv,needle", [
    (GIANT + ["--readout", "1:0.3,2:0.3"], "--readout"),
    (GIANT + ["--readout", "1:0.5:2"], "--readout"),
    (GIANT + ["--readout", "-1:0.5,1:0.5"], "--readout"),               # needs --readout=-1:...
    (["simulate", "spectrum", "--student", "tanh", "--d", "40", "--alpha", "1", "--beta", "1", "--r", "1", "--c",
      "1", "--gamma", "1", "--readout", "gaussian"], "--readout"),
])
def test_cli_bad_readout_one_line_exit_2(capsys, argv, needle):
    rc, out, err = _run(argv, capsys)
    assert rc == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in err, err
