"""Spike theory: windows, Delta_l (three forms), Lambda, baselines, hypotheses, simulation."""

import math
import warnings

import mpmath
import pytest
import sympy as sp

from onestep_theory import HypothesisError, InvalidParameterError
from onestep_theory.spikes.resolvent import resolvent_from_constants
from onestep_theory.simulate import sim_spike_model
from onestep_theory.spikes import (SlideFormWarning, UnvalidatedWarning, delta_printed, delta_symbolic, gains, window,
                                   window_bounds)

from .conftest import agree, run_cli


# ---------------------------------------------------------------- windows (§5.1)
def test_window_table():
    assert [window_bounds(l) for l in range(1, 6)] == [
        (0, sp.Rational(1, 4)), (sp.Rational(1, 4), sp.Rational(1, 3)), (sp.Rational(1, 3), sp.Rational(3, 8)),
        (sp.Rational(3, 8), sp.Rational(2, 5)), (sp.Rational(2, 5), sp.Rational(5, 12))]


@pytest.mark.parametrize("ell", range(1, 12))
def test_windows_contiguous_and_inverse(ell):
    lo, hi = window_bounds(ell)
    assert window_bounds(ell + 1)[0] == hi
    mid = (lo + hi) / 2
    assert window(mid).ell == ell
    assert window(hi).regime == "boundary"
    assert ell == 1 or window(lo).regime == "boundary"


@pytest.mark.parametrize("alpha", ["0", "-1/3", "1/2", "0.7"])
def test_uncovered(alpha):
    assert window(alpha).regime == "uncovered"


# ---------------------------------------------------------------- reference values (§11) at 30 digits
REF11 = {  # setting: (teacher, noise, Delta1, Delta2, Lambda1, Lambda2, slide1, slide2)
    "S1": ("He1", 1, "0.08462587330", "0.08462587330", "0.1017283258", "0.1017283258", "3.227485188", "3.227485188"),
    "S2": ("He1 + He2/sqrt(2)", 0, "0.08462587330", "0.1785030305", "0.1017283258", "0.3376344419", "3.227485188",
           "3.463391304"),
}


@pytest.mark.parametrize("setting", ["S1", "S2"])
def test_spec_reference_table(setting):
    teacher, nv, d1, d2, l1, l2, s1, s2 = REF11[setting]
    g = gains("tanh", teacher, "1/2", "1/2", "1/10", ell=2, noise_var=nv, dps=30, absent_spikes="formal")
    with pytest.warns(SlideFormWarning):
        gs = gains("tanh", teacher, "1/2", "1/2", "1/10", ell=2, noise_var=nv, dps=30, absent_spikes="formal",
                   test_form="slide")
    for got, want in ((g.delta[0], d1), (g.delta[1], d2), (g.lambda_test[0], l1), (g.lambda_test[1], l2),
                      (gs.lambda_test[0], s1), (gs.lambda_test[1], s2), (g.baseline_test, "1.618893348")):
        assert abs(got / mpmath.mpf(want) - 1) < 1e-8, (got, want)
    assert g.b2 == 2 and not g.hypotheses_satisfied


def _spec_formulas(m1, m2, dm1, dm2, phi, psi, lam, cs1, cs2_, cstar2, nv):
    """Independent evaluation of spike-theory.md §7.1 / §8.1 / §8.4 (written out here, mpmath)."""
    phi, psi, lam, cs1, cs2_, cstar2, nv = (mpmath.mpf(v) for v in (phi, psi, lam, cs1, cs2_, cstar2, nv))
    b2 = cs1**2 + phi * (cstar2 + nv)
    d1 = psi * lam * cs1**4 * m2 / (phi * b2)
    d2 = d1 + 4 * psi * lam * cs1**4 * cs2_**2 * m1 / (3 * phi * b2**2)
    l1 = phi / psi * cs1**4 / b2 * (-dm2) / m1**2
    l2 = l1 + phi / psi * 4 * cs1**4 * cs2_**2 / (3 * b2**2) * (-dm1) / m1**2
    base_tr = lam * psi / phi * (cs1**2 * m2 + (cstar2 - cs1**2 + nv) * m1)
    base_te = cs1**2 * phi / psi * (-dm2) / m1**2 + (cstar2 - cs1**2 + nv) * phi / psi * (-dm1) / m1**2
    return d1, d2, l1, l2, base_tr, base_te


