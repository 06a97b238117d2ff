"""Benchmarks of the hot paths against naive baselines implemented here (not run by the test suite).

    python benchmarks/run_benchmarks.py [--quick]

1. m1, m2: vectorised quartic + Newton (resolvent_sweep) vs scipy.optimize.fsolve on (G1, G2) per point
   (also counts how often fsolve, started at (1, 1), lands on the trivial root (0, 0) or a negative root).
2. sRF learning curve: srf_curve (Gauss-Hermite nodes, warm starts) vs nested scipy.integrate.quad with a
   plain 0.5-damped iteration at tolerance 1e-4 (the approach of the authors' notebook), per alpha point.
3. Ridge lambda path (20 values): one eigendecomposition (Ridge) vs an explicit inverse per lambda.
4. Precision: achieved digits per second at 15/30/50 digits (resolvent, Hermite coefficient of tanh,
   sRF fixed point at 20/30 digits).
5. Certified accuracy (issue 9 targets): an sRF point with 15/30/50 certified digits from cold caches, the
   float64 point with a verified error <= 1e-10 (warm: rules cached, warm start), the resolvent at 200
   digits from cold caches, and the float64 error of the eta = 50 and ReLU-teacher points against 25 digits.
"""

import argparse
import functools
import math
import time
import warnings

import mpmath
import numpy as np
from scipy import integrate, optimize

warnings.simplefilter("ignore")


def timeit(fn, repeat=3):
    best = math.inf
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def bench_resolvent(npts):
    from onestep_theory.spikes.resolvent import resolvent_sweep

    rng = np.random.default_rng(0)
    P, S = np.exp(rng.uniform(np.log(0.1), np.log(10), (2, npts)))
    L = np.exp(rng.uniform(np.log(1e-3), np.log(10), npts))
    C1, CG = rng.uniform(0.2, 2, npts), rng.uniform(0.05, 2, npts)
    resolvent_sweep(P[:2], S[:2], L[:2], C1[:2], CG[:2])
    t_ours, (m1, m2, *_r) = timeit(lambda: resolvent_sweep(P, S, L, C1, CG))

    def naive():
        out, bad = [], 0
        for p, s, l, c1, cg in zip(P, S, L, C1, CG):
            def G(m):
                a, b = m
                Psi = c1**2 * a * b * (l * s * a / p - 1)
                return [p * (a - b) * (cg**2 * a + c1**2 * b) + Psi, p / s * (c1**2 * a * b + p * (b - a)) + Psi]
            sol = optimize.fsolve(G, [1.0, 1.0], xtol=1e-12)
            bad += not (sol[0] > 1e-8 and sol[1] > 1e-8)
            out.append(sol)
        return np.array(out), bad

    t_naive, (sols, bad) = timeit(naive, repeat=1)
    ok = np.abs(sols[:, 0] - m1) < 1e-8 * np.abs(m1)
    print(f"[1] m1/m2 on {npts} random points: ours {t_ours * 1e3:.1f} ms, fsolve {t_naive * 1e3:.0f} ms "
          f"-> {t_naive / t_ours:.0f}x; fsolve at the trivial/negative root in {bad}/{npts} points, "
          f"agrees with ours in {int(ok.sum())}/{npts}")


