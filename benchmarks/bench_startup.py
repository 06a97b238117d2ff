"""Start-up time of the command line and of ``import onestep_theory`` (issue 23; not run by the test suite).

    python benchmarks/bench_startup.py [--repeat N]

Each case runs N times (default 7) in a fresh interpreter; the median wall time is reported next to the
interpreter's own start-up (``python -c pass``) and the target of issue 23.  The targets are absolute (seconds on
the machine that set them); on a slower or loaded machine compare ``case - baseline`` (what the package adds) with
``target - 0.03 s`` (the interpreter start-up on that machine).  Every case must also exit 0.

What keeps the start-up short (onestep_theory/core/lazy.py, onestep_theory/cli/main.py): the package and
``onestep_theory.core`` load their public names on first use; ``onestep-theory`` imports only the module of the
command that runs; the command modules import the theory inside their handlers.
"""

import argparse
import statistics
import subprocess
import sys
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
    args = ap.parse_args()
    base = None
    print(f"{'case':<76} {'median s':>9} {'- baseline':>11} {'target':>7}")
    for label, argv, target in CASES:
        t = wall(argv, args.repeat)
        base = t if base is None else base
        print(f"{label:<76} {t:>9.3f} {t - base:>11.3f} {target if target else '':>7}")


if __name__ == "__main__":
    main()
