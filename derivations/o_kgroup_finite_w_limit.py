"""(o) The finite-W K-group saddle point converges to the asymptotic one (docs/theory/srf-theory.md §8, §8.1) at
the rate O(1/p).

For three readouts — K = 2 (1:1/2, 2:1/2) and K = 3 (1/2:1/3, 1:1/3, 2:1/3) on case A (tanh/sin, alpha0 = 20,
eta = 3, alpha = 2, beta = 1, lambda = 0.1), and K = 2 with mixed signs (1:1/2, -2:1/2) for the centred ReLU
(not odd, so the sign matters: for tanh it is the readout {1, 2} exactly) at r = 1.1, c = 1.02, gamma = 0.97:
  * the finite-W (annealed) prior is solved on independent sampled bulks at a ladder of widths p; the mean over
    the bulks at each p carries its standard error;
  * a weighted least-squares fit a + b/p over the ladder gives the p -> infinity value a with its standard
    error (and chi^2 of the fit: the O(1/p) form must describe the data);
  * the asymptotic solver (float64, error from refinement) must lie within 2 standard errors of a.
The 1/p slope b is printed (the finite-W form's convergence rate).
Usage: python o_kgroup_finite_w_limit.py [--full]   (default widths 60..480, about 4 minutes; --full adds
p = 960, about 25 minutes)
"""

import math
import sys

import numpy as np

from onestep_theory.simulate import sample_bulks
from onestep_theory.srf.grouped.groups import srf_groups

CASE = dict(alpha=2, beta=1, lam="1/10")
A = dict(alpha0=20, eta=3)
#: (student, readout, sRF parameters)
READOUTS = (("tanh", "1:1/2,2:1/2", A), ("tanh", "1/2:1/3,1:1/3,2:1/3", A),
            ("relu_centered", "1:1/2,-2:1/2", dict(r="1.1", c="1.02", gamma="0.97")))


def ladder(full):
    widths = [60, 120, 240, 480] + ([960] if full else [])
    return [(p, max(3, 1920 // p)) for p in widths]


def fit(ps, means, ses):
    """Weighted least squares of mean = a + b/p: (a, se_a, b, se_b, chi2, dof)."""
    X = np.column_stack([np.ones(len(ps)), 1 / np.asarray(ps, dtype=float)])
    w = 1 / np.asarray(ses) ** 2
    cov = np.linalg.inv(X.T @ (w[:, None] * X))
    coef = cov @ X.T @ (w * np.asarray(means))
    chi2 = float(np.sum(w * (np.asarray(means) - X @ coef) ** 2))
    return coef[0], math.sqrt(cov[0, 0]), coef[1], math.sqrt(cov[1, 1]), chi2, len(ps) - 2


def one(student, spec, params, full):
    kw = dict(CASE, **params)
    asym = srf_groups(student, "sin", readout_spec=spec, **kw)
    ps, means, ses = [], [], []
    for k, (p, count) in enumerate(ladder(full)):
        bulks = list(sample_bulks(p, p, count, seed=1000 + k))
        per = srf_groups(student, "sin", readout_spec=spec, prior="finite-w", bulks=bulks, **kw).per_bulk
        ps.append(p)
        means.append(float(np.mean(per)))
        ses.append(float(np.std(per, ddof=1) / math.sqrt(len(per))))
        print(f"   {spec:<22} p = {p:>4}: {means[-1]:.7f} +/- {ses[-1]:.1e} ({count} bulks)")
    a, sa, b, sb, chi2, dof = fit(ps, means, ses)
    z = (float(asym.test_error) - a) / sa
    print(f"{student} {spec:<22} asymptotic {float(asym.test_error):.10f} +/- {asym.abs_error:.1e};  fit a + b/p: "
          f"a = {a:.7f} +/- {sa:.1e}, b = {b:+.4f} +/- {sb:.1e} (chi2 {chi2:.1f} on {dof} dof);  "
          f"(asymptotic - a)/se = {z:+.2f}")
    return abs(z) <= 2


if __name__ == "__main__":
    full = "--full" in sys.argv[1:]
    ok = [one(*case, full) for case in READOUTS]
    print(f"CONCLUSION: the asymptotic K-group value lies within 2 standard errors of the finite-W values "
          f"extrapolated in 1/p for {sum(ok)}/{len(ok)} readouts" + ("" if all(ok) else "  FAILED"))
    sys.exit(0 if all(ok) else 1)
