"""Start-up time of the command line and of ``import onestep_theory`` (issue 23; not run by the test suite).

    python benchmarks/bench_startup.py [--repeat N]

Each case runs N times (default 7) in a fresh interpreter; the median wall time is reported next to the
interpreter's own start-up (``python -c pass``) and the target of issue 23.  The targets are absolute (seconds on
the machine that set them); on a slower or loaded machine compare ``case - baseline`` (what the package adds) with
``target - 0.03 s`` (the interpreter start-up on that machine).  Every case must also exit 0.

What keeps the start-up short (onestep_theory/core/lazy.py, onestep_theory/cli/main.py): the package and
``onestep_theory.core`` load their public names on first use; ``onestep-theory`` imports only the module of the
command that runs; the command modules import the theory inside their handlers.

Ratios to the import floor (issue 35 item 4), measured side by side in the same run: a repeated cold ``srf`` (float64
and ``--dps 30``) and ``hermite tanh`` against ``python -c "import sympy, numpy, mpmath, scipy.special"`` (the floor
of the issue) and against the floor of what ``srf`` cannot avoid (``+ scipy.optimize`` for its root finder, and the
first SymPy ``Add``, which imports ``sympy.tensor.tensor``).
"Repeated cold" is a fresh interpreter whose disk cache of symbolic builds (core/caches.py) was filled by an earlier
run (here: one unmeasured run into a temporary ``ONESTEP_THEORY_CACHE_DIR``); the ``no cache`` rows set
``ONESTEP_THEORY_NO_CACHE=1`` (every symbolic build from scratch: the first run after an upgrade).  The machine may be
shared: the cases run round-robin, ``--repeat`` rounds, and the best (minimum) of each case is reported.

    python benchmarks/bench_startup.py --ratios [--repeat N] [--before DIR]

``--before DIR`` adds the same commands run from the package in ``DIR/onestep_theory`` (e.g. ``git archive OLD
onestep_theory | tar -x -C DIR``), side by side in the same rounds.

Measured (2 cores shared by eight sessions, load 4-9; CPU ratios to the floor, best of 11; before = b71f2d1):
``srf`` float64 1.64 (before 2.03; without the disk cache 2.16), ``--dps 30`` 3.34 (before 3.89), ``hermite tanh``
0.79 (before 0.95; it loads no SciPy); what ``srf`` cannot avoid (scipy.optimize, SymPy's first Add) is 1.28.  Three
runs gave srf 1.59, 1.67, 1.64.  Left above that floor: the package's own modules (~0.1 s) and the call's numerics
(κ-rules, lambdify, the network map's ~50 exact parses); ``--dps 30``: the Arb smoothing at the κ nodes (it depends on
the call's r, c, γ).
After 59210cf (no sqlite3/threadpoolctl at start, the map's activations checked once, SymPy and scipy.special loaded
from srf's handler; CPython 3.11 frees a 16 KiB frame-stack chunk whenever the stack falls below it, and libraries
loaded deep in the package's imports mapped and unmapped one 13 278 times, now ~130, ``strace -e mmap``): two runs
(load 1-2, best of 11) gave ``srf`` 1.32 (before, run as ``-c``: 1.35) and 1.56 (before, run as ``-m``: 1.71), the
libraries 1.28 and 1.42: the floor's own noise is that large; ``--dps 30`` 3.07, 3.37; ``hermite tanh`` 0.64, 0.76.
Bytecode: the runs remove PYTHONDONTWRITEBYTECODE and compile into the temporary folder (PYTHONPYCACHEPREFIX) in
the unmeasured first round, as an installed package has its .pyc.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

PY = sys.executable
CLI = [PY, "-m", "onestep_theory"]
#: (label, argv, target in seconds)
CASES = [
    ("python -c pass (baseline)", [PY, "-c", "pass"], None),
    ("python -c 'import onestep_theory'", [PY, "-c", "import onestep_theory"], 0.3),
    ("onestep-theory --help", CLI + ["--help"], 0.2),
    ("onestep-theory srf --help", CLI + ["srf", "--help"], 0.2),
    ("onestep-theory study --help", CLI + ["study", "--help"], 0.2),
    ("onestep-theory check --help", CLI + ["check", "--help"], 0.2),
    ("onestep-theory hermite tanh --kmax 4", CLI + ["hermite", "tanh", "--kmax", "4"], 0.6),
    ("onestep-theory resolvent --student tanh --phi 1/2 --psi 1/2 --lam 1/10",
     CLI + ["resolvent", "--student", "tanh", "--phi", "1/2", "--psi", "1/2", "--lam", "1/10"], 0.6),
]


SRF = ["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "1", "--beta", "1",
       "--lam", "1/10"]
FLOOR = [PY, "-c", "import sympy, numpy, mpmath, scipy.special"]
#: what ``srf`` cannot avoid: its root finder (MINPACK's hybr, scipy.optimize) and SymPy's first ``Add`` (which imports
#: sympy.tensor.tensor and sympy.combinatorics, ~0.05 s)
LIBS = [PY, "-c", "import sympy, numpy, mpmath, scipy.special, scipy.optimize, flint; sympy.Symbol('x') + 1"]
#: (label, argv, disk cache on, target ratio to the floor)
RATIO_CASES = [
    ("floor (sympy, numpy, mpmath, scipy.special)", FLOOR, True, None),
    ("libraries (+ scipy.optimize, a SymPy Add)", LIBS, True, None),
    ("srf (float64)", CLI + SRF, True, 1.5),
    ("srf --dps 30", CLI + SRF + ["--dps", "30"], True, None),
    ("hermite tanh", CLI + ["hermite", "tanh"], True, 1.2),
    ("srf (float64), no cache", CLI + SRF, False, None),
    ("srf --dps 30, no cache", CLI + SRF + ["--dps", "30"], False, None),
    ("hermite tanh, no cache", CLI + ["hermite", "tanh"], False, None),
]


#: Runs ``onestep-theory`` from the source tree in sys.argv[1] instead of the installed (editable) package.
FROM_TREE = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'Editable' not in getattr(f, '__name__', '')]; "
             "sys.path.insert(0, sys.argv.pop(1)); from onestep_theory.cli.main import main; sys.exit(main())")


def _once(argv, env):
    """(wall seconds, CPU seconds of the child: user + system, exit message or None)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return dt, cpu, (None if p.returncode == 0 else f"exit {p.returncode}: {p.stderr.strip()[-200:]}")


