r"""The density of :math:`A=\Phi^\top\Phi/p` ((189)–(190) of [CPDKLZL24] App. F) on the real axis at given points,
the edges of its support and their errors, in float64 and at ``dps`` digits (docs/theory/srf-theory.md §7.1): the
driver of the solvers of :mod:`onestep_theory.srf.spectral.realaxis` on two κ-rules (the refinement that measures the
error).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import sympy as sp

from ...core.caches import cached
from ...core.errors import ConvergenceError, InvalidParameterError
from ...core.exact import binary_exact, float_in, to_exact, to_float, to_mpf
from ...core.precision import asked_digits, precision, ulps
from ...core.results import digits_of
from ...hermite.activation import Activation
from .realaxis import (EPS, comb_reach, find_edges, moments, moments_cached, polish_edge, polish_point, prepare,
                       refold, resolve, solve_real)

__all__ = ["density_real"]


@cached(maxsize=32)
def _edges_cached(act, r_f, c_f, a, be_f):
    """``(Ms, scale, edges, errors)`` for one setting (float64), cached: the edges are found once per setting."""
    Ms = [prepare(tuple(moments_cached(act, r_f, c_f, level)[i] for i in (0, 2, 3))) for level in (0, 1)]
    w, m1s, ms2 = Ms[1]
    if not np.any(m1s > 0):
        raise ConvergenceError("spectrum: mu1 = 0 on the whole kappa rule (e.g. an even student at r = 0): the "
                               "real-axis equations of docs/theory/srf-theory.md §7.1 need mu1 != 0", 0, 0.0)
    scale = max(a, 1.0) * float(np.real(w @ (m1s * c_f + ms2)))
    E, eerr = _edges_f64(Ms, a, be_f, c_f, scale)
    return Ms, scale, tuple(E), tuple(eerr)


def _edges_f64(Ms, a, be, c, scale):
    """Edges at κ-rule levels 0 and 1 (float64): ``(level-1 folds, errors)``; error = level change + the last
    fold-Newton step + 100 ε |x| (rounding); a hard edge at 0 (support reaching the first scan point) has the error
    x_1 of that scan point (docs/theory/srf-theory.md §7.1)."""
    E0 = find_edges(Ms[0], a, be, c, scale)
    E1 = refold(E0, Ms[1], a, be, c, scale)
    errs = [e1[3] if e1[1] is None else abs(e1[0] - e0[0]) + e1[3] + 100 * EPS * abs(e1[0])
            for e0, e1 in zip(E0, E1)]
    if len(Ms[1][0]) > 1:       # r > 0: a thin tail split by the κ-rule's nodes widens the outer edges' errors
        span = 0.25 * (E1[-1][0] - E1[0][0])
        for k, out in ((0, -1), (len(E1) - 1, 1)):
            if E1[k][1] is not None:        # below the lower edge: the whole gap (0, e), on 64 points
                errs[k] += comb_reach(E1[k][0], out, min(span, E1[k][0]) if out < 0 else span, Ms[1], a, be, c, scale)
    return E1, errs


#: Bounded work: points x κ-nodes of one float64 batch (memory), and in all with ``dps`` (time).
CHUNK_WORK, MAX_DPS_WORK = 2 ** 17, 40000


def _solve_chunked(xs, Ms, a, be, c, scale):
    """:func:`solve_real` on the rule of level 0 and :func:`resolve` on level 1, in batches of at most
    ``CHUNK_WORK`` points x nodes (a 20000-point grid on a 300-node rule would otherwise allocate gigabytes)."""
    n = max(16, CHUNK_WORK // len(Ms[0][0]))
    parts = []
    for k in range(0, max(len(xs), 1), n):
        x = xs[k:k + n]
        s0 = solve_real(x, Ms[0], a, be, c, scale)
        parts.append((s0, resolve(x, s0[0], s0[1], Ms[1], a, be, c, scale)))
    return [tuple(np.concatenate([p[lev][i] for p in parts]) for i in range(5)) for lev in (0, 1)]


def density_real(student, xs, *, r, c, alpha, beta, dps: int | None = None):
    r"""The bulk density :math:`\rho(x)=\frac1\pi\mathrm{Im}V_2(x+i0^+)` at every x of ``xs`` and the edges of the
    support, solved on the real axis (docs/theory/srf-theory.md §7.1).  Returns
    ``(density, density_errors, edges, edge_errors)``; outside the support (farther from it than twice an edge's
    error) the density is exactly 0 with error 0, x <= 0 included (the atom is reported apart).

    Errors: the change from the κ-rule of level 0 to level 1, plus the last Newton step, plus the rounding
    bound :math:`\varepsilon\,\|J^{-1}\|\sum|\text{terms}|`; with ``dps`` every root is polished in mpmath at
    ``dps + 10`` digits on both rules, and fewer than ``dps`` digits raise
    :class:`~onestep_theory.errors.ConvergenceError` (a density within an edge's error of that edge: absolute
    criterion :math:`10^{-\mathrm{dps}}\max\rho`)."""
    al, be_f, c_f = float_in(alpha, "alpha"), float_in(beta, "beta"), to_float(c, "c")
    a = al / be_f
    # each x exactly as given (a typed text, a Rational, or the binary value of a float) for the --dps polish: a
    # decimal x read through float64 moves the density by rho'(x) 1e-16 |x|, large near an edge
    exact_xs = [to_exact(v, "z") if isinstance(v, str) else (v if isinstance(v, sp.Rational) else binary_exact(v))
                for v in np.ravel(np.asarray(xs, dtype=object))]
    xs = np.array([float(v) for v in exact_xs], dtype=float)
    act, r_f = Activation.from_any(student, "student"), to_float(r, "r")
    nk = len(prepare(tuple(moments_cached(act, r_f, c_f, 1)[i] for i in (0, 2, 3)))[0])
    if dps is not None and len(xs) * nk > MAX_DPS_WORK:          # bounded work, checked before any solve
        raise InvalidParameterError("z", f"{len(xs)} points", f"at most {MAX_DPS_WORK // nk} points with dps at "
                                    f"this setting ({nk} kappa nodes)")
    Ms, scale, E, eerr = _edges_cached(act, r_f, c_f, a, be_f)
    eerr = list(eerr)
    if E and E[0][1] is None and to_exact(alpha, "alpha") == to_exact(beta, "beta"):
        eerr[0] = 0.0          # n = p: Phi is square, the hard edge is exactly 0 (MP of ratio 1)
    w = Ms[1][0]
    edges = [e[0] for e in E]
    dist = np.array([min([abs(x - e) for e in edges]) for x in xs], dtype=float)
    near = dist <= 2 * np.array([eerr[int(np.argmin([abs(x - e) for e in edges]))] for x in xs], dtype=float)
    inside = np.array([any(lo < x < hi for lo, hi in zip(edges[::2], edges[1::2])) for x in xs], dtype=bool) & ~near
    dens, derr = [0.0] * len(xs), [0.0] * len(xs)
    sol = _solve_chunked(xs, Ms, a, be_f, c_f, scale)
    if E and E[0][1] is None:           # a hard edge at 0 (error x_1): below x_1 the root itself says inside or not
        low = near & (xs > 0) & (xs <= 2 * eerr[0])
        near &= ~low
        inside |= low & (sol[1][1].imag > 1e-9 * abs(sol[1][1])) & (sol[0][1].imag > 1e-9 * abs(sol[0][1]))
    if np.any(sol[1][1].imag[~inside & ~near & (xs > 0)] > 1e-9 * abs(sol[1][1][~inside & ~near & (xs > 0)])):
        raise ConvergenceError("spectrum: a point outside the edges found has a density > 0 (an interval narrower "
                               "than the scan step)", 0, 0.0)
    V1, V2, step, jinv, size = sol[1]
    bad = inside & ~(V2.imag > 0)
    if np.any(bad):
        raise ConvergenceError(f"spectrum: no physical root at x = {xs[bad][0]:.6g} inside the support", 0, 0.0)
    rho = [v.imag / math.pi for v in (sol[0][1], V2)]
    rnd = 10 * EPS * math.log2(len(w) + 2) * jinv * size
    for i in np.nonzero(inside)[0]:
        dens[i], derr[i] = float(rho[1][i]), float(abs(rho[1][i] - rho[0][i]) + (step[i] + rnd[i]) / math.pi)
    for i in np.nonzero(near)[0]:       # within an edge's error: rho <= rho at twice that error inside, taken whole
        k = int(np.argmin([abs(xs[i] - e) for e in edges]))
        probe = edges[k] + (1 if k % 2 == 0 else -1) * (dist[i] + 2 * eerr[k])
        bound = solve_real(np.array([probe]), Ms[1], a, be_f, c_f, scale)[1][0].imag / math.pi
        dens[i], derr[i] = 0.0, float(2 * bound)
    if dps is None:
        return dens, derr, edges, eerr
    with precision(dps):
        return _polish(student, r, c, alpha, beta, xs, exact_xs, inside, sol, E, eerr, dens, derr)


def _polish(student, r, c, alpha, beta, xs, exact_xs, inside, sol, E, eerr, dens, derr):
    """The mpmath stage of :func:`density_real`, at the ambient precision (``dps`` digits asked, ``wd`` working):
    every inside root and every fold polished on both κ-rules; errors = rule change + last Newton step +
    10^-(wd-2) ||J^-1|| Σ|terms| (the rounding: 100 ulps of the working precision)."""
    dps = asked_digits()
    al_m, be_m, c_m = (to_mpf(to_exact(v)) for v in (alpha, beta, c))
    a_m = al_m / be_m
    Mm = [prepare(tuple(moments(student, r, c, level, mp=True)[i] for i in (0, 2, 3))) for level in (0, 1)]
    ulp = ulps(2, why="the rounding of the moments' sums over the κ-rule: 100 ulps")
    edges, errs = [], []
    for e, ee in zip(E, eerr):
        if e[1] is None:                # a hard edge at 0: exact (n = p) or known to within the first scan point
            if ee > 0:
                raise ConvergenceError(f"spectrum: the lower edge of the support lies in [0, {ee:.3g}] and is not "
                                       f"resolved to {dps} digits (a hard-edge-like support at n != p)", 0, ee)
            edges.append(mpmath.mpf(0))
            errs.append(0.0)
            continue
        if ee > 1e-6 * abs(e[0]):       # a comb of the κ-rule beyond it (§7.1): not resolved, not printed
            edges.append(None)
            errs.append(None)
            continue
        (x0, *_), (x1, _, _, st) = (polish_edge(e[1], e[2], e[0], M, a_m, be_m, c_m) for M in Mm)
        edges.append(x1)
        errs.append(float(abs(x1 - x0) + st + ulp * abs(x1)))
    for i in np.nonzero(inside)[0]:
        x = to_mpf(exact_xs[i])
        (_, v0, *_), (_, v1, st, jn, sz) = (polish_point(sol[1][0][i], sol[1][1][i], x, M, a_m, be_m, c_m)
                                            for M in Mm)
        dens[i] = v1.imag / mpmath.pi
        derr[i] = float(abs(v1.imag - v0.imag) / mpmath.pi + (st + ulp * jn * sz) / mpmath.pi)
    for i in np.nonzero(~inside & (np.array(derr) > 0))[0]:    # near an edge in float64: the polished edges decide
        x = to_mpf(exact_xs[i])
        far = all(abs(x - v) > 2 * ev if v is not None else abs(x - e[0]) > 2 * ee
                  for v, ev, e, ee in zip(edges, errs, E, eerr))
        if far and not any(lo[0] < x < hi[0] for lo, hi in zip(E[::2], E[1::2])):
            derr[i] = 0.0
    top = max([abs(v) for v in dens] + [mpmath.mpf(0)])
    for i, (v, e) in enumerate(zip(dens, derr)):
        if not inside[i]:
            dens[i] = mpmath.mpf(0)
            if e > float(top) * 10.0 ** -dps:
                raise ConvergenceError(f"spectrum: the density at x = {xs[i]:.6g}, within an edge's error of the "
                                       f"edge, is bounded by {e:.3g} only", 0, e)
        elif digits_of(v, e) < dps:
            raise ConvergenceError(f"spectrum: density at x = {xs[i]:.6g}: {dps} digits requested, only "
                                   f"{digits_of(v, e)} reached", 0, e)
    for x, e in zip(edges, errs):
        if x is not None and x != 0 and digits_of(x, e) < dps:
            raise ConvergenceError(f"spectrum: edge {mpmath.nstr(x, 8)}: {dps} digits requested, only "
                                   f"{digits_of(x, e)} reached", 0, e)
    return dens, derr, edges, errs
