"""Reference bulk densities and support edges of A = Phi^T Phi / p at r = 0 (tests/data/density_reference.json).

What: for two r = 0 settings (student tanh; no atom: alpha = 2, beta = 1, c = 1; with an atom: alpha = 1/2,
beta = 3/2, c = 13/10) the density rho(x) at 34 points each (30 spread over the bulk, 4 within 1e-3 and 1e-6 of
the edges, relative to the bulk's width), at 6 points outside the support, and both edges, at 40 digits.

Why independent: it uses the two-equation system of Mei & Montanari (arXiv:1908.05355, Thm. 2 / Def. 1) for the
linear + nonlinear random-features Gram, not the package's V-equations (docs/theory/srf-theory.md §7):

    nu1 = psi1 / (-xi - nu2 - zeta^2 nu2 / (1 - zeta^2 nu1 nu2)),  nu2 = psi2 / (-xi - nu1 - zeta^2 nu1 / (1 - ...)),

with psi1 = beta, psi2 = alpha, zeta^2 = mu1^2 / mu*^2 of sigma_c(g) = tanh(sqrt(c) g) (mu1, mu*^2 by mpmath.quad,
not by the package's Gaussian engine).  The top-left block of the resolvent of [[0, Z^T], [Z, 0]] with
Z = Phi / (mu* sqrt(d)) gives nu1(xi) = psi1 xi g(xi^2), g the Stieltjes transform of Z^T Z, and
A = (mu*^2 / beta) Z^T Z, hence

    g_A(x) = nu1(xi) / (mu*^2 xi),  xi = sqrt(beta x) / mu*,  rho(x) = Im nu1(xi + i0) / (pi mu*^2 xi).

The system is reduced to a quartic in nu1 by a resultant (sympy); at real xi its roots come from
mpmath.polyroots at 60 digits; the physical root is the one with Im nu1 > 0 and Im nu2 > 0 (nu2 the common root
of the two quadratics in nu2), required to be unique.  The edges are the real roots of the quartic's
discriminant in xi (mpmath.polyroots) at which the number of physical roots changes: a different method from
the package's fold continuation.  Nothing is imported from onestep_theory.

How long: about 10 seconds.
"""

import json
import pathlib

import mpmath
import sympy as sp

DPS = 40
SETTINGS = [
    {"name": "no_atom", "student": "tanh", "c": "1", "alpha": "2", "beta": "1"},
    {"name": "atom", "student": "tanh", "c": "13/10", "alpha": "1/2", "beta": "3/2"},
]

n1, n2, xi, p1, p2, z2 = sp.symbols("n1 n2 xi p1 p2 z2")
_D = 1 - z2 * n1 * n2
E1 = sp.expand(n1 * ((-xi - n2) * _D - z2 * n2) - p1 * _D)
E2 = sp.expand(n2 * ((-xi - n1) * _D - z2 * n1) - p2 * _D)


def quartic():
    """The factor of the resultant of E1, E2 in nu2 that is of degree 4 in nu1 (the other factor is nu1^2 z2^2)."""
    res = sp.factor(sp.resultant(E1, E2, n2))
    facs = [f for f, _ in sp.factor_list(res)[1] if sp.Poly(f, n1).degree() == 4]
    assert len(facs) == 1
    return sp.Poly(facs[0], n1)


def constants(c):
    """mu1 and mu*^2 of tanh(sqrt(c) g), g ~ N(0, 1), by mpmath.quad."""
    c = mpmath.mpf(sp.Rational(c).p) / sp.Rational(c).q
    E = lambda f: mpmath.quad(lambda g: f(g) * mpmath.npdf(g), [-mpmath.inf, 0, mpmath.inf])
    s = lambda g: mpmath.tanh(mpmath.sqrt(c) * g)
    mu0, mu1, m2 = E(s), E(lambda g: g * s(g)), E(lambda g: s(g) ** 2)
    return mu1, m2 - mu0 ** 2 - mu1 ** 2


def physical(Q, x, ms2, beta, vals):
    """The density at x > 0 (0 if no physical root), from the quartic's roots."""
    xv = mpmath.sqrt(beta * x / ms2)
    args = (xv, vals["p1"], vals["p2"], vals["z2"])
    roots = mpmath.polyroots([f(*args) for f in _fun(Q)["q"]], maxsteps=5000, extraprec=200)
    good = []
    for r1 in roots:
        if not mpmath.im(r1) > mpmath.mpf(10) ** (-DPS + 5) * abs(r1):
            continue
        # E1, E2 as quadratics in nu2 at nu1 = r1: their common root
        cands = mpmath.polyroots([f(r1, *args) for f in _fun(Q)["e1"]], maxsteps=200, extraprec=200)
        r2 = min(cands, key=lambda v: abs(_fun(Q)["f2"](r1, v, *args)))
        tol = mpmath.mpf(10) ** (-DPS + 8)
        assert abs(_fun(Q)["f1"](r1, r2, *args)) < tol and abs(_fun(Q)["f2"](r1, r2, *args)) < tol
        if mpmath.im(r2) > 0:
            good.append(r1)
    assert len(good) <= 1, (x, good)
    return mpmath.im(good[0]) / (mpmath.pi * ms2 * xv) if good else mpmath.mpf(0)