def naive_srf_point(alpha, r, c, gamma, beta=1.0, lam=0.1, tol=1e-4):
    """Nested scipy quad, plain 0.5-damped iteration (notebook approach), F3 prior by quad over MP."""
    rho_t = math.sqrt(max(0.0, 1 - gamma**2))
    sc = math.sqrt(c)
    inf = np.inf
    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731

    @functools.lru_cache(maxsize=None)
    def inner(k):
        f = lambda z, p: math.tanh(r * k + sc * z) ** p * phi(z)  # noqa: E731
        e0 = integrate.quad(lambda z: f(z, 1), -inf, inf)[0]
        e1 = integrate.quad(lambda z: z * f(z, 1), -inf, inf)[0] / sc
        e2 = integrate.quad(lambda z: f(z, 2), -inf, inf)[0]
        g = lambda z, p: math.sin(gamma * k + rho_t * z) ** p * phi(z)  # noqa: E731
        h = integrate.quad(lambda z: g(z, 1), -inf, inf)[0]
        h1 = integrate.quad(lambda z: z * g(z, 1), -inf, inf)[0]
        h2 = integrate.quad(lambda z: g(z, 2), -inf, inf)[0]
        return e0, e1, max(0.0, e2 - e0**2 - c * e1**2), h, h1, h2

    xm, xp = c * (1 - math.sqrt(beta)) ** 2, c * (1 + math.sqrt(beta)) ** 2
    dens = lambda x: math.sqrt(max(0.0, (xp - x) * (x - xm))) / (2 * math.pi * beta * c * x)  # noqa: E731
    x = dict(m=0.0, th=0.0, ps=0.0, q1=0.1, q2=0.1, V1=1.0, V2=1.0)
    for it in range(1, 500):
        def E(fn):
            return integrate.quad(lambda k: fn(k, *inner(k)) * phi(k), -inf, inf)[0]
        V = lambda m1, ms: m1**2 * x["V1"] + ms * x["V2"]  # noqa: E731
        mb = lambda k, m0, m1: m0 * x["m"] + m1 * k * x["th"]  # noqa: E731
        B = lambda k, m0, m1, ms, h, h1, h2: (h2 - 2 * mb(k, m0, m1) * h + mb(k, m0, m1) ** 2  # noqa: E731
                                              - 2 * m1 * x["ps"] * h1 + m1**2 * x["q1"] + ms * x["q2"])
        a_b, a_s = alpha / beta, alpha / math.sqrt(beta)
        hV1 = a_b * E(lambda k, m0, m1, ms, h, h1, h2: m1**2 / (1 + V(m1, ms)))
        hV2 = a_b * E(lambda k, m0, m1, ms, h, h1, h2: ms / (1 + V(m1, ms)))
        hq1 = a_b * E(lambda k, *a: a[1] ** 2 * B(k, *a) / (1 + V(a[1], a[2])) ** 2)
        hq2 = a_b * E(lambda k, *a: a[2] * B(k, *a) / (1 + V(a[1], a[2])) ** 2)
        hth = a_s * E(lambda k, m0, m1, ms, h, h1, h2: k * m1 * (h - mb(k, m0, m1)) / (1 + V(m1, ms)))
        hps = a_s * E(lambda k, m0, m1, ms, h, h1, h2: m1 * h1 / (1 + V(m1, ms)))
        m_new = (E(lambda k, m0, m1, ms, h, h1, h2: m0 * (h - m1 * k * x["th"]) / (1 + V(m1, ms)))
                 / E(lambda k, m0, m1, ms, h, h1, h2: m0 * m0 / (1 + V(m1, ms))))
        S = lambda v: lam + hV1 * v + hV2  # noqa: E731
        I = lambda fn: integrate.quad(lambda v: fn(v) * dens(v), xm, xp)[0]  # noqa: E731
        V1n, V2n = I(lambda v: v / S(v)), I(lambda v: 1 / S(v))
        J1, J2, K0 = I(lambda v: v * v / S(v) ** 2), I(lambda v: v / S(v) ** 2), I(lambda v: 1 / S(v) ** 2)
        D = 1 - beta * hV1 * V1n
        new = dict(m=m_new, th=math.sqrt(beta) * hth * V1n / D, ps=math.sqrt(beta) * hps * V1n,
                   q1=hq1 * J1 + hq2 * J2 + hps**2 * J1 + hth**2 * (J1 - beta * V1n**2) / D**2,
                   q2=hq1 * J2 + hq2 * K0 + hps**2 * J2 + hth**2 * J2 / D**2, V1=V1n, V2=V2n)
        diff = max(abs(new[k] - x[k]) for k in ("q1", "m", "q2", "th", "ps"))
        x = {k: 0.5 * x[k] + 0.5 * new[k] for k in x}
        if diff < tol:
            break
    eps = E(lambda k, m0, m1, ms, h, h1, h2: h2 - 2 * mb(k, m0, m1) * h + mb(k, m0, m1) ** 2
            - 2 * m1 * x["ps"] * h1 + m1**2 * x["q1"] + ms * x["q2"])
    return eps, it


def bench_srf(points, naive_points):
    from onestep_theory.srf.features.mapping import srf_params
    from onestep_theory.srf import srf_curve

    r, c, g = srf_params("tanh", "sin", 20, 3).floats()
    alphas = np.linspace(0.2, 3, points)
    srf_curve("tanh", "sin", alphas[:2], r=r, c=c, gamma=g, beta=1, lam=0.1)
    t_ours, sols = timeit(lambda: srf_curve("tanh", "sin", alphas, r=r, c=c, gamma=g, beta=1, lam=0.1))
    t = time.perf_counter()
    naive = [naive_srf_point(float(a), r, c, g) for a in np.linspace(0.2, 3, naive_points)]
    t_naive = (time.perf_counter() - t) / naive_points
    ours_at = srf_curve("tanh", "sin", np.linspace(0.2, 3, naive_points), r=r, c=c, gamma=g, beta=1, lam=0.1)
    gap = max(abs(e - float(s.test_error)) for (e, _), s in zip(naive, ours_at))
    print(f"[2] sRF learning curve, {points} points: ours {t_ours:.3f} s ({t_ours / points * 1e3:.1f} ms/point, "
          f"residual 1e-10); naive nested quad, damping 0.5, tol 1e-4: {t_naive:.1f} s/point "
          f"-> {t_naive / (t_ours / points):.0f}x per point; max |eps_g difference| {gap:.1e} (naive stops at 1e-4)")


