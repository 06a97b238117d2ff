"""The shared-grid trapezoidal smoothing (srf.features.gridsmooth; docs/theory/numerics.md §3) against independent
references: mpmath's tanh-sinh quadrature at 20 digits past the target, split at the Gaussian's centre, and closed
forms (E sin(a + sZ) = e^{-s²/2} sin a, E cos, E (a + sZ)² tanh-free polynomials).  No package code in the references.
Looped over precisions (15, 30, 50) as the mpmath style asks; the functions cover a strip wider than assumed (tanh,
π/2), exactly the assumed one (1/(1+x²): poles at ±i), a narrower one (tanh(6x): π/12, the verified step must halve)
and growth (softplus ~ x, x·tanh(x) ~ |x|)."""

import math

import flint
import mpmath
import numpy as np
import pytest

from onestep_theory.core.precision import workdps
from onestep_theory.srf.features.gridsmooth import GRID_MIN_POINTS, grid_smooth_arb, grid_step
from onestep_theory.srf.features.smoothing import smooth

FUNCS = {
    "tanh": (lambda t: t.tanh(), lambda t: mpmath.tanh(t)),
    "lorentz": (lambda t: 1 / (1 + t * t), lambda t: 1 / (1 + t * t)),
    "tanh6": (lambda t: (6 * t).tanh(), lambda t: mpmath.tanh(6 * t)),
    "softplus": (lambda t: (1 + t.exp()).log(), lambda t: mpmath.log(1 + mpmath.exp(t))),
    "xtanh": (lambda t: t * t.tanh(), lambda t: t * mpmath.tanh(t)),
}


def reference(f, a, s, dps):
    """(E f, E Zf, E f²)(a + sZ) by tanh-sinh on z, split at the Gaussian's centre and ±(4, 8, 16) around -a/s."""
    with mpmath.workdps(dps + 20):
        a, s = mpmath.mpf(a), mpmath.mpf(s)
        c = -a / s
        pts = sorted({mpmath.mpf(0), c} | {c + k for k in (-16, -8, -4, 4, 8, 16)})
        pts = [-mpmath.inf] + pts + [mpmath.inf]
        out = []
        for w in (lambda z: f(a + s * z), lambda z: z * f(a + s * z), lambda z: f(a + s * z) ** 2):
            out.append(mpmath.quad(lambda z: w(z) * mpmath.npdf(z), pts))
        return out


def run(fn, shifts, s, accuracy, level=0):
    return grid_smooth_arb(fn, [flint.arb(a) for a in shifts], flint.arb(s), accuracy, level)


def to_mpf(v):
    """The ball's midpoint, exactly (at 90 digits: the comparisons run inside mpmath.workdps(90))."""
    return mpmath.mpf(v.mid().str(90, radius=False))


def gap(got, ref):
    with mpmath.workdps(90):
        return abs(to_mpf(got) - (to_mpf(ref) if isinstance(ref, flint.arb) else ref))


SLOW = pytest.mark.slow


@pytest.mark.parametrize("name,dps", [("tanh", 15), ("tanh", 30), ("lorentz", 30),
                                      pytest.param("tanh", 50, marks=SLOW), pytest.param("lorentz", 15, marks=SLOW),
                                      pytest.param("lorentz", 50, marks=SLOW), pytest.param("tanh6", 15, marks=SLOW),
                                      pytest.param("tanh6", 30, marks=SLOW), pytest.param("tanh6", 50, marks=SLOW)])
def test_against_quadrature(name, dps):
    fa, fm = FUNCS[name]
    shifts = [0.37 * k - 2.2 for k in range(GRID_MIN_POINTS + 2)]   # both signs, a binary float each
    accuracy = dps + 2
    with workdps(dps + 10):
        got = run(fa, shifts, 0.8, accuracy)
    assert got is not None
    for i in (0, 5, 13, len(shifts) - 1):
        ref = reference(fm, shifts[i], 0.8, dps)
        for g, r in zip(got[i], ref):
            assert gap(g, r) <= mpmath.mpf(10) ** -(dps + 1) * max(1, abs(r)), (name, dps, i)


@pytest.mark.parametrize("name,s", [("softplus", 1.7), pytest.param("xtanh", 0.35, marks=SLOW),
                                    pytest.param("tanh", 3.0, marks=SLOW)])
def test_growth_and_widths(name, s):
    fa, fm = FUNCS[name]
    shifts = [0.9 * k for k in range(30)]                              # far shifts: a up to 26
    with workdps(40):
        got = run(fa, shifts, s, 32)
    assert got is not None
    for i in (0, 11, 29):
        for g, r in zip(got[i], reference(fm, shifts[i], s, 30)):
            assert gap(g, r) <= 1e-31 * max(1, abs(r)), (name, i)


