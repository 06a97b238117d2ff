"""F1 on sampled trained bulks (the package's one-step simulator) against the trained-bulk option
(docs/theory/trained-bulk.md), extrapolated in 1/p.  Each seed: the network's trained bulk W~ = W1 - 1 wbar^T, its
F1 weights (D, F, H, G), and srf_solve(spectrum="empirical") at Result 3.1's (r, c, gamma) (so only the prior
differs from the option).  Usage: python check_f1.py OUT.json [alpha0 eta teacher alpha]; nice -n 10, one process.
"""
import json
import sys
import time

import numpy as np

from onestep_theory.simulate import sim_giant_step
from onestep_theory.srf.single.priors import empirical_from_weights, from_trained
from onestep_theory.srf.single.solve import srf_solve

out = sys.argv[1]
alpha0 = sys.argv[2] if len(sys.argv) > 2 else "1/2"
eta = sys.argv[3] if len(sys.argv) > 3 else "1"
teacher = sys.argv[4] if len(sys.argv) > 4 else "tanh"
alpha = sys.argv[5] if len(sys.argv) > 5 else "3"
SIZES = tuple((int(a), int(b)) for a, b in (x.split(":") for x in (sys.argv[6] if len(sys.argv) > 6 else
                                                                    "500:8,1000:6,2000:4").split(",")))
kw = dict(alpha0=alpha0, eta=eta, alpha=alpha, beta=1, lam="0.1")


class Done(Exception):
    pass


def f1_value(d, seed):
    box = {}

    def hook(W0, W1, theta):
        r, c, v, Wt = from_trained(W1, W0)
        box["w"] = empirical_from_weights(Wt, v, theta)
        raise Done

    try:
        sim_giant_step("tanh", teacher, d, alpha0=alpha0, eta=eta, alpha=0.01 + 1.0 / d, beta=1, seed=seed,
                       n_test=10, weights_hook=hook)
    except Done:
        pass
    return float(srf_solve("tanh", teacher, spectrum="empirical", empirical=box["w"], tol=1e-9, **kw).test_error)


t0 = time.time()
res = {"mp": float(srf_solve("tanh", teacher, **kw).test_error),
       "trained": float(srf_solve("tanh", teacher, spectrum="trained", **kw).test_error), "sizes": {}}
for d, seeds in SIZES:
    vals = [f1_value(d, 7000 * d + s) for s in range(seeds)]
    res["sizes"][d] = dict(values=vals, mean=float(np.mean(vals)), se=float(np.std(vals, ddof=1) / np.sqrt(seeds)))
    print(f"d={d}: F1 {res['sizes'][d]['mean']:.6f} +- {res['sizes'][d]['se']:.6f} ({time.time() - t0:.0f} s)",
          flush=True)
ds = np.array([d for d, _ in SIZES], float)
m = np.array([res["sizes"][d]["mean"] for d, _ in SIZES])
se = np.array([res["sizes"][d]["se"] for d, _ in SIZES])
A = np.stack([np.ones_like(ds), 1 / ds], 1) / se[:, None]
coef, *_ = np.linalg.lstsq(A, m / se, rcond=None)
cov = np.linalg.inv(A.T @ A)
chi2 = float(np.sum((A @ coef - m / se) ** 2))
res["extrapolated"] = dict(value=float(coef[0]), se=float(np.sqrt(cov[0, 0])), chi2=chi2, dof=len(SIZES) - 2)
pc = lambda v: 100 * (v / res["mp"] - 1)  # noqa: E731
print(f"Result 3.3 {res['mp']:.8f}; trained option {res['trained']:.8f} ({pc(res['trained']):+.3f} %)")
print(f"F1 on sampled trained bulks, d -> inf (1/d fit): {coef[0]:.6f} +- {np.sqrt(cov[0, 0]):.6f} "
      f"({pc(coef[0]):+.3f} +- {100 * np.sqrt(cov[0, 0]) / res['mp']:.3f} %), chi2 {chi2:.1f}/{len(SIZES) - 2}")
print(f"F1(d->inf) - trained option: {100 * (coef[0] - res['trained']) / res['mp']:+.3f} +- "
      f"{100 * np.sqrt(cov[0, 0]) / res['mp']:.3f} % of Result 3.3")
json.dump(res, open(out, "w"), indent=1)
