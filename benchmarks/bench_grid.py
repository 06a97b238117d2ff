"""Per-point speed of the batched grid solver against today's srf-curve path, side by side in one run (issue 35
item 1; docs/theory/numerics.md §4-5; not run by the test suite).

    python benchmarks/bench_grid.py [--n 100] [--columns 8] [--sample 60] [--refs 4]

Case A (tanh student, sin teacher, alpha0 = 20, beta = 1, lam = 0.1; docs/studies/finite-size.md) on an n x n grid of
(alpha, eta) (alpha geometric in [0.2, 3], eta linear in [0.5, 5]).  Timed in one process, one core (BLAS limited to one
thread; the machine is shared):

* "reference": ``srf_sweep(..., "alpha", alphas, eta=e, batch=False)`` -- srf_solve point by point, warm-started, the
  path of ``srf-curve`` before the batch -- on ``--columns`` eta columns spread over the grid (every alpha of the
  column, so the per-column work, Result 3.1 and the kappa-rules, is amortised as on the full grid);
* "batch": ``srf_batch`` on all n x n points (the columns warm-start each other), and ``srf_sweep(batch=True)`` on the
  same columns as the reference (a 1-D curve: the start is one srf_solve, then the whole column at once).

Agreement: at ``--sample`` random points of the reference columns, |batch - reference| / (claimed error of the batch)
for the test error (must be <= 1: the values agree within their claims) and the same over every order parameter; at
``--refs`` points, |batch - srf_solve(dps=30)| / claimed error (an independent reference: mpmath polish on Arb rules).

Measured (issue 35, 2026-11-27, the shared 2-core machine at a load of about 4, so wall = 3-4x CPU; defaults, 5
reference columns): reference 7.85 ms wall (2.26 ms CPU) per point; the whole 100 x 100 grid batched 0.341 ms (0.096
ms CPU): ratio 23.0 wall, 23.6 CPU (earlier runs the same day: 19.1/19.0, 21.3/22.0, before the last two
optimisations); 9999 points solved in the batch, 1 (the first group's seed) by srf_solve.  As 1-D curves (one
srf_sweep per eta column, seeded by one srf_solve) 12.0 wall, 10.9 CPU.  Agreement at 60 sampled points: max
|batch - srf_solve| / claimed error 0.010 for the test error, 0.030 over the order parameters; against dps 30 at 6
points max 0.009.  Per point the batch keeps three costs it shares with the reference: Result 3.1 per eta (about 1.7 ms
a column, 0.017 ms a point), the two kappa-rules (0.009 ms) and the SRFSolution (0.010 ms), of its 0.09 ms.
A process pool does not pay here: pickling a solution back costs 0.035 ms a point (dump 0.025, load 0.010), against
0.09 ms of work, so two workers would give at most about 1.3x on an idle machine, nothing on this loaded one.
"""

import argparse
import os
import random
import sys
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from onestep_theory.srf import srf_solve  # noqa: E402
from onestep_theory.srf.single.batch import srf_batch  # noqa: E402
from onestep_theory.srf.single.saddle import ORDER  # noqa: E402
from onestep_theory.srf.single.sweep import srf_sweep  # noqa: E402

CASE = dict(alpha0=20, beta=1, lam="0.1")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--columns", type=int, default=8)
    ap.add_argument("--sample", type=int, default=60)
    ap.add_argument("--refs", type=int, default=4)
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    alphas = [repr(float(v)) for v in np.geomspace(0.2, 3, a.n)]
    etas = [repr(float(v)) for v in np.linspace(0.5, 5, a.n)]
    cols = sorted({int(round(i)) for i in np.linspace(0, a.n - 1, a.columns)})
    srf_solve("tanh", "sin", alpha=1, eta=3, **CASE)           # symbolic builds and caches, outside every clock

    t, c = time.perf_counter(), time.process_time()
    ref = {e: srf_sweep("tanh", "sin", "alpha", alphas, eta=etas[e], batch=False, **CASE) for e in cols}
    t_ref, c_ref = ((time.perf_counter() - t) / (len(cols) * a.n), (time.process_time() - c) / (len(cols) * a.n))

    t, c = time.perf_counter(), time.process_time()
    cur = {e: srf_sweep("tanh", "sin", "alpha", alphas, eta=etas[e], **CASE) for e in cols}
    t_cur, c_cur = ((time.perf_counter() - t) / (len(cols) * a.n), (time.process_time() - c) / (len(cols) * a.n))

    pts = [{"alpha": al, "eta": e} for e in etas for al in alphas]
    t, c = time.perf_counter(), time.process_time()
    grid = srf_batch("tanh", "sin", pts, **CASE)
    t_grid, c_grid = (time.perf_counter() - t) / len(pts), (time.process_time() - c) / len(pts)
    batched = sum(s.status.startswith("converged (batched") for s in grid)

    print(f"case A, {a.n} x {a.n} (alpha, eta) grid; one process, BLAS 1 thread; per point, wall (CPU) ms:")
    print(f"  reference srf_sweep(batch=False), {len(cols)} columns: {t_ref * 1e3:7.3f} ({c_ref * 1e3:.3f})")
    print(f"  batch, the same columns as 1-D curves: {t_cur * 1e3:7.3f} ({c_cur * 1e3:.3f})   ratio "
          f"{t_ref / t_cur:5.1f} ({c_ref / c_cur:.1f})")
    print(f"  batch, the whole grid ({len(pts)} points): {t_grid * 1e3:7.3f} ({c_grid * 1e3:.3f})   ratio "
          f"{t_ref / t_grid:5.1f} ({c_ref / c_grid:.1f}); {batched} solved in the batch, {len(pts) - batched} by "
          "srf_solve")

    rng = random.Random(35)
    sample = rng.sample([(e, i) for e in cols for i in range(a.n)], min(a.sample, len(cols) * a.n))
    q_te, q_all, q_cur = [], [], []
    for e, i in sample:
        b, r = grid[etas.index(etas[e]) * a.n + i], ref[e][i]
        q_te.append(abs(float(b.test_error) - float(r.test_error)) / b.abs_error)
        q_all.append(max(abs(float(b.order[k]) - float(r.order[k])) / b.errors[k] for k in ORDER))
        q_cur.append(abs(float(cur[e][i].test_error) - float(r.test_error)) / cur[e][i].abs_error)
    print(f"agreement with srf_solve at {len(sample)} sampled points, max |batch - single| / claimed error: test error "
          f"{max(q_te):.3f} (grid), {max(q_cur):.3f} (1-D), order parameters {max(q_all):.3f}")
    worst = []
    for e, i in sample[:a.refs] + [(cols[0], 0), (cols[-1], a.n - 1)]:
        b = grid[e * a.n + i]
        hi = srf_solve("tanh", "sin", alpha=alphas[i], eta=etas[e], dps=30, **CASE)
        worst.append(abs(float(b.test_error) - float(hi.test_error)) / b.abs_error)
        print(f"  alpha={float(alphas[i]):.4g} eta={float(etas[e]):.4g}: batch {float(b.test_error):.15g} "
              f"+- {b.abs_error:.1e}, dps 30 {float(hi.test_error):.15g}, |diff|/claim {worst[-1]:.3f}")
    print(f"against --dps 30 at {len(worst)} points: max |batch - dps30| / claimed error {max(worst):.3f}")


if __name__ == "__main__":
    main()
