"""Precompute the resolvent over extreme ranges -> ../resolvent_extreme_reference.json.

What: m1, m2 at 24 random points with phi, psi log-uniform in [1e-6, 1e6], lambda log-uniform in [1e-10, 1e8],
      c1 uniform in [0.2, 3], c_>1 uniform in [0, 3] (numpy default_rng, seeds 7 and 11: 10 and 14 points, the
      draws of tests/test_hostile.py::_fuzz_points).  Inputs are stored as the exact binary floats drawn
      (``float.hex``), values as 30-digit decimal strings; a point where the reference does not converge is
      stored with ``null`` values (the test skips it and counts it).
Why:  tests/test_hostile.py::test_resolvent_extreme_ranges_no_wrong_root asks that every root the package returns
      there (the quartic of docs/theory/spike-theory.md §6.3 and the float64 batch path) is the physical one.
      The reference is the [AP20] solver of resolvent_reference.py (mp.findroot in log variables with
      lambda-continuation from the large-lambda asymptotics): no code shared with the package.  The continuation
      over up to 90 octaves of lambda costs about 30-60 s a point, too slow to repeat in every CI run (it was
      19 minutes of the slow stage), so it is computed once here.
How long: about 15-25 minutes on one core.  Run:  python tests/data/precompute/resolvent_extreme_reference.py
"""

import importlib.util
import json
import pathlib
import time

import mpmath as mp
import numpy as np

HERE = pathlib.Path(__file__).parent
DRAWS = ((7, 10), (11, 14))          # (seed, number of points)


def points(n, seed):
    """The draws of tests/test_hostile.py::_fuzz_points (same generator, same order)."""
    rng = np.random.default_rng(seed)
    P, S = np.exp(rng.uniform(np.log(1e-6), np.log(1e6), (2, n)))
    L = np.exp(rng.uniform(np.log(1e-10), np.log(1e8), n))
    return P, S, L, rng.uniform(0.2, 3, n), rng.uniform(0, 3, n)


def main():
    spec = importlib.util.spec_from_file_location("resolvent_reference", HERE / "resolvent_reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows, t0 = [], time.time()
    for seed, n in DRAWS:
        cols = points(n, seed)
        for i in range(n):
            x = [float(v[i]) for v in cols]
            with mp.workdps(40):
                a = [mp.mpf(v) for v in x]
                scale = (1 + a[0] + 1 / a[1] + a[0] / a[1] + a[1] / a[0]) * (1 + a[3] ** 2 + a[4] ** 2)
                try:
                    ref = mod.solve(*a, lam_start=max(a[2] * 2 ** 24, 1e4 * scale), tol=mp.mpf(10) ** -25)
                    vals = [mp.nstr(ref[0], 30), mp.nstr(ref[1], 30)]
                except (AssertionError, ZeroDivisionError, ValueError):
                    vals = None
            rows.append({"seed": seed, "index": i, "phi": x[0].hex(), "psi": x[1].hex(), "lam": x[2].hex(),
                         "c1": x[3].hex(), "cg": x[4].hex(), "m1_m2": vals})
            print(f"seed {seed} point {i}: {vals} ({time.time() - t0:.0f} s)", flush=True)
    out = {"what": "m1, m2 of the [AP20] resolvent at extreme phi, psi, lambda (30 digits)",
           "script": "tests/data/precompute/resolvent_extreme_reference.py", "dps": 40, "tol": "1e-25",
           "seconds": round(time.time() - t0), "points": rows}
    (HERE.parent / "resolvent_extreme_reference.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
