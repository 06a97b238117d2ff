"""Speed of the refinement paths (issue 34 item 4; docs/theory/numerics.md §5; not run by the test suite).

    python benchmarks/bench_refine.py [--baseline REV] [--repeat N] [--quick]

Side by side in one run: each case is timed on the working tree ("new") and on the package of the commit
``--baseline`` ("old", default be20f20, the code before issue 34), exported with ``git archive`` into a temporary
directory and put first on PYTHONPATH (nothing in the checkout is touched).  Every run is a fresh process
(cold numeric caches; the symbolic work of the activations is done once before the clock starts by a float64
call at another point), and old/new alternate so that both see the same load.  Reported: the child's CPU time of
the timed call (the median of N runs) and the ratio new/old (the issue's goal: at most 1.05), and whether the
printed values and errors are identical (``repr`` of the value and of its error: the refactoring changes no
digit).

Cases: the user paths of the three refinement loops — ``srf_solve`` float64 (warm caches: the mean of 300 calls in
the process) and at dps 15/30/50, the two-group K-group saddle point (float64 cold, warm: the mean of 40 calls,
and dps 30), and the bounds (26)/(27) (float64, dps 30, and the η̃-optimised bounds (28)); the spike and Hermite
paths: the resolvent (8 λ) at dps 15/30/50, the gains, four Hermite expansions, the checked mapping and a registry
value at 8 λ (``evaluate``, the path of ``sweep``/``check``) at dps 30.  ``--new REV`` times a commit instead of the working
tree (a shared checkout holds others' uncommitted edits); ``--only TEXT`` the cases whose label contains TEXT.

Measured (issue 34, the loaded 2-core machine, median of 3): against 4ee8c6c (the commit before the refinement
driver) new/old CPU 0.98-1.02 on the srf, K-group and bounds-at-dps cases (srf float64 warm 2 ms, dps 15/30/50
0.26/1.24/4.24 s; K-group float64 18 ms cold, 11 ms warm, dps 30 2.1 s; bounds dps 30 1.0 s); the two bounds
float64 cases (7 ms, 0.14 s) read 0.95-1.11x over four runs, and 1.00x / 0.99x timed over 7 alternating processes
(100 calls each); against be20f20 (before issue 34) 0.98-1.04.  Every printed value and error identical.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

PY = sys.executable
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: (label, warm-up statement, timed expression, repeats inside the process, the printed (value, error) expression)
KW = "alpha0=20, eta=3, alpha=1, beta=1"
LAMS = ("1/2", "1/5", "1/7", "2/3", "3/2", "1/10", "5/4", "3/10")          # a small sweep of the resolvent
FS = ("tanh", "erf(x)", "log(1+exp(x))", "tanh(x) + x*exp(-x**2)")         # Hermite expansions (symbolic work warmed)
CASES = [
    ("srf float64 (warm)", f"srf_solve('tanh', 'sin', {KW}, lam='1/10')", f"srf_solve('tanh', 'sin', {KW}, lam='1/10')",
     300, "(out.test_error, out.abs_error)"),
    *[(f"srf --dps {d}", f"srf_solve('tanh', 'sin', {KW}, lam='1/5')",
       f"srf_solve('tanh', 'sin', {KW}, lam='1/10', dps={d})", 1, "(out.test_error, out.abs_error)")
      for d in (15, 30, 50)],
    ("K-group 1:0.5,2:0.5 float64", "srf_solve('tanh', 'sin', alpha0=20, eta=3, alpha=2, beta=1, lam='1/5')",
     "srf_groups('tanh', 'sin', readout_spec='1:0.5,2:0.5', alpha0=20, eta=3, alpha=2, beta=1, lam='0.1')", 1,
     "(out.test_error, out.errors['test_error'])"),
    ("K-group 1:0.5,2:0.5 float64 (warm)", "srf_groups('tanh', 'sin', readout_spec='1:0.5,2:0.5', alpha0=20, eta=3, "
     "alpha=2, beta=1, lam='0.1')", "srf_groups('tanh', 'sin', readout_spec='1:0.5,2:0.5', alpha0=20, eta=3, alpha=2, "
     "beta=1, lam='0.1')", 40, "(out.test_error, out.errors['test_error'])"),
    ("K-group 1:0.5,2:0.5 --dps 30", "srf_solve('tanh', 'sin', alpha0=20, eta=3, alpha=2, beta=1, lam='1/5')",
     "srf_groups('tanh', 'sin', readout_spec='1:0.5,2:0.5', alpha0=20, eta=3, alpha=2, beta=1, lam='0.1', dps=30)",
     1, "(out.test_error, out.errors['test_error'])"),
    ("bounds float64", "bounds('tanh', 'sin', eta=2)", "bounds('tanh', 'sin', eta=3)", 1,
     "(out.upper, out.errors['upper'], out.lower, out.errors['lower'])"),
    ("bounds --dps 30", "bounds('tanh', 'sin', eta=2)", "bounds('tanh', 'sin', eta=3, dps=30)", 1,
     "(out.upper, out.errors['upper'], out.lower, out.errors['lower'])"),
    ("bounds --optimize-eta float64", "bounds('tanh', 'sin', eta=2)", "bounds('tanh', 'sin', optimize_eta=True)", 1,
     "(out.upper, out.errors['upper'], out.lower, out.errors['lower'], out.eta_upper, out.errors['eta_upper'])"),
    # the spike and Hermite paths (issue 34's "resolvent"): cold numeric caches, the symbolic work warmed at 15 digits
    *[(f"resolvent x8 lam --dps {d}", "resolvent('tanh', 1, 2, '1/3')",
       f"[resolvent('tanh', 1, 2, lam, dps={d}) for lam in {LAMS}][-1]", 1,
       "(out.m1, out.errors['m1'], out.m2, out.errors['m2'])") for d in (15, 30, 50)],
    ("gains --dps 30", "gains('tanh', 'He1', 1, 2, '1/3', ell=1)", "gains('tanh', 'He1', 1, 2, '1/2', ell=1, dps=30)",
     1, "(out.delta[-1], out.errors['delta'][-1])"),
    ("hermite x4 f kmax 6 --dps 30", f"[he_coeffs(f, 6) for f in {FS}]", f"[he_coeffs(f, 6, dps=30) for f in {FS}][-1]",
     1, "(out.values[5], out.errors['values'][5])"),
    ("mapping --dps 30", "srf_params_checked('tanh', 'sin', 10, 2)", "srf_params_checked('tanh', 'sin', 20, 3, dps=30)",
     1, "(out.r, out.errors['r'], out.c, out.errors['c'])"),
    ("registry delta_1 x8 lam --dps 30", "evaluate('delta_1', dict(phi=1, psi=2, lam='1/3'), 'tanh', 'He1')",
     f"[evaluate('delta_1', dict(phi=1, psi=2, lam=lam), 'tanh', 'He1', dps=30) for lam in {LAMS}][-1]", 1,
     "(out.value, out.error)"),
]

CHILD = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
from onestep_theory.srf import srf_solve, srf_groups, bounds
from onestep_theory.spikes.resolvent import resolvent
from onestep_theory.spikes.gains import gains
from onestep_theory.hermite.coefficients import he_coeffs
from onestep_theory.srf.features.mapping import srf_params_checked
from onestep_theory.quantities.registry import evaluate
warm, timed, n, shown = sys.argv[1:5]
eval(warm)
t = time.process_time()
for _ in range(int(n)):
    out = eval(timed)
cpu = (time.process_time() - t) / int(n)
print(json.dumps({"cpu": cpu, "shown": [repr(v) for v in eval(shown)]}))
"""


