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

End to end (``--cli``): the commands a user types, today's tree against ``--base`` (default b71f2d1, the commit before
the batch; extracted with ``git archive`` into a temporary directory), each in its own process (``PYTHONPATH`` the
tree, the working directory the tree, BLAS one thread), side by side in one run, alternating, the best of
``--repeats`` processes of ``--inner`` timed runs each (the same for both trees).  Each process first runs the same
command on a 2-point (2 x 2) grid (imports, symbolic builds, caches: start-up, outside the clock), then the timed
command, in-process through ``cli.main.main``; per point, wall (CPU):

* ``srf-curve --student tanh --teacher sin --alpha0 20 --eta 3 --alphas 0.2:3:1000`` (``--curve``);
* ``sweep test_error ... --over alpha=0.2:3:20,eta=0.5:5:20`` and ``alpha=0.2:3:100,eta=0.5:5:100`` (the base runs
  ``--base-columns`` of the 100 eta columns, each as ``--eta v``: the same points, its per-point cost).

Agreement at every common point: max |new - old| / (err_new + err_old) (<= 1: the two claims overlap) and the claimed
errors' ratio err_new / err_old (median, max): the same points with the same claimed errors.

Measured (--cli, 2026-11-27, load 3 on the 2 cores, 2 x 2 runs): srf-curve 1000 points 0.141 (0.129) against 4.656
(2.902), ratio 33.1 wall, 22.5 CPU; sweep 20 x 20 55.4 / 40.1; sweep 100 x 100 100.0 / 99.4; max |new - old|/(err_new +
err_old) 0.017, 0.039, 0.020; err_new/err_old median 1.00, max 1.02 in all three.  Five runs at loads 3-6: CPU ratios
17-25 (curve), 25-49 (20 x 20), 76-111 (100 x 100).  (ab53b2f, the batch before the fast
printing, timed the same way: srf-curve 1.08 ms CPU a point, 8.3x slower than now, the same bytes printed.)
"""

import argparse
import fractions
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from onestep_theory.quantities.grid import grid_points, parse_over  # noqa: E402
from onestep_theory.srf import srf_solve  # noqa: E402
from onestep_theory.srf.single.batch import srf_batch  # noqa: E402
from onestep_theory.srf.single.saddle import ORDER  # noqa: E402
from onestep_theory.srf.single.sweep import srf_sweep  # noqa: E402

CASE = dict(alpha0=20, beta=1, lam="0.1")


#: Run in a child process (cwd and PYTHONPATH the tree): a warm-up command, then the timed ones, in-process.
CHILD = r"""
import contextlib, io, json, sys, time, warnings
warnings.simplefilter("ignore")
import onestep_theory
from onestep_theory.cli.main import main
job = json.loads(sys.argv[1])
def run(argv):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        rc = main(argv)
    assert rc == 0, (argv, rc)
    return buf.getvalue()
run(job["warm"])
best = None
for _ in range(job["inner"]):         # the best of a few runs in the same process (the machine is shared)
    t, c, outs = time.perf_counter(), time.process_time(), []
    for argv in job["timed"]:
        outs.append(run(argv))
    r = {"wall": time.perf_counter() - t, "cpu": time.process_time() - c, "outs": outs}
    best = r if best is None or r["cpu"] < best["cpu"] else best
print(json.dumps(dict(best, file=onestep_theory.__file__)))
"""

SWEEP = "sweep test_error --student tanh --teacher sin --alpha0 20 --beta 1 --lam 0.1 --over".split()
CURVE = "srf-curve --student tanh --teacher sin --alpha0 20 --eta 3 --alphas".split()


def _child(tree, warm, timed, inner):
    env = dict(os.environ, PYTHONPATH=tree, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps({"warm": warm, "timed": timed, "inner": inner})],
                         cwd=tree, env=env,
                         capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert os.path.dirname(os.path.dirname(res["file"])) == os.path.realpath(tree), (res["file"], tree)
    return res


def _rows(texts, value, error, keys, fixed=None):
    """``{point: (value, error)}`` of CSV outputs (``#`` lines skipped; ``fixed[i]``: the fixed parameters of the
    i-th output, where its rows do not name them)."""
    out = {}
    for i, text in enumerate(texts):
        lines = [t for t in text.splitlines() if t and not t.startswith("#")]
        head = lines[0].split(",")
        for line in lines[1:]:
            r = dict((fixed or [{}] * len(texts))[i], **dict(zip(head, line.split(","))))
            out[tuple(float(fractions.Fraction(r[k])) for k in keys)] = (float(r[value]), float(r[error]))
    return out


def cli_cases(a):
    """The end-to-end cases (module docstring), old tree against this one."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory(prefix="bench_base_") as tmp:
        tar = subprocess.run(["git", "-C", here, "archive", a.base], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=tar, check=True)
        _cli_cases(a, here, tmp)


