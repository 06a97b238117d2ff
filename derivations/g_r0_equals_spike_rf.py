"""(g) At r = 0 the sRF saddle point is the spike theory's random-features ridge test error, to 30 digits.

Where the two theories overlap -- no gradient step (sRF r = 0, c = 1; spike theory's untrained features F0) --
the sRF test error (25) of docs/theory/srf-theory.md §4.7 must equal the random-features ridge test error
that the spike theory builds from its resolvent traces m1, m2 and their lambda-derivatives
(docs/theory/spike-theory.md §6, §8.1):

    L_te(F0) = c*_1^2 q_lin + (c*^2 - c*_1^2 + sigma_eps^2) q_nl,
    q_lin = (phi/psi) (-dm2/dlam) / m1^2,   q_nl = (phi/psi) (-dm1/dlam) / m1^2.

Convention map (derived here; docs/theory/srf-theory.md §1 and docs/theory/spike-theory.md §1, §2.4):
  * sRF: n = alpha d samples, p = beta d features sigma(w_i.x)/sqrt(p), rows of W uniform on S^{d-1}
    (c = 1), ridge on a SUM loss  sum_mu (y_mu - a.sigma(W x_mu)/sqrt p)^2 + lam_C |a|^2.
    Spike theory: n samples, N features sigma(w_j.x) (no 1/sqrt N), sphere rows, ridge on a MEAN loss
    (1/n)|y - F a'|^2 + lam_M |a'|^2, phi = d/n, psi = d/N.
  * a' = a/sqrt(p) turns the sRF objective into n [ (1/n) sum (y - a'.sigma)^2 + (lam_C p/n) |a'|^2 ], hence
        phi = 1/alpha,   psi = 1/beta,   lam_M = lam_C p/n = lam_C beta/alpha.
    (The user note "lam_Moniri = lam_Cui beta/alpha, phi = 1/alpha, psi = 1/beta" is confirmed.)
  * Student: at r = 0, c = 1 the sRF coefficients (15) are mu_1 = c_1, mu_*^2 = E sigma^2 - c_1^2 = c_{>1}^2,
    mu_0 = E sigma = 0 (centred student) -- the spike theory's (c_1, c_{>1}).
  * Teacher: sRF's unit theta vs the spike theory's beta_* (sphere): same law of the target; c*_1 = E[z s*(z)],
    c*^2 = E s*(z)^2 (centred teacher).
  * Noise: the sRF test error is noiseless (§1 (5)); the spike theory's L_te includes the test noise (§2.4).
    So  eps_sRF + Delta = L_te(F0)  with sigma_eps^2 = Delta (label-noise variance in both).
  * The spike theory needs no gamma at r = 0; the sRF error is gamma-independent there (§4.7), gamma = 0 is used.

Every constant (c_1, c_{>1}, c*_1, c*^2) is computed here independently of the package (mpmath quadrature at
60 digits, or closed forms); the spike side uses resolvent_from_constants at 45 digits and the L_te formula
above written out here (gains(...).baseline_test is printed alongside as a cross-check).  The sRF side is
srf_solve(..., r=0, c=1, gamma=0, dps=30).  Pass: |eps_sRF + Delta - L_te| <= (stated sRF error) + (resolvent
error propagated into L_te) and <= 1e-30 * L_te at every point.  A control shows that the wrong lambda maps
(lam_M = lam_C, lam_M = lam_C/alpha) or swapping phi and psi are off by > 1e-3, so the agreement is a
test of the map.

Usage: python g_r0_equals_spike_rf.py   (about 5 s)
"""

import time
from fractions import Fraction

import mpmath

from onestep_theory.spikes import gains, resolvent_from_constants
from onestep_theory.srf import srf_solve

DPS = 30          # digits asked of both theories
WORK = 60         # working digits of the independent constants


def student_constants(name):
    """(c_1, c_{>1}) of a centred student, independently of the package."""
    pdf = mpmath.npdf
    if name == "tanh":
        c1 = mpmath.quad(lambda z: z * mpmath.tanh(z) * pdf(z), [-mpmath.inf, 0, mpmath.inf])
        m2 = mpmath.quad(lambda z: mpmath.tanh(z) ** 2 * pdf(z), [-mpmath.inf, 0, mpmath.inf])
        return c1, mpmath.sqrt(m2 - c1**2)
    if name == "relu_centered":           # max(z,0) - 1/sqrt(2 pi): c_1 = 1/2, E = 1/2 - 1/(2 pi)
        return mpmath.mpf(1) / 2, mpmath.sqrt(mpmath.mpf(1) / 4 - 1 / (2 * mpmath.pi))
    raise ValueError(name)


def teacher_constants(name):
    """(c*_1, c*^2) of a centred teacher, closed forms."""
    if name == "sin":                     # E[z sin z] = e^{-1/2}, E sin^2 z = (1 - e^{-2})/2
        return mpmath.exp(-mpmath.mpf(1) / 2), (1 - mpmath.exp(-2)) / 2
    if name == "He1":
        return mpmath.mpf(1), mpmath.mpf(1)
    raise ValueError(name)


