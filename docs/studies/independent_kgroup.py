"""Independent reference simulation: two-layer net, one giant step, non-uniform a0 (docs/studies/readouts-losses.md §1).

Written by a separate session from the protocol alone, without reading or importing the package's simulator, to find
out why two earlier simulations of the K-group readout disagreed.  Case A at alpha = 2 (tanh student, sin teacher,
alpha0 = 20, eta~ = 3, beta = 1, lambda = 0.1) with u in {1, 2}, and protocol variants a reader might have coded
instead, all on the same draws (paired).  Usage:  python independent_kgroup.py D SEEDS OUT.jsonl   (e.g.
800 0,1,2 res.jsonl; about 70 s per seed at d = 800 on one core); make_readouts_losses.py summarises OUT.jsonl.

f(x) = (1/sqrt p) sum_i a_i tanh(w_i . x),  a0 = u/sqrt p.
Step on L = 1/(2 n0) sum (y - f)^2 with eta = eta_tilde * p:
  dL/dw_i = -(1/n0) sum_mu e_mu (a_i/sqrt p) tanh'(w_i.x_mu) x_mu
          = -(1/n0) sum_mu e_mu (u_i/p)   tanh'(...) x_mu
  => w_i <- w_i + eta_tilde (1/n0) sum_mu e_mu u_i tanh'(w_i.x_mu) x_mu
All variants for one (d, seed) share the same random draws (paired comparisons).
"""
import os
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import sys, time, json
import numpy as np

ALPHA0, ALPHA, NTEST, ETA_T, LAM = 20, 2, 20000, 3.0, 0.1
BASE_ENTROPY = 20240917


def sphere_rows(rng, m, d):
    G = rng.standard_normal((m, d))
    return G / np.linalg.norm(G, axis=1, keepdims=True)


def giant_step(W0, X0, y0, u_step, u_f0, p, drop_f0=False):
    Z = X0 @ W0.T                         # n0 x p
    S = np.tanh(Z)
    f0 = S @ u_f0 / p                     # (1/sqrt p) sum (u_i/sqrt p) tanh
    e = y0 if drop_f0 else (y0 - f0)
    dS = 1.0 - S * S                      # tanh'
    M = (e[:, None] * dS) * u_step[None, :]   # n0 x p
    G = M.T @ X0                          # p x d
    return W0 + ETA_T * G / X0.shape[0]


def ridge(Phi, r, p, lam):
    """argmin_a sum (r - Phi a/sqrt p)^2 + lam ||a||^2."""
    A = Phi.T @ Phi / p + lam * np.eye(p)
    b = Phi.T @ r / np.sqrt(p)
    return np.linalg.solve(A, b)


def run_task(d, s):
    t0 = time.time()
    ss = np.random.SeedSequence([BASE_ENTROPY, d, s])
    rng = np.random.default_rng(ss)
    p = d
    n0, n = ALPHA0 * d, ALPHA * d
    W0 = sphere_rows(rng, p, d)
    theta = sphere_rows(rng, 1, d)[0]
    X0 = rng.standard_normal((n0, d)); y0 = np.sin(X0 @ theta)
    X = rng.standard_normal((n, d)); y = np.sin(X @ theta)
    Xt = rng.standard_normal((NTEST, d)); yt = np.sin(Xt @ theta)
    rand_groups = rng.integers(0, 2, size=p)  # for variant (b)

    u_ref = np.where(np.arange(p) < p // 2, 1.0, 2.0)
    u_one = np.ones(p)
    u_norm = u_ref / np.sqrt(2.5)
    u_rand = np.where(rand_groups == 0, 1.0, 2.0)

    # distinct first layers
    W1s = {
        "ref": giant_step(W0, X0, y0, u_ref, u_ref, p),
        "uniform": giant_step(W0, X0, y0, u_one, u_one, p),
        "a_norm": giant_step(W0, X0, y0, u_norm, u_norm, p),
        "b_randgrp": giant_step(W0, X0, y0, u_rand, u_rand, p),
        "d_nof0": giant_step(W0, X0, y0, u_ref, u_ref, p, drop_f0=True),
        "e_step_u1": giant_step(W0, X0, y0, u_one, u_ref, p),
    }
    del X0, y0
    out = {}
    sq = np.sqrt(p)
    for key, W1 in W1s.items():
        Phi = np.tanh(X @ W1.T)
        Pt = np.tanh(Xt @ W1.T)
        a = ridge(Phi, y, p, LAM)
        out[key] = float(np.mean((yt - Pt @ a / sq) ** 2))
        if key == "ref":
            # (c) features u_i sigma, penalty on b
            bc = ridge(Phi * u_ref, y, p, LAM)
            out["c_uphi"] = float(np.mean((yt - (Pt * u_ref) @ bc / sq) ** 2))
            # (f) mean loss ridge == sum loss with lam*n
            af = ridge(Phi, y, p, LAM * n)
            out["f_meanloss"] = float(np.mean((yt - Pt @ af / sq) ** 2))
            # (g) a = a0 + delta, penalty on delta
            a0 = u_ref / sq
            dg = ridge(Phi, y - Phi @ a0 / sq, p, LAM)
            out["g_a0plus"] = float(np.mean((yt - Pt @ (a0 + dg) / sq) ** 2))
        del Phi, Pt
    out["sec"] = time.time() - t0
    out["d"], out["s"] = d, s
    return out


if __name__ == "__main__":
    d = int(sys.argv[1]); seeds = [int(x) for x in sys.argv[2].split(",")]
    outf = sys.argv[3]
    for s in seeds:
        r = run_task(d, s)
        with open(outf, "a") as fh:
            fh.write(json.dumps(r) + "\n")
        print(json.dumps(r), flush=True)
