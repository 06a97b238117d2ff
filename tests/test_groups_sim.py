"""K-group theory (docs/theory/srf-theory.md §8) against simulation with the same finite-support readout.

Tolerances come from the simulation's standard error alone (|theory - simulation| <= 4 se, the theory's own
error added); the network runs are in the slow stage (d = 1000)."""

import pytest

from onestep_theory.simulate import sim_giant_step, sim_srf
from onestep_theory.srf import srf_params
from onestep_theory.srf.grouped.groups import srf_groups

CASE = dict(alpha0=20, eta=3, alpha=2, beta=1, lam="1/10")


def _theory(spec, **kw):
    """The asymptotic K-group theory (docs/theory/srf-theory.md §8.1)."""
    return srf_groups("tanh", "sin", readout_spec=spec, **dict(CASE, **kw))


@pytest.mark.slow      # 4 s: the default suite keeps the exact reductions; simulation checks run in the slow stage
def test_direct_srf_groups_small():
    """Direct K-group sRF (rows sqrt(c_j) w0 + r u_j v) at d = 300 against the theory."""
    P = srf_params("tanh", "sin", 20, 3)
    th = _theory("1:1/2,2:1/2")
    sim = sim_srf("tanh", "sin", 300, r=float(P.r), c=float(P.c), gamma=float(P.gamma), alpha=2, beta=1, lam=0.1,
                  readout="1:0.5,2:0.5", reps=4, seed=3, n_test=10000)
    st = sim.stats["test_error"]
    assert abs(st.mean - float(th.test_error)) <= 4 * st.se + th.abs_error


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["1:0.5,2:0.5", "0.5:0.5,1.5:0.5"])
def test_network_groups_d1000(spec):
    """The acceptance setting of issue 12: the network after one giant step with the readout, d = 1000."""
    th = _theory(spec)
    sim = sim_giant_step("tanh", "sin", 1000, alpha0=20, eta=3, alpha=2, beta=1, lam=0.1, readout=spec, reps=6,
                         seed=11)
    st = sim.stats["test_error"]
    assert abs(st.mean - float(th.test_error)) <= 4 * st.se + th.abs_error
    uni = srf_groups("tanh", "sin", readout_spec="1:1", **CASE)
    assert float(th.test_error) < float(uni.test_error) - 4 * st.se     # the richer basis is visible in the data


def test_two_mean_spikes_relu_pm():
    """Up to K mean spikes (§8, Spectrum): a centred ReLU with u in {1, -1} has two well separated spikes,
    n times the eigenvalues of [sqrt(pi_j pi_l) E mu0_j mu0_l]; both within 4 s.e. of the simulated top two."""
    from onestep_theory.simulate import sim_spectrum
    from onestep_theory.srf.grouped.groupbounds import group_mean_spikes

    sim = sim_spectrum("relu_centered", 400, r=1.5, c=1.1, gamma=1, alpha=2, beta=1, readout="1:0.5,-1:0.5", reps=4,
                       seed=2, lam=(0.5,))
    th = group_mean_spikes("relu_centered", readout_spec="1:0.5,-1:0.5", r=1.5, c=1.1, alpha=2, d=400)
    for key, val, err in zip(("top_eigenvalue", "second_eigenvalue"), th.spikes, th.errors["spikes"]):
        st = sim.stats[key]
        assert abs(st.mean - val) <= 4 * st.se + err


@pytest.mark.slow
def test_gaussian_readout_beats_kernels_at_large_eta():
    """[BES+22] §5 (docs/theory/srf-theory.md §9): with a Gaussian readout some neurons always get an effective step
    near kappa*, so a large learning rate does not hurt as it does with u = 1.  erf(x)/erf(x) (tau* = 0), d = 200,
    alpha0 = 100, eta = 16: the Gaussian readout is below the kernel bound ||P_>1 f*||^2 and below the uniform
    readout, each by more than 4 standard errors of both (measured 0.0056 +- 0.0004 against 0.0401 and 0.0322)."""
    from onestep_theory.srf.optimal.taustar import tau_star

    kw = dict(alpha0=100, eta=16, alpha=8, beta=2, lam=0.01, reps=4, seed=5)
    gauss = sim_giant_step("erf(x)", "erf(x)", 200, readout="gaussian", **kw).stats["test_error"]
    unif = sim_giant_step("erf(x)", "erf(x)", 200, **kw).stats["test_error"]
    t = tau_star("erf(x)", "erf(x)")
    assert t.tau_exact == 0
    assert gauss.mean + 4 * gauss.se < t.kernel_bound
    assert gauss.mean + 4 * gauss.se < unif.mean - 4 * unif.se