_FUN = {}


def _fun(Q):
    """The quartic's coefficients, E1's coefficients in nu2 and E1, E2 as mpmath functions (built once)."""
    if not _FUN:
        sy = [xi, p1, p2, z2]
        _FUN["q"] = [sp.lambdify(sy, co, "mpmath") for co in Q.all_coeffs()]
        _FUN["e1"] = [sp.lambdify([n1] + sy, co, "mpmath") for co in sp.Poly(E1, n2).all_coeffs()]
        _FUN["f1"] = sp.lambdify([n1, n2] + sy, E1, "mpmath")
        _FUN["f2"] = sp.lambdify([n1, n2] + sy, E2, "mpmath")
    return _FUN


def edges(Q, ms2, beta, vals):
    """Real positive roots of the discriminant in xi where the physical root appears or disappears."""
    disc = sp.Poly(sp.discriminant(Q.as_expr(), n1), xi)
    coeffs = [sp.lambdify(list(vals), co, "mpmath")(*vals.values()) for co in disc.all_coeffs()]
    while coeffs and coeffs[0] == 0:
        coeffs.pop(0)
    while coeffs and coeffs[-1] == 0:          # the factor xi^k: xi = 0 is x = 0, not an edge
        coeffs.pop()
    roots = mpmath.polyroots(coeffs, maxsteps=800, extraprec=400)
    out = []
    for r in roots:
        if abs(mpmath.im(r)) > mpmath.mpf(10) ** (-DPS + 5) * abs(r) or not mpmath.re(r) > 0:
            continue
        x = ms2 * mpmath.re(r) ** 2 / beta
        h = x * mpmath.mpf(10) ** -8
        if (physical(Q, x - h, ms2, beta, vals) > 0) != (physical(Q, x + h, ms2, beta, vals) > 0):
            out.append(x)
    return sorted(out)


def main():
    Q = quartic()
    out = {"dps": DPS, "method": "Mei-Montanari nu-system, quartic by resultant, mpmath.polyroots; edges from the "
                                 "discriminant", "settings": []}
    with mpmath.workdps(DPS + 20):
        for s in SETTINGS:
            mu1, ms2 = constants(s["c"])
            al, be = (mpmath.mpf(sp.Rational(s[k]).p) / sp.Rational(s[k]).q for k in ("alpha", "beta"))
            vals = {"p1": be, "p2": al, "z2": mu1 ** 2 / ms2}
            lo, hi = edges(Q, ms2, be, vals)
            width = hi - lo
            xs = [lo + width * (k + mpmath.mpf(1) / 2) / 30 for k in range(30)]
            xs += [lo + width * mpmath.mpf(10) ** -3, lo + width * mpmath.mpf(10) ** -6,
                   hi - width * mpmath.mpf(10) ** -3, hi - width * mpmath.mpf(10) ** -6]
            xs = [mpmath.mpf(float(x)) for x in xs]         # binary points: the package takes float x exactly
            outside = [mpmath.mpf(float(v)) for v in (lo / 2, lo * (1 - mpmath.mpf(10) ** -4), hi * 1.0001,
                                                      hi * 1.5, 3 * hi, -1.0)]
            rho = [physical(Q, x, ms2, be, vals) for x in xs]
            rho_out = [physical(Q, x, ms2, be, vals) if x > 0 else mpmath.mpf(0) for x in outside]
            assert all(v > 0 for v in rho) and all(v == 0 for v in rho_out)
            out["settings"].append(dict(s, edges=[mpmath.nstr(v, DPS) for v in (lo, hi)],
                                        x=[mpmath.nstr(v, 25) for v in xs],
                                        density=[mpmath.nstr(v, DPS) for v in rho],
                                        x_outside=[mpmath.nstr(v, 25) for v in outside],
                                        mu1=mpmath.nstr(mu1, DPS), mustar2=mpmath.nstr(ms2, DPS)))
    path = pathlib.Path(__file__).resolve().parents[1] / "density_reference.json"
    path.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
