"""Speed of the asymptotic K-group theory (issues 24, 31; docs/theory/srf-theory.md §8.1; not run by the test suite).

    python benchmarks/bench_kgroup.py [--baseline REV] [--repeat N] [--quick] [--threads T]

Side by side in one run: each command is timed on the working tree ("new") and on the package of the commit
``--baseline`` ("old", default 0194406, the code before issue 31), exported with ``git archive`` into a temporary
directory and put first on PYTHONPATH — nothing in the checkout is touched.  The runs alternate old/new so that
both see the same load; wall time and the child's CPU time (user + sys) are reported, each the median of N runs
(default 1: the old 12-group commands take minutes on a loaded 2-core machine), with the ratios old/new.  The
printed main values of old and new are compared (they must agree within their printed errors).

Cases: the issue's 12-group readout (values 1/4, 1/2, ..., 3, fractions 1/12) with ``spectrum --readout`` (the bulk
density on the default 100-point grid and g(-lambda)) and ``srf --readout --dps 30``, the same in float64, and the
README's two-group ``srf --readout`` commands.  ``--quick`` runs the 12-group cases only.

Measured (issue 31, 2-core machine, ``--threads 1``, old = 0194406): 12-group ``spectrum --readout`` 26.1 s -> 4.2 s
CPU (6.3x; 7.1x wall; the 104 printed values agree within their errors); 12-group ``srf --readout --dps 30``
40.1 s -> 21.1 s (1.9x), of which the two Arb κ-rule setups (``srf.features.kappa.group_setup``) are about 18 s before
and after; float64 12 groups and the two-group commands unchanged (0.9-1.2x).  With the environment's BLAS threads
on a loaded machine the old 12-group spectrum ran for more than 14 minutes (6 CPU minutes) against 12 s.

Issue-31 audit (``--baseline 3f42e90~1 --quick --threads 1``: the parent of the speed commit, against 71bb134; load
~7 on 2 cores): 12-group ``spectrum --readout`` 32.9 s -> 4.9 s CPU (6.7x; 7.0x wall; 104 values agree);
12-group ``srf --readout --dps 30`` 47.9 s -> 23.7 s CPU (2.0x: below the issue's 5x; a profile puts ~75 % of the
new time in the two Arb κ-rule setups, ``srf.features.smoothing._smooth_arb``, one Arb call of the student per
inner node per κ node per group); float64 12 groups 2.3 s -> 1.7 s (1.3x).

Where the 12-group ``--dps 30`` time went (at 081cedb, ``nice -n 10``, one BLAS thread): 20.8 s CPU, of which 17.7 s
in the 26 calls of ``_smooth_arb`` — 12 groups x 2 κ levels (553 then 711 κ nodes after the mirror, 688-738 then
874-948 inner nodes, one per group since the inner rule's panel width 1/sqrt(c_j) differs) = 12.46 million Arb
evaluations of the student at about 1.4 µs each.  Every inner point r_j κ + sqrt(c_j) z_i is distinct, so the panel
rule cannot reuse them.  (Tried and not kept: the sums as ``arb_mat`` products, 17.7 -> 15.2 s; tanh's exp factored
per node, -> 11.0 s.)

The shared grid (issue 31, ``srf.features.gridsmooth``, docs/theory/numerics.md §3): the student once per node of one
uniform grid per group and level (~1000 nodes), each κ node's smoothing three Arb polynomial evaluations in
G = exp(ha/c) over its window: the 26 setups 17.2 s -> 2.0 s (same profile), the printed test error identical to all
30 digits.  Side by side (``--threads 1``, old = 0194406, machine under load 4-5 from other work, so wall times are
inflated and CPU is the fairer ratio):

* ``--repeat 2``, grid at the accuracy asked: 12-group ``srf --readout --dps 30`` 42.0 s -> 6.7 s CPU (**6.2x**; wall
  160 -> 37.5 s, 4.3x); 12-group spectrum 30.2 -> 5.1 s (5.9x); two-group ``--dps 30`` 4.9 -> 2.1 s (2.3x); float64
  1.0x.
* ``--quick``, grid built 4 digits past the accuracy asked (``MARGIN``, the landed code): 12-group ``srf --readout
  --dps 30`` 39.5 s -> 6.6 s CPU (**6.0x**; wall 73.5 -> 13.3 s, 5.5x); 12-group spectrum 28.0 -> 4.9 s (5.7x);
  float64 12 groups 1.9 -> 1.9 s (1.0x).
* ``--quick --repeat 2``, the landed code (MARGIN and the strip certified by Arb enclosures, b8e3e37): 12-group
  ``srf --readout --dps 30`` 38.4 s -> 6.1 s CPU (**6.3x**; wall 55.6 -> 7.4 s, 7.5x); 12-group spectrum 27.5 -> 4.9 s
  CPU (5.6x; wall 5.7x); float64 12 groups 1.0x.  The printed values of old and new agree within their errors in
  every case.
"""

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