@pytest.mark.parametrize("dps", [15, 30])
def test_closed_forms_all_shifts(dps):
    """E sin(a + sZ) = e^{-s²/2} sin a, E[Z sin(a + sZ)] = s e^{-s²/2} cos a, E sin² = (1 - e^{-2s²} cos 2a)/2."""
    s = 1.3
    shifts = list(np.linspace(-6, 9, 40))
    with workdps(dps + 10):
        got = run(lambda t: t.sin(), shifts, s, dps + 2)
        for a, (m0, m1, m2) in zip(shifts, got):
            with mpmath.workdps(dps + 20):
                a_, s_ = mpmath.mpf(a), mpmath.mpf(s)
                e = mpmath.exp(-s_ ** 2 / 2)
                refs = (e * mpmath.sin(a_), s_ * e * mpmath.cos(a_), (1 - mpmath.exp(-2 * s_ ** 2) * mpmath.cos(2 * a_)) / 2)
            for g, r in zip((m0, m1, m2), refs):
                assert gap(g, r) <= mpmath.mpf(10) ** -(dps + 1)


@SLOW
def test_levels_agree_and_refine():
    """Level 1 (step / GROWTH, wider window) differs from level 0 by less than the target: the change the saddle
    point reads as this rule's error is small and both are right."""
    fa, fm = FUNCS["tanh6"]
    shifts = [0.21 * k for k in range(30)]
    with workdps(40):
        g0, g1 = (run(fa, shifts, 1.1, 32, level=lv) for lv in (0, 1))
    ref = reference(fm, shifts[7], 1.1, 30)
    for u, v, r in zip(g0[7], g1[7], ref):
        assert gap(u, v) < 1e-32
        assert gap(v, r) < 1e-32


def test_does_not_apply():
    tanh = FUNCS["tanh"][0]
    with workdps(30):
        assert run(tanh, [0.1 * k for k in range(GRID_MIN_POINTS - 1)], 1.0, 22) is None    # too few shifts
        assert run(tanh, [0.1 * k for k in range(30)], 0.0, 22) is None                     # s = 0
        # super-Gaussian growth: no window holds it
        assert run(lambda t: (t * t).exp(), [0.1 * k for k in range(30)], 1.0, 22) is None
        # a pole on the real axis: f not finite on the grid (or never verified)
        assert run(lambda t: 1 / (t - flint.arb(1) / 3), [0.1 * k for k in range(30)], 1.0, 22) is None


def test_step():
    """The step puts exp(d²/2c - 2πd/h) at 10^-(D+2) (d = 1, or d = 2πc/h inside the strip)."""
    for c in (1e-4, 0.01, 0.5, 1.0, 9.0):
        h = grid_step(c, 30)
        d = min(1.0, 2 * math.pi * c / h)
        assert math.isclose(d * d / (2 * c) - 2 * math.pi * d / h, -math.log(10) * 32, rel_tol=1e-12)


@pytest.mark.parametrize("dps", [15, 30])
def test_smooth_public_path(dps):
    """smooth(tanh, a, s, dps=D) (the shared grid inside) against the reference, centred activation included."""
    a = np.array([0.25 * k - 3 for k in range(30)])
    m0, m1, m2 = smooth("tanh", a, 0.9, dps=dps)
    for i in (0, 12, 29):
        r0, r1, r2 = reference(mpmath.tanh, a[i], 0.9, dps)
        with mpmath.workdps(90):
            for v, r in ((m0[i], r0), (m1[i], r1), (m2[i], r2)):
                assert abs(v - r) <= mpmath.mpf(10) ** -dps


@SLOW
def test_kgroup_saddle_point_against_the_panel_rule(monkeypatch):
    """The two-group saddle point at 30 digits with the grid inside equals the one on the panel rule (an independent
    quadrature: Gauss–Legendre panels in z, one student evaluation per (κ node, inner node)) within the printed errors,
    and both equal a 40-digit solve on the grid to their printed errors."""
    import onestep_theory.srf.features.smoothing as sm
    from onestep_theory.core.caches import clear_caches
    from onestep_theory.srf.grouped.groups import srf_groups

    kw = dict(readout_spec="1:1/2,2:1/2", alpha="2", beta="1", lam="1/10", alpha0="20", eta="3")
    clear_caches()
    grid = srf_groups("tanh", "sin", dps=30, **kw)
    fine = srf_groups("tanh", "sin", dps=40, **kw)
    clear_caches()
    monkeypatch.setattr(sm, "grid_smooth_arb", lambda *a, **k: None)
    panels = srf_groups("tanh", "sin", dps=30, **kw)
    clear_caches()
    with mpmath.workdps(60):
        e_grid, e_panels = mpmath.mpf(grid.abs_error), mpmath.mpf(panels.abs_error)
        assert 0 < e_grid < 1e-29 and 0 < e_panels < 1e-29
        assert abs(grid.test_error - panels.test_error) <= e_grid + e_panels
        assert abs(grid.test_error - fine.test_error) <= e_grid
        assert abs(panels.test_error - fine.test_error) <= e_panels
