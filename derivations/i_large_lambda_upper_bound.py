"""(i) As lambda -> infinity the sRF test error tends to the upper bound (26), at the rate 1/lambda.

docs/theory/srf-theory.md §6 (165)-(169): as lambda -> oo, S -> oo and V, q, theta, psi -> 0 like 1/lambda, while
the stiff mean overlap m (no conjugate, §4.4) tends to <h, mu0>/|mu0|^2; so

    eps(lambda) -> |sigma*|^2 - <h, mu0>^2/|mu0|^2 = bounds(...).upper   (h = sigma* at gamma = 1),

and eps(lambda) - upper = C/lambda + D/lambda^2 + O(lambda^-3).  For gamma < 1 the package's bounds() returns
the derived extension of §6, whose upper bound is |sigma*|^2 - <h, mu0>^2/|mu0|^2 with the smoothed teacher
h(kappa) = E_z sigma*(gamma kappa + rho z) and mu0 at the general c: exactly the lambda -> oo limit of (25),
since the psi-channel (the h1 term) vanishes with psi ~ 1/lambda.

The script solves srf_solve at lambda = 1e3, 1e4, 1e5, 1e6 (dps = 20) and bounds(...) at the same (r, c, gamma)
(dps = 20) for three cases: gamma = 1 (tanh / sin, r = 1.1, c = 1), case A of §11 (tanh / sin, alpha0 = 20,
eta = 3: gamma = 0.97, c = 1.019) and gamma = 1/2, c = 6/5, r = 2 (tanh / relu_centered, alpha = 2, beta = 1/2).
With g_k = eps(10^k) - upper it prints lambda g_k and the ratios g_k/g_{k+1}.  Pass, for every case:
  * every stated error (eps and upper) is below 1e-6 |g_k|, so the gaps and ratios below are numerically exact;
  * g has one sign and the ratio of successive gaps is 10 up to the 1/lambda^2 correction: |g_k/g_{k+1} - 10|
    shrinks by a factor in [5, 20] per decade (that correction is O(1/lambda)), and in the last decade
    |g_5/g_6 - 10| <= 1e-3;
  * the Richardson limit C = (10 lambda_6 g_6 - lambda_5 g_5)/9 agrees with lambda_6 g_6 to within
    |lambda_6 g_6 - lambda_5 g_5| (the size of the D/lambda term), i.e. eps - upper ~ C/lambda.

Usage: python i_large_lambda_upper_bound.py   (about 10 s)
"""

import time

import mpmath

from onestep_theory.srf import bounds, srf_solve

LAMS = ["1e3", "1e4", "1e5", "1e6"]
CASES = [
    ("gamma = 1", "tanh", "sin", dict(r="11/10", c=1, gamma=1), dict(alpha=1, beta=1)),
    ("case A, gamma < 1", "tanh", "sin", dict(alpha0=20, eta=3), dict(alpha=1, beta=1)),
    ("gamma = 1/2", "tanh", "relu_centered", dict(r=2, c="6/5", gamma="1/2"), dict(alpha=2, beta="1/2")),
]


def run(label, st, te, rcg, ab):
    B = bounds(st, te, **rcg, dps=20)
    with mpmath.workdps(40):
        up = mpmath.mpf(B.upper)
        gaps, errs = [], []
        for lam in LAMS:
            s = srf_solve(st, te, lam=lam, dps=20, **rcg, **ab)
            gaps.append(mpmath.mpf(s.test_error) - up)
            errs.append(mpmath.mpf(s.abs_error) + mpmath.mpf(B.errors["upper"]))
        lams = [mpmath.mpf(v) for v in LAMS]
        lg = [l * g for l, g in zip(lams, gaps)]
        ratios = [gaps[k] / gaps[k + 1] for k in range(3)]
        dev = [abs(x - 10) for x in ratios]
        C = (10 * lg[3] - lg[2]) / 9
        print(f"{label}: {st} / {te}, r = {mpmath.nstr(B.r, 10)}, c = {mpmath.nstr(B.c, 10)}, "
              f"gamma = {mpmath.nstr(B.gamma, 10)} (extension={B.extension}); upper (26) = {mpmath.nstr(up, 16)}")
        for lam, g, x, e in zip(LAMS, gaps, lg, errs):
            print(f"   lambda = {lam}:  eps - upper = {mpmath.nstr(g, 10):>17}   lambda (eps - upper) = "
                  f"{mpmath.nstr(x, 12)}   (stated error {mpmath.nstr(e, 2)})")
        print(f"   ratios of successive gaps: {', '.join(mpmath.nstr(x, 10) for x in ratios)};  "
              f"C (Richardson) = {mpmath.nstr(C, 10)}")
        checks = [all(e < mpmath.mpf("1e-6") * abs(g) for e, g in zip(errs, gaps)),
                  all(g * gaps[0] > 0 for g in gaps),
                  all(5 <= dev[k] / dev[k + 1] <= 20 for k in range(2)),
                  dev[2] <= mpmath.mpf("1e-3"),
                  abs(C - lg[3]) <= abs(lg[3] - lg[2])]
        print(f"   checks (errors, sign, 1/lambda^2 correction shrinks 10x per decade, last ratio, Richardson): "
              f"{checks}")
    return all(checks)


if __name__ == "__main__":
    t0 = time.time()
    ok = True
    for case in CASES:
        ok = run(*case) and ok
    print(f"time {time.time() - t0:.1f} s")
    print("CONCLUSION: eps(lambda) - upper bound (26) = C/lambda + O(1/lambda^2) (successive gaps shrink 10x per "
          "decade) at gamma = 1 and, with the gamma < 1 extension of bounds(), at gamma < 1" if ok else
          "CONCLUSION: FAILED -- eps(lambda) does not approach the upper bound (26) at the rate 1/lambda")
    raise SystemExit(0 if ok else 1)
