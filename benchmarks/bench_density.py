"""Speed of the single-group density on the real axis (issue 31 item 2; docs/theory/srf-theory.md §7.1; not run by
the test suite).

    python benchmarks/bench_density.py [--points N]

In one process, side by side: the real-axis density (``density_real``: edges by folds, Newton at Im z = 0+, two
κ-rules) against the previous method on the same points (three damped fixed points + Newton at eta, eta/2, eta/4 per
point, Richardson-extrapolated, on two κ-rules as the old ``spectrum`` did), at r = 0 and r = 1.1; the ratio
old / new is the measurement (absolute seconds depend on the machine's load).  Also the new method at --dps 30 on
five points, and its digits (error) against the old method's.
"""

import argparse
import math
import time

import numpy as np


def old_method(student, xs, kw):
    from onestep_theory.srf.spectral.spectrum import stieltjes_checked

    eta = 1e-3 * max(abs(float(x)) for x in xs)
    out, errs, inits = [], [], [None, None, None]
    for x in xs:
        rho, err = [], []
        for k in range(3):
            V1, V2, e1, e2 = stieltjes_checked(student, complex(x, eta / 2 ** k), init=inits[k], **kw)
            rho.append(V2.imag / math.pi)
            err.append(e2 / math.pi)
            inits[k] = (complex(V1), complex(V2))
        r1, r2 = 2 * rho[1] - rho[0], 2 * rho[2] - rho[1]
        out.append(r2)
        errs.append(abs(r2 - r1) + err[0] + 3 * err[1] + 2 * err[2])
    return out, errs


def main():
    from onestep_theory.core.caches import clear_caches
    from onestep_theory.srf.spectral.spectrum import density_real

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=40)
    args = ap.parse_args()
    for kw in (dict(r=0, c=1, alpha=2, beta=1), dict(r="1.1", c="1.02", alpha=2, beta="1/2")):
        _, _, edges, _ = density_real("tanh", [], **kw)
        xs = np.linspace(edges[0], edges[-1], args.points + 2)[1:-1]
        clear_caches()
        t = time.perf_counter()
        new, nerr, _, _ = density_real("tanh", xs, **kw)
        t_new = time.perf_counter() - t
        clear_caches()
        t = time.perf_counter()
        old, oerr = old_method("tanh", xs, kw)
        t_old = time.perf_counter() - t
        gap = max(abs(a - b) for a, b in zip(new, old))
        print(f"{kw}: {args.points} points  new {t_new:6.2f} s (max error {max(nerr):.1e})   old {t_old:6.2f} s "
              f"(max error {max(oerr):.1e})   old/new = {t_old / t_new:5.1f}   max |new - old| = {gap:.1e}")
        t = time.perf_counter()
        density_real("tanh", xs[::max(1, len(xs) // 5)][:5], dps=30, **kw)
        print(f"    new, --dps 30, 5 points: {time.perf_counter() - t:6.2f} s")


if __name__ == "__main__":
    main()
