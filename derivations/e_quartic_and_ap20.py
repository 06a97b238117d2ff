"""(e) The quartic of spike-theory.md §6.3 and the equivalence with [AP20] (S67)/(S68) (§6.2).

Checks symbolically: (i) the expansion of Q(m) = phi (D-K)(A D + B K) + B K (e m - 1) D gives exactly the
printed q_0..q_4; (ii) substituting m2 = K m1 / D(m1) into G_1 gives m1^2 Q(m1) / D(m1)^2; (iii) (S67)/psi = G_2
and -(S68) = G_1 identically; (iv) scale invariance (c1, c>1, lam, m) -> (k c1, k c>1, k^2 lam, m/k^2).
"""

import sys

import sympy as sp

from onestep_theory.spikes.resolvent import ap20_system, c1, cg, lam, m1, m2, phi, psi, quartic_coefficients, system


def main():
    K = phi**2 / psi
    A, B = cg**2, c1**2
    e = lam * psi / phi
    d1 = B * (phi / psi - 1)
    d2 = B * e
    printed = [-B * K**2, phi * d1 * K * (A + B) + B * K * (e * K - d1),
               phi * (A * d1**2 + d2 * K * (A + B)) + B * K * (e * d1 - d2), 2 * phi * A * d1 * d2 + B * K * e * d2,
               phi * A * d2**2]
    q = quartic_coefficients()
    ok_q = all(sp.simplify(a - b) == 0 for a, b in zip(q, printed))
    G1, G2 = system()
    D = K + d1 * m1 + d2 * m1**2
    Q = sum(qj * m1**j for j, qj in enumerate(q))
    ok_elim = sp.simplify(G2.subs(m2, K * m1 / D)) == 0 and sp.simplify(G1.subs(m2, K * m1 / D) - m1**2 * Q / D**2) == 0
    s67, s68 = ap20_system()
    ok_ap = sp.simplify(s67 / psi - G2) == 0 and sp.simplify(-s68 - G1) == 0
    k = sp.Symbol("kappa", positive=True)
    sub = {c1: k * c1, cg: k * cg, lam: k**2 * lam, m1: m1 / k**2, m2: m2 / k**2}
    ok_scale = all(sp.simplify(G.subs(sub, simultaneous=True) * k**2 - G) == 0 for G in (G1, G2))
    print(f"quartic coefficients match the printed q_j: {ok_q}")
    print(f"eliminating m2 gives m1^2 Q(m1)/D^2 (trivial root removed): {ok_elim}")
    print(f"(S67)/psi = G2 and -(S68) = G1: {ok_ap}")
    print(f"scale invariance: {ok_scale}")
    ok = ok_q and ok_elim and ok_ap and ok_scale
    print("CONCLUSION:", "the quartic and the AP20 equivalence hold exactly" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
