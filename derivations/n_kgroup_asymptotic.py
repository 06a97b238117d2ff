"""(n) The asymptotic K-group prior of docs/theory/srf-theory.md §8.1 and its reductions.

What is checked, and how:
  1. (SymPy, exact) K = 1: the fixed point 1/nu = lambda + hat_V2 + c hat_V1 / (1 + beta c nu hat_V1) is the
     Marchenko-Pastur equation of §4.5 with nu = s / hat_V1, and V1 = c nu / (1 + beta c nu hat_V1) equals
     (1 - t s) / hat_V1 on that equation.
  2. (mpmath, 50 digits) K = 1: the second-order traces q2, Q1 (derivatives of the fixed point along the
     hats) equal the closed forms of §4.5 (q2 = hq1 J2 + hq2 K0, Q1 = hq1 J1 + hq2 J2) at random points.
  3. (float64, random matrices) K = 3, beta = 0.5 and 2: every trace V1, V2, Q1, q2 of the sampled
     prior S = lam I + sum hat_V1_jl P_j Omega P_l + sum hat_V2_j P_j approaches the deterministic equivalent
     with an O(1/p) bias: at p = 200..1600 the mean over samples minus the DE fits b/p (no constant) within its
     standard errors (chi^2 per trace, family-wise 5 %).
  4. (mpmath, 30 digits) the reductions of the full saddle point: two groups with the same value == one group;
     {1, -1} with an odd student == the uniform readout (a singular mean-overlap system); K = 1 with
     reduce=False == the single-group solver (F3) — each to within the stated errors (~1e-30).
Usage: python n_kgroup_asymptotic.py   (about 3 minutes)
"""

import math

import mpmath
import numpy as np
import scipy.stats
import sympy as sp

from onestep_theory.srf.grouped.groupprior import kgroup_prior
from onestep_theory.srf.grouped.groups import srf_groups
from onestep_theory.srf.single.priors import mp_integrals
from onestep_theory.srf.grouped.readout import Readout
from onestep_theory.srf.single.solve import srf_solve


def symbolic():
    A, L, c, beta, s = sp.symbols("A L c beta s", positive=True)
    nu = s / A
    t = L / A
    quad = c * beta * t * s**2 + (t + c - c * beta) * s - 1          # §4.5
    fixed = 1 / nu - L - c * A / (1 + beta * c * nu * A)              # §8.1 at K = 1
    r1 = sp.simplify(sp.numer(sp.together(fixed)) * A / sp.numer(sp.together(-quad * A)))
    V1 = c * nu / (1 + beta * c * nu * A)
    diff = sp.numer(sp.together(V1 - (1 - t * s) / A))
    rem = sp.rem(sp.Poly(diff, s), sp.Poly(sp.numer(sp.together(quad)), s))
    print(f"1. K = 1: (fixed-point equation) / (MP quadratic) = {r1};  V1 - (1 - ts)/hat_V1 = 0 mod the quadratic: "
          f"remainder {sp.simplify(rem.as_expr())}")
    return r1 != 0 and sp.simplify(rem.as_expr()) == 0


def second_order():
    worst = mpmath.mpf(0)
    rng = np.random.default_rng(5)
    with mpmath.workdps(50):
        for _ in range(6):
            c, beta, lam, hV1, hV2, hq1, hq2 = (mpmath.mpf(float(v)) for v in rng.uniform(0.2, 2.5, 7))
            O = lambda v: np.array([v], dtype=object)  # noqa: E731
            hats = (np.array([[hV1]], dtype=object), O(hV2), np.array([[hq1]], dtype=object), O(hq2),
                    O(mpmath.mpf(0)), O(mpmath.mpf(0)))
            th, ps, Q1, q2, V1, V2, nu = kgroup_prior(hats, beta, lam, O(mpmath.mpf(1)), O(c))
            V1r, V2r, J1, J2, K0 = mp_integrals(c, beta, lam, hV1, hV2, mpmath.sqrt)
            gaps = [V1[0, 0] - V1r, V2[0] - V2r, q2[0] - (hq1 * J2 + hq2 * K0), Q1[0, 0] - (hq1 * J1 + hq2 * J2)]
            worst = max(worst, max(abs(g) for g in gaps))
    print(f"2. K = 1 at 50 digits, 6 random points: largest |V1, V2, q2, Q1 - closed form of §4.5| = "
          f"{mpmath.nstr(worst, 3)}")
    return worst < mpmath.mpf(10) ** -45


