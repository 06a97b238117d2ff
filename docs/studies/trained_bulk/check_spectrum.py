"""Check of docs/theory/trained-bulk.md against sampled trained bulks (the package's one-step simulator).

For each d, a few seeds of `sim_giant_step` (case B unless told): the trained bulk W~ = W1 - 1 wbar^T and its F1
weights (D, F, H, G) (`from_trained`, `empirical_from_weights`), and the four F1 functions
g = <1/(t+D)>, f_F = <F/(t+D)>, f_G, f_H at a few t, plus the moments <D>, <D^2>.  Printed per d (mean +- SE over
seeds), extrapolated in 1/d (weighted line), against the deterministic equivalent.
Usage: python check_spectrum.py OUT.json [alpha0 eta teacher] ; nice -n 10, one process.
"""
import json
import sys
import time

import numpy as np

from onestep_theory.simulate import sim_giant_step
from onestep_theory.srf.features.mapping import srf_params
from onestep_theory.srf.single.priors import empirical_from_weights, from_trained
from onestep_theory.srf.single.trainedbulk import resolvents, step_law, trained_moments

out = sys.argv[1]
alpha0 = sys.argv[2] if len(sys.argv) > 2 else "1/2"
eta = sys.argv[3] if len(sys.argv) > 3 else "1"
teacher = sys.argv[4] if len(sys.argv) > 4 else "tanh"
TS = (0.3, 1.0, 3.0)
SIZES = ((500, 6), (1000, 4), (2000, 3))


class Done(Exception):
    pass


def sample(d, seed):
    box = {}

    def hook(W0, W1, theta):
        r, c, v, Wt = from_trained(W1, W0)
        D, F, H, G = empirical_from_weights(Wt, v, theta)
        row = {"mean_D": D.mean(), "mean_D2": (D * D).mean()}
        for t in TS:
            S = t + D
            row.update({f"g@{t}": np.mean(1 / S), f"fF@{t}": np.mean(F / S), f"fG@{t}": np.mean(G / S),
                        f"fH@{t}": np.mean(H / S)})
        box.update(row)
        raise Done

    try:
        sim_giant_step("tanh", teacher, d, alpha0=alpha0, eta=eta, alpha=0.01 + 1.0 / d, beta=1, seed=seed,
                       n_test=10, weights_hook=hook)
    except Done:
        pass
    return box


pp = srf_params("tanh", teacher, alpha0=alpha0, eta=eta)
tau = float(pp.c) - 1
x, wx = np.polynomial.hermite_e.hermegauss(300)
wx = wx / wx.sum()
L = step_law(wx, x, np.tanh(x) if teacher == "tanh" else np.sin(x), tau, 1 / float(eval(alpha0)), 1.0)
theory = {"mean_D": trained_moments(L)[0], "mean_D2": trained_moments(L)[1]}
for t in TS:
    (g, fF, fG, fH), _ = resolvents(L, t)
    theory.update({f"g@{t}": g, f"fF@{t}": fF, f"fG@{t}": fG, f"fH@{t}": fH})
res = {"theory": theory, "sizes": {}}
t0 = time.time()
for d, seeds in SIZES:
    rows = [sample(d, 1000 * d + s) for s in range(seeds)]
    res["sizes"][d] = {k: (float(np.mean([r[k] for r in rows])), float(np.std([r[k] for r in rows], ddof=1) / np.sqrt(seeds)))
                      for k in theory}
    print(f"d={d} done, {time.time() - t0:.0f} s", flush=True)
ext = {}
for k in theory:
    ds = np.array([d for d, _ in SIZES], float)
    m = np.array([res["sizes"][d][k][0] for d, _ in SIZES])
    se = np.array([max(res["sizes"][d][k][1], 1e-12) for d, _ in SIZES])
    A = np.stack([np.ones_like(ds), 1 / ds], 1) / se[:, None]
    coef, *_ = np.linalg.lstsq(A, m / se, rcond=None)
    cov = np.linalg.inv(A.T @ A)
    chi2 = float(np.sum((A @ coef - m / se) ** 2))
    ext[k] = (float(coef[0]), float(np.sqrt(cov[0, 0])), chi2)
res["extrapolated"] = ext
print(f"{'quantity':10s} {'theory':>12s} " + " ".join(f"{'d=' + str(d):>20s}" for d, _ in SIZES) + f" {'d->inf (chi2/1)':>26s}")
for k in theory:
    print(f"{k:10s} {theory[k]:12.6f} " + " ".join(f"{res['sizes'][d][k][0]:11.6f}+-{res['sizes'][d][k][1]:.6f}" for d, _ in SIZES)
          + f" {ext[k][0]:11.6f}+-{ext[k][1]:.6f} ({ext[k][2]:.1f})")
json.dump(res, open(out, "w"), indent=1, default=float)
