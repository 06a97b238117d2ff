"""The single-group spectrum on the real axis (docs/theory/srf-theory.md §7.1): density, edges, atom.

References: ``tests/data/density_reference.json`` (``tests/data/precompute/density_reference.py``: the Mei–Montanari
two-equation system reduced to a quartic, mpmath.polyroots at 60 digits, edges from its discriminant — no code
shared with the package), exact identities (mass and first moment of the bulk), and the old η → 0
extrapolation at r > 0 (a different method, looser).
"""

from __future__ import annotations

import fractions
import json
import pathlib

import mpmath
import numpy as np
import pytest

from onestep_theory.cli import main
from onestep_theory.srf.spectral.spectrum import density_real, stieltjes

REF = json.loads((pathlib.Path(__file__).parent / "data" / "density_reference.json").read_text())["settings"]
F = fractions.Fraction


def _mp(v):
    return mpmath.mpf(v) if not isinstance(v, (int, float)) else mpmath.mpf(float(v))


@pytest.fixture(scope="module")
def f64():
    out = {}
    for s in REF:
        xs = [float(x) for x in s["x"] + s["x_outside"]]
        out[s["name"]] = density_real("tanh", xs, r=0, c=s["c"], alpha=s["alpha"], beta=s["beta"])
    return out


@pytest.mark.parametrize("s", REF, ids=[s["name"] for s in REF])
def test_float64_density_and_edges_against_mei_montanari(f64, s):
    """>= 12 digits at the 30 bulk points of each setting (60 in all), the claim (|value - ref| <= error) at all
    34 inside points (4 within 1e-3 and 1e-6 of an edge) and at both edges (>= 12 digits); exactly 0 outside."""
    rho, err, edges, eerr = f64[s["name"]]
    n_in = len(s["x"])
    with mpmath.workdps(50):
        for k, (v, e, ref) in enumerate(zip(rho[:n_in], err[:n_in], s["density"])):
            gap = abs(_mp(v) - mpmath.mpf(ref))
            assert gap <= e, (s["x"][k], v, e, ref)
            if k < 30:
                assert gap <= 1e-12 * mpmath.mpf(ref), (s["x"][k], v, ref)
                assert e <= 1e-11 * float(ref)              # and the error vouches for it
        assert rho[n_in:] == [0.0] * len(s["x_outside"]) and err[n_in:] == [0.0] * len(s["x_outside"])
        assert len(edges) == 2
        for v, e, ref in zip(edges, eerr, s["edges"]):
            gap = abs(_mp(v) - mpmath.mpf(ref))
            assert gap <= e and gap <= 1e-12 * mpmath.mpf(ref) and e <= 1e-12 * mpmath.mpf(ref), (v, e, ref)


def _parse_text(out):
    """(x, density, error) rows and [(edge, error)] from the printed text of ``spectrum``."""
    lines = out.splitlines()
    edges = [tuple(p.split(" +/- ")) for p in lines[1].split(": ", 1)[1].split(",  ")]
    start = next(i for i, ln in enumerate(lines) if ln.split()[:2] == ["x", "density"]) + 1
    rows = []
    for ln in lines[start:]:
        if ln.startswith("V2("):
            break
        rows.append(tuple(ln.split()))
    return rows, edges


def _contains(text, err_text, ref) -> bool:
    return abs(F(text) - F(mpmath.nstr(ref, 45))) <= F(err_text)