def _sample(p, beta, lam, A, hV2, pis, cs, N1, N2, rng):
    d = round(p / beta)
    counts = np.round(np.array(pis) * p).astype(int)
    counts[-1] = p - counts[:-1].sum()
    g = np.repeat(np.arange(len(pis)), counts)
    W = np.sqrt(cs[g])[:, None] * rng.standard_normal((p, d)) / math.sqrt(d)
    Om = W @ W.T
    Z = np.linalg.inv(Om * A[np.ix_(g, g)] + np.diag(lam + hV2[g]))
    st = np.concatenate([[0], np.cumsum(counts)[:-1]])
    bs = lambda X: np.add.reduceat(np.add.reduceat(X, st, 0), st, 1)  # noqa: E731
    T = Z @ (Om * N1[np.ix_(g, g)] + np.diag(N2[g])) @ Z
    return np.concatenate([bs(Z * Om).ravel() / p, np.add.reduceat(np.diag(Z), st) / p, bs(Om * T).ravel() / p,
                           np.add.reduceat(np.diag(T), st) / p])


def random_matrices():
    rng = np.random.default_rng(1)
    A = np.array([[0.8, 0.5, 0.1], [0.5, 0.9, 0.3], [0.1, 0.3, 0.4]])
    hV2, pis, cs = np.array([0.3, 0.1, 0.5]), np.array([0.2, 0.5, 0.3]), np.array([1.2, 2.0, 0.7])
    N1 = np.array([[0.3, 0.1, 0.0], [0.1, 0.2, 0.05], [0.0, 0.05, 0.4]])
    N2 = np.array([0.2, 0.4, 0.1])
    ok = True
    for beta in (0.5, 2.0):
        # the prior's Q1, q2 are its V1, V2 differentiated along (N1, N2): pass N1 as hat_Q1 with hat_psi = 0
        hats = (A, hV2, N1, N2, np.zeros(3), np.zeros(3))
        th, ps, Q1, q2, V1, V2, nu = kgroup_prior(hats, beta, 0.1, pis, cs)
        de = np.concatenate([V1.ravel(), V2, Q1.ravel(), q2])
        xs, gaps, ses = [], [], []
        for p in (200, 400, 800, 1600):
            n = max(6, 9600 // p)
            arr = np.array([_sample(p, beta, 0.1, A, hV2, pis, cs, N1, N2, rng) for _ in range(n)])
            xs.append(1 / p)
            gaps.append(arr.mean(0) - de)
            ses.append(arr.std(0, ddof=1) / math.sqrt(n))
            print(f"3. beta = {beta}: p = {p:>4} ({n:>2} samples): max |sample - DE| = {np.max(np.abs(gaps[-1])):.2e}, "
                  f"p x max gap = {p * np.max(np.abs(gaps[-1])):.3f}")
        # every trace: mean(sample) - DE = b/p (no constant: the limit is the DE), weighted by the standard errors;
        # chi^2 on 3 dof per trace, family-wise 5 % (Bonferroni over the traces)
        x, g, se = np.array(xs), np.array(gaps), np.array(ses)
        w = 1 / se**2
        b = np.sum(w * x[:, None] * g, 0) / np.sum(w * x[:, None] ** 2, 0)
        chi2 = np.sum(w * (g - b * x[:, None]) ** 2, 0)
        pmin = float(np.min(scipy.stats.chi2.sf(chi2, len(x) - 1)))
        print(f"   fit gap = b/p per trace: largest chi2 {np.max(chi2):.1f} on {len(x) - 1} dof, smallest p-value "
              f"{pmin:.2g} (threshold {0.05 / g.shape[1]:.1g}); |b| <= {np.max(np.abs(b)):.2f}")
        ok &= pmin > 0.05 / g.shape[1]
    return ok


def reductions():
    kw = dict(alpha0=20, eta=3, alpha=2, beta=1, lam="1/10", dps=30)
    uni = srf_solve("tanh", "sin", **kw)
    same = Readout("finite", (sp.Integer(1), sp.Integer(1)), (sp.Rational(1, 3), sp.Rational(2, 3)))
    e_same = srf_groups("tanh", "sin", readout_spec=same, reduce=False, **kw)
    e_pm = srf_groups("tanh", "sin", readout_spec="1:1/2,-1:1/2", reduce=False, **kw)
    e_one = srf_groups("tanh", "sin", readout_spec="1:1", reduce=False, **kw)
    ok = True
    for name, sol in (("{1, 1}", e_same), ("{1, -1}", e_pm), ("K = 1", e_one)):
        gap = abs(sol.test_error - uni.test_error)
        ok &= gap <= sol.abs_error + uni.abs_error
        print(f"4. {name:<8} K = {len(sol.groups)} at 30 digits: {mpmath.nstr(sol.test_error, 31)}  vs uniform "
              f"{mpmath.nstr(uni.test_error, 31)}: gap {mpmath.nstr(gap, 3)} (stated errors {sol.abs_error:.1e} + "
              f"{uni.abs_error:.1e}; m rank {sol.m_rank})")
    return ok


if __name__ == "__main__":
    results = [symbolic(), second_order(), random_matrices(), reductions()]
    print(f"CONCLUSION: {'all four checks hold' if all(results) else 'FAILED: ' + str(results)}")
