"""(j) [BES+22] Cor. 8 in the sRF convention: for sigma = sigma* = erf(x) both bounds vanish at r = sqrt(3).

Convention: [BES+22]'s erf is erf(x), written "erf(x)" here; the package's named "erf" is erf(x/sqrt 2)
(docs/theory/srf-theory.md §9), for which kappa* = sqrt(2) instead.

1. Symbolic (SymPy).  F(a) := E_Z erf(a + Z), Z ~ N(0,1).  F is odd (F(0) = E erf(Z) = 0) and
   F'(a) = E (2/sqrt pi) exp(-(a+Z)^2), a Gaussian integral that SymPy evaluates to
   (2/sqrt(3 pi)) exp(-a^2/3) = d/da erf(a/sqrt 3).  Hence E_xi2 erf(kappa xi + xi2) = erf(kappa xi/sqrt 3)
   (Owen's identity E erf(a + sZ) = erf(a/sqrt(1 + 2 s^2)) at s = 1), so g_kappa = sigma* iff kappa = sqrt 3:
   tau* = 0 at kappa* = sqrt 3 (for kappa != sqrt 3 the strictly increasing erf makes tau > 0).
   The identity is also checked at 40 digits by mpmath quadrature at three values of a.
2. In the sRF convention at alpha0 = oo (gamma = c = 1, docs/theory/srf-theory.md §2) r = eta mu1 |mu1*| with
   mu1 = E erf'(z) = (2/sqrt pi) E exp(-z^2) = 2/sqrt(3 pi) (SymPy) and mu1* = mu1, so r = sqrt 3 at
   eta = sqrt(3)/mu1^2 = 3 sqrt(3) pi / 4 (exact).  There mu0(kappa) = E_z erf(r kappa + z) = erf(kappa) = sigma*
   (identity 1), so (26) and (27) are both exactly 0.
3. Package, 30 digits:
   * srf_params("erf(x)", "erf(x)", alpha0="inf", eta=3 sqrt(3) pi/4, dps=30) gives r = sqrt 3, c = gamma = 1
     to 1e-30, and mu1 = 2/sqrt(3 pi);
   * on the package's own kappa-rule (srf_setup with exactly the arguments bounds(..., dps=30) uses: 40 working
     digits), mu0 = h = erf(kappa) at every node to 1e-35, and (26), (27) computed on that rule (projections onto
     mu0 and onto span{mu0, kappa mu1}) are 0 to 1e-35 on its first two refinement levels;
   * bounds("erf(x)", "erf(x)", alpha0="inf", eta=<that>) (float64): |upper|, |lower| <= their stated errors;
   * bounds(..., dps=30) (only with --bounds-dps30: it takes ~15 s): the package certifies digits RELATIVE to the
     value (core.results.digits_of), so a bound that is exactly 0 cannot be certified: it refines the kappa-rule
     to its last level and raises ConvergenceError ("0 digits reached") although its stated absolute error is
     ~2e-38.  The script accepts that outcome only with a stated absolute error <= 1e-30 (and accepts
     |upper|, |lower| <= 1e-30 should the package ever return values); see the report of issue 13;
   * tau_star("erf(x)", "erf(x)") and tau_star(..., dps=30) give kappa_exact == sqrt(3), tau_exact == 0.

Usage: python j_bes22_cor8_erf.py [--bounds-dps30]   (about 7 s; about 25 s with --bounds-dps30)
"""

import sys
import time

import mpmath
import sympy as sp

from onestep_theory.core.errors import ConvergenceError
from onestep_theory.core.precision import GUARD_DIGITS, precision
from onestep_theory.srf import bounds, srf_params, srf_setup
from onestep_theory.srf.optimal.taustar import tau_star

ETA = "3*sqrt(3)*pi/4"


