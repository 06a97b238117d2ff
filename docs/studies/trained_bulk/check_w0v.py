"""Check of docs/theory/trained-bulk.md (15) on sampled trained bulks (the package's simulator, case B by default):
with z = W0 v, u = W~v, e = W~theta_perp and Q = (t + W~ Pi W~^T)^{-1}, the weights (d/p) z^T Q u, (d/p) z^T Q z,
(d/p) z^T Q e are g(t), g(t) and 0 (so f_cv = k g, f_cc = (k^2 + s^2) g, f_c-perp = 0).
Usage: python check_w0v.py [d seeds]"""
import sys

import numpy as np

from onestep_theory.simulate import sim_giant_step
from onestep_theory.srf.single.priors import from_trained

d = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
TS = (0.3, 1.0)
rows = []


class Done(Exception):
    pass


def hook(W0, W1, theta):
    _, _, v, Wt = from_trained(W1, W0)
    p = Wt.shape[0]
    u, z = Wt @ v, W0 @ v
    tp = theta - (theta @ v) * v
    e = Wt @ (tp / np.linalg.norm(tp))
    Om = Wt @ Wt.T - np.outer(u, u)
    row = []
    for t in TS:
        Q = np.linalg.inv(t * np.eye(p) + Om)
        g = np.trace(Q) / p
        row += [d / p * z @ Q @ u / g, d / p * z @ Q @ z / g, d / p * z @ Q @ e / g]
    rows.append(row)
    raise Done


for s in range(seeds):
    try:
        sim_giant_step("tanh", "tanh", d, alpha0="1/2", eta=1, alpha=0.02, beta=1, seed=s, n_test=10, weights_hook=hook)
    except Done:
        pass
r = np.array(rows)
m, se = r.mean(0), r.std(0, ddof=1) / np.sqrt(len(r))
names = [f"{q}@{t}" for t in TS for q in ("zQu/g", "zQz/g", "zQe/g")]
pred = [1, 1, 0] * len(TS)
for n, a, b, c in zip(names, m, se, pred):
    print(f"{n:10s} {a:+.4f} +- {b:.4f}   (predicted {c})")