def bench_ridge(n, lams=20):
    from onestep_theory.simulate import Ridge

    rng = np.random.default_rng(0)
    F = rng.standard_normal((n, n)) / math.sqrt(n)
    y = rng.standard_normal(n)
    mus = np.geomspace(1e-3, 10, lams)

    def ours():
        rg = Ridge(F, y, n_mu=lams)
        return [rg.coef(m) for m in mus]

    def naive():
        G = F.T @ F
        return [np.linalg.inv(G + m * np.eye(n)) @ (F.T @ y) for m in mus]

    t1, a = timeit(ours, 1)
    t2, b = timeit(naive, 1)
    err = max(np.max(np.abs(u - v)) / np.max(np.abs(v)) for u, v in zip(a, b))
    print(f"[3] ridge path, {lams} lambdas, {n}x{n}: one eigendecomposition {t1:.2f} s, explicit inverses {t2:.2f} s "
          f"-> {t2 / t1:.1f}x; max relative difference {err:.1e}")


def bench_digits():
    from onestep_theory.hermite import Activation
    from onestep_theory.spikes.resolvent import resolvent_from_constants
    from onestep_theory.srf import srf_solve

    resolvent_from_constants(1, 2, "1/2", 1, "1/2", dps=15)
    for dps in (15, 30, 50):
        t, _ = timeit(lambda: resolvent_from_constants(1, 2, "1/2", 1, "1/2", dps=dps))
        t2, _ = timeit(lambda: Activation(Activation.from_any("tanh").expr * 1, False, f"t{dps}{time.time()}")
                       .coeffs_mp(5, dps), 1)
        print(f"[4] dps={dps}: resolvent {t * 1e3:.1f} ms ({dps / t:.0f} digits/s); tanh c_0..c_5 "
              f"{t2 * 1e3:.0f} ms ({dps / t2:.0f} digits/s)")
    for dps in (20, 30):
        t, s = timeit(lambda: srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=1, beta=1, lam="1/10", dps=dps), 1)
        print(f"[4] sRF fixed point at {dps} digits: {t:.1f} s ({dps / t:.2f} digits/s), eps_g = "
              f"{mpmath.nstr(s.test_error, dps)}")


def _cold():
    """Clear every cache the package registers (rules, setups, Hermite constants, symbolic builds); SymPy's own stay."""
    from onestep_theory.core.caches import clear_caches

    clear_caches()          # every registered cache (core.caches): rules, setups, Hermite constants


def bench_certified():
    from onestep_theory.spikes.resolvent import resolvent
    from onestep_theory.srf import srf_solve

    kw = dict(alpha0=20, eta=3, alpha=1, beta=1)
    srf_solve("tanh", "sin", lam="1/10", **kw)            # one-time symbolic work (parsing, closed forms)
    for dps in (15, 30, 50):
        _cold()
        t = time.perf_counter()
        s = srf_solve("tanh", "sin", lam="1/10", dps=dps, **kw)
        t = time.perf_counter() - t
        print(f"[5] sRF point, {dps} certified digits (cold caches): {t:.2f} s; digits vouched {s.digits}, "
              f"abs_error {s.abs_error:.1e}")
    base = srf_solve("tanh", "sin", lam="1/10", **kw)
    t, s = timeit(lambda: srf_solve("tanh", "sin", lam="0.101", init=base.state(), **kw), 5)
    print(f"[5] sRF point, float64 with verified error (warm): {t * 1e3:.1f} ms; error {s.abs_error:.1e} "
          f"({s.abs_error / float(s.test_error):.1e} relative)")
    _cold()
    t = time.perf_counter()
    resolvent("tanh", 1, 2, "1/2", dps=200)
    print(f"[5] resolvent m1, m2 at 200 digits (cold caches): {time.perf_counter() - t:.2f} s")
    for label, teacher, a0, eta in (("eta=50", "sin", 20, 50), ("relu teacher", "relu_centered", "inf", 3)):
        f = srf_solve("tanh", teacher, alpha0=a0, eta=eta, alpha=1, beta=1, lam="1/10")
        r = srf_solve("tanh", teacher, alpha0=a0, eta=eta, alpha=1, beta=1, lam="1/10", dps=25)
        rel = abs(float(f.test_error) - float(r.test_error)) / float(r.test_error)
        print(f"[5] {label}: float64 {float(f.test_error):.12g}, 25 digits {mpmath.nstr(r.test_error, 16)}; "
              f"relative error {rel:.1e} (stated {f.abs_error / float(f.test_error):.1e})")


