"""Where the logistic readout's test MSE gap lives (docs/studies/readouts-losses.md §2): two checks beside the study.

1. Paired, on the same trained first layers: the network against its `equal_norm` and `srf` variants
   (simulate.ablation.build_variants), each with the logistic readout fitted on the same data (fit_convex).
2. The direct sRF (sim_srf) at Result 3.1's (r, c, gamma) with the logistic readout, d = 500 and 1000 (or the
   sizes given; run_readouts_losses.sh runs 500:16,1000:8,2000:16,4000:8 into rl_logistic_direct.txt).

Usage: python logistic_checks.py [D_PAIRED SEEDS]   (default 500 6; about 4 minutes on 2 cores in all).
       python logistic_checks.py direct D:SEEDS[,D:SEEDS...]   (only check 2, e.g. direct 2000:8)
Case: tanh student, sign teacher, alpha0 = 20, eta~ = 3, alpha = 2, beta = 1, lambda = 0.1.
"""
import math
import sys

import numpy as np

from onestep_theory.simulate import sim_srf
from onestep_theory.simulate.ablation import build_variants, step_matrices
from onestep_theory.simulate.base import Fn, fit_convex, sphere_rows, unit_vector
from onestep_theory.srf import srf_params
from onestep_theory.srf.loss.losses import loss

CASE = dict(alpha0=20, eta=3, alpha=2, beta=1, lam=0.1)
VARIANTS = ("network", "equal_norm", "srf")


def paired(d, seeds):
    s, t, lo = Fn("tanh", "student"), Fn("sign", "teacher"), loss("logistic")
    p, n0, n = d, CASE["alpha0"] * d, CASE["alpha"] * d
    rows = []
    for k in range(seeds):
        rng = np.random.default_rng([77, d, k])
        W0, theta = sphere_rows(rng, p, d), unit_vector(rng, d)
        X0 = rng.standard_normal((n0, d))
        D = step_matrices(s, X0, t.f(X0 @ theta), W0, float(CASE["eta"]), ())
        del X0
        Ws = build_variants(VARIANTS, W0, D["D"], D, theta, rng)[0]
        X, Xt = rng.standard_normal((n, d)), rng.standard_normal((20000, d))
        y, yt = t.f(X @ theta), t.f(Xt @ theta)
        row = {}
        for name in VARIANTS:
            a, _ = fit_convex(s.f(X @ Ws[name].T) / math.sqrt(p), y, CASE["lam"], lo)
            f = s.f(Xt @ Ws[name].T) @ a / math.sqrt(p)
            row[name] = (float(np.mean((yt - f) ** 2)), float(np.mean(np.sign(f) != yt)))
        rows.append(row)
    for name in VARIANTS[1:]:
        for j, lab in ((0, "test MSE"), (1, "class error")):
            dv = np.array([r["network"][j] - r[name][j] for r in rows])
            print(f"d = {d}, {seeds} seeds: network - {name}, {lab}: {dv.mean():+.4f} +- "
                  f"{dv.std(ddof=1) / math.sqrt(seeds):.4f} (network {np.mean([r['network'][j] for r in rows]):.4f})")


def direct(plan=((500, 16), (1000, 8))):
    m = srf_params("tanh", "sign", CASE["alpha0"], CASE["eta"])
    for d, reps in plan:
        res = sim_srf("tanh", "sign", d, r=float(m.r), c=float(m.c), gamma=float(m.gamma), alpha=CASE["alpha"],
                      beta=CASE["beta"], lam=CASE["lam"], loss="logistic", reps=reps, seed=5, n_test=20000)
        print(f"direct sRF d = {d}, {reps} seeds: " + ", ".join(
            f"{k} {res.stats[k].mean:.4f} +- {res.stats[k].se:.4f}" for k in ("test_error", "class_error")))


if __name__ == "__main__":
    if sys.argv[1:2] == ["direct"]:
        direct(tuple(tuple(int(x) for x in dr.split(":")) for dr in sys.argv[2].split(",")))
    else:
        paired(*(int(a) for a in sys.argv[1:3])) if len(sys.argv) > 2 else paired(500, 6)
        direct()