def spike_rf_test_error(student, teacher, phi, psi, lam_m, noise):
    """L_te(F0) of docs/theory/spike-theory.md §8.1 from the resolvent, with its propagated error."""
    c1, cg = student_constants(student)
    cs1, cs2 = teacher_constants(teacher)
    res = resolvent_from_constants(str(phi), str(psi), str(lam_m), c1, cg, dps=45)
    e = res.errors
    ratio = mpmath.mpf(phi.numerator) / phi.denominator * psi.denominator / psi.numerator
    m1, dm1, dm2 = res.m1, res.dm1_dlam, res.dm2_dlam
    rest = cs2 - cs1**2 + noise
    q_lin, q_nl = ratio * (-dm2) / m1**2, ratio * (-dm1) / m1**2
    L = cs1**2 * q_lin + rest * q_nl
    err = ratio / m1**2 * (cs1**2 * (e["dm2_dlam"] + 2 * abs(dm2) * e["m1"] / m1)
                           + rest * (e["dm1_dlam"] + 2 * abs(dm1) * e["m1"] / m1))
    return L, err


POINTS = [  # student, teacher, alpha, beta, lam (sRF, sum loss), Delta
    ("tanh", "sin", "3/2", "1", "3/10", "0"),
    ("relu_centered", "He1", "1/2", "2", "1/10", "1/10"),
    ("relu_centered", "sin", "3", "1/2", "1/100", "3/10"),
    ("tanh", "He1", "2", "3", "1/2", "1/4"),
]


def main():
    ok = True
    t0 = time.time()
    with mpmath.workdps(WORK):
        for st, te, al, be, la, nv in POINTS:
            A, B, L, D = (Fraction(v) for v in (al, be, la, nv))
            phi, psi, lam_m = 1 / A, 1 / B, L * B / A
            sol = srf_solve(st, te, r=0, c=1, gamma=0, alpha=al, beta=be, lam=la, noise_var=nv, dps=DPS)
            Dm = mpmath.mpf(D.numerator) / D.denominator
            eps = mpmath.mpf(sol.test_error) + Dm
            Lte, eL = spike_rf_test_error(st, te, phi, psi, lam_m, Dm)
            base = gains(st, te, str(phi), str(psi), str(lam_m), ell=1, noise_var=nv, dps=DPS).baseline_test
            gap = abs(eps - Lte)
            tol = mpmath.mpf(sol.abs_error) + eL + mpmath.mpf(10) ** -(WORK - 5)
            agree = -mpmath.log10(gap / Lte) if gap else mpmath.inf
            good = gap <= tol and gap <= mpmath.mpf(10) ** -DPS * Lte
            ok &= bool(good)
            print(f"{st}/{te} alpha={al} beta={be} lam_C={la} Delta={nv}  ->  phi={phi} psi={psi} lam_M={lam_m}")
            print(f"   sRF  eps + Delta = {mpmath.nstr(eps, 34)}   (stated error {float(sol.abs_error):.1e})")
            print(f"   spike L_te(F0)   = {mpmath.nstr(Lte, 34)}   (propagated resolvent error {float(eL):.1e})")
            print(f"   gains().baseline_test = {mpmath.nstr(base, 32)}")
            print(f"   |gap| = {mpmath.nstr(gap, 3)}  ({mpmath.nstr(agree, 4)} digits)  tolerance {mpmath.nstr(tol, 3)}"
                  f"  {'ok' if good else 'FAIL'}")
        # control: the wrong maps give different numbers (so the agreement tests the map)
        st, te, al, be, la, nv = POINTS[1]
        A, B, L, D = (Fraction(v) for v in (al, be, la, nv))
        Dm = mpmath.mpf(D.numerator) / D.denominator
        ref, _ = spike_rf_test_error(st, te, 1 / A, 1 / B, L * B / A, Dm)
        for label, (phi, psi, lam_m) in {"lam_M = lam_C": (1 / A, 1 / B, L),
                                         "lam_M = lam_C/alpha": (1 / A, 1 / B, L / A),
                                         "phi <-> psi": (1 / B, 1 / A, L * B / A)}.items():
            wrong, _ = spike_rf_test_error(st, te, phi, psi, lam_m, Dm)
            off = abs(wrong - ref)
            ok &= bool(off > mpmath.mpf("1e-3"))
            print(f"   control at point 2, {label:20s}: L_te = {mpmath.nstr(wrong, 10)}  (off by {mpmath.nstr(off, 3)})")
    print(f"time {time.time() - t0:.1f} s")
    print("CONCLUSION: at r = 0 the sRF test error equals the spike theory's RF ridge test error L_te(F0) - Delta "
          f"to {DPS} digits at {len(POINTS)} points, with phi = 1/alpha, psi = 1/beta, lam_M = lam_C beta/alpha"
          if ok else "CONCLUSION: FAILED -- the sRF r = 0 limit and the spike theory's RF test error disagree")
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
