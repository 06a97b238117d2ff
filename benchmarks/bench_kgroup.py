"""Speed of the asymptotic K-group theory (issue 24; docs/theory/srf-theory.md §8.1; not run by the test suite).

    python benchmarks/bench_kgroup.py [--repeat N]

Wall time (median of N fresh interpreters, default 3) of the issue's command in float64 and with --dps 30, next to
the single-group ``srf`` command at the same point and the interpreter's start-up; and, in one warm process, the
API call for K = 2, 3 and a Gaussian-quadrature readout of K = 8 groups.  The issue's targets (2 s and 20 s) were
set on a machine about 2.4 times faster in pure Python than the current 2-core one (README).
"""

import argparse
import sys
import time

from bench_startup import wall       # the same timing of a fresh interpreter (run from benchmarks/ or by path)

PY = sys.executable
POINT = ["--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "2", "--beta", "1",
         "--lam", "0.1"]
CASES = [
    ("python -c pass (baseline)", [PY, "-c", "pass"]),
    ("srf (uniform readout), float64", [PY, "-m", "onestep_theory", "srf", *POINT]),
    ("srf --readout 1:0.5,2:0.5, float64", [PY, "-m", "onestep_theory", "srf", *POINT, "--readout", "1:0.5,2:0.5"]),
    ("srf --readout 1:0.5,2:0.5 --dps 30", [PY, "-m", "onestep_theory", "srf", *POINT, "--readout", "1:0.5,2:0.5",
                                            "--dps", "30"]),
]


def warm():
    from onestep_theory.srf.groups import srf_groups

    kw = dict(alpha0=20, eta=3, alpha=2, beta=1, lam="1/10")
    srf_groups("tanh", "sin", readout_spec="1:1/2,2:1/2", **kw)            # caches: mapping, closed forms
    for spec in ("1:1/2,2:1/2", "1/2:1/3,1:1/3,2:1/3", "0.2:1/8,0.6:1/8,1:1/8,1.4:1/8,1.8:1/8,2.2:1/8,2.6:1/8,3:1/8"):
        t = time.perf_counter()
        sol = srf_groups("tanh", "sin", readout_spec=spec, **kw)
        print(f"  API, warm, K = {len(sol.groups)}: {time.perf_counter() - t:6.2f} s   ({sol.digits} digits)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    for label, argv in CASES:
        print(f"{label:<44} {wall(argv, args.repeat):7.2f} s")
    warm()


if __name__ == "__main__":
    main()