def bench_root_finding():
    """[6] float64 saddle point: evaluations of the map F by the default solver (hybr, then the fallbacks) against
    the damped fixed point alone
    (to the same 1e-12 relative), from the cold start, on the level-0 rules."""
    import numpy as np

    from onestep_theory.srf import bounds, srf_params, srf_setup
    from onestep_theory.srf.single import solvers
    from onestep_theory.srf.single.saddle import MapOptions, fp_map

    calls = [0]

    def counted(*a, **k):
        calls[0] += 1
        return fp_map(*a, **k)

    solvers.fp_map = counted
    b = bounds("tanh", "sin", alpha0="inf", eta="0.05")
    pa = srf_params("tanh", "sin", 20, 3).floats()
    cases = [("case A (tanh/sin, eta~=3)", pa, 1, 1, 0.1), ("beta=2, lam=1e-3", pa, 1, 2, 1e-3),
             ("small r (eta~=0.05)", (float(b.r), float(b.c), float(b.gamma)), 2, 1, 0.01)]
    x0 = (0.0, 0.0, 0.0, 0.1, 0.1, 1.0, 1.0)
    for label, (r, c, g), al, be, la in cases:
        S = srf_setup("tanh", "sin", r, c, g)
        out = []
        for method in ("default", "damped"):
            o = MapOptions(al, be, la, 0.0)
            calls[0] = 0
            try:
                with np.errstate(all="ignore"):
                    if method == "default":
                        x, _, _, status = solvers.solve_float(S, o, x0, damping=0.5, tol=1e-12, max_iter=20000,
                                                              continuation="auto", conv_keys=None, fallback=True,
                                                              first=True)
                    else:
                        x, _, _, status = solvers.iterate(x0, S, o, damping=0.5, tol=1e-12, max_iter=20000)
            except Exception as exc:  # noqa: BLE001
                status = type(exc).__name__
            out.append(f"{method}: {calls[0]} evaluations ({status})")
        print(f"[6] {label}: " + "; ".join(out))
    solvers.fp_map = fp_map


def bench_user_path():
    """[7] The path a user types (issue 21): (alpha0, eta~) through the mapping, every number printed with its
    error (to_dict), at float64 (warm), 15, 30 and 50 digits (cold numeric caches), and the resolvent at 200."""
    from onestep_theory.spikes.resolvent import resolvent
    from onestep_theory.srf import srf_solve

    kw = dict(alpha0=20, eta=3, alpha=1, beta=1, lam="1/10")
    srf_solve("tanh", "sin", **kw).to_dict()
    t, _ = timeit(lambda: srf_solve("tanh", "sin", **kw).to_dict(), 10)
    print(f"[7] srf from (alpha0, eta), float64, printed with errors (warm): {t * 1e3:.1f} ms")
    for dps in (15, 30, 50):
        _cold()
        t0 = time.perf_counter()
        srf_solve("tanh", "sin", dps=dps, **kw).to_dict()
        t1 = time.perf_counter()
        srf_solve("tanh", "sin", dps=dps, **kw).to_dict()
        print(f"[7] srf from (alpha0, eta), {dps} digits: cold {t1 - t0:.2f} s, warm {time.perf_counter() - t1:.2f} s")
    _cold()
    t0 = time.perf_counter()
    resolvent("tanh", 1, 2, "1/2", dps=200).to_dict()
    print(f"[7] resolvent at 200 digits, printed with errors (cold): {time.perf_counter() - t0:.2f} s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes")
    ap.add_argument("--user-path", action="store_true", help="only section [7], the user's path (issue 21)")
    a = ap.parse_args()
    if a.user_path:
        bench_user_path()
        return
    bench_resolvent(200 if a.quick else 1000)
    bench_srf(50, 1 if a.quick else 2)
    bench_ridge(800 if a.quick else 2000)
    bench_digits()
    bench_certified()
    bench_root_finding()
    bench_user_path()


if __name__ == "__main__":
    main()