def _cli_cases(a, here, tmp):
    big = [p["eta"] for p in grid_points(parse_over("eta=0.5:5:100", need_count=True))]   # the sweep's own axis
    cols = [big[int(round(i))] for i in np.linspace(0, 99, a.base_columns)]
    cases = [(f"srf-curve, {a.curve} alphas", CURVE + ["0.2:3:2"], [CURVE + [f"0.2:3:{a.curve}"]], None,
              ("test_error", "abs_error", ("alpha",)), a.curve, a.curve),
             ("sweep test_error 20 x 20", SWEEP + ["alpha=0.2:3:2,eta=0.5:5:2"],
              [SWEEP + ["alpha=0.2:3:20,eta=0.5:5:20"]], None, ("value", "error", ("alpha", "eta")), 400, 400),
             ("sweep test_error 100 x 100", SWEEP + ["alpha=0.2:3:2,eta=0.5:5:2"],
              [SWEEP + ["alpha=0.2:3:100,eta=0.5:5:100"]], [SWEEP + ["alpha=0.2:3:100", "--eta", v] for v in cols],
              ("value", "error", ("alpha", "eta")), 10000, 100 * len(cols))]
    print(f"end to end, old = {a.base} ({tmp}), new = {here}; per point, wall (CPU) ms, best of {a.repeats} processes "
          f"x {a.inner} runs; start-up outside the clock")
    for name, warm, timed, timed_old, (val, err, keys), n_new, n_old in cases:
        best = {"old": None, "new": None}
        for _ in range(a.repeats):
            for who, tree, cmds in (("old", tmp, timed_old or timed), ("new", here, timed)):
                r = _child(tree, warm, cmds, a.inner)
                if best[who] is None or r["cpu"] < best[who]["cpu"]:
                    best[who] = r
        o, n = best["old"], best["new"]
        wo, co, wn, cn = o["wall"] / n_old, o["cpu"] / n_old, n["wall"] / n_new, n["cpu"] / n_new
        ro = _rows(o["outs"], val, err, keys, [{"eta": c[-1]} for c in timed_old] if timed_old else None)
        rn = _rows(n["outs"], val, err, keys)
        common = [k for k in ro if k in rn]
        gap = max(abs(rn[k][0] - ro[k][0]) / (rn[k][1] + ro[k][1]) for k in common)
        q = [rn[k][1] / ro[k][1] for k in common]
        print(f"  {name}: old {wo * 1e3:.3f} ({co * 1e3:.3f}), new {wn * 1e3:.3f} ({cn * 1e3:.3f}); "
              f"ratio {wo / wn:.1f} wall, {co / cn:.1f} CPU; {len(common)} common points: max |new - old|/(err_new + "
              f"err_old) {gap:.3f}, err_new/err_old median {statistics.median(q):.2f}, max {max(q):.2f}")
        assert len(common) == n_old and gap <= 1


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--columns", type=int, default=8)
    ap.add_argument("--sample", type=int, default=60)
    ap.add_argument("--refs", type=int, default=4)
    ap.add_argument("--cli", action="store_true", help="the end-to-end CLI cases (old tree against this one) only")
    ap.add_argument("--base", default="b71f2d1", help="the old tree's commit (--cli)")
    ap.add_argument("--curve", type=int, default=1000, help="points of the srf-curve case (--cli)")
    ap.add_argument("--base-columns", type=int, default=5, help="eta columns the old tree runs of 100 x 100 (--cli)")
    ap.add_argument("--repeats", type=int, default=2, help="processes per tree and case, alternating (--cli)")
    ap.add_argument("--inner", type=int, default=2, help="timed runs in each process, the best kept (--cli)")
    a = ap.parse_args(argv)
    if a.cli:
        return cli_cases(a)
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
