"""Study verdicts with power (issue 31 item 4): every verdict states the smallest gap the study could detect (95 %
confidence two-sided, 80 % power), gaps in % of the theory; an underpowered study never reads as agreement.
References: the normal closed form (z_0.975 + z_0.80) se, Monte Carlo of the test itself, the Welch-Satterthwaite
formula on coefficients found by perturbing the fit's input."""

import json
import math
from statistics import NormalDist

import numpy as np
import pytest

from onestep_theory.core.results import read_csv
from onestep_theory import InvalidParameterError
from onestep_theory.cli.main import main
from onestep_theory.study import extrapolate, run_study
from onestep_theory.study.fit import detectable_gap, power_verdict

TH = 0.0325182080             # case A's theory value, the scale of the % units
DS = np.array([250, 500, 1000, 2000, 4000])
Z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.80)


def test_detectable_gap_normal_limit_is_the_closed_form():
    assert abs(detectable_gap(1.0) - Z) < 1e-5 * Z and abs(Z - 2.8016) < 1e-4
    d = detectable_gap(0.37)                  # exact: Phi(d/se - z) + Phi(-d/se - z) = 0.8
    zc = NormalDist().inv_cdf(0.975)
    assert abs(NormalDist().cdf(d / 0.37 - zc) + NormalDist().cdf(-d / 0.37 - zc) - 0.8) < 1e-10


@pytest.mark.parametrize("nu", [1, 3, 10])
def test_detectable_gap_has_80_percent_power_by_monte_carlo(nu):
    """At the detectable gap, the t test on nu degrees of freedom rejects in 80 % of simulated studies
    (400 000 draws: standard error 0.0006)."""
    from scipy import stats

    rng = np.random.default_rng(31 + nu)
    delta = detectable_gap(1.0, nu)
    n = 400_000
    t = (rng.standard_normal(n) + delta) / np.sqrt(rng.chisquare(nu, n) / nu)
    rate = np.mean(np.abs(t) > stats.t.ppf(0.975, nu))
    assert abs(rate - 0.8) < 4 * math.sqrt(0.16 / n), rate
    assert detectable_gap(1.0, nu) > Z                     # fewer degrees of freedom, a larger detectable gap


def test_verdict_with_known_se_detects_the_detectable_gap_80_percent_of_the_time():
    """The verdict function fed synthetic g_inf ~ N(delta, se) with se known: at delta = its own detectable gap it
    says 'outside' in 80 % of 20 000 studies (+- 0.012 at 4 standard errors)."""
    se = 0.004 * TH
    delta = power_verdict(0.0, se, scale=TH)["detectable_gap"]
    rng = np.random.default_rng(5)
    hits = sum(power_verdict(g, se, scale=TH)["status"] == "outside" for g in delta + se * rng.standard_normal(20000))
    assert abs(hits / 20000 - 0.8) < 4 * math.sqrt(0.16 / 20000)


def model(g_inf_pct, se_pct, ds=DS, a=0.4):
    """Per-size gaps exactly on g(d) = g_inf + a/d (absolute units), with standard errors se_pct % of the theory."""
    return ds, g_inf_pct / 100 * TH + a * TH / ds, np.full(len(ds), se_pct / 100 * TH)


def test_underpowered_study_does_not_claim_agreement():
    """A true gap of 3 % measured with 3 % standard errors per size: the theory is inside the 95 % interval, and the verdict
    says it is underpowered and names the gap it could not detect; it never reads as agreement."""
    d, g, se = model(-3.0, 3.0)
    fit = extrapolate(d, g, se, exponents=(1,), scale=TH)
    assert abs(fit.g_inf_pct + 3.0) < 1e-9 and fit.theory_inside                    # the interval holds 0
    assert fit.status == "underpowered" and fit.verdict.startswith("underpowered")
    assert abs(fit.detectable_gap_pct - Z * fit.se_pct) < 1e-4 * fit.detectable_gap_pct   # se known: nu = inf
    assert f"{fit.detectable_gap_pct:.2g} %" in fit.verdict and "no evidence of agreement" in fit.verdict
    assert "-3.00 %" in fit.verdict                                                 # g_inf - theory in % of it
    # no degree of freedom left: no verdict, still with the gap it could not detect
    nv = extrapolate(d[:3], g[:3], se[:3], exponents=(0.5, 1), scale=TH)
    assert nv.status == "no verdict" and nv.theory_inside is None and "could not detect" in nv.verdict


@pytest.mark.parametrize("gap_pct", [-3.0, -1.0, 0.0, 0.5, 2.0])
@pytest.mark.parametrize("se_pct", [0.05, 0.3, 1.0, 3.0])
@pytest.mark.parametrize("tol", [0.005, 0.01, 0.05])
def test_inside_is_never_said_without_the_detectable_gap(gap_pct, se_pct, tol):
    d, g, se = model(gap_pct, se_pct)
    fit = extrapolate(d, g, se, exponents=(1,), scale=TH, tolerance=tol, reps=[8] * 5)
    assert "detect" in fit.verdict and f"{fit.detectable_gap_pct:.2g} %" in fit.verdict
    if fit.status == "inside":                           # agreement only when powered
        assert fit.detectable_gap_pct <= 100 * tol and "within the tolerance" in fit.verdict
    else:
        assert not fit.verdict.startswith("theory inside")
    assert (fit.status == "outside") == (not fit.theory_inside)