def symbolic():
    a, z = sp.symbols("a z", real=True)
    pdf = sp.exp(-z**2 / 2) / sp.sqrt(2 * sp.pi)
    dF = sp.simplify(sp.integrate(2 / sp.sqrt(sp.pi) * sp.exp(-(a + z) ** 2) * pdf, (z, -sp.oo, sp.oo)))
    target = sp.diff(sp.erf(a / sp.sqrt(3)), a)
    ok = sp.simplify(dF - target) == 0
    # F(0) = E erf(Z) = 0 by oddness of erf; both sides vanish at a = 0
    ok &= sp.erf(0) == 0
    print(f"d/da E erf(a + Z) = {dF} = d/da erf(a/sqrt 3): {ok}")
    mu1 = sp.simplify(sp.integrate(2 / sp.sqrt(sp.pi) * sp.exp(-z**2) * pdf, (z, -sp.oo, sp.oo)))
    ok1 = sp.simplify(mu1 - 2 / sp.sqrt(3 * sp.pi)) == 0
    eta = sp.sqrt(3) / mu1**2
    ok2 = sp.simplify(eta - 3 * sp.sqrt(3) * sp.pi / 4) == 0 and sp.simplify(eta * mu1 * mu1 - sp.sqrt(3)) == 0
    print(f"mu1 = E erf'(z) = {mu1} (= 2/sqrt(3 pi): {ok1});  eta = sqrt(3)/mu1^2 = {sp.nsimplify(eta)} "
          f"(= 3 sqrt(3) pi/4, r = eta mu1 |mu1*| = sqrt 3: {ok2})")
    with mpmath.workdps(50):
        worst = max(abs(mpmath.quad(lambda x: mpmath.erf(av + x) * mpmath.npdf(x), [-mpmath.inf, -av, mpmath.inf])
                        - mpmath.erf(av / mpmath.sqrt(3))) for av in (mpmath.mpf("0.3"), mpmath.mpf(1), mpmath.mpf("2.5")))
    ok3 = worst < mpmath.mpf(10) ** -40
    print(f"E erf(a + Z) - erf(a/sqrt 3) at a = 0.3, 1, 2.5 by quadrature (50 digits): max {mpmath.nstr(worst, 3)}: {ok3}")
    return ok and ok1 and ok2 and ok3


