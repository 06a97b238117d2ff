"""Precompute resolvent reference values at 60 digits -> ../resolvent_reference.json.

What: m1, m2, dm1/dlam, dm2/dlam at 14 points (phi, psi, lam, c1, c_>1), including the rows of
      spike-theory.md §11 and points with phi/psi far from 1 and small lambda.
Why:  the package solves the quartic of §6.3 with mp.polyroots and polishes by Newton on (G1, G2);
      this script shares none of that: it solves [AP20] (S67)/(S68) directly with mp.findroot (started
      from the large-lambda asymptotics and continued down in lambda) and takes the lambda-derivatives by
      central differences with step 1e-20.
How long: about 5 s.  Run:  python tests/data/precompute/resolvent_reference.py
"""

import json
import time

import mpmath as mp

DPS = 60
POINTS = [  # phi, psi, lam, c1, c_gt1
    ("1/2", "1/2", "1/10", "1", "1/2"),
    ("1/2", "1", "1/2", "1", "1/2"),
    ("1", "2", "1/2", "1", "1/2"),
    ("1", "2", "1/2", "0.6057055096021588255835402275558804394262092505776949023788767472", "0.1655757410837416640309975838002436908777969559912300545585"),
    ("1/2", "1/2", "1/10", "0.6057055096021588255835402275558804394262092505776949023788767472", "0.1655757410837416640309975838002436908777969559912300545585"),
    ("3", "1/5", "1/100", "1/2", "3/10"),
    ("1/5", "3", "1/100", "1/2", "3/10"),
    ("1/30", "30", "1/1000", "1", "1"),
    ("30", "1/30", "5", "2", "1/10"),
    ("2", "2", "2", "1", "0"),
    ("1", "1", "1/10000", "1", "1/2"),
    ("7/3", "5/11", "3/7", "3/2", "2"),
    ("1/2", "1/2", "1/10", "1/2", "1/100"),
    ("10", "10", "10", "3", "3"),
]


def frac(s):
    return mp.mpf(mp.fraction(*map(int, s.split("/")))) if "/" in s else mp.mpf(s)


def solve(phi, psi, lam, c1, cg, lam_start=None, tol=None, per_octave=4):
    """[AP20] (S67)/(S68) by mp.findroot in log variables, continued down in lambda from ``lam_start``
    (default lam * 2^24) where the large-lambda asymptotics start it; ``per_octave`` steps per octave.  Also used by
    tests/test_hostile.py as the independent root of the resolvent fuzz test."""
    zeta, eta = c1**2, c1**2 + cg**2

    def eqs(gam):
        # in log variables t_i = exp(u_i), divided by t1^2: the trivial root (0, 0) is at -infinity
        def f(u1, u2):
            t1, t2 = mp.exp(u1), mp.exp(u2)
            s67 = phi * (zeta * t1 * t2 + phi * (t2 - t1)) + zeta * t1 * t2 * psi * (gam * t1 - 1)
            s68 = (t2 - t1) * phi * (zeta * (t2 - t1) + eta * t1) - zeta * t1 * t2 * (gam * t1 - 1)
            return [s67 / t1**2, s68 / t1**2]
        return f

    # continuation in lambda from a large value where the asymptotics are accurate
    octaves = 24 if lam_start is None else max(1, int(mp.ceil(mp.log(lam_start / lam, 2))))
    lams = [lam * mp.mpf(2) ** (k / mp.mpf(per_octave)) for k in range(per_octave * octaves, -1, -1)]
    L = lams[0]
    x = [mp.log(phi / psi * (1 / L - phi / psi * eta / L**2)),
         mp.log(phi / psi * (1 / L - (zeta * (1 + phi) + cg**2 * phi) / psi / L**2))]
    for L in lams:
        x = mp.findroot(eqs(L * psi / phi), x, verify=False, maxsteps=200)
        x = [x[0], x[1]]
    res = max(abs(v) for v in eqs(lam * psi / phi)(*x))
    assert res < (mp.mpf(10) ** (-(DPS + 15)) if tol is None else tol), res
    return [mp.exp(x[0]), mp.exp(x[1])]


def main():
    t0 = time.time()
    out = {"_provenance": {"script": "tests/data/precompute/resolvent_reference.py", "dps": DPS,
                           "method": "mp.findroot on [AP20] (S67)/(S68), lambda-continuation; central differences h=1e-20",
                           "mpmath": mp.__version__}, "points": []}
    with mp.workdps(DPS + 30):
        for pt in POINTS:
            phi, psi, lam, c1, cg = map(frac, pt)
            m = solve(phi, psi, lam, c1, cg)
            h = mp.mpf(10) ** -20
            mp_ = solve(phi, psi, lam + h, c1, cg)
            mm = solve(phi, psi, lam - h, c1, cg)
            d = [(a - b) / (2 * h) for a, b in zip(mp_, mm)]
            out["points"].append({"phi": pt[0], "psi": pt[1], "lam": pt[2], "c1": pt[3], "c_gt1": pt[4],
                                  "m1": mp.nstr(m[0], DPS), "m2": mp.nstr(m[1], DPS),
                                  "dm1_dlam": mp.nstr(d[0], 35), "dm2_dlam": mp.nstr(d[1], 35)})
    out["_provenance"]["seconds"] = round(time.time() - t0, 1)
    with open(__file__.replace("precompute/resolvent_reference.py", "resolvent_reference.json"), "w") as fh:
        json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
