"""(a) The general-ell Delta_l reduces symbolically to the printed Delta_1 and Delta_2.

spike-theory.md §7.1 prints
    Delta_1 = psi lam c*1^4 m2 / (phi b^2),
    Delta_2 = Delta_1 + 4 psi lam c*1^4 c*2^2 m1 / (3 phi b^4),   b^2 = c*1^2 + phi (c*^2 + s^2).
We build Delta_l for general l from the matrix form (§7.3) and from the printed Omega / r_p form
(§7.2) symbolically, and check that both give these expressions exactly.
"""

import sys

import sympy as sp

from onestep_theory.hermite import he_xi
from onestep_theory.spikes import (B, CSTAR2, LAM, M1, M2, PHI, PSI, RHO, S2, cstar_symbols, delta_symbolic,
                                   omega_inv_symbolic, r_symbolic)


def printed_form(ell):
    """Delta_l = lam sum_{p,q} c*p c*q r_p r_q sum_{ij} Omega_ij b^{i+j} xi_{i,p} xi_{j,q} (§7.2), symbolically."""
    cs = cstar_symbols(ell)
    omega = omega_inv_symbolic(ell).inv()
    r = r_symbolic(ell)
    tot = 0
    for p in range(1, ell + 1):
        for q in range(1, ell + 1):
            inner = sum(omega[i - 1, j - 1] * B ** (i + j) * he_xi(i, p) * he_xi(j, q)
                        for i in range(1, ell + 1) for j in range(1, ell + 1))
            tot += cs[p] * cs[q] * r[p] * r[q] * inner
    b = sp.sqrt(cs[1] ** 2 + PHI * (CSTAR2 + S2))
    return (LAM * tot).subs(RHO, cs[1] / B).subs(B, b)


def main():
    cs = cstar_symbols(2)
    b2 = cs[1] ** 2 + PHI * (CSTAR2 + S2)
    d1 = PSI * LAM * cs[1] ** 4 * M2 / (PHI * b2)
    d2 = d1 + 4 * PSI * LAM * cs[1] ** 4 * cs[2] ** 2 * M1 / (3 * PHI * b2**2)
    ok = True
    for ell, printed in ((1, d1), (2, d2)):
        general = delta_symbolic(ell)
        diff_m = sp.simplify(general - printed.subs(cs[2], cstar_symbols(ell)[2] if ell >= 2 else 0))
        diff_p = sp.simplify(printed_form(ell) - printed)
        print(f"ell={ell}: matrix form - printed = {diff_m};  Omega/r_p form - printed = {diff_p}")
        ok &= diff_m == 0 and diff_p == 0
    print("Omega^-1 for ell=2:", omega_inv_symbolic(2).tolist())
    print("CONCLUSION:", "the general formula reduces exactly to the printed Delta_1, Delta_2" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