PY = sys.executable
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC12 = ",".join(f"{k}/4:1/12" for k in range(1, 13))
POINT = ["--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "2", "--beta", "1"]
CASES = [
    ("spectrum --readout (12 groups)", ["spectrum", *POINT, "--readout", SPEC12], True),
    ("srf --readout (12 groups) --dps 30", ["srf", *POINT, "--lam", "0.1", "--readout", SPEC12, "--dps", "30"], True),
    ("srf --readout (12 groups), float64", ["srf", *POINT, "--lam", "0.1", "--readout", SPEC12], True),
    ("srf --readout 1:0.5,2:0.5 --dps 30", ["srf", *POINT, "--lam", "0.1", "--readout", "1:0.5,2:0.5", "--dps", "30"],
     False),
    ("srf --readout 1:0.5,2:0.5, float64", ["srf", *POINT, "--lam", "0.1", "--readout", "1:0.5,2:0.5"], False),
]


def run(path, argv, threads=None):
    """(wall s, CPU s, stdout) of ``python -m onestep_theory argv`` with ``path`` first on PYTHONPATH (and the BLAS
    threads set to ``threads`` if given)."""
    env = dict(os.environ, PYTHONPATH=path)
    if threads:
        env.update({k: str(threads) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    # cwd outside the checkout: ``python -m`` puts the current directory before PYTHONPATH
    p = subprocess.run([PY, "-m", "onestep_theory", *argv], capture_output=True, text=True, env=env,
                       cwd=tempfile.gettempdir())
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"{path}: {' '.join(argv)} exited {p.returncode}: {p.stderr.strip()[-300:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p.stdout


def main_values(text):
    """The printed (value, error) pairs a user reads: the test error, or g(-lambda) and the density rows."""
    pairs = re.findall(r"eps_g = (\S+)\s+\(\+/- (\S+),", text)
    pairs += re.findall(r"g\(-[^)]*\) = (\S+)\s+\+/- (\S+)", text)
    pairs += re.findall(r"^\s+\S+\s+(\S+)\s+(\d\S*e-\d+)$", text, flags=re.M)
    return [(float(v), float(e)) for v, e in pairs]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="0194406", help="the commit whose package is 'old'")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="the 12-group cases only")
    ap.add_argument("--threads", type=int, default=None,
                    help="BLAS threads of both (default: the environment's; the old spectrum's small products lose "
                         "most to idle BLAS threads on a loaded machine, so 1 is the fair baseline there)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_kgroup_") as old:
        tar = subprocess.run(["git", "-C", ROOT, "archive", args.baseline, "onestep_theory"], capture_output=True,
                             check=True).stdout
        subprocess.run(["tar", "-x", "-C", old], input=tar, check=True)
        print(f"old = {args.baseline} (git archive in {old}), new = working tree; median of {args.repeat}; "
              f"CPU = user + sys of the child; BLAS threads: {args.threads or 'as the environment'}")
        print(f"{'command':<38} {'old wall':>9} {'new wall':>9} {'ratio':>6}   {'old CPU':>8} {'new CPU':>8} "
              f"{'ratio':>6}   agree")
        for label, argv, twelve in CASES:
            if args.quick and not twelve:
                continue
            res = {"old": [], "new": []}
            for _ in range(args.repeat):
                for key, path in (("old", old), ("new", ROOT)):
                    res[key].append(run(path, argv, args.threads))
            med = {k: [statistics.median(r[i] for r in res[k]) for i in (0, 1)] for k in ("old", "new")}
            (ow, oc), (nw, nc) = med["old"], med["new"]
            a, b = main_values(res["old"][0][2]), main_values(res["new"][0][2])
            agree = len(a) == len(b) > 0 and all(abs(x - y) <= e + f for (x, e), (y, f) in zip(a, b))
            print(f"{label:<38} {ow:8.1f}s {nw:8.1f}s {ow / nw:5.1f}x   {oc:7.1f}s {nc:7.1f}s {oc / nc:5.1f}x   "
                  f"{'yes' if agree else 'NO'} ({len(b)} values)", flush=True)


if __name__ == "__main__":
    main()