def test_acceptance_case_independent_evaluation():
    # relu_centered, teacher x + (x^2-1)/sqrt2, phi=1, psi=2, lam=1/2: c1 = 1/2, c_>1^2 = 1/4 - 1/(2 pi)
    g = gains("relu_centered", "x + (x**2-1)/sqrt(2)", 1, 2, "1/2", ell=2, dps=30)
    with mpmath.workdps(50):
        c1 = mpmath.mpf(1) / 2
        cg = mpmath.sqrt(mpmath.mpf(1) / 4 - 1 / (2 * mpmath.pi))
        r = resolvent_from_constants(1, 2, "1/2", c1, cg, dps=40)
        ref = _spec_formulas(r.m1, r.m2, r.dm1_dlam, r.dm2_dlam, 1, 2, mpmath.mpf(1) / 2, 1, 1 / mpmath.sqrt(2), 2, 0)
        got = (g.delta[0], g.delta[1], g.lambda_test[0], g.lambda_test[1], g.baseline_train, g.baseline_test)
        for a, b in zip(got, ref):
            assert agree(a, b, 25)


@pytest.mark.parametrize("ell", [1, 2, 3, 4, 6])
def test_printed_form_equals_matrix_form_and_closed_form(ell):
    teacher = "He1 + He2/sqrt(2) + He3/sqrt(6) + He4/7"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnvalidatedWarning)      # Lambda for ell >= 3 is flagged; not tested here
        g = gains("He1 + He2/3 + He3/5 + He4/9 + He5/11 + He6/13", teacher, "1/2", "1/3", "1/5", ell=ell,
                  noise_var="1/4", dps=30)
    cs = [0, 1, 1 / sp.sqrt(2), 1 / sp.sqrt(6), sp.Rational(1, 7), 0, 0]
    cstar2 = 1 + 1 + 1 + sp.Rational(24, 49)
    with mpmath.workdps(45):
        b = mpmath.sqrt(1 + mpmath.mpf(1) / 2 * (mpmath.mpf(cstar2.p) / cstar2.q + mpmath.mpf(1) / 4))
        csm = [mpmath.mpf(sp.N(c, 50)) for c in cs[: ell + 1]] + [0] * (ell + 1 - min(len(cs), ell + 1))
        dp = delta_printed(ell, g.resolvent["m1"], g.resolvent["m2"], mpmath.mpf(1) / 2, mpmath.mpf(1) / 3,
                           mpmath.mpf(1) / 5, csm, b)
        assert agree(dp, g.delta[-1], 28)
        from onestep_theory.spikes import CSTAR2, LAM, M1, M2, PHI, PSI, S2, cstar_symbols

        sym = cstar_symbols(ell)
        e = delta_symbolic(ell).subs({sym[k]: cs[k] if k < len(cs) else 0 for k in range(ell + 1)}).subs(
            {M1: sp.Float(mpmath.nstr(g.resolvent["m1"], 40), 40), M2: sp.Float(mpmath.nstr(g.resolvent["m2"], 40), 40),
             PHI: sp.Rational(1, 2), PSI: sp.Rational(1, 3), LAM: sp.Rational(1, 5), CSTAR2: cstar2, S2: sp.Rational(1, 4)})
        assert agree(mpmath.mpf(str(sp.N(e, 40))), g.delta[-1], 28)


def test_staircase_and_degree_the_teacher_lacks():
    with pytest.warns(UnvalidatedWarning):
        g = gains("relu_centered", "He1 + He2/sqrt(2) + He3/sqrt(6)", "1/2", "1/2", "1/10", ell=6, noise_var="1/4",
                  absent_spikes="formal", dps=25)
    assert all(g.delta[k + 1] - g.delta[k] >= -mpmath.mpf(10) ** -20 for k in range(5))
    assert g.delta[3] > g.delta[2]          # spike-theory.md §7.4: u^4 separates He2 from the constant