def test_well_powered_study_detects_a_3_percent_gap():
    """Synthetic studies with a true gap of -3 % of the theory and 0.3 % standard errors per size (16 seeds each):
    detectable gap about 1 %, so the gap is found (outside, negative) in nearly every one of 300 studies; with no gap
    the theory is inside and the verdict says agreement within the tolerance."""
    rng = np.random.default_rng(11)
    d, g, se = model(-3.0, 0.3)
    found = 0
    for _ in range(300):
        fit = extrapolate(d, g + se * rng.standard_normal(5), se, exponents=(1,), scale=TH, reps=[16] * 5,
                          tolerance=0.015)
        assert fit.detectable_gap_pct < 3.0
        found += fit.status == "outside" and fit.g_inf_pct < 0
    assert found >= 0.95 * 300
    d, g0, se = model(0.0, 0.3)
    fit = extrapolate(d, g0, se, exponents=(1,), scale=TH, reps=[16] * 5, tolerance=0.015)
    assert fit.status == "inside" and fit.verdict.startswith("theory inside") and "within the tolerance 1.5 %" in fit.verdict


def test_degrees_of_freedom_are_welch_satterthwaite():
    """nu of the fit's se from the seeds behind each size, against the formula on coefficients c_i = d g_inf / d g_i
    found by perturbing the input (an independent route to the fit's linear weights)."""
    d, g, se = model(-1.0, 0.5)
    se = se * np.array([2.0, 1.5, 1.0, 0.8, 0.6])
    n = np.array([24, 16, 8, 4, 3])
    fit = extrapolate(d, g, se, exponents=(1,), reps=n, scale=TH)
    assert not fit.inflated
    c = np.array([extrapolate(d, g + 1e-6 * np.eye(5)[i], se, exponents=(1,)).g_inf - fit.g_inf
                  for i in range(5)]) / 1e-6
    u = c ** 2 * se ** 2
    assert abs(math.sqrt(u.sum()) - fit.se) < 1e-6 * fit.se
    assert abs(fit.nu - u.sum() ** 2 / np.sum(u ** 2 / (n - 1))) < 1e-6 * fit.nu
    assert abs(fit.detectable_gap - detectable_gap(fit.se, fit.nu)) < 1e-12 and fit.detectable_gap > Z * fit.se


def test_tolerance_is_checked():
    with pytest.raises(InvalidParameterError, match="tolerance"):
        power_verdict(0.0, 1.0, scale=1.0, tolerance=0)


ARGV = ["study", "srf", "--student", "tanh", "--teacher", "sin", "--r", "1.1", "--c", "1.02", "--gamma", "0.97",
        "--alpha", "2", "--beta", "1", "--lam", "0.1", "--n-test", "300", "--reps", "2", "--workers", "1", "--quiet"]


def test_text_json_and_csv_carry_the_detectable_gap(tmp_path, capsys):
    """The command line: the text in % of the theory with the verdict and its detectable gap, JSON fields, and a CSV row
    d = inf per comparison; the sRF with row-norm heterogeneity is compared with the corrected theory too."""
    argv = ARGV + ["--d", "30,60,120", "--exponents", "1", "--norm-slope", "-0.5", "--norm-noise", "0.1"]
    assert main(argv + ["--store", str(tmp_path / "a.sqlite")]) == 0
    text = capsys.readouterr().out
    assert "% of the theory" in text and ("smallest detectable gap" in text or "could not detect" in text)
    assert "corrected for the row norms" in text and "docs/studies/mechanism.md" in text
    assert main(argv + ["--store", str(tmp_path / "a.sqlite"), "--resume", "--json", "--csv", str(tmp_path / "g.csv")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["comparisons"]) == {"theory", "row_norms"} and out["notes"]
    for comp in out["comparisons"].values():
        f = comp["fit"]
        assert f["status"] in ("outside", "inside", "underpowered") and "detect" in f["verdict"]
        assert abs(float(f["g_inf_pct"]) - 100 * float(f["g_inf"]) / float(out["theory"])) < 1e-9
    rows = [r for r in read_csv(tmp_path / "g.csv")[1] if r["d"] == "inf"]
    assert [r["comparison"] for r in rows] == ["theory", "row_norms"]
    assert all(float(r["detectable_gap_pct"]) > 0 and "detect" in r["verdict"] for r in rows)


@pytest.mark.parametrize("bad, flag, value", [
    (["--beta", "1e-9"], "--beta", "0.0333333"),             # p = beta d < 1 at d = 30: refused, never p = 1
    (["--beta", "1", "--alpha", "0.01"], "--alpha", "0.0333333"),
    (["--beta", "1", "--norm-slope", "1e308"], "--norm-slope", "0.93"),
    (["--beta", "1", "--norm-noise", "1e308"], "--norm-noise", "0.93"),
    (["--beta", "1", "--tolerance", "0"], "--tolerance", "(0, 100]"),
    (["--beta", "1", "--max-wait", "-1"], "--max-wait", "604800"),
])
def test_refused_with_one_line(tmp_path, capsys, bad, flag, value):
    store = tmp_path / "n.sqlite"
    args = list(ARGV)
    i = args.index("--beta")
    del args[i:i + 2]
    if "--alpha" in bad:
        j = args.index("--alpha")
        del args[j:j + 2]
    assert main(args + ["--d", "30,60", "--store", str(store)] + bad) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and flag in err and value in err, err
    assert not store.exists()
    with pytest.raises(InvalidParameterError, match="beta"):
        run_study("giant-step", dict(student="tanh", teacher="sin", alpha0=20, eta=3, alpha=3, beta=1e-9, lam=0.1),
                  [40, 60], 2, workers=1)
