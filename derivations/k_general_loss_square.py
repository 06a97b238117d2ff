"""(k) The general-loss saddle point (srf-theory §4.9) with the square prox reduces to the square-loss equations.

Symbolic (SymPy): with prox = (w + V y)/(1 + V), f_out = (y - w)/(1 + V), w = mbar + a z + s xi
(a = mu1 psi, s^2 = q - a^2) and the teacher's moments E y = h, E z y = h1, E y^2 = h2, the (z, xi)-averages
<f>, <f^2>, <d f>, <z f> are computed exactly; then each hat of §4.9 equals the hat of (18) term by term (the
kappa-expectation is linear, so the integrands are compared), hat_psi loses its -mu1 psi <d f> term exactly as
§4.3 says, and the Newton update of m used by the package, m + E[mu0 <f>] / E[mu0^2 (-<d f>)], is the closed
form (20) (checked on a two-point kappa law with symbolic weights).

Numeric: srf_solve with the square loss as a Loss object (the general channel, numerical (z, xi) rules) equals
the closed-form solver within their stated errors.
Usage: python k_general_loss_square.py   (about 5 s)
"""

import sympy as sp

from onestep_theory.srf import srf_solve
from onestep_theory.srf.loss.losses import LOSSES


def averages(f, z, xi, Y, h, h1, h2):
    """E over z, xi ~ N(0,1) independent and the label Y with E Y = h, E zY = h1, E Y^2 = h2 (f polynomial)."""
    poly = sp.Poly(sp.expand(f), z, xi, Y)
    mom_z = {0: 1, 1: 0, 2: 1, 3: 0, 4: 3}
    out = 0
    for (iz, ix, iy), c in poly.terms():
        ex = mom_z[ix]
        if iy == 0:
            ey = mom_z[iz]
        elif iy == 1:
            ey = {0: h, 1: h1}[iz]
        else:
            ey = {0: h2}[iz]
        out += c * ex * ey
    return sp.simplify(out)


def symbolic() -> bool:
    z, xi, Y = sp.symbols("z xi Y", real=True)
    h, h1, h2, mbar, a, s, V, mu1, ms2, k, al, be = sp.symbols("h h1 h2 mbar a s V mu1 mus2 kappa alpha beta",
                                                               real=True)
    w = mbar + a * z + s * xi
    prox = (w + V * Y) / (1 + V)
    f = (prox - w) / V
    df = (sp.diff(prox, mbar) - 1) / V                                     # d prox / d w = d prox / d mbar
    Ef, Ef2, Edf = (averages(g, z, xi, Y, h, h1, h2) for g in (f, f * f, df))
    Ezf = averages(z * f, z, xi, Y, h, h1, h2)
    q = a * a + s * s
    E = h2 - 2 * mbar * h + mbar**2 - 2 * a * h1 + q                        # the conditional test error of §4.2
    pairs = [(-al / be * mu1**2 * Edf, al / be * mu1**2 / (1 + V)),           # hat V1
             (-al / be * ms2 * Edf, al / be * ms2 / (1 + V)),                 # hat V2
             (al / be * mu1**2 * Ef2, al / be * mu1**2 * E / (1 + V) ** 2),    # hat q1 (noiseless: B = E)
             (al / be * ms2 * Ef2, al / be * ms2 * E / (1 + V) ** 2),          # hat q2
             (al / sp.sqrt(be) * k * mu1 * Ef, al / sp.sqrt(be) * k * mu1 * (h - mbar) / (1 + V)),   # hat theta
             (al / sp.sqrt(be) * mu1 * (Ezf - a * Edf), al / sp.sqrt(be) * mu1 * h1 / (1 + V))]      # hat psi
    ok = all(sp.simplify(x - y) == 0 for x, y in pairs)
    # mean overlap on a two-point kappa law (weights p1, p2; values at the two points)
    p1, p2, m, th = sp.symbols("p1 p2 m theta", positive=True)
    pts = [sp.symbols(f"mu0_{i} mu1_{i} kappa_{i} h_{i} V_{i}", real=True) for i in (1, 2)]

    def Ef_at(mu0, mu1_, kk, hh, VV):
        return (hh - mu0 * m - mu1_ * kk * th) / (1 + VV)                  # <f> at that kappa (from above)
    num = sum(p * P[0] * Ef_at(*P) for p, P in zip((p1, p2), pts))
    den = sum(p * P[0] ** 2 / (1 + P[4]) for p, P in zip((p1, p2), pts))
    newton = m + num / den
    closed = sum(p * P[0] * (P[3] - P[1] * P[2] * th) / (1 + P[4]) for p, P in zip((p1, p2), pts)) / den
    ok &= sp.simplify(newton - closed) == 0
    print(f"symbolic: the six hats of §4.9 with the square prox equal (18) term by term, and the m update is (20): "
          f"{ok}")
    return ok


def numeric() -> bool:
    ref = srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=2, beta=1, lam="1/10")
    gen = srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=2, beta=1, lam="1/10", loss=LOSSES["square"])
    gap = abs(float(gen.test_error) - float(ref.test_error))
    print(f"numeric: general channel {float(gen.test_error):.15f} (+/- {gen.abs_error:.1e}), closed form "
          f"{float(ref.test_error):.15f} (+/- {ref.abs_error:.1e}); gap {gap:.1e}")
    return gap <= gen.abs_error + ref.abs_error


if __name__ == "__main__":
    ok = symbolic() & numeric()
    print("CONCLUSION: the general-loss equations with the square prox are the square-loss equations" if ok else
          "CONCLUSION: FAILED — the square-loss reduction does not hold")
    raise SystemExit(0 if ok else 1)