def test_setting1_all_equal_and_lambda_limit():
    with pytest.warns(UnvalidatedWarning):
        s1 = gains("relu_centered", "He1", "1/2", "1/2", "1/10", ell=4, noise_var=1, absent_spikes="formal", dps=25)
    assert all(agree(v, s1.delta[0], 20) for v in s1.delta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert all(agree(v, s1.lambda_test[0], 20) for v in s1.lambda_test)
    # lambda -> infinity: Delta_1 -> c*1^4 / b^2, L_tr(F0) -> c*^2 + noise (§7.4)
    big = gains("relu_centered", "He1", "1/2", "1/2", "1000000", ell=1, noise_var=1, dps=25)
    assert abs(big.delta[0] - mpmath.mpf(1) / 2) < 1e-5
    assert abs(big.baseline_train - 2) < 1e-5


@pytest.mark.parametrize("kappa", ["1/2", "3"])
def test_scale_invariance_of_delta_and_corrected_lambda(kappa):
    # spike-theory.md §8.3(2): sigma -> k sigma, lambda -> k^2 lambda leaves every risk unchanged
    k = sp.Rational(kappa)
    teacher = "He1 + He2/sqrt(2)"
    a = gains("He1 + He2/2", teacher, "1/2", "1/2", "1/10", ell=2, dps=30)
    b = gains(f"({k})*(He1 + He2/2)", teacher, "1/2", "1/2", k**2 / 10, ell=2, dps=30)
    for x, y in zip(a.delta + a.lambda_test, b.delta + b.lambda_test):
        assert agree(x, y, 25)
    with pytest.warns(SlideFormWarning):
        sa = gains("He1 + He2/2", teacher, "1/2", "1/2", "1/10", ell=2, dps=30, test_form="slide")
    with pytest.warns(SlideFormWarning):
        sb = gains(f"({k})*(He1 + He2/2)", teacher, "1/2", "1/2", k**2 / 10, ell=2, dps=30, test_form="slide")
    assert not agree(sa.lambda_test[0], sb.lambda_test[0], 3)    # the printed form is not invariant


def test_hypothesis_checks():
    with pytest.raises(HypothesisError, match="c_2 = 0"):
        gains("tanh", "He1", 1, 2, "1/2", ell=2)
    with pytest.raises(HypothesisError, match="centred"):
        gains("relu", "He1", 1, 2, "1/2", ell=1)
    with pytest.raises(HypothesisError, match="centred"):
        gains("tanh", "He1 + 1", 1, 2, "1/2", ell=1)
    with pytest.raises(HypothesisError, match="c_1"):
        gains("He2", "He1", 1, 2, "1/2", ell=1)
    g = gains("relu", "He1 + 1", 1, 2, "1/2", ell=1, center=True)
    assert g.delta[0] > 0
    with pytest.raises(InvalidParameterError, match="lam"):
        gains("tanh", "He1", 1, 2, 0, ell=1)
    with pytest.raises(InvalidParameterError, match="alpha"):
        gains("tanh", "He1", 1, 2, 1, alpha="1/4")
    with pytest.raises(InvalidParameterError, match="alpha"):
        gains("tanh", "He1", 1, 2, 1, alpha="0.6")
    assert gains("tanh", "He1", 1, 2, 1, alpha="0.2").ell == 1


def test_absent_spikes_drop_equals_lower_ell():
    d = gains("tanh", "He1 + He2/sqrt(2)", "1/2", "1/2", "1/10", ell=2, absent_spikes="drop", dps=25)
    one = gains("tanh", "He1 + He2/sqrt(2)", "1/2", "1/2", "1/10", ell=1, dps=25)
    assert d.dropped == [2] and agree(d.delta[1], one.delta[0], 22)


def test_general_ell_lambda_flagged():
    with pytest.warns(UnvalidatedWarning):
        g = gains("He1 + He2/3 + He3/5", "He1 + He2/sqrt(2) + He3/sqrt(6)", "1/2", "1/2", "1/10", ell=3,
                  noise_var="1/4")
    assert g.lambda_validated == [True, True, False]


# ---------------------------------------------------------------- simulation (protocol B-limit)
#: z-threshold of every statistical assertion below
K = 4


def _check(stat, theory, what):
    """|mean - theory| <= K se, the standard error over the (>= 8) independent repetitions, nothing else."""
    assert len(stat.values) >= 8
    z = (stat.mean - float(theory)) / stat.se
    assert abs(z) <= K, f"{what}: simulated {stat.mean:.6g} +- {stat.se:.2g}, theory {float(theory):.6g}, z = {z:+.2f}"


def _check_gains(sim, g, ell):
    _check(sim["delta"], g.delta[ell - 1], f"Delta_{ell}")
    _check(sim["lambda_test"], g.lambda_test[ell - 1], f"Lambda_{ell}")
    _check(sim["train_loss_F0"], g.baseline_train, "L_tr(F0)")
    _check(sim["test_loss_F0"], g.baseline_test, "L_te(F0)")


# Protocol B-limit (spike-theory.md §9.3) fluctuates by O(n^-1/2) per repetition and is biased by O(1/n).  Measured
# (Setting 1: 400 repetitions at n = 200; Setting 2: 256 at n = 250, 128 at n = 500, 48 at n = 1000): n |bias| <= 1.6
# for Delta, Lambda and both baselines, against a per-repetition spread sqrt(n) sd = 0.46-1.2 (Setting 1) and
# 1.3-2.2 (Setting 2).  At n = 1000 with 12 repetitions the bias is therefore below 0.25 se and the plain
# |mean - theory| <= K se is the right test; its power is set by se: about 5 % of Delta and Lambda, 1 % of the
# baselines.  The slow tests below use 96 repetitions at n = 1500 (se 1.5-2 % of Delta and Lambda, bias < 0.4 se).

@pytest.mark.slow
def test_delta1_lambda1_simulation_setting1():
    g = gains("tanh", "He1", "1/2", "1/2", "1/10", ell=1, noise_var=1)
    sim = sim_spike_model("tanh", "He1", n=1000, phi=0.5, psi=0.5, lam=0.1, ell=1, noise_var=1, reps=12, seed=31)
    _check_gains(sim, g, 1)


@pytest.mark.slow
def test_delta2_lambda2_simulation_setting2():
    g = gains("relu_centered", "He1 + He2/sqrt(2)", "1/2", "1/2", "1/10", ell=2)
    sim = sim_spike_model("relu_centered", "He1 + He2/sqrt(2)", n=1000, phi=0.5, psi=0.5, lam=0.1, ell=2, reps=12,
                          seed=32)
    _check_gains(sim, g, 2)


@pytest.mark.slow
@pytest.mark.parametrize("setting", ["S1", "S2"])
def test_gains_simulation_high_precision(setting):
    student, teacher, nv, ell = {"S1": ("tanh", "He1", 1, 1),
                                 "S2": ("relu_centered", "He1 + He2/sqrt(2)", 0, 2)}[setting]
    g = gains(student, teacher, "1/2", "1/2", "1/10", ell=ell, noise_var=nv)
    sim = sim_spike_model(student, teacher, n=1500, phi=0.5, psi=0.5, lam=0.1, ell=ell, noise_var=nv, reps=96,
                          seed=34)
    _check_gains(sim, g, ell)


@pytest.mark.slow
def test_delta3_simulation():
    # ell = 3 (u^3 spike): per-repetition spread sqrt(n) sd = 1.3-1.9 on Delta_3 = 0.085.  Measured bias: +0.029 +-
    # 0.011 at n = 500 (64 repetitions), -0.001 +- 0.007 at n = 1000 (32), +0.001 +- 0.009 at n = 2000 (12): below
    # the standard error from n = 1000 on, so the plain K se test at n = 2000 (24 repetitions: se 7 % of Delta_3).
    # Lambda_3 is the unvalidated extension (UnvalidatedWarning) and is not tested.
    teacher = "He1 + He2/sqrt(2) + He3/sqrt(6)"
    with pytest.warns(UnvalidatedWarning):
        g = gains("He1 + He2/3 + He3/5", teacher, "1/2", "1/2", "1/10", ell=3, noise_var="1/4")
    sim = sim_spike_model("He1 + He2/3 + He3/5", teacher, n=2000, phi=0.5, psi=0.5, lam=0.1, ell=3, noise_var=0.25,
                          reps=24, seed=33)
    _check(sim["delta"], g.delta[2], "Delta_3")
    _check(sim["train_loss_F0"], g.baseline_train, "L_tr(F0)")
    _check(sim["test_loss_F0"], g.baseline_test, "L_te(F0)")


@pytest.mark.slow
def test_network_training_gain_trend_across_windows():
    """spike-theory.md §9.2 (protocol A, full network, centred ReLU: c_2 = 0.2, c_3 = 0).

    Setting 2: the gain rises significantly as alpha crosses 1/4 (the quadratic spike) and keeps rising across 1/3
    (paired: the same seed draws the same data and weights at every alpha; K se of the paired differences).
    Protocol A converges to the Delta_l plateaus only slowly in n (the spike-to-bulk ratio grows as a power of n:
    measured 6-9 % between the network's gain and the Gaussian spike model of §9.3 on the same draws at n = 400-1600,
    shrinking slowly), so it has no quantitative reference testable by standard errors at these sizes; what must
    hold at any n is that finite spikes gain no more than the unpenalised B-limit spikes on the same draws (one-sided,
    K se).  The quantitative test of Delta_l is protocol B above.
    """
    from onestep_theory.simulate import sim_spikes

    import numpy as np

    kw = dict(n=1600, d=800, N=1600, lam=0.1, reps=4, seed=41)
    s2 = [sim_spikes("relu_centered", "He1 + He2/sqrt(2)", alpha=a, n_test=1600, **kw)["train_gain"]
          for a in (0.2, 0.3, 0.36)]
    for lo, hi in ((s2[0], s2[1]), (s2[1], s2[2])):
        diff = np.array(hi.values) - np.array(lo.values)
        assert diff.mean() > K * diff.std(ddof=1) / math.sqrt(diff.size), diff
    for teacher, nv, net in (("He1 + He2/sqrt(2)", 0.0, s2[2]),
                             ("He1", 1.0, sim_spikes("relu_centered", "He1", alpha=0.36, noise_var=1, n_test=1600,
                                                     **kw)["train_gain"])):
        lim = sim_spike_model("relu_centered", teacher, mode="limit", bulk="nonlinear", ell=3, noise_var=nv, **kw)
        diff = np.array(net.values) - np.array(lim["delta"].values)
        assert diff.mean() <= K * diff.std(ddof=1) / math.sqrt(diff.size), (teacher, diff)


# ---------------------------------------------------------------- CLI
def test_cli_gains_acceptance_and_refusal():
    import json

    rc, out, err = run_cli("gains", "--student", "relu_centered", "--teacher", "x + (x**2-1)/sqrt(2)", "--phi", "1",
                           "--psi", "2", "--lam", "0.5", "--ell", "2", "--json")
    assert rc == 0, err
    d = json.loads(out)
    g = gains("relu_centered", "x + (x**2-1)/sqrt(2)", 1, 2, "1/2", ell=2, dps=30)
    assert agree(d["delta"][1], g.delta[1], 14) and agree(d["lambda_test"][1], g.lambda_test[1], 14)
    assert {"delta", "lambda_test", "baseline_train", "baseline_test", "window"} <= set(d)
    rc, out, err = run_cli("gains", "--student", "tanh", "--teacher", "x + (x**2-1)/sqrt(2)", "--phi", "1", "--psi",
                           "2", "--lam", "0.5", "--ell", "2")
    assert rc == 2 and "c_2 = 0" in err and len(err.strip().splitlines()) == 1


def test_cli_symbolic_ell6():
    rc, out, err = run_cli("gains", "--student", "He1 + He2/3 + He3/5 + He4/9 + He5/11 + He6/13", "--teacher",
                           "He1 + He2/sqrt(2)", "--phi", "1", "--psi", "2", "--lam", "0.5", "--ell", "6", "--symbolic",
                           "--json")
    assert rc == 0, err
    import json

    d = json.loads(out)
    assert "c_star_6" in d["symbolic"]["delta_6"]["sympy"] and "\\star" in d["symbolic"]["delta_6"]["latex"]


def test_cli_resolvent_json():
    import json

    rc, out, _ = run_cli("resolvent", "--student", "tanh", "--phi", "1", "--psi", "2", "--lam", "1/2", "--dps", "30",
                         "--json")
    d = json.loads(out)
    assert abs(mpmath.mpf(d["m1"]) / mpmath.mpf("0.8225195578") - 1) < 1e-9
    assert set(d) >= {"m1", "m2", "dm1_dlam", "dm2_dlam", "residual", "iterations"}


def test_the_largest_dps_is_not_refused_by_an_inner_check():
    """gains(dps=MAX_DPS) ran the resolvent at MAX_DPS + 10 digits and was refused as 'dps=310', a value the user
    never typed; now the boundary accepts [1, MAX_DPS] and names the user's own dps beyond it."""
    import pytest as _pytest

    from onestep_theory import InvalidParameterError, gains, resolvent
    from onestep_theory.core.limits import MAX_DPS

    with _pytest.raises(InvalidParameterError, match=rf"dps={MAX_DPS + 1}\b"):
        gains("tanh", "tanh", "1/2", "1/2", "1/10", ell=1, dps=MAX_DPS + 1)
    with _pytest.raises(InvalidParameterError, match=rf"dps={MAX_DPS + 1}\b"):
        resolvent("tanh", "1/2", "1/2", "1/10", dps=MAX_DPS + 1)
    g = gains("He1", "He1", "1/2", "1/2", "1/10", ell=1, dps=MAX_DPS)
    assert g.delta[0] > 0
