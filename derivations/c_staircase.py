"""(c) The staircase Delta_1 <= Delta_2 <= ... <= Delta_8 (nested column spaces, spike-theory.md §7.4).

Random configurations (phi, psi, lam, noise, student constants) with a teacher having several Hermite
components; every Delta_l must be non-decreasing in l.  Also: for He1 + He2/sqrt2 + He3/sqrt6,
Delta_4 > Delta_3 although the teacher has no degree 4 (u^4 separates He_2 from the constant), and for
a purely linear teacher (Setting 1) Delta_l = Delta_1 for all l.
"""

import sys
import warnings

import mpmath
import numpy as np

from onestep_theory.spikes import gains


def main():
    rng = np.random.default_rng(2024)
    worst = 0.0
    ok = True
    teacher = "He1 + He2/sqrt(2) + He3/sqrt(6) + He4/5"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(12):
            phi, psi, lam, nv = (f"{v:.3f}" for v in (rng.uniform(0.2, 3), rng.uniform(0.2, 3), rng.uniform(0.01, 2),
                                                       rng.uniform(0, 1)))
            g = gains("He1 + He2/3 + He3/5", teacher, phi, psi, lam, ell=8, noise_var=nv, dps=25,
                      absent_spikes="formal")
            steps = [g.delta[k + 1] - g.delta[k] for k in range(7)]
            worst = min(worst, float(min(steps) / g.delta[-1]))
            ok &= all(s >= -mpmath.mpf(10) ** -20 for s in steps)
        g = gains("relu_centered", "He1 + He2/sqrt(2) + He3/sqrt(6)", "1/2", "1/2", "1/10", ell=4, noise_var="1/4",
                  absent_spikes="formal", dps=25)
        grew = g.delta[3] > g.delta[2] * (1 + mpmath.mpf(10) ** -10)
        s1 = gains("relu_centered", "He1", "1/2", "1/2", "1/10", ell=6, noise_var=1, absent_spikes="formal", dps=25)
        flat = all(abs(v - s1.delta[0]) < mpmath.mpf(10) ** -20 for v in s1.delta)
    print(f"12 random configurations, ell <= 8: smallest relative step {worst:.3e} (must be >= 0)")
    print(f"Delta_3 = {mpmath.nstr(g.delta[2], 12)}, Delta_4 = {mpmath.nstr(g.delta[3], 12)} (Delta_4 > Delta_3: {grew})")
    print(f"Setting 1: Delta_1..Delta_6 all equal: {flat}")
    ok &= bool(grew) and flat
    print("CONCLUSION:", "the staircase holds" if ok else "STAIRCASE VIOLATED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
