"""Precompute Hermite reference constants at 70 digits -> ../hermite_reference.json.

What: c_0..c_6, E sigma^2 and c_>1 of tanh, sigmoid, softplus, relu, sign, erf(x/sqrt2), sin.
Why: tests of onestep_theory.hermite compare against values produced by a method that
     shares no code with the package (plain mpmath Gauss-Legendre on a fixed split of
     the real line at the kink 0, and the He_k by the recurrence written out here).
How long: about 20 s on one core.  Run:  python tests/data/precompute/hermite_reference.py
"""

import json
import time

import mpmath as mp

DPS = 70
SPLIT = [-mp.inf, -40, -20, -10, -5, -2, 0, 2, 5, 10, 20, 40, mp.inf]

FUNCS = {
    "tanh": mp.tanh,
    "sigmoid": lambda z: 1 / (1 + mp.exp(-z)),
    "softplus": lambda z: mp.log1p(mp.exp(z)) if z < 0 else z + mp.log1p(mp.exp(-z)),
    "relu": lambda z: max(z, 0),
    "sign": lambda z: mp.sign(z),
    "erf": lambda z: mp.erf(z / mp.sqrt(2)),
    "sin": mp.sin,
}


def he(k, t):
    a, b = mp.mpf(1), t
    if k == 0:
        return a
    for j in range(1, k):
        a, b = b, t * b - j * a
    return b


def expect(g):
    return mp.quad(lambda z: g(z) * mp.npdf(z), SPLIT, method="gauss-legendre")


def main():
    t0 = time.time()
    out = {"_provenance": {"script": "tests/data/precompute/hermite_reference.py", "dps": DPS,
                           "method": "mpmath gauss-legendre on a fixed split at 0, +-2, +-5, ... (independent of the package)",
                           "mpmath": mp.__version__}}
    with mp.workdps(DPS + 10):
        for name, f in FUNCS.items():
            cs = [expect(lambda z, k=k: f(z) * he(k, z)) / mp.factorial(k) for k in range(7)]
            m2 = expect(lambda z: f(z) ** 2)
            c_gt1 = mp.sqrt(m2 - cs[0] ** 2 - cs[1] ** 2)
            out[name] = {"c": [mp.nstr(c, DPS) for c in cs], "second_moment": mp.nstr(m2, DPS),
                         "c_gt1": mp.nstr(c_gt1, DPS)}
    out["_provenance"]["seconds"] = round(time.time() - t0, 1)
    with open(__file__.replace("precompute/hermite_reference.py", "hermite_reference.json"), "w") as fh:
        json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
