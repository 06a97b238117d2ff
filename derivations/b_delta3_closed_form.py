"""(b) Closed form of Delta_3.

The general-ell matrix form (spike-theory.md §7.3) gives, exactly,
    Delta_3 = Delta_2 + 6 lam psi c*1^6 c*3^2 m1 / (phi b^6).
(He_3(u/b) is reached by u^3 - 3 b^2 u, orthogonal to the lower spikes in the R0-metric, with
weight 3! tau_1 and coefficient c*3 rho^3; 3!^2 / 3! = 6.)  We check the structure symbolically and
the value numerically against an independent evaluation of lam s^T M^{-1} s with mpmath.
"""

import sys

import mpmath
import sympy as sp

from onestep_theory.spikes import CSTAR2, LAM, M1, M2, PHI, PSI, S2, cstar_symbols, delta_symbolic, latex


def main():
    cs = cstar_symbols(3)
    b2 = cs[1] ** 2 + PHI * (CSTAR2 + S2)
    d3 = delta_symbolic(3)
    d2 = delta_symbolic(2).subs({cstar_symbols(2)[k]: cs[k] for k in range(3)})
    incr = sp.factor(sp.cancel(d3 - d2))
    want = 6 * LAM * PSI * cs[1] ** 6 * cs[3] ** 2 * M1 / (PHI * b2**3)
    ok = sp.simplify(incr - want) == 0
    print("Delta_3 =", d3)
    print("LaTeX:", latex(d3))
    print("Delta_3 - Delta_2 =", incr)
    # numeric cross-check against a hand-written lam s^T M^{-1} s
    vals = {M1: sp.Rational(7, 5), M2: sp.Rational(3, 5), PHI: sp.Rational(1, 2), PSI: 2, LAM: sp.Rational(1, 3),
            CSTAR2: 3, S2: sp.Rational(1, 4), cs[1]: 1, cs[2]: 1 / sp.sqrt(2), cs[3]: 1 / sp.sqrt(6), cs[0]: 0}
    with mpmath.workdps(40):
        t1 = mpmath.mpf(2) / mpmath.mpf("0.5") * mpmath.mpf(7) / 5
        t2 = mpmath.mpf(2) / mpmath.mpf("0.5") * mpmath.mpf(3) / 5
        b = mpmath.sqrt(1 + mpmath.mpf("0.5") * (3 + mpmath.mpf("0.25")))
        rho = 1 / b
        h = [0, rho, rho**2 / mpmath.sqrt(2), rho**3 / mpmath.sqrt(6)]
        # rows: u -> (0,1,0,0); u^2 -> (1,0,1,0); u^3 -> (0,3,0,1); W = diag(tau1, tau2, 2 tau1, 6 tau1)
        Xi = mpmath.matrix([[0, 1, 0, 0], [1, 0, 1, 0], [0, 3, 0, 1]])
        W = mpmath.diag([t1, t2, 2 * t1, 6 * t1])
        s = Xi * W * mpmath.matrix(h)
        ref = mpmath.mpf(1) / 3 * (s.T * mpmath.lu_solve(Xi * W * Xi.T, s))[0]
        got = mpmath.mpf(str(sp.N(d3.subs(vals), 45)))
        err = abs(got - ref)
        line = f"numeric check (40 digits): closed form {mpmath.nstr(got, 30)} vs direct {mpmath.nstr(ref, 30)}"
    print(line)
    ok &= err < mpmath.mpf(10) ** -30
    print("CONCLUSION:", "Delta_3 = Delta_2 + 6 lam psi c*1^6 c*3^2 m1/(phi b^6)" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
