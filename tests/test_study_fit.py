"""The finite-size extrapolation (docs/theory/numerics.md §8) on synthetic data with a known limit."""

import math

import numpy as np
import pytest

from onestep_theory import InvalidParameterError
from onestep_theory.study import extrapolate

DS = np.array([250, 500, 1000, 2000, 4000])


def test_exact_recovery_without_noise():
    g = 0.02 - 0.4 / np.sqrt(DS) + 3.0 / DS
    fit = extrapolate(DS, g, np.full(5, 1e-4))
    assert abs(fit.g_inf - 0.02) < 1e-12 and fit.chi2 < 1e-12 and fit.dof == 2 and not fit.inflated
    assert abs(fit.coefficients["d^-0.5"] + 0.4) < 1e-9 and abs(fit.coefficients["d^-1"] - 3.0) < 1e-7


def test_coverage_on_synthetic_data():
    """Gaussian noise of the stated standard errors: g_inf within 1.96 s.e. of the truth in about 95 % of 400
    trials (binomial: at least 90 %), and the chi2 p-values roughly uniform (mean 0.5 +- 0.05)."""
    rng = np.random.default_rng(0)
    se = 0.002 * np.sqrt(DS / 250) ** -1 * 2          # smaller errors at larger d, as with fixed seeds per size
    truth = 0.015 + 0.3 / np.sqrt(DS) - 2.0 / DS
    inside, pv = 0, []
    for _ in range(400):
        fit = extrapolate(DS, truth + se * rng.standard_normal(5), se)
        inside += abs(fit.g_inf - 0.015) <= 1.96 * fit.se
        pv.append(fit.p_value)
    assert inside / 400 >= 0.90
    assert abs(np.mean(pv) - 0.5) < 0.05


def test_verdict_and_inflation():
    se = np.full(5, 1e-3)
    ok = extrapolate(DS, 0.1 / np.sqrt(DS), se)
    assert ok.theory_inside and "inside" in ok.verdict
    rng = np.random.default_rng(3)
    g = 0.05 + 0.1 / np.sqrt(DS) + 0.02 * rng.standard_normal(5)          # scatter 20x the stated s.e.
    noisy = extrapolate(DS, g, se)
    assert noisy.inflated and noisy.chi2 / noisy.dof > 1
    # the inflation is the Birge ratio: the same data with the standard errors scaled by sqrt(chi2/dof) have
    # chi2/dof = 1, no inflation, and the same g_inf +- se
    rescaled = extrapolate(DS, g, se * math.sqrt(noisy.chi2 / noisy.dof))
    assert abs(rescaled.chi2 / rescaled.dof - 1) < 1e-9
    assert abs(rescaled.g_inf - noisy.g_inf) < 1e-12 and abs(rescaled.se - noisy.se) < 1e-9 * noisy.se


@pytest.mark.parametrize("args", [
    dict(d=[100, 200], gaps=[0.1, 0.2], se=[0.1, 0.1]),                  # too few sizes for 2 exponents
    dict(d=[100, 100, 200, 400], gaps=[0.1] * 4, se=[0.1] * 4),          # repeated size
    dict(d=[100, 200, 400, 800], gaps=[0.1] * 4, se=[0.1, 0, 0.1, 0.1]),  # zero standard error
    dict(d=[100, 200, 400, 800], gaps=[0.1] * 3, se=[0.1] * 4),          # lengths differ
    dict(d=[100, 200, 400, 800], gaps=[0.1] * 4, se=[0.1] * 4, exponents=(0.5, 0.5)),
    dict(d=[100, 200, 400, 800], gaps=[math.nan] * 4, se=[0.1] * 4),
])
def test_refusals(args):
    with pytest.raises(InvalidParameterError):
        extrapolate(**args)


def test_no_verdict_without_degrees_of_freedom():
    """Three sizes and two exponents: the fit passes through every point; it gives no verdict and says what to add
    (issue 23: the README's study printed 'chi2 0.00 on 0 dof' and still a verdict)."""
    fit = extrapolate([250, 500, 1000], [0.01, 0.02, 0.015], [1e-3] * 3, exponents=(0.5, 1.0))
    assert fit.dof == 0 and fit.theory_inside is None
    assert fit.verdict.startswith("no verdict") and "--d" in fit.verdict and "--exponents" in fit.verdict
