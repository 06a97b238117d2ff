"""The trained-bulk option against Result 3.3 as alpha0 grows (docs/theory/trained-bulk.md §6): the difference
times alpha0 tends to a constant (the rank-one theta part of the step's covariance), and at alpha0 = inf the two are
the same equations.  Usage: python alpha0_limit.py [teacher eta]"""
import sys

from onestep_theory.srf.single.solve import srf_solve

teacher = sys.argv[1] if len(sys.argv) > 1 else "tanh"
eta = sys.argv[2] if len(sys.argv) > 2 else "1"
print("| α0 | Result 3.3 ε_g | trained-bulk ε_g | difference (%) | α0 × difference |")
print("|---|---|---|---|---|")
for a0 in ("1/2", "2", "10", "100", "1000", "10000", "100000", "inf"):
    kw = dict(alpha0=a0, eta=eta, alpha=3, beta=1, lam="0.1")
    a = srf_solve("tanh", teacher, dps=20, **kw)
    b = srf_solve("tanh", teacher, spectrum="trained", dps=20, **kw)
    diff = b.test_error - a.test_error
    scale = "" if a0 == "inf" else f"{float(diff) * float(eval(a0 + '.0' if '/' not in a0 else a0)):.6e}"
    print(f"| {a0} | {a.test_error} | {b.test_error} | {100 * float(diff / a.test_error):+.3e} | {scale} |",
          flush=True)
