"""The eta-optimum of the upper bound (26) for tanh/sin at alpha0 = 20, at 45 digits -> ../optimize_reference.json.

What: eta* = argmin over eta of (26) ([CPDKLZL24] (26), (28); docs/theory/srf-theory.md §6) for student tanh,
      teacher sin, alpha0 = 20, noise 0, the corrected c of Result 3.1, and the minimum value (26) there.
Why:  the package finds it as the certified root of an analytic derivative on its kappa-rule (Arb panels,
      Gram-Schmidt, core.search.certified_argmin).  This script shares none of that: the mapping constants by
      mpmath.quad, (26) = mu2* - P^2/Q with
        P = E[h(kappa) mu0(kappa)] reduced to ONE Gaussian integral (X = r kappa + sqrt(c) z ~ N(0, r^2 + c) and
        E[sin(gamma kappa) | X] in closed form), differentiated in eta by mpmath.diff;
        Q = E[mu0(kappa)^2] by Gauss-Hermite in kappa (mu0 is entire) and tanh-sinh (mpmath.quad) in z, with
        dQ/deta = 2 E[mu0 dmu0/deta], dmu0/deta = (dr/deta) kappa E[z tanh]/sqrt(c) + (dc/deta)/2 E[(z^2-1) tanh]/c
        (Stein's identities);
      eta* by mpmath.findroot (secant) on d(26)/deta = -(2 P P' Q - P^2 Q')/Q^2, started at 5.
How long: about 15 minutes (nested quadrature at 45 digits); --check compares 320 and 400 nodes first.
Run:  python tests/data/precompute/optimize_reference.py
"""

import json
import sys
import time
from pathlib import Path

import mpmath as mp

DPS = 45
ALPHA0 = 20
NODES = 400         # Gauss-Hermite nodes in kappa; 320 and 400 agree on Q(5) to 1e-45 (--check compares them)


def E(f, a=0, s=1):
    """E f(a + s Z), Z ~ N(0, 1): tanh-sinh on [-16, 16] (the Gaussian tail beyond is below 1e-56), split at the
    centre of tanh's transition."""
    z0 = -a / s
    return mp.quad(lambda z: f(a + s * z, z) * mp.npdf(z), [-16, z0, 16] if -16 < z0 < 16 else [-16, 16])


def hermite_rule(n):
    """Nodes kappa > 0 and weights of E g(kappa) for even g: the physicists' Gauss-Hermite rule, kappa = sqrt 2 x."""
    xs, ws = mp.gauss_quadrature(n, "hermite")
    return [(mp.sqrt(2) * x, 2 * w / mp.sqrt(mp.pi)) for x, w in zip(xs, ws) if x > 0]


def constants():
    sech2 = lambda t: 1 / mp.cosh(t) ** 2                               # noqa: E731
    mu1 = mp.quad(lambda z: sech2(z) * mp.npdf(z), [-mp.inf, 0, mp.inf])
    m2p = mp.quad(lambda z: sech2(z) ** 2 * mp.npdf(z), [-mp.inf, 0, mp.inf])
    mu1s = mp.exp(-mp.mpf(1) / 2)                                      # E z sin z
    mu2s = (1 - mp.exp(-2)) / 2                                        # E sin^2 z
    g_norm = mp.sqrt(mu1s ** 2 + mu2s / ALPHA0)
    return dict(A=mu1 * g_norm, B=mu2s * (m2p - mu1 ** 2) / ALPHA0, gamma=mu1s / g_norm, mu2s=mu2s)


def P(eta, K):
    r, c, g = eta * K["A"], 1 + eta ** 2 * K["B"], K["gamma"]
    rho2, v = 1 - g ** 2, r ** 2 + c
    fac = mp.exp(-rho2 / 2) * mp.exp(-g ** 2 * c / (2 * v))
    sv = mp.sqrt(v)
    return fac * 2 * mp.quad(lambda t: mp.tanh(sv * t) * mp.sin(g * r * sv * t / v) * mp.npdf(t), [0, mp.inf])


def Q_and_dQ(eta, K, n=NODES):
    """Q = E mu0(kappa)^2 and dQ/deta = 2 E mu0 dmu0/deta: Gauss-Hermite in kappa (mu0 is entire in kappa: the
    rule converges geometrically), tanh-sinh in z."""
    r, c = eta * K["A"], 1 + eta ** 2 * K["B"]
    dr, dc, sc = K["A"], 2 * eta * K["B"], mp.sqrt(c)
    Q = dQ = 0
    for kappa, w in hermite_rule(n):
        a = r * kappa
        m0 = E(lambda u, z: mp.tanh(u), a, sc)
        m1 = E(lambda u, z: z * mp.tanh(u), a, sc) / sc
        m2 = E(lambda u, z: (z * z - 1) * mp.tanh(u), a, sc) / c
        Q += w * m0 ** 2
        dQ += 2 * w * m0 * (dr * kappa * m1 + dc / 2 * m2)
    return Q, dQ


def main():
    t0 = time.time()
    mp.mp.dps = DPS
    K = constants()
    if "--check" in sys.argv:
        q1, q2 = Q_and_dQ(mp.mpf(5), K, NODES - 80)[0], Q_and_dQ(mp.mpf(5), K, NODES)[0]
        print(f"Q(5) with {NODES - 80} and {NODES} nodes differ by {mp.nstr(abs(q1 - q2), 3)} ({time.time() - t0:.0f} s)")

    def deriv(eta):
        p, q_dq = P(eta, K), Q_and_dQ(eta, K)
        dp = mp.diff(lambda e: P(e, K), eta)
        q, dq = q_dq
        print(f"  eta = {mp.nstr(eta, 20)}  ({time.time() - t0:.0f} s)", flush=True)
        return -(2 * p * dp * q - p ** 2 * dq) / q ** 2

    # the secant stops when its step is below 1e-42 (about the noise of the 45-digit derivative)
    eta = mp.findroot(deriv, (mp.mpf(5), mp.mpf("5.06")), solver="secant", tol=mp.mpf(10) ** -(DPS - 3))
    q, _ = Q_and_dQ(eta, K)
    upper = K["mu2s"] - P(eta, K) ** 2 / q
    out = {"student": "tanh", "teacher": "sin", "alpha0": ALPHA0, "dps": DPS,
           "eta_upper": mp.nstr(eta, 42), "upper": mp.nstr(upper, 42),
           "method": "Gauss-Hermite in kappa, mpmath.quad in z, P in one dimension, mpmath.findroot on d(26)/deta; see the script",
           "seconds": round(time.time() - t0)}
    Path(__file__).resolve().parent.parent.joinpath("optimize_reference.json").write_text(json.dumps(out, indent=1)
                                                                                           + "\n")
    print(out)


if __name__ == "__main__":
    main()