def package(with_dps30=False):
    ok = True
    tiny = mpmath.mpf(10) ** -30
    with mpmath.workdps(45):
        p = srf_params("erf(x)", "erf(x)", "inf", ETA, dps=30)
        dr = abs(p.r - mpmath.sqrt(3))
        dm = abs(p.mu1 - 2 / mpmath.sqrt(3 * mpmath.pi))
        good = dr < tiny and abs(p.c - 1) < tiny and abs(p.gamma - 1) < tiny and dm < tiny
        ok &= good
        print(f"srf_params(alpha0=inf, eta=3 sqrt(3) pi/4, dps=30): r - sqrt 3 = {mpmath.nstr(dr, 3)}, c = {p.c}, "
              f"gamma = {p.gamma}, mu1 - 2/sqrt(3 pi) = {mpmath.nstr(dm, 3)}: {good}")
        # the rule bounds(..., dps=30) uses: (r, c, gamma) from srf_params at 30 + GUARD_DIGITS + 2 digits,
        # digits = 32, 30 + GUARD_DIGITS working digits (cached: reused by that call with --bounds-dps30)
        q = srf_params("erf(x)", "erf(x)", "inf", ETA, dps=30 + GUARD_DIGITS + 2)
        for level in (0, 1):
            with precision(30):          # the working digits bounds(..., dps=30) computes its rule at
                S = srf_setup("erf(x)", "erf(x)", q.r, q.c, abs(q.gamma), digits=32, level=level, mp=True)
            w, mu0, k1, h = list(S.w), list(S.mu0), [x * m for x, m in zip(S.kappa, S.mu1)], list(S.h)
            dot = (lambda f, g: mpmath.fsum(wi * fi * gi for wi, fi, gi in zip(w, f, g)))
            node_gap = max(max(abs(m - mpmath.erf(x)) for m, x in zip(mu0, S.kappa)),
                           max(abs(x - mpmath.erf(kk)) for x, kk in zip(h, S.kappa)))
            n2, a0, a1 = dot(h, h), dot(h, mu0), dot(h, k1)
            g00, g01, g11 = dot(mu0, mu0), dot(mu0, k1), dot(k1, k1)
            upper = n2 - a0**2 / g00
            det = g00 * g11 - g01**2
            lower = n2 - (g11 * a0**2 - 2 * g01 * a0 * a1 + g00 * a1**2) / det
            good = node_gap < mpmath.mpf(10) ** -35 and abs(upper) < mpmath.mpf(10) ** -35 \
                and abs(lower) < mpmath.mpf(10) ** -35
            ok &= good
            print(f"package kappa-rule level {level} ({len(w)} nodes, {30 + GUARD_DIGITS} digits): max |mu0 - erf|, |h - erf| = "
                  f"{mpmath.nstr(node_gap, 3)};  (26) = {mpmath.nstr(upper, 3)}, (27) = {mpmath.nstr(lower, 3)}  "
                  f"(|sigma*|^2 = {mpmath.nstr(n2, 20)}): {good}")
    b = bounds("erf(x)", "erf(x)", alpha0="inf", eta=ETA)
    good = abs(b.upper) <= b.errors["upper"] and abs(b.lower) <= b.errors["lower"]
    ok &= good
    print(f"bounds(float64): upper = {b.upper:.2e} (error {b.errors['upper']:.1e}), lower = {b.lower:.2e} "
          f"(error {b.errors['lower']:.1e}), r = {float(b.r):.16f}: {good}")
    if with_dps30:
        t = time.time()
        try:
            b = bounds("erf(x)", "erf(x)", alpha0="inf", eta=ETA, dps=30)
            good = abs(b.upper) <= tiny and abs(b.lower) <= tiny
            print(f"bounds(dps=30): upper = {mpmath.nstr(b.upper, 3)}, lower = {mpmath.nstr(b.lower, 3)}: {good}")
        except ConvergenceError as exc:
            good = "only 0 reached" in str(exc) and exc.residual <= 1e-30
            print(f"bounds(dps=30) refuses ({time.time() - t:.0f} s): '{exc}'.\n   NOTE: the package certifies relative "
                  f"digits, undefined for a bound that is exactly 0; its stated absolute error is {exc.residual:.1e} "
                  f"(<= 1e-30: {good}); the values themselves are checked on the same kappa-rule above")
    else:
        good = True
        print("bounds(dps=30): not called (it refines to its last level, ~15 s, and refuses a zero value; "
              "run with --bounds-dps30)")
    ok &= good
    for dps in (None, 30):
        r = tau_star("erf(x)", "erf(x)", dps=dps)
        good = r.kappa_exact == sp.sqrt(3) and r.tau_exact == 0
        ok &= good
        print(f"tau_star(dps={dps}): kappa_exact = {r.kappa_exact}, tau_exact = {r.tau_exact}, kappa = {r.kappa}: {good}")
    return ok


if __name__ == "__main__":
    t0 = time.time()
    ok = symbolic()
    ok = package("--bounds-dps30" in sys.argv) and ok
    print(f"time {time.time() - t0:.1f} s")
    print("CONCLUSION: E erf(kappa xi + xi2) = erf(kappa xi/sqrt 3), so kappa* = sqrt 3 and tau* = 0 ([BES+22] Cor. 8); "
          "at alpha0 = oo, eta = 3 sqrt(3) pi/4 (r = sqrt 3) both bounds (26), (27) vanish to 30 digits" if ok else
          "CONCLUSION: FAILED -- Cor. 8 does not carry over to the sRF bounds as stated")
    raise SystemExit(0 if ok else 1)