@pytest.mark.parametrize("dps", [None, 15, pytest.param(30, marks=pytest.mark.slow)])
def test_cli_text_and_json_claims_at_r0(capsys, dps):
    """The printed text and JSON of ``spectrum`` at r = 0 (setting with an atom): each printed density and edge ± its
    printed error contains the Mei–Montanari reference; with --dps D the printed errors (the rounding to D digits
    included) are <= 10^-(D-1) relative; a point typed as the float nearest an edge prints 0 ± an error at least
    the true density there (sqrt law from the reference at 1e-6 of the edge); x <= 0 and beyond the bulk print 0."""
    s = REF[1]
    pick = [0, 7, 15, 29, 30, 32]
    with mpmath.workdps(50):
        ref = [mpmath.mpf(s["density"][k]) for k in pick]
    xs = [float(s["x"][k]) for k in pick]
    hi = float(s["edges"][1])
    if dps and F(hi) < F(s["edges"][1]):      # at --dps the nearest float outside prints 0 +/- 0
        hi = float(np.nextafter(hi, np.inf))
    xs_all = xs + [hi, float(s["x_outside"][3]), -1.0]
    argv = ["spectrum", "--student", "tanh", "--r", "0", "--c", s["c"], "--gamma", "1", "--alpha", s["alpha"],
            "--beta", s["beta"], "--z", ",".join(str(F(x)) for x in xs_all), "--lam", "1/2"]   # the binary points
    argv += [] if dps is None else ["--dps", str(dps)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    rows, edges = _parse_text(out)
    assert main(argv + ["--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    with mpmath.workdps(50):
        for (x, v, e), jv, je, r, k in zip(rows, d["density"], d["errors"]["density"], ref, pick):
            assert (v, e) == (jv, je) and F(x) == F(xs[pick.index(k)])      # x printed as typed: the point
            assert _contains(v, e, r), (x, v, e, r)
            if dps:
                assert F(e) <= F(10) ** -(dps - 1) * F(v), (x, v, e)      # printed to D digits, rounding included
        for (v, e), jv, je, r in zip(edges, d["edges"], d["errors"]["edges"], s["edges"]):
            assert (v, e) == (jv, je) and _contains(v, e, mpmath.mpf(r)), (v, e, r)
            if dps:
                assert F(e) <= F(10) ** -(dps - 1) * F(v)
        # the float nearest the top edge: true density <= rho(1e-6 w) sqrt(delta / 1e-6 w) (sqrt edge), 1 % slack
        v, e = rows[len(xs)][1:]
        width = mpmath.mpf(s["edges"][1]) - mpmath.mpf(s["edges"][0])
        delta = max(mpmath.mpf(s["edges"][1]) - mpmath.mpf(hi), 0)
        bound = mpmath.mpf(s["density"][33]) * mpmath.sqrt(delta / (width * mpmath.mpf(10) ** -6)) * 1.01
        assert F(v) == 0 and F(e) >= F(mpmath.nstr(bound, 20)), (v, e, bound)
        assert dps is None or F(e) == 0
        assert [r[1:] for r in rows[len(xs) + 1:]] == [("0", "0"), ("0", "0")]
        assert _contains(d["atom_at_zero"], d["errors"]["atom_at_zero"], mpmath.mpf(2) / 3)


def test_mass_and_mean_of_the_bulk_at_r_positive():
    """Exact identities at r > 0: the bulk's mass is min(alpha/beta, 1) (1 - atom), its mean is
    (alpha/beta) E_kappa[c mu1^2 + mu*^2] (the z^-2 term of V2 at large z), and int rho / (x + lam) = V2(-lam)
    computed by the other solver at z = -lam (measured: all three to ~5e-15); by Gauss–Legendre in theta with
    x = e- + (e+ - e-)(1 - cos theta)/2 (smooth at the square-root edges); tolerances 1e-12 (mass, inversion),
    1e-9 (mean, against an independent Gauss–Hermite κ-rule)."""
    from onestep_theory.srf.features.cge import cge_values

    kw = dict(r="1.1", c="1.02", alpha=2, beta="1/2")
    _, _, edges, _ = density_real("tanh", [], **kw)
    assert len(edges) == 2
    lo, hi = edges
    th, wt = np.polynomial.legendre.leggauss(60)
    th = (th + 1) * np.pi / 2
    xs = lo + (hi - lo) * (1 - np.cos(th)) / 2
    rho, err, _, _ = density_real("tanh", xs, **kw)
    jac = (hi - lo) * np.sin(th) / 2 * np.pi / 2
    mass = float(np.sum(wt * np.array(rho) * jac))
    mean = float(np.sum(wt * np.array(rho) * xs * jac))
    assert abs(mass - 1) <= 1e-12
    kap, wk = np.polynomial.hermite_e.hermegauss(80)          # an independent κ-rule (Gauss–Hermite)
    cg = cge_values("tanh", "1.1", "1.02", kap)
    ek = float(np.sum(wk * (1.02 * np.array(cg.mu1, dtype=float) ** 2 + np.array(cg.mustar2, dtype=float))))
    assert abs(mean - 4 * ek / np.sqrt(2 * np.pi)) <= 1e-9 * mean
    # the Stieltjes inversion: int rho(x) / (x + lam) dx = V2(-lam), the latter by the damped fixed point at the
    # real negative z = -lam (another solver; no atom here, alpha > beta)
    for lam in (0.5, 2.0):
        g = float(np.sum(wt * np.array(rho) / (xs + lam) * jac))
        assert abs(g - stieltjes("tanh", -lam, **kw)[1].real) <= 1e-12 * g


def test_r_positive_against_the_eta_extrapolation():
    """At r > 0 the real-axis density agrees with the old method (Richardson η → 0 from η, η/2, η/4 of
    Im V2(x + iη)/π) within that method's error |R2 - R1| (3-4 digits), at three bulk points; and is exactly 0
    beyond the top edge."""
    kw = dict(r="1.1", c="1.02", alpha=2, beta="1/2")
    xs = [0.5, 1.5, 3.0]
    rho, err, edges, _ = density_real("tanh", xs + [edges_beyond := 5.0], **kw)
    assert rho[-1] == 0.0 and edges[-1] < edges_beyond
    eta = 1e-3 * 3.0
    for x, v in zip(xs, rho):
        g = [stieltjes("tanh", complex(x, eta / 2 ** k), **kw)[1].imag / np.pi for k in range(3)]
        r1, r2 = 2 * g[1] - g[0], 2 * g[2] - g[1]
        assert abs(v - r2) <= abs(r2 - r1) + 1e-9, (x, v, r2, r1)


@pytest.mark.slow
def test_r_positive_against_simulated_eigenvalues():
    """The distribution function of the bulk, int_{e-}^x rho (Gauss–Legendre in theta, x = e- + (e+ - e-)(1 - cos
    theta)/2), against the fraction of simulated eigenvalues of A = Phi^T Phi / p below x (d = 400, p = 200, n = 800,
    6 seeds; the top eigenvalue, the mean spike n E mu0^2 of (191), is not in the bulk and is left out: p - 1
    bulk eigenvalues), at four x: within 4 standard errors over the seeds."""
    from onestep_theory.simulate import sim_spectrum

    kw = dict(r="1.1", c="1.02", alpha=2, beta="1/2")
    _, _, (lo, hi), _ = density_real("tanh", [], **kw)
    th, wt = np.polynomial.legendre.leggauss(100)
    th = (th + 1) * np.pi / 2
    xq = np.array([0.5, 1.0, 2.0, 3.0])
    us = np.arccos(1 - 2 * (xq - lo) / (hi - lo))
    tt = np.concatenate([th / np.pi * u for u in us])
    rho = np.array(density_real("tanh", lo + (hi - lo) * (1 - np.cos(tt)) / 2, **kw)[0]).reshape(len(xq), -1)
    F_th = [np.sum(wt * r_ * (hi - lo) * np.sin(th / np.pi * u) / 2 * u / 2) for r_, u in zip(rho, us)]
    F = []
    for seed in range(6):
        ev = np.array(sim_spectrum("tanh", 400, r=1.1, c=1.02, gamma=1, alpha=2, beta=0.5, reps=1,
                                   seed=seed).extra["eigenvalues"])
        assert ev[-1] > 10 * hi                 # the mean spike, far outside the bulk
        F.append([np.sum(ev[:-1] <= x) / (len(ev) - 1) for x in xq])
    F = np.array(F)
    se = F.std(axis=0, ddof=1) / np.sqrt(len(F))
    for x, ft, m, s in zip(xq, F_th, F.mean(axis=0), se):
        assert abs(ft - m) <= 4 * s, (x, ft, m, s)


@pytest.mark.parametrize("dps", [15, pytest.param(30, marks=pytest.mark.slow)])
def test_api_dps_claims_at_r0(dps):
    """``density_real(..., dps=D)`` on the API path (exact strings for c, alpha, beta): at all 34 inside points and
    both edges of the no-atom setting the value ± error contains the reference and the error is below 10^-D of
    the value; outside points are exactly 0."""
    s = REF[0]
    xs = [float(x) for x in s["x"] + s["x_outside"]]
    rho, err, edges, eerr = density_real("tanh", xs, r="0", c=s["c"], alpha=s["alpha"], beta=s["beta"], dps=dps)
    n_in = len(s["x"])
    with mpmath.workdps(50):
        for v, e, ref in zip(rho[:n_in] + edges, err[:n_in] + eerr, s["density"] + s["edges"]):
            ref = mpmath.mpf(ref)
            assert abs(v - ref) <= e and e <= 10.0 ** -dps * ref, (v, e, ref)
    assert all(v == 0 for v in rho[n_in:]) and err[n_in:] == [0.0] * len(s["x_outside"])


def _cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_refusals_are_one_line(capsys):
    """mu1 = 0 on the whole κ-rule (x^2 at r = 0) stops with the reason (exit 3); a --dps grid beyond the work
    bound is refused naming --z (exit 2); neither is an internal error."""
    base = ["spectrum", "--r", "0", "--c", "1", "--gamma", "1", "--alpha", "2", "--beta", "1", "--lam", "1/2"]
    rc, out, err = _cli(capsys, *base, "--student", "x**2", "--z", "1")
    assert rc == 3 and out == "" and len(err.strip().splitlines()) == 1 and "mu1 = 0" in err
    rc, out, err = _cli(capsys, *base[:1], "--student", "tanh", "--r", "1.1", "--c", "1.02", "--gamma", "1",
                        "--alpha", "2", "--beta", "1", "--z", "0.01:3:2000", "--dps", "15")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "--z" in err


@pytest.mark.slow
def test_comb_of_the_kappa_rule_widens_the_lower_edge(capsys):
    """r = 1, alpha/beta = 1/2 (erf): the κ-rule splits the thin lower tail into small intervals (a comb, §7.1)
    reaching down to ~0.001, below the fold found by the scan; the printed lower edge ± error covers the lowest
    tooth found by a fine independent scan of Im V2 at Im z = 1e-9 (the old smoothed path, `stieltjes`), and a
    density asked for there prints 0 with an error at least the density of the teeth."""
    kw = dict(r=1, c="3/2", alpha=1, beta=2)
    _, _, edges, eerr = density_real("erf(x)", [], **kw)
    xs = np.linspace(0.0008, edges[0], 60)
    teeth = [x for x in xs if stieltjes("erf(x)", complex(x, 1e-9), **kw)[1].imag / np.pi > 1e-3]
    assert teeth and min(teeth) < edges[0] - 1e-3                  # the comb exists below the scan's fold
    assert edges[0] - eerr[0] <= min(teeth)
    rho, err, _, _ = density_real("erf(x)", teeth[:3], **kw)
    tooth = [stieltjes("erf(x)", complex(x, 1e-9), **kw)[1].imag / np.pi for x in teeth[:3]]
    assert all(abs(v - t) <= e for v, e, t in zip(rho, err, tooth))


@pytest.mark.slow
def test_comb_edge_is_not_printed_at_dps(capsys):
    """At --dps the lower edge left unresolved by the comb is not printed (JSON null, text 'not resolved'); the top
    edge and the density at x = 1 are printed to D digits."""
    argv = ["spectrum", "--student", "erf(x)", "--r", "1", "--c", "3/2", "--gamma", "1", "--alpha", "1", "--beta",
            "2", "--z", "1", "--lam", "1/2", "--dps", "12"]
    rc, out, err = _cli(capsys, *argv)
    assert rc == 0 and "not resolved by the kappa rule" in out.splitlines()[1]
    rc, out, err = _cli(capsys, *argv, "--json")
    d = json.loads(out)
    assert d["edges"][0] is None and F(d["errors"]["edges"][1]) <= F(10) ** -11 * F(d["edges"][1])


def _mm_reference():
    """The Mei-Montanari quartic route of tests/data/precompute/density_reference.py (nothing shared with the package)."""
    import importlib.util

    path = pathlib.Path(__file__).parent / "data" / "precompute" / "density_reference.py"
    spec = importlib.util.spec_from_file_location("density_reference", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_decimal_x_near_the_edges_is_read_as_typed_at_dps(capsys):
    """Review finding: `--z 0.1,7.9 --dps 30` read each x through float64, so near an edge the density moved by
    rho'(x) 1e-16 x (off at 1e-17 while printing errors of 1e-31).  Now x is read as typed: decimal points near both
    edges of the atom setting, printed at --dps 30, contain the 40-digit Mei-Montanari density at the exact decimal."""
    mod = _mm_reference()
    s = REF[1]
    lo, hi = float(s["edges"][0]), float(s["edges"][1])
    xs = [f"{lo * 1.001:.6f}", f"{lo * 1.05:.5f}", f"{hi * 0.99:.5f}", f"{hi * 0.9995:.7f}"]
    with mpmath.workdps(60):
        Q = mod.quartic()
        mu1, ms2 = mod.constants(s["c"])
        al, be = (mpmath.mpf(F(s[k]).numerator) / F(s[k]).denominator for k in ("alpha", "beta"))
        vals = {"p1": be, "p2": al, "z2": mu1 ** 2 / ms2}
        ref = [mod.physical(Q, mpmath.mpf(F(x).numerator) / F(x).denominator, ms2, be, vals) for x in xs]
    argv = ["spectrum", "--student", "tanh", "--r", "0", "--c", s["c"], "--gamma", "1", "--alpha", s["alpha"],
            "--beta", s["beta"], "--z", ",".join(xs), "--lam", "1/2", "--dps", "30"]
    assert main(argv) == 0
    rows, _ = _parse_text(capsys.readouterr().out)
    with mpmath.workdps(60):
        for (x, v, e), r in zip(rows, ref):
            assert _contains(v, e, r), (x, v, e, r)


def test_the_atom_of_an_affine_student_counts_rank_d():
    """Review finding: for an affine student Phi has rank <= d, so the atom at 0 of Phi^T Phi / p is
    (1 - min(alpha, 1)/beta)_+ (not (1 - alpha/beta)_+): x at alpha = 2, beta = 3 has 2/3, not 1/3; a nonlinear
    student keeps 1/3 (exact values; the zero fraction of a simulation at d = 600 was 0.6667 for x)."""
    from onestep_theory.srf import spectrum

    for student, al, want in (("x", "2", F(2, 3)), ("2*x+1", "1/2", F(5, 6)), ("tanh", "2", F(1, 3))):
        sp_ = spectrum(student, r=0, c=1, alpha=al, beta="3", xs=[1.0], lams=["1/2"])
        assert abs(F(sp_.atom_at_zero) - want) <= F(sp_.errors["atom_at_zero"]), (student, sp_.atom_at_zero)
