"""Issue 31, item 2 leftovers (engineer N), on the user's path (the CLI as typed).

1. The K-group spectrum printed x with ``{x:.6g}`` (and JSON the binary float's repr): the density printed beside
   a 6-digit x belonged to another point; ``--z 1/3`` ended in "internal error".  Now every density table (one
   group or K; text, JSON, CSV) prints each x as the point computed (``srf.spectral.grid``: the typed text, or a
   float's shortest repr; the K-group default grid is 6-digit decimals, each the point), and the K-group error
   covers the gap between that decimal and the float64 point solved.  Reference: for an odd student the readout
   u = ±1 (half each) flips the sign of half the feature rows, so Phi^T Phi and its spectrum are those of one group
   (r, c): the single-group density on the real axis (a different method: Newton at Im z = 0, no eta) at the same
   exact x.
2. ``spectrum --dps D`` at x near a square-root edge exited 3 ("29 digits reached"): rho ~ C sqrt|e - x| has the
   condition number |x| / (2|e - x|).  Now the working precision rises by the digits lost (at most
   ``EDGE_EXTRA`` = 30), and a point closer to the edge than the float64 edge's error is reached by continuation
   from farther inside.  Reference: the Mei–Montanari system at r = 0 reduced to a quartic (SymPy resultant) and
   solved by mpmath.polyroots at 80 digits, edges from its discriminant (tests/data/precompute/density_reference.py,
   nothing imported from the package), sin(sqrt(c) g) with its constants in closed form.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import pathlib
from fractions import Fraction as F

import mpmath
import pytest

from onestep_theory.cli import main

DATA = pathlib.Path(__file__).parent / "data"


def _run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def _mp(text):
    f = F(text)
    return mpmath.mpf(f.numerator) / f.denominator


# ------------------------------------------------------------------------------------------------ 1. printed x
def test_x_text_is_the_point_read_exactly():
    from onestep_theory.srf.spectral.grid import read_x, x_text

    assert [x_text(v) for v in ("1/3", "0.50", "2", "1.23456789012345678", "sqrt(2)", 0.1, 2.0)] == \
        ["1/3", "0.5", "2.0", "1.23456789012345678", "sqrt(2)", "0.1", "2.0"]
    for text in ("0.1", "1/3", "1.23456789012345678", "sqrt(2)", "0.0860714", "3"):
        exact, f, gap = read_x(text)
        with mpmath.workdps(60):
            true = abs(mpmath.mpf(sp_n(exact)) - mpmath.mpf(f))
            assert true <= gap <= 1.01 * true + 1e-299 and gap <= 2.0 ** -53 * abs(f), (text, gap, true)
    assert read_x("0.5")[2] == 0.0 and read_x("0.375")[2] == 0.0


def sp_n(expr):
    import sympy as sp

    return str(sp.N(expr, 60))


KG = ["spectrum", "--student", "tanh", "--r", "1/2", "--c", "1", "--gamma", "1", "--alpha", "2", "--beta", "1",
      "--lam", "1/2"]
TYPED = "1/3,0.1,sqrt(2),2.9,1.23456789012345678,4"


def _single_reference(texts, dps=None):
    """The single-group density at (r, c) = (1/2, 1) at the exact texts (float64 or ``dps``), by the real-axis
    solver, with its errors."""
    from onestep_theory.srf.spectral.realdensity import density_real

    d, e, _, _ = density_real("tanh", list(texts), r="1/2", c="1", alpha="2", beta="1", dps=dps)
    return d, e


def test_kgroup_prints_the_point_in_text_json_csv(capsys, tmp_path):
    """Typed x ('1/3', 'sqrt(2)', a 18-digit decimal) printed as typed (was: internal error, or 6 digits), the same
    in the text table, JSON and CSV, and each density within its printed error of the one-group density at that
    exact x (u = ±1 for odd tanh is one group)."""
    path = tmp_path / "k.csv"
    code, out, _ = _run(capsys, KG + ["--readout=1:0.5,-1:0.5", "--z", TYPED, "--json", "--csv", str(path)])
    assert code == 0
    d = json.loads(out)
    want = ["1/3", "0.1", "sqrt(2)", "2.9", "1.23456789012345678", "4.0"]
    assert d["x"] == want
    rows = list(csv.DictReader(io.StringIO("".join(l for l in path.read_text().splitlines(True)
                                                   if not l.startswith("#")))))
    assert [(r["x"], r["density"], r["error"]) for r in rows] == \
        list(zip(want, d["density"], d["errors"]["density"]))
    code, text, _ = _run(capsys, KG + ["--readout=1:0.5,-1:0.5", "--z", TYPED])
    table = [line.split() for line in text.splitlines()[2:2 + len(want)]]
    assert [t[:3] for t in table] == [list(r) for r in zip(want, d["density"], d["errors"]["density"])]
    ref, rerr = _single_reference(want)
    for x, v, e, r, re in zip(want, d["density"], d["errors"]["density"], ref, rerr):
        assert abs(F(v) - F(r)) <= F(e) + F(re), (x, v, e, r)


@pytest.mark.slow
def test_kgroup_default_grid_prints_its_points(capsys):
    """The K-group default grid (was: x printed {x:.6g}, the density at the 17-digit float beside it; JSON held that
    float): 100 six-digit decimals, the same in the text table and JSON, each the point whose density is printed,
    against the one-group density at that exact decimal."""
    argv = KG + ["--readout=1:0.5,-1:0.5"]
    code, text, _ = _run(capsys, argv)
    assert code == 0
    code, out, _ = _run(capsys, argv + ["--json"])
    d = json.loads(out)
    assert len(d["x"]) == 100 and [ln.split()[:3] for ln in text.splitlines()[2:102]] == \
        [list(r) for r in zip(d["x"], d["density"], d["errors"]["density"])]
    assert all(len(x.replace(".", "").lstrip("0").rstrip("0")) <= 6 for x in d["x"]), d["x"][:5]   # 6 digits
    ref, rerr = _single_reference(d["x"])
    bad = [(x, v, e, r) for x, v, e, r, re in zip(d["x"], d["density"], d["errors"]["density"], ref, rerr)
           if not abs(F(v) - F(r)) <= F(e) + F(re)]
    assert not bad, bad


def test_kgroup_float_grid_error_covers_the_decimal():
    """A float grid point is its shortest decimal: the K-group error grows by the slope bound over the gap
    (|d rho_eta/dx| <= rho_eta/eta), so an x whose decimal is not its float (0.1) carries that term, 0.5 none."""
    from onestep_theory.srf.grouped.groupspectrum import group_spectrum

    kw = dict(readout_spec="1:0.5,-1:0.5", r="1/2", c="1", alpha="2", beta="1", lams=("1/2",), eta=0.001)
    a, b = (group_spectrum("tanh", xs=xs, **kw) for xs in ([0.1, 0.5], ["0.1", "0.5"]))
    assert a.x == b.x == [0.1, 0.5] and a.density == b.density and a.errors["density"] == b.errors["density"]


# -------------------------------------------------------------------------------------------- 2. near the edges
def _reference():
    spec = importlib.util.spec_from_file_location("density_reference", DATA / "precompute" / "density_reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


#: sin(sqrt(c) g) at c = 1/2, alpha = 3/4, beta = 1 (an atom 1/4; edges 0.00165…, 1.734…), r = 0
SIN = ("sin", "1/2", "3/4", "1")


def _setting(c, alpha, beta):
    """(quartic, mu*^2, beta, values, edges) of the Mei–Montanari reference for sin at the ambient precision."""
    mod = _reference()
    c = _mp(c)
    mu1 = mpmath.sqrt(c) * mpmath.exp(-c / 2)
    ms2 = (1 - mpmath.exp(-2 * c)) / 2 - mu1 ** 2
    be = _mp(beta)
    vals = {"p1": be, "p2": _mp(alpha), "z2": mu1 ** 2 / ms2}
    Q = mod.quartic()
    return mod, Q, ms2, be, vals, mod.edges(Q, ms2, be, vals)


def _near_points(edges, dists):
    """x at relative distance d inside and outside both edges, as 45-digit decimals: ``(text, inside)``."""
    pts = []
    for e, out in zip(edges, (-1, 1)):
        for dd in dists:
            for inside in (True, False):
                x = e * (1 + out * (-1 if inside else 1) * mpmath.mpf(dd))
                pts.append((mpmath.nstr(x, 45, strip_zeros=False), inside))
    return pts


def _check_near_edges(capsys, dps, dists, extra_inside=()):
    """Every point against the reference: inside, printed value ± printed error contains it and the value has
    ``dps`` correct digits (relative gap <= 10^(1 - dps), the last digit rounded); outside, exactly 0 with error
    0.  Returns the digits measured (-log10 of the relative gap) of the inside points."""
    with mpmath.workdps(80):
        mod, Q, ms2, be, vals, edges = _setting(*SIN[1:])
        pts = _near_points(edges, dists) + [(mpmath.nstr(e * (1 + s * mpmath.mpf(dd)), 45, strip_zeros=False), True)
                                             for dd in extra_inside for e, s in zip(edges, (1, -1))]
        ref = [mod.physical(Q, _mp(t), ms2, be, vals) for t, _ in pts]
    argv = ["spectrum", "--student", "sin", "--r", "0", "--c", SIN[1], "--gamma", "1", "--alpha", SIN[2], "--beta",
            SIN[3], "--lam", "1/2", "--dps", str(dps), "--z", ",".join(t for t, _ in pts), "--json"]
    code, out, err = _run(capsys, argv)
    assert code == 0, err
    d = json.loads(out)
    assert d["x"] == [t for t, _ in pts]                   # each x printed as typed: the point computed
    measured = []
    with mpmath.workdps(80):
        for (t, inside), r, v, e in zip(pts, ref, d["density"], d["errors"]["density"]):
            if not inside:
                assert r == 0 and v == "0" and e == "0", (t, v, e)
                continue
            gap = abs(_mp(v) - r)
            assert r > 0 and gap <= _mp(e), (t, v, e, r)
            assert gap <= mpmath.mpf(10) ** (1 - dps) * r and _mp(e) <= mpmath.mpf(10) ** (1 - dps) * r, (t, v, e)
            measured.append(float(-mpmath.log10(gap / r)) if gap else 99.0)
    return measured


def test_dps15_near_both_edges_against_mei_montanari(capsys):
    """r = 0: relative distances 1e-3 .. 1e-12 inside and outside both edges at --dps 15 (was exit 3 from 1e-6
    at the lower edge: 14, 11, 8 digits reached)."""
    assert min(_check_near_edges(capsys, 15, ("1e-3", "1e-6", "1e-9", "1e-12"))) >= 14


@pytest.mark.slow
def test_dps30_near_both_edges_and_closer_than_float64(capsys):
    """r = 0 at --dps 30: the same 16 points (was exit 3 from 1e-9: 27, 24 digits) and points 1e-16 and 1e-22
    inside both edges, closer than the float64 edge's error (were exit 3, or printed 0 +/- 0 where the density is
    1e-12 of its maximum: a wrong number), against the 80-digit reference."""
    assert min(_check_near_edges(capsys, 30, ("1e-3", "1e-6", "1e-9", "1e-12"), ("1e-16", "1e-22"))) >= 29


@pytest.mark.slow
def test_too_close_to_an_edge_is_one_line_exit_3(capsys):
    """x at 1e-29 relative inside the upper edge (farther than twice the 30-digit edge's error) needs 31 more working
    digits at --dps 30 (the bound: 30): exit 3 in one line that states the bound; x 1e-45 from the edge (within
    twice its error: inside or outside not decided): exit 3, one line that says so."""
    with mpmath.workdps(80):
        edges = _setting(*SIN[1:])[-1]
        xs = [mpmath.nstr(edges[1] * (1 - mpmath.mpf(10) ** -k), 60, strip_zeros=False) for k in (29, 45)]
    for x, words in zip(xs, ("at most 30", "within twice an edge's error")):
        code, out, err = _run(capsys, ["spectrum", "--student", "sin", "--r", "0", "--c", SIN[1], "--gamma", "1",
                                       "--alpha", SIN[2], "--beta", SIN[3], "--lam", "1/2", "--dps", "30", "--z", x])
        assert code == 3 and out == "" and len(err.strip().splitlines()) == 1 and words in err, (x, err)
        assert "Traceback" not in err and "internal error" not in err
    # bounded work: more than MAX_CONTINUED = 16 points within an edge's float64 error is refused before the polish
    code, out, err = _run(capsys, ["spectrum", "--student", "sin", "--r", "0", "--c", SIN[1], "--gamma", "1", "--alpha",
                                   SIN[2], "--beta", SIN[3], "--lam", "1/2", "--dps", "15", "--z", ",".join([xs[1]] * 17)])
    assert code == 2 and "--z" in err and "at most 16" in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.slow
def test_r_positive_near_edges_dps15_against_dps30(capsys):
    """r > 0 (tanh/sin through Result 3.1, alpha0 = 20, eta = 3, alpha = 2, beta = 1): 1e-6 and 1e-12 inside both
    edges, --dps 15 against --dps 30 (more digits, finer rules): contained, 15 digits; both exit 0 (--dps 30 was
    exit 3 within 1e-6 of an edge: 29 digits)."""
    base = ["spectrum", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "2",
            "--beta", "1", "--lam", "1/2", "--json"]
    with mpmath.workdps(60):
        edges = [mpmath.mpf("0.0135800081759517138322811324178526233747475005304461108232106"),
                 mpmath.mpf("2.90486559213020602864126845219227425518369689269120938523163")]   # --dps 60 (by hand)
        xs = [mpmath.nstr(e * (1 - s * mpmath.mpf(dd)), 40, strip_zeros=False) for e, s in zip(edges, (-1, 1))
              for dd in ("1e-6", "1e-12")]
    runs = {}
    for dps in (15, 30):
        code, out, err = _run(capsys, base + ["--dps", str(dps), "--z", ",".join(xs)])
        assert code == 0, err
        runs[dps] = json.loads(out)
        assert runs[dps]["x"] == xs
    with mpmath.workdps(50):
        for v15, e15, v30, e30 in zip(runs[15]["density"], runs[15]["errors"]["density"], runs[30]["density"],
                                      runs[30]["errors"]["density"]):
            gap = abs(_mp(v15) - _mp(v30))
            assert gap <= _mp(e15) + _mp(e30) and gap <= mpmath.mpf(10) ** -14 * _mp(v30), (v15, e15, v30)
            assert _mp(e30) <= mpmath.mpf(10) ** -29 * _mp(v30)
    # 1e-17 inside the top edge (closer than its float64 error): Result 3.1's r, c carry errors ~1e-31 at --dps 15,
    # amplified ~1e17 there: honest exit 3 in one line that names the cause (an exact --r, --c would not be limited)
    with mpmath.workdps(60):
        edges = [mpmath.mpf("2.90486559213020602864126845219227425518369689269120938523163")]
        x = mpmath.nstr(edges[0] * (1 - mpmath.mpf(10) ** -17), 45, strip_zeros=False)
    code, out, err = _run(capsys, base[:-1] + ["--dps", "15", "--z", x])
    assert code == 3 and out == "" and len(err.strip().splitlines()) == 1 and "errors of r, c" in err, err