def ratios(repeat, before=None):
    """Best-of-``repeat`` wall and CPU times, cases alternated round-robin, and their ratios to the floor.

    On a shared machine the wall time of a start-up is mostly waiting for a core; the CPU time (user + system of
    the child) is what the start-up costs, and its ratios are the stable ones (start-up is single-threaded)."""
    cases = list(RATIO_CASES)
    if before:
        cases += [(f"before: {label}", [PY, "-c", FROM_TREE, before, *argv[len(CLI):]], on, None)
                  for label, argv, on, _ in RATIO_CASES[2:5]]
    with tempfile.TemporaryDirectory(prefix="onestep-bench-cache-") as cache:
        # compiled bytecode kept (in the temporary folder), as an installed package has it, also where
        # PYTHONDONTWRITEBYTECODE is set (it would compile every module of the package at every start)
        env_on = {**os.environ, "ONESTEP_THEORY_CACHE_DIR": cache, "PYTHONPYCACHEPREFIX": os.path.join(cache, "pyc")}
        for name in ("ONESTEP_THEORY_NO_CACHE", "PYTHONDONTWRITEBYTECODE"):
            env_on.pop(name, None)
        env_off = {**env_on, "ONESTEP_THEORY_NO_CACHE": "1"}
        for _, argv, on, _ in cases:      # warm the OS file cache and fill the disk cache (unmeasured)
            _once(argv, env_on if on else env_off)
        best = {label: [float("inf"), float("inf")] for label, *_ in cases}
        failed = {}
        for _ in range(repeat):
            for label, argv, on, _ in cases:
                dt, cpu, err = _once(argv, env_on if on else env_off)
                if err:
                    failed[label] = err
                best[label] = [min(best[label][0], dt), min(best[label][1], cpu)]
    (fw, fc), (lw, lc) = best[RATIO_CASES[0][0]], best[RATIO_CASES[1][0]]
    print(f"\nratios to the import floor (best of {repeat}, round-robin; wall and CPU = user + system)")
    print(f"{'case':<44} {'wall s':>7} {'/ floor':>8} {'cpu s':>7} {'/ floor':>8} {'/ libraries':>12} {'target':>7}")
    for label, _, _, target in cases:
        w, c = best[label]
        note = f"  FAILED {failed[label]}" if label in failed else ""
        print(f"{label:<44} {w:>7.3f} {w / fw:>8.2f} {c:>7.3f} {c / fc:>8.2f} {c / lc:>12.2f} {target or '':>7}{note}")
    return best


def wall(argv, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        p = subprocess.run(argv, capture_output=True, text=True)
        times.append(time.perf_counter() - t)
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} exited {p.returncode}: {p.stderr.strip()[-300:]}")
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--ratios", action="store_true", help="only the ratios to the import floor (issue 35)")
    ap.add_argument("--before", help="a folder holding an older onestep_theory/ to compare with (ratios)")
    args = ap.parse_args()
    if args.ratios:
        ratios(args.repeat, args.before)
        return
    base = None
    print(f"{'case':<76} {'median s':>9} {'- baseline':>11} {'target':>7}")
    for label, argv, target in CASES:
        t = wall(argv, args.repeat)
        base = t if base is None else base
        print(f"{label:<76} {t:>9.3f} {t - base:>11.3f} {target if target else '':>7}")
    ratios(args.repeat, args.before)


if __name__ == "__main__":
    main()
