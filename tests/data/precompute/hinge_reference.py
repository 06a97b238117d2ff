"""Precompute the hinge-loss sRF reference at the setting of issue 31 -> ../hinge_reference.json.

What: the test error (25) and the class error of the sRF saddle point with the hinge loss, tanh student, sign
      teacher, alpha0 = 20, eta = 3 (Result 3.1), alpha = 1, beta = 1, lambda = 1/10, each with its error.
Why:  the claim audit of the built-in hinge (`srf ... --loss hinge`, closed-form proximal map of docs/theory/srf-theory.md
      §4.9 on Gauss-Hermite xi-rules) needs a reference that does not share that route.  This script writes the
      loss as a user expression, Max(0, 1 - y*yhat): the package then locates its kink symbolically, takes the
      proximal map by bracketed 1-D convex minimisation (srf-theory.md §13, no closed form) and averages over xi with
      Gauss-Legendre panels split at the kinks -- a different proximal map and a different xi quadrature on the same
      saddle-point equations.  (The hinge was also checked against the direct sRF simulation, §13.)
How long: about 2-4 minutes.  Run:  python tests/data/precompute/hinge_reference.py
"""

import json
import pathlib
import time

from onestep_theory.srf import srf_solve

SETTING = dict(alpha0="20", eta="3", alpha="1", beta="1", lam="1/10")


def main():
    t0 = time.time()
    sol = srf_solve("tanh", "sign", loss="Max(0, 1 - y*yhat)", **SETTING)
    out = {"what": "hinge sRF test and class error by the user-expression (kinked prox) route", "setting": SETTING,
           "student": "tanh", "teacher": "sign", "loss": "Max(0, 1 - y*yhat)",
           "test_error": repr(float(sol.test_error)), "test_error_error": repr(float(sol.abs_error)),
           "class_error": repr(float(sol.extra["class_error"])),
           "class_error_error": repr(float(sol.errors["class_error"])), "seconds": round(time.time() - t0),
           "script": "tests/data/precompute/hinge_reference.py"}
    (pathlib.Path(__file__).parent.parent / "hinge_reference.json").write_text(json.dumps(out, indent=1) + "\n")
    print(out)


if __name__ == "__main__":
    main()