def run(path, case):
    _, warm, timed, n, shown = case
    env = dict(os.environ, PYTHONPATH=path, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    p = subprocess.run([PY, "-c", CHILD, warm, timed, str(n), shown], capture_output=True, text=True, env=env,
                       cwd=tempfile.gettempdir())
    if p.returncode != 0:
        raise SystemExit(f"{path}: {timed} exited {p.returncode}: {p.stderr.strip()[-500:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="be20f20", help="the commit whose package is 'old'")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="skip the 50-digit and the optimised-bounds cases")
    ap.add_argument("--new", default=None, help="a commit whose package is 'new' (default: the working tree; a commit "
                                                "keeps others' uncommitted edits out of a shared checkout)")
    ap.add_argument("--only", default=None, help="only the cases whose label contains this text")
    ap.add_argument("--no-disk-cache", action="store_true", help="ONESTEP_THEORY_NO_CACHE=1 in both (the disk cache "
                                                                  "of symbolic builds came after b71f2d1: issue 35)")
    args = ap.parse_args()
    if args.no_disk_cache:
        os.environ["ONESTEP_THEORY_NO_CACHE"] = "1"
    with tempfile.TemporaryDirectory(prefix="bench_refine_") as old, \
            tempfile.TemporaryDirectory(prefix="bench_refine_new_") as new:
        for rev, into in ((args.baseline, old), (args.new, new)):
            if rev is not None:
                tar = subprocess.run(["git", "-C", ROOT, "archive", rev, "onestep_theory"], capture_output=True,
                                     check=True).stdout
                subprocess.run(["tar", "-x", "-C", into], input=tar, check=True)
        new = ROOT if args.new is None else new
        print(f"old = {args.baseline}, new = {args.new or 'working tree'}; CPU s of the timed call, median of "
              f"{args.repeat} fresh processes; BLAS threads 1")
        print(f"{'case':<32} {'old CPU':>8} {'new CPU':>8} {'new/old':>8}   printed value and error")
        for case in CASES:
            if (args.quick and ("50" in case[0] or "optimize" in case[0])) or (args.only and args.only not in case[0]):
                continue
            res = {"old": [], "new": []}
            for _ in range(args.repeat):
                for key, path in (("old", old), ("new", new)):
                    res[key].append(run(path, case))
            o, n = (statistics.median(r["cpu"] for r in res[k]) for k in ("old", "new"))
            same = all(r["shown"] == res["old"][0]["shown"] for r in res["old"] + res["new"])
            print(f"{case[0]:<32} {o:7.3f}s {n:7.3f}s {n / o:7.2f}x   {'identical' if same else 'DIFFERENT'}",
                  flush=True)
            if not same:
                print(f"    old {res['old'][0]['shown']}\n    new {res['new'][0]['shown']}", flush=True)


if __name__ == "__main__":
    main()
